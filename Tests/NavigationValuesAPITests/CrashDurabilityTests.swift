import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

/// `api-crash-server` on `database` in a child process.
func crashServer(database: String, adminToken: String) throws -> ChildProcess {
    try ChildProcess(built: "api-crash-server", arguments: ["--db", database, "--admin-token", adminToken])
}

/// What the clients were told was committed.
struct Acknowledged: Sendable {
    var pushes: [(session: String, screen: String, name: String, value: Int, version: Int64)] = []
    var patches: [(session: String, key: String, value: Int, version: Int64)] = []
    var count: Int { pushes.count + patches.count }
}

/// The writers' shared record, and who kills the server.
final class Ledger: Sendable {
    let acknowledged = Mutex(Acknowledged())
    private let killed = Mutex(false)

    /// True for the first caller only.
    func claimKill() -> Bool {
        killed.withLock { flag in
            defer { flag = true }
            return !flag
        }
    }
}

@Suite struct CrashDurabilityTests {
    @Test func everyAcknowledgedWriteSurvivesKillDashNine() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-api-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("crash.sqlite").path
        let admin = "crash-admin"

        let first = try crashServer(database: database, adminToken: admin)
        let firstURL = try await first.listeningURL()
        let setup = try TestClient(baseURL: firstURL, adminToken: admin)
        var sessions: [TestSession] = []
        for _ in 0..<3 { sessions.append(try await TestSession.create(setup)) }

        // Six writers, two per session, alternate pushes and root patches until the server dies;
        // the one whose write takes the total past the threshold kills it, while the others
        // still have requests in flight.
        let ledger = Ledger()
        let threshold = 240
        let writers = 6
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                let client = TestClient(port: setup.http.port, adminToken: admin)
                let target = sessions[writer % sessions.count]
                let session = TestSession(client: client, id: target.id, token: target.token, created: target.created)
                group.addTask {
                    var step = 0
                    while true {
                        step += 1
                        do {
                            if step.isMultiple(of: 2) {
                                let name = "w\(writer)-\(step)"
                                let answer = try await session.send(
                                    "POST", "/push",
                                    json: ["name": .string(name), "values": ["step": .integer(Int64(step))]])
                                guard answer.status == 201, let json = answer.json,
                                    let screen = json["screen"]?["id"]?.stringValue,
                                    let version = json["version"]?.integerValue
                                else { return }
                                ledger.acknowledged.withLock {
                                    $0.pushes.append((session.id, screen, name, step, version))
                                }
                            } else {
                                let answer = try await session.send(
                                    "PATCH", "/screens/root/values",
                                    json: [.init(stringLiteral: "w\(writer)"): .integer(Int64(step))])
                                guard answer.status == 200, let version = answer.json?["version"]?.integerValue else {
                                    return
                                }
                                ledger.acknowledged.withLock {
                                    $0.patches.append((session.id, "w\(writer)", step, version))
                                }
                            }
                        } catch {
                            return  // the server is gone
                        }
                        if ledger.acknowledged.withLock({ $0.count }) >= threshold, ledger.claimKill() {
                            first.kill()
                        }
                    }
                }
            }
        }
        first.kill()
        #expect(try await first.waitForExit() == .signalled(SIGKILL))
        let acks = ledger.acknowledged.withLock { $0 }
        #expect(acks.count >= threshold)

        // Restart on the same file: every acknowledged screen and value is there.
        let second = try crashServer(database: database, adminToken: admin)
        let client = try TestClient(baseURL: try await second.listeningURL(), adminToken: admin)
        var versions: [String: Int64] = [:]
        for target in sessions {
            let answer = try await client.send("GET", "/v1/sessions/\(target.id)", token: admin)
            try #require(answer.status == 200)
            let json = try #require(answer.json)
            let version = try #require(json["version"]?.integerValue)
            versions[target.id] = version
            let screens = json["screens"]?.arrayValue ?? []
            let byID = Dictionary(screens.compactMap { screen in screen["id"]?.stringValue.map { ($0, screen) } }) {
                a, _ in a
            }
            for push in acks.pushes where push.session == target.id {
                let screen = byID[push.screen]
                #expect(screen?["name"] == .string(push.name))
                #expect(screen?["values"] == ["step": .integer(Int64(push.value))])
                #expect(version >= push.version)
            }
            let rootValues = screens.first?["values"]?.objectValue ?? [:]
            for patch in acks.patches where patch.session == target.id {
                // Writers count up, so the stored value is the acknowledged one or a later one.
                let stored = rootValues[patch.key]?.integerValue ?? -1
                #expect(stored >= Int64(patch.value))
                #expect(version >= patch.version)
            }
            // Still writable after the restart, at the next version.
            let more = try await client.send("POST", "/v1/sessions/\(target.id)/push", json: [:], token: admin)
            #expect(more.json?["version"] == .integer(version + 1))
        }
        second.signal(SIGTERM)
        #expect(try await second.waitForExit() == .exited(0))

        // The log is gap-free and ends at the version each session reads as.
        let store = try await SQLiteSessionStore.open(path: database)
        for target in sessions {
            let events = try await store.events(of: SessionID(target.id), after: 0, limit: 10_000)
            let expected = (versions[target.id] ?? 0) + 1
            #expect(events.map(\.seq) == Array(1...expected))
            let acked = Set(acks.pushes.filter { $0.session == target.id }.map(\.version))
            #expect(events.filter { acked.contains($0.seq) }.allSatisfy { $0.type == "screen.pushed" })
        }
        await store.close()
    }
}
