import Foundation
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesPostgres
@testable import NavigationValuesStore

/// Migrations/postgres/0009 (log-first commits) upgrades a database written by the schema before
/// it in place: its sessions read as they were, at their logs' ends; a log-first commit checks the
/// version its log reaches; `session_versions` tells the log's version from the state's; and a
/// binary without the migration refuses the database, since it would take the state's version
/// for the session's.
@Suite(.needsPostgres) struct PostgresLogFirstUpgradeTests {
    let sample = SampleSession()

    @Test func theMigrationUpgradesADatabaseOfTheSchemaBeforeIt() async throws {
        try await PostgresTestServer.withDatabase { url in
            let before = Array(Migration.embeddedPostgres.prefix(8))
            try PostgresMigrator(migrations: before).migrate(url: url)
            // A session as the schema before wrote it: its state at its log's end.
            try await PostgresTestServer.psql(
                url,
                """
                INSERT INTO sessions (id, version, state, schema, token_hash, created_at, updated_at)
                VALUES ('s_sample', 1, 'active', '{"strict":false}', 'ab12', to_timestamp(1796000000), to_timestamp(1796000001));
                INSERT INTO screen_contexts (id, session, idx, name, role) VALUES ('c_s_sample_0', 's_sample', 0, 'Home', 'navigationStack');
                INSERT INTO events (session, seq, type, json, at, bytes)
                VALUES ('s_sample', 1, 'session.created', '{"seq":1}', to_timestamp(1796000001), 9);
                """)

            var configuration = PostgresSessionStore.Configuration.testing()
            configuration.writeBehind = WriteBehind(maximumEvents: 1_000, maximumDelay: .seconds(60), isHeldForTests: true)
            let store = try await PostgresSessionStore.open(url: url, configuration: configuration)
            let applied = try PostgresMigrator().appliedMigrations(url: url)
            // This migration and every later one.
            #expect(applied.map(\.version) == Migration.embeddedPostgres.map(\.version))
            #expect(applied.map(\.version).contains(9))
            #expect(try await Self.versions(url) == [["s_sample", "1", "1"]])
            let loaded = try #require(try await store.loadSession(sample.id))
            #expect(loaded.record.version == 1)
            #expect(loaded.screens.map(\.record.name) == ["Home"])

            // A log-first commit: its event only, checked against the log; a stale one conflicts.
            try await store.commit(sample.mutation(2, [.setValue(sample.root, key: "page", json: "2")]))
            #expect(try await Self.versions(url) == [["s_sample", "2", "1"]])
            #expect(try await store.version(of: sample.id) == 2)
            await expectStoreError(.conflict) {
                try await store.commit(sample.mutation(2, [.setValue(sample.root, key: "page", json: "3")]))
            }
            let caughtUp = try #require(try await store.loadSession(sample.id))
            #expect(caughtUp.record.version == 2)
            #expect(caughtUp.screens.first?.values == ["page": "2"])
            #expect(try await Self.versions(url) == [["s_sample", "2", "2"]])
            await store.close()

            // The binary before this migration refuses the database.
            let error = #expect(throws: StoreError.self) { try PostgresMigrator(migrations: before).pendingMigrations(url: url) }
            #expect(error?.code == .migrationRefused)
        }
    }

    static func versions(_ url: String) async throws -> [[String]] {
        try await PostgresTestServer.psqlRows(url, "SELECT id, version, state_version FROM session_versions ORDER BY id")
    }
}
