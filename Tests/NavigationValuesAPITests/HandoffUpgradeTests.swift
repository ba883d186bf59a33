import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesPostgres
import NavigationValuesSQLite
import NavigationValuesStore
import TestSupport
import Testing

/// Databases made before hand-offs are upgraded in place (SQLite's 0011, PostgreSQL's 0010) and
/// take them: a session written before the upgrade is handed off and joined after it.
@Suite struct HandoffUpgradeTests {
    func redeem(_ client: TestClient, session id: String, token: String) async throws -> String {
        let made = try await client.send("POST", "/v1/sessions/\(id)/handoff", token: token)
        try #require(made.status == 201, "\(made.text)")
        let code = try #require(made.json?["code"]?.stringValue)
        let joined = try await client.send("POST", "/v1/handoffs/redeem", json: ["code": .string(code)])
        try #require(joined.status == 200, "\(joined.text)")
        #expect(joined.json?["id"] == .string(id))
        return try #require(joined.json?["token"]?.stringValue)
    }

    /// The earlier release's file (EarlierReleaseDatabaseTests): its session is handed off after
    /// the upgrade, and the device joined with it keeps working after a restart.
    @Test func anEarlierReleasesFileTakesHandoffsOfItsSessions() async throws {
        let folder = try EarlierReleaseDatabaseTests.copyFixture()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("copy.sqlite").path
        let before = try Database(path: path, access: .readOnly).fetchAll(
            "SELECT version FROM schema_migrations ORDER BY version"
        ) { $0.int64(0) }
        #expect(before.last.map { $0 < 11 } == true)
        let id = EarlierReleaseDatabaseTests.sessionID
        let device = try await withRunningServer(databasePath: path, configure: EarlierReleaseDatabaseTests.configure) {
            client, _ in
            try await redeem(client, session: id, token: EarlierReleaseDatabaseTests.token)
        }
        try await withRunningServer(databasePath: path, configure: EarlierReleaseDatabaseTests.configure) { client, _ in
            let pushed = try await client.send(
                "POST", "/v1/sessions/\(id)/push", json: ["name": "FromTheTablet"], token: device)
            #expect(pushed.status == 201, "\(pushed.text)")
        }
        let tables = try Database(path: path, access: .readOnly).fetchAll(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN ('handoffs', 'device_tokens') ORDER BY name"
        ) { $0.string(0) }
        #expect(tables == ["device_tokens", "handoffs"])
    }

    /// A PostgreSQL database at today's schema before hand-offs (the migrations before theirs)
    /// with a session in it: the server upgrades it on start, and the session is handed off.
    @Test(.needsPostgres) func aPostgreSQLDatabaseAtTheEarlierSchemaTakesHandoffsOfItsSessions() async throws {
        try await PostgresTestServer.withDatabase { url in
            // A session made by a server, then the database taken back to the earlier schema: the
            // hand-off tables dropped and their migrations forgotten, as before the upgrade.
            let (id, token) = try await withRunningServer(databasePath: url, configure: { $0.postgres.readerCount = 1 })
            { client, _ in
                let created = try await client.send("POST", "/v1/sessions", json: ["root": ["name": "Home"]])
                return (
                    try #require(created.json?["id"]?.stringValue), try #require(created.json?["token"]?.stringValue)
                )
            }
            let handoffs = try #require(Migration.embeddedPostgres.first { $0.name == "add_handoffs" }).version
            try await PostgresTestServer.psql(
                url,
                """
                DROP TABLE handoffs; DROP TABLE device_tokens;
                DELETE FROM schema_migrations WHERE version >= \(handoffs);
                """)
            let earlier = PostgresMigrator(
                migrations: Migration.embeddedPostgres.filter { $0.version < handoffs })
            #expect(try earlier.pendingMigrations(url: url).isEmpty)
            try await withRunningServer(databasePath: url, configure: { $0.postgres.readerCount = 1 }) { client, _ in
                let device = try await redeem(client, session: id, token: token)
                let pushed = try await client.send(
                    "POST", "/v1/sessions/\(id)/push", json: ["name": "FromTheTablet"], token: device)
                #expect(pushed.status == 201, "\(pushed.text)")
            }
        }
    }
}
