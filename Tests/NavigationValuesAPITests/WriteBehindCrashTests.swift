import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

/// Log-first commits, killed in the window between an event's commit and its state's: the
/// server holds the write-behind (`--hold-write-behind on`), so every acknowledged change of an
/// existing session is in the log only when it dies.
@Suite struct WriteBehindCrashTests {
    /// The session's version as its log says, and the version its state rows reflect, read from
    /// the file by another process's connection while the server runs.
    static func versions(in database: String, of id: String) throws -> (log: Int64, state: Int64) {
        let db = try Database(path: database, access: .readOnly)
        let row = try db.fetchOne(
            "SELECT version, state_version FROM session_versions WHERE id = ?1", [.text(id)]
        ) { ($0.int64(0), $0.int64(1)) }
        return try #require(row)
    }

    @Test func aKillBeforeTheStateIsWrittenLosesNoAcknowledgedChange() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-behind-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("behind.sqlite").path
        let admin = "behind-admin"

        let first = try ChildProcess(
            built: "api-crash-server",
            arguments: ["--db", database, "--admin-token", admin, "--hold-write-behind", "on"])
        let client = try TestClient(baseURL: try await first.listeningURL(), adminToken: admin)
        var told: [String: JSONValue] = [:]
        var sessions: [TestSession] = []
        for round in 0..<2 {
            let session = try await PostgresWriteBehindCrashTests.changeANewSession(through: client, round: round)
            sessions.append(session)
            let shown = try await client.send("GET", "/v1/sessions/\(session.id)", token: admin)
            try #require(shown.status == 200)
            told[session.id] = shown.json
        }
        // The window is real: the log is ahead of the state rows on disk.
        for session in sessions {
            let (log, state) = try Self.versions(in: database, of: session.id)
            #expect(state == 1)
            #expect(log == told[session.id]?["version"]?.integerValue)
        }

        first.kill()
        #expect(try await first.waitForExit() == .signalled(SIGKILL))

        // Restarted (writing behind as usual): each session reads as the clients were told, and
        // its state rows are brought up to its log.
        let second = try crashServer(database: database, adminToken: admin)
        let again = try TestClient(baseURL: try await second.listeningURL(), adminToken: admin)
        for session in sessions {
            let shown = try await again.send("GET", "/v1/sessions/\(session.id)", token: admin)
            #expect(shown.status == 200)
            #expect(shown.json == told[session.id])
            let (log, state) = try Self.versions(in: database, of: session.id)
            #expect(state == log)
            // Its history and its replay agree, and it takes the next version.
            let replay = try await again.send("GET", "/v1/sessions/\(session.id)/replay", token: admin)
            #expect(replay.json?["screens"] == told[session.id]?["screens"])
            let more = try await again.send("POST", "/v1/sessions/\(session.id)/push", json: [:], token: admin)
            #expect(more.json?["version"] == .integer((told[session.id]?["version"]?.integerValue ?? 0) + 1))
        }
        second.signal(SIGTERM)
        #expect(try await second.waitForExit() == .exited(0))

        // A clean stop writes every waiting state: the file's rows are at their logs' ends.
        for session in sessions {
            let (log, state) = try Self.versions(in: database, of: session.id)
            #expect(state == log)
        }
    }
}
