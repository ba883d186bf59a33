import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSQLite
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

/// A database file damaged or edited by hand must never stop the server: the session it holds
/// answers a 500 problem (the client did nothing wrong), every other session keeps working, and
/// replay says what is wrong with a typed error.
@Suite struct DamagedDatabaseTests {
    /// Runs `sql` on the file between two runs of a server (`$SESSION` and `$SCREEN` stand for the
    /// damaged session's id and its pushed screen's), then checks what the second run answers.
    private func afterDamage(
        _ sql: String,
        check: (TestClient, _ damaged: TestSession, _ healthy: TestSession, _ path: String) async throws -> Void
    ) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-damage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("damaged.sqlite").path
        var sessions: (TestSession, TestSession, String)?
        try await withRunningServer(databasePath: path, configure: { $0.service.snapshotInterval = 2 }) { client, _ in
            let damaged = try await TestSession.create(client, ["root": ["name": "Home", "values": ["title": "x"]]])
            let screen = try await damaged.push("Detail", values: ["title": "y"])
            try await damaged.handle("root", "selection", passBack: true)
            try await damaged.publish(screen, "selection", "p")
            let healthy = try await TestSession.create(client)
            try await healthy.push("Other")
            sessions = (damaged, healthy, screen)
        }
        let (damaged, healthy, screen) = try #require(sessions)
        do {
            let database = try Database(path: path)
            try database.execute("PRAGMA ignore_check_constraints = ON")
            let statement = sql.replacingOccurrences(of: "$SESSION", with: "'\(damaged.id)'")
                .replacingOccurrences(of: "$SCREEN", with: "'\(screen)'")
            try database.executeScript(statement)
            #expect(database.changes > 0, "\(statement) changed nothing")
        }
        try await withRunningServer(databasePath: path) { client, _ in
            let damagedAgain = TestSession(
                client: client, id: damaged.id, token: damaged.token, created: damaged.created)
            let healthyAgain = TestSession(
                client: client, id: healthy.id, token: healthy.token, created: healthy.created)
            try await check(client, damagedAgain, healthyAgain, path)
            // The process is still up and every other session answers as before.
            #expect(try await healthyAgain.get().screenIDs.count == 2)
            #expect(try await client.send("GET", "/healthz").status == 200)
        }
    }

    @Test(arguments: [
        ("the schema", "UPDATE sessions SET schema = '{\"values\": 5}' WHERE id = $SESSION"),
        ("a value", "UPDATE context_values SET json = 'not json' WHERE screen = $SCREEN"),
        ("a received preference", "UPDATE received_preferences SET json = '{' WHERE screen IN \(screensOfSession)"),
        (
            "a handler's memory",
            "UPDATE preference_handlers SET last_value = 'nope' WHERE screen IN \(screensOfSession)"
        ),
        ("a screen on a stack the session lacks", "UPDATE screen_contexts SET stack = 'ghost' WHERE id = $SCREEN"),
        ("a selected stack that is not there", "UPDATE sessions SET selected_stack = 'ghost' WHERE id = $SESSION"),
        (
            "a presentation without screens",
            "INSERT INTO screen_stacks VALUES ($SESSION, 'p_x', 1, 'sheet', $SCREEN)"
        ),
        (
            "a presentation whose presenter is not on top",
            "INSERT INTO screen_contexts VALUES ('c_ghost', $SESSION, 'p_x', 0, 'Ghost', 'screen', NULL); "
                + "INSERT INTO screen_stacks SELECT session, 'p_x', 1, 'sheet', id FROM screen_contexts "
                + "WHERE session = $SESSION AND idx = 0 AND stack = 'main'"
        ),
        ("a stack of an unknown kind", "INSERT INTO screen_stacks VALUES ($SESSION, 't', 1, 'pager', NULL)"),
    ])
    func aDamagedStateRowIsAnInternalErrorForThatSessionOnly(what: String, sql: String) async throws {
        try await afterDamage(sql) { _, damaged, _, _ in
            let answer = try await damaged.send("GET")
            expectProblem(answer, 500, type: "internal-error")
            #expect(answer.json?["detail"] == "the server failed to answer this request", "\(what)")
            expectProblem(try await damaged.send("POST", "/push", json: [:]), 500, type: "internal-error")
        }
    }

    static let screensOfSession = "(SELECT id FROM screen_contexts WHERE session = $SESSION)"

    /// Snapshots are taken at 2 and 4: replay at 3 reads the snapshot at 2 and applies event 3;
    /// replay at 1 applies event 1 alone.
    @Test(arguments: [
        (
            "an unknown event type",
            "UPDATE events SET json = json_set(json, '$.type', 'screen.teleported') WHERE seq = 3", 3
        ),
        (
            "an event without its fields",
            "UPDATE events SET json = '{\"seq\": 3, \"type\": \"handler.set\"}' WHERE seq = 3", 3
        ),
        ("an event of another seq", "UPDATE events SET json = json_set(json, '$.seq', 9) WHERE seq = 3", 3),
        (
            "a pop of a screen not on top",
            "UPDATE events SET json = json_set(json, '$.type', 'screens.popped', '$.screens', json_array('c_nowhere')) WHERE seq = 3",
            3
        ),
        ("a missing event", "DELETE FROM events WHERE seq = 3", 3),
        (
            "a first event that creates nothing",
            "UPDATE events SET json = json_set(json, '$.type', 'session.ended') WHERE seq = 1", 1
        ),
        ("a snapshot of another shape", "UPDATE snapshots SET json = '{\"screens\": 1}' WHERE seq = 2", 3),
        (
            "a snapshot with a screen twice",
            "UPDATE snapshots SET json = json_set(json, '$.screens[1]', json_extract(json, '$.screens[0]')) WHERE seq = 2",
            3
        ),
    ])
    func aDamagedHistoryFailsReplayWithATypedError(what: String, sql: String, at: Int) async throws {
        try await afterDamage(sql + " AND session = $SESSION") { _, damaged, _, path in
            // The live state comes from the state tables and is intact.
            #expect(try await damaged.get()["version"] == 4, "\(what)")
            expectProblem(try await damaged.send("GET", "/replay?at=\(at)"), 500, type: "internal-error")
            await #expect(throws: CorruptSessionError.self, "\(what)") {
                try await SessionReplay.session(SessionID(damaged.id), at: Int64(at), databasePath: path)
            }
        }
    }
}
