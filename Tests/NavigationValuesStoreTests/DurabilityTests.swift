import Foundation
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

@Suite struct DurabilityTests {
    struct Acknowledged: Hashable {
        var session: String
        var seq: Int64
    }

    /// A child commits in a loop and prints each acknowledged commit; it is killed with SIGKILL
    /// mid-flight. The file must be intact and hold every acknowledged commit.
    @Test(arguments: [SQLiteSessionStore.SyncMode.normal, .full])
    func everyAcknowledgedCommitSurvivesKill9(sync: SQLiteSessionStore.SyncMode) async throws {
        try await withTemporaryDatabase { path in
            let child = try ChildProcess(built: "store-crash-helper", arguments: [path, sync.rawValue, "8"])
            let acknowledged = try await withTimeout(.seconds(60)) {
                var seen: [Acknowledged] = []
                for await line in child.lines {
                    let parts = line.split(separator: " ")
                    guard parts.count == 2, let seq = Int64(parts[1]) else {
                        throw ChildProcessError("unexpected line '\(line)'")
                    }
                    seen.append(Acknowledged(session: String(parts[0]), seq: seq))
                    // Kill it while its writers are busy; lines already in the pipe still count.
                    if seen.count == 2_000 { child.kill() }
                }
                return seen
            }
            let exit = try await child.waitForExit()
            let stderr = await child.standardError.text()
            #expect(acknowledged.count >= 2_000, "stderr: \(stderr)")
            #expect(exit == .signalled(SIGKILL))

            let db = try Database(path: path)
            #expect(try db.fetchAll("PRAGMA integrity_check") { $0.string(0) } == ["ok"])
            #expect(try db.fetchAll("PRAGMA foreign_key_check") { $0.string(0) }.isEmpty)
            var stored = Set<Acknowledged>()
            try db.forEachRow("SELECT session, seq FROM events") { row in
                stored.insert(Acknowledged(session: row.string(0), seq: row.int64(1)))
            }
            let missing = Set(acknowledged).subtracting(stored)
            #expect(
                missing.isEmpty,
                "acknowledged but lost: \(missing.sorted { ($0.session, $0.seq) < ($1.session, $1.seq) }.prefix(10))")

            // The store opens the file again, and each session's state matches its last event.
            let store = try SQLiteSessionStore(path: path)
            for summary in try await store.sessions(after: nil, limit: 100) {
                let events = try await store.events(of: summary.id, after: 0, limit: 1_000_000)
                #expect(events.map(\.seq) == Array(1...summary.version))
            }
            await store.close()
        }
    }
}
