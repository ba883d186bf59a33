import Foundation
import NavigationValues
import NavigationValuesWire
import TestSupport
import Testing

/// Log-first commits on PostgreSQL, killed in the window between an event's commit and its
/// state's: the instance holds the write-behind (`--hold-write-behind on`), so every acknowledged
/// change of an existing session is in the log only when it dies. A restarted instance, and
/// another instance on the same database, read each session as its clients were told.
@Suite(.needsPostgres) struct PostgresWriteBehindCrashTests {
    static let admin = "pg-behind-admin"

    /// The session's version as its log says, and the version its state rows reflect
    /// (`session_versions`, Migrations/postgres/0009), read by psql while the servers run.
    static func versions(in url: String, of id: String) async throws -> (log: Int64, state: Int64) {
        let rows = try await PostgresTestServer.psqlRows(
            url, "SELECT version, state_version FROM session_versions WHERE id = '\(id)'")
        let row = try #require(rows.first)
        return (try #require(Int64(row[0])), try #require(Int64(row[1])))
    }

    /// What a reader is shown of a session: the session, its history and its export (none of
    /// which writes the waiting state; a replay does, so it is compared with the session).
    struct Shown: Equatable {
        var session: JSONValue?
        var history: JSONValue?
        var export: String
    }

    static func shown(_ id: String, through client: TestClient) async throws -> Shown {
        let session = try await client.send("GET", "/v1/sessions/\(id)", token: admin)
        try #require(session.status == 200)
        let history = try await client.send("GET", "/v1/sessions/\(id)/history", token: admin)
        #expect(history.status == 200)
        let export = try await client.send("GET", "/v1/sessions/\(id)/export", token: admin)
        #expect(export.status == 200)
        let lines = String(decoding: export.body, as: UTF8.self)
        #expect(Int64(lines.split(separator: "\n").count) == session.json?["version"]?.integerValue, "one line per event")
        return Shown(session: session.json, history: history.json, export: lines)
    }

    /// The replay of the session at its latest version shows what `told` shows of it.
    static func expectReplay(_ id: String, through client: TestClient, showing told: Shown?) async throws {
        let replay = try await client.send("GET", "/v1/sessions/\(id)/replay", token: admin)
        #expect(replay.status == 200)
        #expect(replay.json?["screens"] != nil)
        #expect(replay.json?["screens"] == told?.session?["screens"])
    }

    /// Changes of every kind to a new session: pushes, a pop of a screen pushed in the same
    /// window (nothing of it is written), patches of the root and of a pushed screen, a handler and
    /// a preference sent up to it. SQLite's kill test (`WriteBehindCrashTests`) makes the same.
    static func changeANewSession(through client: TestClient, round: Int) async throws -> TestSession {
        let session = try await TestSession.create(client)
        var answer = try await session.send("POST", "/push", json: ["name": "List", "values": ["page": 1]])
        #expect(answer.status == 201)
        let list = try #require(answer.json?["screen"]?["id"]?.stringValue)
        answer = try await session.send("POST", "/push", json: ["name": "Detail", "values": ["item": 7]])
        #expect(answer.status == 201)
        #expect(try await session.send("POST", "/pop", json: ["count": 1]).status == 200)
        answer = try await session.send(
            "PATCH", "/screens/root/values", json: ["theme": "dark", "round": .integer(Int64(round))])
        #expect(answer.status == 200)
        answer = try await session.send("PATCH", "/screens/\(list)/values", json: ["page": 2])
        #expect(answer.status == 200)
        answer = try await session.send("PUT", "/screens/root/handlers/picked", json: ["passBack": false])
        #expect(answer.status == 200)
        answer = try await session.send("POST", "/push", json: ["name": "Picker"])
        let picker = try #require(answer.json?["screen"]?["id"]?.stringValue)
        answer = try await session.send("POST", "/screens/\(picker)/preferences/picked", json: ["value": "blue"])
        #expect(answer.status == 200)
        return session
    }

    static func heldServer(_ url: String) throws -> ChildProcess {
        try ChildProcess(
            built: "api-crash-server", arguments: ["--db", url, "--admin-token", admin, "--hold-write-behind", "on"])
    }

    @Test func aKillBeforeTheStateIsWrittenLosesNoAcknowledgedChange() async throws {
        try await PostgresTestServer.withDatabase { url in
            let first = try Self.heldServer(url)
            let client = try TestClient(baseURL: try await first.listeningURL(), adminToken: Self.admin)
            var told: [String: Shown] = [:]
            var sessions: [TestSession] = []
            for round in 0..<2 {
                let session = try await Self.changeANewSession(through: client, round: round)
                sessions.append(session)
                told[session.id] = try await Self.shown(session.id, through: client)
            }
            // The window is real: the log is ahead of the state rows in the database.
            for session in sessions {
                let (log, state) = try await Self.versions(in: url, of: session.id)
                #expect(state == 1)
                #expect(log == told[session.id]?.session?["version"]?.integerValue)
            }

            first.kill()
            #expect(try await first.waitForExit() == .signalled(SIGKILL))

            // Restarted (writing behind as usual): each session, its history, replay and export
            // read as before, and its state rows are brought up to its log.
            let second = try crashServer(database: url, adminToken: Self.admin)
            let again = try TestClient(baseURL: try await second.listeningURL(), adminToken: Self.admin)
            for session in sessions {
                #expect(try await Self.shown(session.id, through: again) == told[session.id])
                try await Self.expectReplay(session.id, through: again, showing: told[session.id])
                let (log, state) = try await Self.versions(in: url, of: session.id)
                #expect(state == log)
                let more = try await again.send("POST", "/v1/sessions/\(session.id)/push", json: [:], token: Self.admin)
                let version = told[session.id]?.session?["version"]?.integerValue ?? 0
                #expect(more.json?["version"] == .integer(version + 1))
            }
            second.signal(SIGTERM)
            #expect(try await second.waitForExit() == .exited(0))
            // A clean stop writes every waiting state: the rows are at their logs' ends.
            for session in sessions {
                let (log, state) = try await Self.versions(in: url, of: session.id)
                #expect(state == log)
            }
        }
    }

    @Test func anotherInstanceReadsASessionWhoseStateLagsItsLog() async throws {
        try await PostgresTestServer.withDatabase { url in
            let writer = try Self.heldServer(url)
            let reader = try crashServer(database: url, adminToken: Self.admin)
            let a = try TestClient(baseURL: try await writer.listeningURL(), adminToken: Self.admin)
            let b = try TestClient(baseURL: try await reader.listeningURL(), adminToken: Self.admin)
            let session = try await Self.changeANewSession(through: a, round: 0)
            let told = try await Self.shown(session.id, through: a)
            var (log, state) = try await Self.versions(in: url, of: session.id)
            #expect(state == 1 && log > 1, "the state waits in instance A")

            // B replays what A holds (and writes it); A's waiting state then no longer applies.
            #expect(try await Self.shown(session.id, through: b) == told)
            try await Self.expectReplay(session.id, through: b, showing: told)
            (log, state) = try await Self.versions(in: url, of: session.id)
            #expect(state == log)

            // A goes on from there (its own copy), holding again, and dies.
            let pushed = try await session.send("POST", "/push", json: ["name": "Late"])
            #expect(pushed.status == 201)
            let patched = try await session.send("PATCH", "/screens/root/values", json: ["late": true])
            #expect(patched.status == 200)
            let toldLater = try await Self.shown(session.id, through: a)
            (log, state) = try await Self.versions(in: url, of: session.id)
            #expect(state < log)
            writer.kill()
            #expect(try await writer.waitForExit() == .signalled(SIGKILL))

            // B, which had the session loaded, reads it as A's clients were told.
            #expect(try await Self.shown(session.id, through: b) == toldLater)
            try await Self.expectReplay(session.id, through: b, showing: toldLater)
            (log, state) = try await Self.versions(in: url, of: session.id)
            #expect(state == log)
            let listed = try await b.send("GET", "/v1/sessions", token: Self.admin)
            #expect(listed.status == 200)
            reader.signal(SIGTERM)
            #expect(try await reader.waitForExit() == .exited(0))
        }
    }
}
