import Foundation
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesSQLite
@testable import NavigationValuesStore

/// Log-first commits append to `event_log` (Migrations/0012); the writer moves the rows into
/// `events` between two batches once the table holds ``SQLiteDriver/Configuration/appendedEventsLimit``
/// rows. On a real SQLite file.
@Suite struct EventLogMoveTests {
    static func count(_ sql: String, in path: String) throws -> Int64 {
        try Database(path: path, access: .readOnly).fetchOne(sql) { $0.int64(0) } ?? -1
    }

    /// The table stays within its limit, every read of the session's events sees each event once
    /// whichever table holds it, and a close leaves it empty.
    @Test func theWriterMovesTheRowsPastTheLimitAndReadsSeeEachEventOnce() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-log-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("log.sqlite").path
        var configuration = SQLiteDriver.Configuration()
        configuration.writeBehind = WriteBehind(maximumEvents: 1_000, maximumDelay: .seconds(60))
        configuration.appendedEventsLimit = 5
        let store = try await SQLiteSessionStore.open(path: path, configuration: configuration)
        let sample = SampleSession("s_log")
        try await store.commit(sample.creation)
        var largest: Int64 = 0
        var sawBoth = false
        for seq in Int64(2)...13 {
            try await store.commit(sample.mutation(seq, [.setValue(sample.root, key: "n", json: "\(seq)")]))
            let appended = try Self.count("SELECT count(*) FROM event_log", in: path)
            let moved = try Self.count("SELECT count(*) FROM events", in: path)
            largest = max(largest, appended)
            if appended > 0, moved > 1 { sawBoth = true }
            #expect(appended + moved == seq)
            let events = try await store.events(of: sample.id, after: 0, limit: 1_000)
            #expect(events.map(\.seq) == Array(1...seq))
            if seq >= 4 {
                let tail = try await store.events(of: sample.id, after: seq - 3, limit: 2)
                #expect(tail.map(\.seq) == [seq - 2, seq - 1])
            }
            #expect(try await store.version(of: sample.id) == seq)
        }
        #expect(largest <= 5)
        #expect(sawBoth)
        // A conflict is still a conflict when the session's newest events are appended.
        await expectStoreError(.conflict) { try await store.commit(sample.mutation(13)) }
        await store.close()
        #expect(try Self.count("SELECT count(*) FROM event_log", in: path) == 0)
        #expect(try Self.count("SELECT count(*) FROM events", in: path) == 13)
        // Reopened: the state is the log's.
        let reopened = try await SQLiteSessionStore.open(path: path, configuration: configuration)
        let loaded = try #require(try await reopened.loadSession(sample.id))
        #expect(loaded.record.version == 13)
        #expect(loaded.screens.first?.values["n"] == "13")
        await reopened.close()
    }

    /// A purge takes the session's appended events with it (ON DELETE CASCADE), and a mutation
    /// of the purged session finds no session, as before.
    @Test func aPurgeTakesTheAppendedEvents() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-log-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("log.sqlite").path
        var configuration = SQLiteDriver.Configuration()
        configuration.writeBehind = WriteBehind(maximumEvents: 1_000, maximumDelay: .seconds(60), isHeldForTests: true)
        let store = try await SQLiteSessionStore.open(path: path, configuration: configuration)
        let sample = SampleSession("s_gone")
        try await store.commit(sample.creation)
        try await store.commit(sample.mutation(2, [.setValue(sample.root, key: "n", json: "2")]))
        // The state written (a purge checks the state's version), the event still appended.
        await store.onWriter { store.writeStateBehind() }
        #expect(try Self.count("SELECT count(*) FROM event_log", in: path) == 1)
        try await store.commit(
            StoredMutation(session: sample.id, event: sample.event(3, "session.purged"), changes: [.purgeSession(sample.id)]))
        #expect(try Self.count("SELECT count(*) FROM event_log", in: path) == 0)
        await expectStoreError(.invalidData) { try await store.commit(sample.mutation(4)) }
        await store.close()
    }
}
