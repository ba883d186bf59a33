import Foundation
import NavigationValues
import TestSupport
import Testing

/// The limits that are about the server process itself, against the built
/// `navigation-values serve`: resident memory as `/proc` reports it, a full disk as a file size
/// limit makes one, and `prune` on the file.
@Suite struct ResourceBoundTests {
    static let admin = ["Authorization": "Bearer admin"]

    func json(_ value: JSONValue) -> String { value.serialized() }

    func create(_ server: ServeProcess, _ body: JSONValue = [:]) async throws -> (id: String, token: String) {
        let answer = try await server.send("POST", "/v1/sessions", body: json(body), headers: Self.admin)
        try #require(answer.status == 201, "create answered \(answer.status): \(answer.text)")
        return (try #require(answer.json?["id"]?.stringValue), try #require(answer.json?["token"]?.stringValue))
    }

    static func emptyScreens(_ count: Int) -> JSONValue { ["screens": .array(Array(repeating: [:], count: count))] }

    /// Row "Amplification": a 3 KB path over 60 KB of defaults and a 60 KB patch over 1,000
    /// screens had answered 18 MB each and grown the server from 37 to 120 MiB.
    @Test func amplifiedRequestsAre422AndCostTheServerNoMemory() async throws {
        let server = try await ServeProcess(["--admin-token", "admin"])
        let defaults: JSONValue = .object(
            Dictionary(
                uniqueKeysWithValues: (0..<15).map { index in
                    (
                        "d\(index)",
                        ["type": "string", "default": .string(String(repeating: "x", count: 4_000))] as JSONValue
                    )
                }))
        let heavy = try await create(server, ["schema": ["values": defaults]])
        let plain = try await create(server)
        let auth = { (token: String) in ["Authorization": "Bearer \(token)"] }
        #expect(
            try await server.send(
                "PUT", "/v1/sessions/\(plain.id)/path", body: json(Self.emptyScreens(999)), headers: auth(plain.token)
            )
            .status == 200)
        let before = try server.residentBytes()
        for _ in 0..<3 {
            let path = try await server.send(
                "PUT", "/v1/sessions/\(heavy.id)/path", body: json(Self.emptyScreens(999)), headers: auth(heavy.token))
            #expect(path.status == 422)
            #expect(path.body.count < 2_048)
            let patch = try await server.send(
                "PATCH", "/v1/sessions/\(plain.id)/screens/root/values",
                body: json(["v": .string(String(repeating: "v", count: 60_000))]), headers: auth(plain.token))
            #expect(patch.status == 422)
            #expect(patch.body.count < 2_048)
        }
        let growth = try server.residentBytes() - before
        #expect(growth < 32 * 1024 * 1024, "the server grew by \(growth / 1024) KiB")
        #expect(try await server.stop().status == 0)
    }

