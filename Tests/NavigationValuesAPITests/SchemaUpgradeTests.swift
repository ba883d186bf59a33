import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSQLite
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

/// Migrations 0007 (screen_contexts and the tables that reference it rebuilt WITHOUT ROWID) and
/// 0008 (retention's index on updated_minute), both to write fewer pages, upgrade a file made by the schema
/// before them in place: a server started on it shows the same sessions, histories and replays,
/// keeps every record, takes new mutations, and a purge still leaves nothing behind.
///
/// The old file is made by `Migrator` with migrations 0001-0006 (or 0001-0007) only, and holds rows
/// the real server wrote: a server fills a file of its own, and its rows are copied table by table
/// into the old schema, in the old schema's columns (0007 changes no column; 0008 adds one, which it
/// fills from updated_at).
@Suite struct SchemaUpgradeTests {

    /// Every table that holds rows, parents before children.
    static let tables = [
        "sessions", "screen_contexts", "screen_stacks", "context_values", "preference_handlers",
        "received_preferences", "events", "snapshots", "idempotency_keys", "purged_sessions", "observer_tokens",
        "readiness_probe",
    ]

    /// The tables with a `session` column, and the ones hanging from screens.
    static let sessionTables = [
        "screen_contexts", "screen_stacks", "events", "snapshots", "idempotency_keys", "observer_tokens",
    ]
    static let screenTables = ["context_values", "preference_handlers", "received_preferences"]

    func configure(_ configuration: inout NavigationValuesServer.Configuration) {
        configuration.retentionInterval = nil
        configuration.service.snapshotInterval = 4
    }

    /// What a client saw of the filled server, to compare after the upgrade.
    struct Seen: Sendable {
        var sessions: [String: JSONValue] = [:]
        var histories: [String: JSONValue] = [:]
        var replays: [String: JSONValue] = [:]
        var list: JSONValue = .null
        var keyedPush: (status: Int, body: [UInt8]) = (0, [])
        var main: TestSession?
        var compacted: TestSession?
        var ended: TestSession?
        var purgedID = ""
        var sheet = ""
        var observerToken = ""
        var stamps: [SessionState: [SessionStamp]] = [:]
    }

