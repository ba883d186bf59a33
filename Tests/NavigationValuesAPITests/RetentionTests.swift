import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesStore
import Synchronization
import TestSupport
import Testing

/// Old data goes away (retention): idle sessions end, ended ones are purged with their
/// history, and history is compacted behind a snapshot; reads before the compacted point are 410
/// naming the oldest seq still available, as etcd answers for a compacted revision. Over restarts.
@Suite struct RetentionTests {
    /// A temporary folder for a database that outlives one server.
    func withDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-retention-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder.appendingPathComponent("retention.sqlite").path)
    }

    func manualRetention(_ configuration: inout NavigationValuesServer.Configuration) {
        configuration.retentionInterval = nil
    }

    /// The session's state as the admin list shows it, read from the store: a read that does
    /// not use the session (which would keep it from being idle).
    func listedState(_ client: TestClient, _ id: String) async throws -> JSONValue? {
        let list = try await client.send("GET", "/v1/sessions?limit=1000", token: client.adminToken)
        return list.json?["sessions"]?.arrayValue?.first { $0["id"]?.stringValue == id }?["state"]
    }

    /// A clock the test moves by hand.
    final class TestClock: Sendable {
        private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var now: Date { current.withLock { $0 } }
        func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
    }

    @Test func anUnusedSessionEndsAUsedOneDoesNotAndEndedOnesArePurgedAfterARestart() async throws {
        let clock = TestClock()
        func configure(_ configuration: inout NavigationValuesServer.Configuration) {
            configuration.retentionInterval = nil
            configuration.now = { clock.now }
        }
        let day: TimeInterval = 86_400
        try await withDatabase { path in
            let (idle, used) = try await withRunningServer(databasePath: path, configure: configure) { client, server in
                let idle = try await TestSession.create(client)
                let used = try await TestSession.create(client)
                let events = try SSEClient(
                    port: server.port, path: "/v1/sessions/\(idle.id)/events",
                    headers: ["Authorization": "Bearer \(idle.token)"])
                defer { events.close() }
                #expect(await events.status() == 200)
                // Two days later, both unchanged for that long; only `used` is read then.
                clock.advance(by: 2 * day)
                _ = try await used.get()
                let report = try await server.service.retention.run(RetentionPolicy(idleTimeout: .seconds(86_400)))
                #expect(report.ended == 1)
                #expect(report.purged == 0)
                #expect(try await listedState(client, idle.id) == "ended")
                #expect(try await used.get()["state"] == "active")
                // The end is an event like any other: streamed, and in the history.
                #expect(await events.frames.events(1, timeout: .seconds(30)).map(\.event) == ["session.ended"])
                #expect(
                    try await idle.send("GET", "/history").json?["events"]?.arrayValue?.last?["type"] == "session.ended"
                )
                return (idle, used)
            }
            try await withRunningServer(databasePath: path, configure: configure) { client, server in
                let idle = idle.on(client)
                let used = used.on(client)
                #expect(try await idle.get()["state"] == "ended")
                let policy = RetentionPolicy(endedRetention: .seconds(7 * 86_400))
                // Kept for the retention period, purged after it.
                clock.advance(by: 6 * day)
                #expect(try await server.service.retention.run(policy).purged == 0)
                #expect(try await idle.send("GET", "").status == 200)
                clock.advance(by: 2 * day)
                #expect(try await server.service.retention.run(policy).purged == 1)
                #expect(try await idle.send("GET", "").status == 404)
                // Its history is known to be gone (410), until its tombstone expires too.
                expectProblem(try await idle.send("GET", "/history", headers: [:]), 410, type: "gone")
                clock.advance(by: 8 * day)
                #expect(try await server.service.retention.run(policy).expiredRecords >= 1)
                expectProblem(
                    try await client.send("GET", "/v1/sessions/\(idle.id)/history", token: client.adminToken), 404,
                    type: "not-found")
                // The used session, unchanged but never idle for its timeout, is still there.
                #expect(try await used.get()["state"] == "active")
            }
        }
    }

    @Test func compactionKeepsTheNewestEventsBehindASnapshotAndAnswers410BeforeItAcrossARestart() async throws {
        try await withDatabase { path in
            func configure(_ configuration: inout NavigationValuesServer.Configuration) {
                configuration.retentionInterval = nil
                configuration.service.snapshotInterval = 4
            }
            let (session, recorded) = try await withRunningServer(databasePath: path, configure: configure) {
                client, server in
                let session = try await TestSession.create(client)
                var shown: [Int64: JSONValue] = [1: try await session.get()]
                for index in 0..<21 {
                    if index % 3 == 2 {
                        try await session.pop()
                    } else {
                        try await session.push("S\(index)", values: ["i": .integer(Int64(index))])
                    }
                    let now = try await session.get()
                    shown[now["version"]?.integerValue ?? 0] = now
                }
                // Snapshots at 4, 8, …, 20; keeping 5 of 22 events compacts to the snapshot at 16.
                let report = try await server.service.retention.run(
                    RetentionPolicy(compaction: CompactionRule(keepEvents: 5)))
                #expect(report.compactedEvents == 16)
                return (session, shown)
            }
            var shown = recorded
            // Twice, each on a server started afresh on the file: the compacted point is on disk.
            for round in 0..<2 {
                let latest: Int64 = 22 + Int64(round)
                shown = try await withRunningServer(databasePath: path, configure: configure) { client, server in
                    let session = session.on(client)
                    var shown = shown
                    for query in ["", "?after=0", "?after=15"] {
                        let refused = try await session.send("GET", "/history\(query)")
                        expectProblem(refused, 410, type: "events-compacted")
                        #expect(refused.json?["oldestSeq"] == 16, "round \(round) \(query)")
                    }
                    let kept = try await session.send("GET", "/history?after=16")
                    #expect(
                        kept.json?["events"]?.arrayValue?.compactMap { $0["seq"]?.integerValue } == Array(17...latest))
                    #expect(kept.json?["next"] == .null)
                    let tooOld = try await session.send("GET", "/replay?at=15")
                    expectProblem(tooOld, 410, type: "events-compacted")
                    #expect(tooOld.json?["oldestSeq"] == 16)
                    for at in [16, 19, 22] as [Int64] {
                        let replayed = try await session.send("GET", "/replay?at=\(at)")
                        #expect(replayed.json == shown[at], "replay at \(at)")
                    }
                    expectProblem(try await session.send("GET", "/events?after=3"), 410, type: "events-compacted")
                    let resumeTooOld = try SSEClient(
                        port: server.port, path: "/v1/sessions/\(session.id)/events",
                        headers: ["Authorization": "Bearer \(session.token)", "Last-Event-ID": "10"])
                    defer { resumeTooOld.close() }
                    #expect(await resumeTooOld.status() == 410)
                    let resume = try SSEClient(
                        port: server.port, path: "/v1/sessions/\(session.id)/events?after=16",
                        headers: ["Authorization": "Bearer \(session.token)"])
                    defer { resume.close() }
                    #expect(await resume.frames.events(Int(latest) - 16).map(\.id) == (17...latest).map { String($0) })
                    // The live session is untouched, and goes on.
                    #expect(try await session.get() == shown[latest])
                    if round == 0 {
                        try await session.push("After")
                        shown[23] = try await session.get()
                        #expect(shown[23]?["version"] == 23)
                    }
                    _ = client
                    return shown
                }
            }
        }
    }
}

extension TestSession {
    /// The same session, driven through `client` (another server on the same database).
    func on(_ client: TestClient) -> TestSession {
        TestSession(client: client, id: id, token: token, created: created)
    }
}