    /// Row "Stuck SSE readers": 20 readers that stopped reading and one large event had taken the
    /// server from 82 to 623 MiB, each holding about three copies of the frame in flight.
    @Test func twentyStalledReadersHoldBoundedMemory() async throws {
        // Small kernel buffers, so that each reader stalls within the first event.
        let server = try await ServeProcess(["--admin-token", "admin", "--send-buffer-bytes", "16384"])
        let session = try await create(
            server, ["root": ["values": ["big": .string(String(repeating: "b", count: 60_000))]]])
        var readers: [RawClient] = []
        for _ in 0..<20 {
            let reader = try RawClient(port: server.client.port, receiveBufferSize: 4_096)
            try reader.send(
                "GET /v1/sessions/\(session.id)/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                    + "Authorization: Bearer \(session.token)\r\n\r\n")
            readers.append(reader)
        }
        defer { readers.forEach { $0.shutdown() } }
        try await waitUntil("20 subscribers", timeout: .seconds(30)) {
            try await server.metric("navigation_values_subscribers") == 20
        }
        let before = try server.residentBytes()
        // Each path pushes 40 screens that inherit the 60 KB value: a 2.4 MB event, 3 of them.
        for _ in 0..<3 {
            let answer = try await server.send(
                "PUT", "/v1/sessions/\(session.id)/path", body: json(Self.emptyScreens(40)),
                headers: ["Authorization": "Bearer \(session.token)"])
            #expect(answer.status == 200)
        }
        try await waitUntil("every stalled reader dropped", timeout: .seconds(60)) {
            try await server.metric("navigation_values_subscribers_dropped_total") == 20
        }
        let growth = try server.residentBytes() - before
        #expect(growth < 64 * 1024 * 1024, "the server grew by \(growth / 1024) KiB")
        #expect(try await server.stop().status == 0)
    }

    /// Row "Full disk looks ready": `/readyz` had answered 200 while every write answered 503.
    @Test func readinessIs503WhileWritesFailAnd200OnceOneWorks() async throws {
        let prlimit = "/usr/bin/prlimit"
        try #require(FileManager.default.isExecutableFile(atPath: prlimit), "util-linux's prlimit is needed")
        // The soft limit on file size is the full disk; the hard one stays, so it can be lifted.
        let server = try await ServeProcess(
            ["--admin-token", "admin", "--db", "full.sqlite"], launcher: [prlimit, "--fsize=1000000:unlimited", "--"])
        #expect(try await server.send("GET", "/readyz").status == 200)
        let value = JSONValue.string(String(repeating: "f", count: 3_000))
        var failed: HTTPResponse?
        for _ in 0..<2_000 {
            let answer = try await server.send(
                "POST", "/v1/sessions", body: json(["root": ["values": ["v": value]]]), headers: Self.admin)
            if answer.status != 201 {
                failed = answer
                break
            }
        }
        let refusal = try #require(failed, "the file never filled")
        #expect(refusal.status == 503)
        #expect(refusal.header("Retry-After") == "1")
        let notReady = try await server.send("GET", "/readyz")
        #expect(notReady.status == 503)
        #expect(notReady.header("Content-Type") == "application/problem+json")
        // Space again: the next write works and the server is ready.
        let lifted = try await ChildProcess.run(
            URL(fileURLWithPath: prlimit),
            arguments: ["--pid", "\(server.child.processIdentifier)", "--fsize=unlimited:unlimited"])
        #expect(lifted.status == 0, "\(lifted)")
        try await waitUntil("ready again", timeout: .seconds(30)) {
            try await server.send("GET", "/readyz").status == 200
        }
        #expect(try await server.send("POST", "/v1/sessions", body: "{}", headers: Self.admin).status == 201)
        #expect(try await server.stop().status == 0)
    }

    @Test func pruneEndsIdleSessionsCompactsHistoryAndPurgesEndedOnes() async throws {
        try await pruneScenario(database: nil)
    }

    /// The same on a PostgreSQL database, pruned by URL.
    @Test(.enabled(if: PostgresTestServer.isAvailable, Comment(rawValue: PostgresTestServer.unavailableReason)))
    func pruneEndsIdleSessionsCompactsHistoryAndPurgesEndedOnesOnPostgreSQL() async throws {
        try await PostgresTestServer.withDatabase { url in try await pruneScenario(database: url) }
    }

    /// Serves `database` (a new SQLite file when nil), makes an idle, a busy and an ended
    /// session, stops, then prunes the database until each rule has done its part.
    private func pruneScenario(database url: String?) async throws {
        let server = try await ServeProcess(["--admin-token", "admin", "--db", url ?? "prune.sqlite"])
        let idle = try await create(server)
        let busy = try await create(server)
        let ended = try await create(server)
        #expect(try await server.send("DELETE", "/v1/sessions/\(ended.id)", headers: Self.admin).status == 204)
        // 70 events: a snapshot at 64 (serve stores one every 64).
        for index in 0..<69 {
            let answer = try await server.send(
                "PATCH", "/v1/sessions/\(busy.id)/screens/root/values", body: json(["i": .integer(Int64(index))]),
                headers: Self.admin)
            try #require(answer.status == 200)
        }
        #expect(try await server.stop().status == 0)
        let database = url ?? server.folder.appendingPathComponent("prune.sqlite").path

        /// Runs prune until the figures it prints add up to `expected` (each session qualifies a
        /// second after its own last change, so one run may see only some of them).
        func prune(_ flags: [String], until expected: [String: Int]) async throws {
            var totals: [String: Int] = [:]
            try await waitUntil("prune \(flags) to report \(expected)", timeout: .seconds(30)) {
                let outcome = try await run(["prune", "--db", database] + flags)
                #expect(outcome.status == 0, "\(outcome)")
                for line in outcome.stdout.split(separator: "\n") {
                    let words = line.split(separator: " ")
                    if words.count > 1, let count = Int(words[1]) { totals[String(words[0]), default: 0] += count }
                }
                return expected.allSatisfy { totals[$0.key] == $0.value }
            }
            // Tombstones of the first purges may be forgotten by later runs: "forgot" is not checked.
            let others = totals.filter { expected[$0.key] == nil && $0.key != "forgot" }
            #expect(others.values.allSatisfy { $0 == 0 }, "\(totals)")
        }
        // Idle for a second: both active sessions end, and the busy one's history is compacted
        // to its snapshot at 64; the ended one stays (no ended retention).
        try await prune(
            ["--session-idle-timeout", "1s", "--ended-retention", "0", "--history-keep-events", "1"],
            until: ["ended": 2, "compacted": 64])
        // Ended for a second: all three are purged.
        try await prune(["--ended-retention", "1s", "--session-idle-timeout", "0"], until: ["purged": 3])
        let again = try await ServeProcess(["--admin-token", "admin", "--db", database])
        for session in [idle, busy, ended] {
            #expect(try await again.send("GET", "/v1/sessions/\(session.id)", headers: Self.admin).status == 404)
            // 410 while its tombstone lasts (as long again as the ended retention), then 404.
            let history = try await again.send("GET", "/v1/sessions/\(session.id)/history", headers: Self.admin)
            #expect([404, 410].contains(history.status))
        }
        #expect(try await again.stop().status == 0)
    }

    @Test func pruneNeedsADatabaseAndTakesDurations() async throws {
        #expect(try await run(["prune"]).status == 2)
        let bad = try await run(["prune", "--db", "x.sqlite", "--session-idle-timeout", "soon"])
        #expect(bad.status == 2)
        #expect(bad.stderr.hasPrefix("error: --session-idle-timeout must be a duration such as 90s, 30m, 12h or 30d"))
    }
}
