import Foundation
import NavigationValuesPostgres
import NavigationValuesSQLite
import NavigationValuesStore
import TestSupport
import Testing

@Suite struct MigratorTests {
    static let tables: Set<String> = [
        "schema_migrations", "sessions", "screen_contexts", "context_values", "preference_handlers",
        "received_preferences", "events", "snapshots", "idempotency_keys", "purged_sessions", "screen_stacks",
        "observer_tokens", "readiness_probe", "handoffs", "device_tokens",
    ]

    func tableNames(_ db: Database) throws -> Set<String> {
        Set(try db.fetchAll("SELECT name FROM sqlite_schema WHERE type = 'table'") { $0.string(0) })
    }

    @Test func migratingAnEmptyFileCreatesEveryTableAndRecordsTheMigration() async throws {
        try await withTemporaryDatabase { path in
            let db = try Database(path: path)
            let applied = try Migrator().migrate(db, now: Date(millisecondsSince1970: 1_000))
            #expect(applied == Migration.embedded)
            #expect(try tableNames(db) == Self.tables)
            let records = try Migrator().appliedMigrations(in: db)
            #expect(
                records
                    == Migration.embedded.map {
                        AppliedMigration(
                            version: $0.version, name: $0.name, checksum: $0.checksum,
                            appliedAt: Date(millisecondsSince1970: 1_000))
                    })
            #expect(try db.fetchOne("PRAGMA foreign_key_check") { $0.string(0) } == nil)
        }
    }

    @Test func migratingAgainChangesNothing() async throws {
        try await withTemporaryDatabase { path in
            let first = try Database(path: path)
            try Migrator().migrate(first)
            let schemaVersion = try first.fetchOne("PRAGMA schema_version") { $0.int64(0) }
            let records = try Migrator().appliedMigrations(in: first)

            // A second connection, as after a restart.
            let second = try Database(path: path)
            #expect(try Migrator().migrate(second).isEmpty)
            #expect(try second.fetchOne("PRAGMA schema_version") { $0.int64(0) } == schemaVersion)
            #expect(try Migrator().appliedMigrations(in: second) == records)
        }
    }

    @Test func theChecksumIsTheSHA256OfTheFile() async throws {
        for migration in Migration.embedded {
            let bytes = try Data(contentsOf: repositoryRoot.appendingPathComponent("Migrations/\(migration.fileName)"))
            let sum = try await ChildProcess.output(
                of: URL(fileURLWithPath: "/usr/bin/sha256sum"),
                arguments: [repositoryRoot.appendingPathComponent("Migrations/\(migration.fileName)").path])
            #expect(sum.hasPrefix(migration.checksum + " "))
            #expect(bytes == Data(migration.sql.utf8))
        }
    }

    @Test func anEditedMigrationIsRefused() async throws {
        try await withTemporaryDatabase { path in
            try Migrator().migrate(Database(path: path))
            var edited = Migration.embedded
            edited[0].sql += "CREATE TABLE extra (id INTEGER);\n"
            let error = await expectStoreError(.migrationRefused) {
                try Migrator(migrations: edited).migrate(Database(path: path))
            }
            #expect(error?.message.contains("0001_create_schema.sql") == true)
        }
    }

    /// A binary whose list of migrations has a gap, a repeat or a number out of order is refused
    /// with an error naming it, by both migrators, before any database is touched (the check is
    /// a function of the list alone); constructing a migrator with such a list no longer traps.
    @Test func aListOfMigrationsWithAGapIsRefusedNamingIt() async throws {
        func list(_ versions: [Int]) -> [Migration] {
            versions.map { Migration(version: $0, name: "step_\($0)", sql: "SELECT \($0);") }
        }
        let refused: [([Int], String)] = [
            ([1, 3], "migration 2 is missing, before 0003_step_3.sql"),
            ([1, 2, 6], "migrations 3 to 5 are missing, before 0006_step_6.sql"),
            ([2, 3], "migration 1 is missing, before 0002_step_2.sql"),
            ([1, 2, 2], "0002_step_2.sql follows 0002_step_2.sql: a number repeats or goes back"),
            ([0, 1], "the first is 0000_step_0.sql, numbered 0; numbers start at 1"),
        ]
        for (versions, problem) in refused {
            let error = await expectStoreError(.migrationRefused) { try Migration.checkNumbering(list(versions)) }
            #expect(
                error?.message == "this binary's migrations are not numbered 1, 2, 3… without gaps: \(problem)",
                "\(versions)")
            await expectStoreError(.migrationRefused) {
                _ = try Migration.pending(after: [], of: list(versions))
            }
        }
        try Migration.checkNumbering(list([1, 2, 3]))
        try Migration.checkNumbering([])
        try Migration.checkNumbering(Migration.embedded)
        try Migration.checkNumbering(Migration.embeddedPostgres)

        // Both migrators take such a list and refuse it when they would migrate.
        let gapped = list([1, 3])
        #expect(PostgresMigrator(migrations: gapped).migrations == gapped)
        try await withTemporaryDatabase { path in
            let error = await expectStoreError(.migrationRefused) {
                try Migrator(migrations: gapped).migrate(Database(path: path))
            }
            #expect(error?.message.contains("migration 2 is missing") == true)
            let applied = try Migrator().appliedMigrations(in: try Database(path: path))
            #expect(applied.isEmpty)
        }
    }

    @Test func aTamperedChecksumInTheDatabaseIsRefusedByTheStore() async throws {
        try await withTemporaryDatabase { path in
            let db = try Database(path: path)
            try Migrator().migrate(db)
            try db.execute(
                "UPDATE schema_migrations SET checksum = ? WHERE version = 1",
                [.text(String(repeating: "0", count: 64))])
            await expectStoreError(.migrationRefused) { _ = try SQLiteSessionStore(path: path) }
        }
    }

    @Test func aDatabaseNewerThanTheBinaryIsRefused() async throws {
        try await withTemporaryDatabase { path in
            let db = try Database(path: path)
            try Migrator().migrate(db)
            try db.execute(
                "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
                [.integer(Migration.embedded.count + 1), .text("add_future"), .text("ff"), .integer(0)])
            let error = await expectStoreError(.migrationRefused) { _ = try SQLiteSessionStore(path: path) }
            #expect(error?.message.contains("newer than this binary") == true)
        }
    }

    @Test func aMigrationNumberedZeroIsRefused() async throws {
        try await withTemporaryDatabase { path in
            let db = try Database(path: path)
            try Migrator().migrate(db)
            try db.execute("UPDATE schema_migrations SET version = 0 WHERE version = 1")
            await expectStoreError(.migrationRefused) { try Migrator().migrate(db) }
        }
    }

    @Test func aDatabaseOfSomethingElseIsRefused() async throws {
        try await withTemporaryDatabase { path in
            try Database(path: path).execute("CREATE TABLE other (id INTEGER)")
            await expectStoreError(.migrationRefused) { try Migrator().migrate(Database(path: path)) }
        }
    }

    @Test func laterMigrationsApplyInOrderEachRecorded() async throws {
        try await withTemporaryDatabase { path in
            let db = try Database(path: path)
            try Migrator().migrate(db)
            let next = Migration.embedded.count + 1
            let later = Migration(
                version: next, name: "add_notes", sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY);\n")
            let applied = try Migrator(migrations: Migration.embedded + [later]).migrate(db)
            #expect(applied == [later])
            #expect(try tableNames(db).contains("notes"))
            #expect(
                try Migrator(migrations: Migration.embedded + [later]).appliedMigrations(in: db).map(\.version)
                    == Array(1...next))
        }
    }

    @Test func aFailingMigrationLeavesNoTrace() async throws {
        try await withTemporaryDatabase { path in
            let db = try Database(path: path)
            let broken = Migration(
                version: Migration.embedded.count + 1, name: "add_broken",
                sql: "CREATE TABLE half (id INTEGER);\nCREATE TABLE sessions (id INTEGER);\n")
            let error = await expectStoreError(.failed) {
                try Migrator(migrations: Migration.embedded + [broken]).migrate(db)
            }
            // The embedded migrations committed each on its own; the broken one rolled back whole.
            let why = "the migrator's error: \(error.map { "\($0)" } ?? "none")"
            #expect(!db.isInTransaction, "\(why)")
            #expect(try Migrator().appliedMigrations(in: db).map(\.version) == Array(1...Migration.embedded.count))
            #expect(try !tableNames(db).contains("half"), "\(why)")
        }
    }
}