    /// How many migrations the old file has: the schema before 0007, and the one before 0008.
    @Test(arguments: [6, 7])
    func aFileOfAnOlderSchemaUpgradesInPlaceAndKeepsEverything(applied: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-upgrade-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let filled = folder.appendingPathComponent("filled.sqlite").path
        let old = folder.appendingPathComponent("old.sqlite").path

        let seen = try await withRunningServer(databasePath: filled, configure: configure) { client, server in
            try await fill(client, server)
        }
        try copyIntoTheOldSchema(from: filled, to: old, applied: applied)

        let main = try #require(seen.main)
        let compacted = try #require(seen.compacted)
        try await withRunningServer(databasePath: old, configure: configure) { client, server in
            #expect(try Migrator().appliedMigrations(in: Database(path: old)).count == Migration.embedded.count)
            // Retention finds the old sessions through the new index as it did: oldest change first.
            let store = try #require(server.service.store as? any SessionStoreMaintenance)
            let farFuture = Date().addingTimeInterval(86_400)
            for state in [SessionState.active, .ended] {
                let found = try await store.sessions(in: state, updatedBefore: farFuture, limit: 100)
                #expect(found == seen.stamps[state], "\(state)")
            }
            // Every session, history and replay as before.
            for (id, shown) in seen.sessions {
                let answer = try await client.send("GET", "/v1/sessions/\(id)", token: client.adminToken)
                #expect(answer.json == shown, "session \(id)")
            }
            for (query, history) in seen.histories {
                let answer = try await client.send("GET", query, token: client.adminToken)
                #expect(answer.json == history, "\(query)")
            }
            for (query, replay) in seen.replays {
                let answer = try await client.send("GET", query, token: client.adminToken)
                #expect(answer.json == replay, "\(query)")
            }
            #expect(try await client.send("GET", "/v1/sessions?limit=100", token: client.adminToken).json == seen.list)
            // The compacted point, the ended session, the tombstone, the observer token and the
            // idempotency record are all still there.
            expectProblem(try await compacted.on(client).send("GET", "/history?after=0"), 410, type: "events-compacted")
            let ended = try #require(seen.ended)
            expectProblem(try await ended.on(client).send("POST", "/push", json: ["name": "X"]), 410, type: "gone")
            let tombstone = try await client.send(
                "GET", "/v1/sessions/\(seen.purgedID)/history", token: client.adminToken)
            #expect(tombstone.status == 410, "\(tombstone.text)")
            let observed = try await client.send("GET", "/v1/sessions/\(main.id)", token: seen.observerToken)
            #expect(observed.status == 200)
            let retried = try await main.on(client).send(
                "POST", "/stacks/\(seen.sheet)/push", json: ["name": "Keyed"],
                headers: ["Idempotency-Key": "upgrade-key"])
            #expect(retried.status == seen.keyedPush.status && retried.body == seen.keyedPush.body)
            #expect(try await main.on(client).get() == seen.sessions[main.id])

            // New mutations work on the old sessions and on new ones.
            let session = main.on(client)
            let pushed = try await session.push("After", onto: seen.sheet)
            try await session.handle(pushed, "selection", passBack: false)
            try await session.patch("root", ["title": "after"])
            // Popping Detail dismisses the sheet it presents: its screens, rows and stack go.
            try await session.pop()
            expectProblem(try await session.send("GET", "/stacks/\(seen.sheet)"), 404, type: "not-found")
            let fresh = try await TestSession.create(client, ["root": ["name": "Fresh", "values": ["title": "f"]]])
            let freshPush = try await fresh.push("Detail", values: ["title": "d"])
            try await fresh.publish(freshPush, "selection", "x")
            #expect(try await fresh.get()["version"] == 3)
            let replayed = try await session.send("GET", "/replay")
            #expect(replayed.json == (try await session.get()))

            // A purge cascades through every table, old rows and new.
            #expect(try await session.send("DELETE", "?purge=true").status == 204)
            #expect(try await compacted.on(client).send("DELETE", "?purge=true").status == 204)
        }

        let db = try Database(path: old)
        #expect(try db.fetchAll("PRAGMA integrity_check") { $0.string(0) } == ["ok"])
        #expect(try db.fetchAll("PRAGMA foreign_key_check") { $0.string(0) }.isEmpty)
        for id in [main.id, compacted.id] {
            #expect(try count(db, "SELECT count(*) FROM sessions WHERE id = ?", id) == 0)
            for table in Self.sessionTables {
                #expect(try count(db, "SELECT count(*) FROM \(table) WHERE session = ?", id) == 0, "\(table) of \(id)")
            }
        }
        for table in Self.screenTables {
            let orphans = try count(
                db, "SELECT count(*) FROM \(table) WHERE screen NOT IN (SELECT id FROM screen_contexts)")
            #expect(orphans == 0, "\(table)")
            #expect(try count(db, "SELECT count(*) FROM \(table)") > 0, "\(table) still has the fresh session's rows")
        }
        // updated_minute is updated_at's minute in every row, old and new.
        #expect(
            try count(db, "SELECT count(*) FROM sessions WHERE updated_minute IS NOT updated_at - updated_at % 60000")
                == 0)
        // The rebuilt table has no rowid any more.
        #expect(throws: StoreError.self) { try db.execute("SELECT rowid FROM screen_contexts") }
    }

    /// Makes the sessions the upgrade must keep, and records what the server showed of them.
    func fill(_ client: TestClient, _ server: NavigationValuesServer) async throws -> Seen {
        var seen = Seen()
        let schema: JSONValue = [
            "values": ["title": ["type": "string", "default": ""]],
            "preferences": ["selection": ["type": "string", "default": ""]],
        ]
        // A session compacted behind a snapshot (first: compaction applies to every session).
        let compacted = try await TestSession.create(client)
        for index in 0..<10 {
            if index % 3 == 2 { try await compacted.pop() } else { try await compacted.push("C\(index)") }
        }
        let report = try await server.service.retention.run(RetentionPolicy(compaction: CompactionRule(keepEvents: 3)))
        #expect(report.compactedEvents > 0)

        // Screens in main, a tab and a sheet; values, handlers with last values, received
        // preferences, snapshots every 4 events, an idempotency record and an observer token.
        let main = try await TestSession.create(
            client, ["schema": schema, "root": ["name": "Home", "values": ["title": "h"]]])
        let list = try await main.push("List", values: ["title": "l"])
        try await main.handle("root", "selection", passBack: true)
        try await main.handle(list, "selection", passBack: true)
        let detail = try await main.push("Detail")
        try await main.publish(detail, "selection", "item-1")
        _ = try await main.addTab("contacts", root: "Contacts")
        let (sheet, sheetRoot) = try await main.present(from: detail, root: "Compose")
        let draft = try await main.push("Draft", onto: sheet)
        try await main.patch(sheetRoot, ["title": "compose"])
        try await main.patch(draft, ["title": "draft", "extra": ["nested": [1, 2]]])
        try await main.publish(draft, "selection", "item-2")
        let keyed = try await main.send(
            "POST", "/stacks/\(sheet)/push", json: ["name": "Keyed"], headers: ["Idempotency-Key": "upgrade-key"])
        #expect(keyed.status == 201)
        seen.keyedPush = (keyed.status, keyed.body)
        let observer = try await client.observer(["session": .string(main.id)], token: main.token)
        seen.observerToken = try #require(observer["token"]?.stringValue)

        // An ended session, a fork and a purged one.
        let ended = try await TestSession.create(client)
        _ = try await ended.push("E")
        #expect(try await ended.send("DELETE").status == 204)
        let fork = try await client.send(
            "POST", "/v1/sessions/fork", json: ["session": .string(main.id)], token: main.token)
        #expect(fork.status == 201)
        let forkID = try #require(fork.json?["id"]?.stringValue)
        let purged = try await TestSession.create(client)
        #expect(try await purged.send("DELETE", "?purge=true").status == 204)

        for session in [main, compacted, ended] {
            seen.sessions[session.id] = try await session.get()
        }
        seen.sessions[forkID] = try await read(client, "/v1/sessions/\(forkID)")
        let mainVersion = try #require(seen.sessions[main.id]?["version"]?.integerValue)
        for at in [1, 2, 5, 8, 9, mainVersion] as [Int64] {
            let query = "/v1/sessions/\(main.id)/replay?at=\(at)"
            seen.replays[query] = try await read(client, query)
        }
        let compactedVersion = try #require(seen.sessions[compacted.id]?["version"]?.integerValue)
        let oldest = try #require(
            try await compacted.send("GET", "/history?after=0").json?["oldestSeq"]?.integerValue)
        for at in [oldest, compactedVersion] {
            let query = "/v1/sessions/\(compacted.id)/replay?at=\(at)"
            seen.replays[query] = try await read(client, query)
        }
        for (id, after) in [(main.id, 0), (main.id, 7), (compacted.id, oldest), (ended.id, 0), (forkID, 0)] {
            let query = "/v1/sessions/\(id)/history?after=\(after)&limit=1000"
            seen.histories[query] = try await read(client, query)
            let poll = "/v1/sessions/\(id)/events?after=\(after)"
            seen.histories[poll] = try await read(client, poll)
        }
        for (query, answer) in seen.histories.merging(seen.replays, uniquingKeysWith: { a, _ in a }) {
            #expect(answer["type"] == nil, "\(query) answered a problem: \(answer)")
        }
        seen.list = try await client.send("GET", "/v1/sessions?limit=100", token: client.adminToken).json ?? .null
        let store = try #require(server.service.store as? any SessionStoreMaintenance)
        for state in [SessionState.active, .ended] {
            seen.stamps[state] = try await store.sessions(
                in: state, updatedBefore: Date().addingTimeInterval(86_400), limit: 100)
            #expect(seen.stamps[state]?.isEmpty == false, "\(state)")
        }
        seen.main = main
        seen.compacted = compacted
        seen.ended = ended
        seen.purgedID = purged.id
        seen.sheet = sheet
        return seen
    }

    /// Creates `old` with the first `applied` migrations and copies every row of `filled` into it
    /// (the old schema's columns), in one transaction with foreign keys checked at its end.
    func copyIntoTheOldSchema(from filled: String, to old: String, applied: Int) throws {
        let db = try Database(path: old)
        try Migrator(migrations: Array(Migration.embedded.prefix(applied))).migrate(db)
        #expect(
            try Migrator().pendingMigrations(in: db).map(\.version) == Array((applied + 1)...Migration.embedded.count))
        try db.execute("ATTACH DATABASE ? AS filled", [.text(filled)])
        try db.inTransaction(.immediate) {
            try db.execute("PRAGMA defer_foreign_keys = ON")
            for table in Self.tables {
                let columns = try db.fetchAll("SELECT name FROM pragma_table_info(?, 'main')", [.text(table)]) {
                    "\"\($0.string(0))\""
                }.joined(separator: ", ")
                try db.execute("INSERT INTO main.\(table) (\(columns)) SELECT \(columns) FROM filled.\(table)")
                let copied = try count(db, "SELECT count(*) FROM main.\(table)")
                #expect(copied == (try count(db, "SELECT count(*) FROM filled.\(table)")), "\(table)")
                if table != "readiness_probe" {
                    #expect(copied > 0, "the filled server wrote no row of \(table)")
                }
            }
        }
        try db.execute("DETACH DATABASE filled")
        #expect(try db.fetchAll("PRAGMA foreign_key_check") { $0.string(0) }.isEmpty)
    }

    /// `GET path` with the admin token, which must answer 200 with JSON.
    func read(_ client: TestClient, _ path: String) async throws -> JSONValue {
        let answer = try await client.send("GET", path, token: client.adminToken)
        try #require(answer.status == 200, "GET \(path) answered \(answer.status): \(answer.text)")
        return try #require(answer.json)
    }

    func count(_ db: Database, _ sql: String, _ argument: String? = nil) throws -> Int {
        try db.fetchOne(sql, argument.map { [.text($0)] } ?? []) { $0.int(0) } ?? -1
    }
}
