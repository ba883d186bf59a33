import Foundation
import NavigationValuesStore
import TestSupport
import Testing

/// Migration 0008 moves retention's index from (state, updated_at) to (state, updated_minute) and
/// changes nothing else; it fills updated_minute for the rows already there, and retention's
/// query still finds its rows through the index.
@Suite struct RetentionIndexSchemaTests {
    @Test func onlySessionsChangesAColumnAndItsRetentionIndex() throws {
        let shapes = RowidFreeSchemaTests()
        let before = try shapes.shapes(Array(Migration.embedded.prefix(7)))
        let after = try shapes.shapes(Array(Migration.embedded.prefix(8)))
        #expect(before.keys.sorted() == after.keys.sorted())
        for (table, old) in before where table != "sessions" {
            #expect(after[table] == old, "\(table)")
        }
        let old = try #require(before["sessions"])
        let new = try #require(after["sessions"])
        #expect(new.columns == old.columns + ["updated_minute INTEGER notnull=1 default=0"])
        #expect(new.foreignKeys == old.foreignKeys)
        #expect(new.checks == old.checks)
        #expect(new.isWithoutRowid == old.isWithoutRowid)
        #expect(old.indexes.contains("state,updated_at unique=0 partial=0 created"))
        #expect(
            new.indexes
                == old.indexes.subtracting(["state,updated_at unique=0 partial=0 created"]).union([
                    "state,updated_minute unique=0 partial=0 created"
                ]))
    }

    @Test func theMigrationFillsEachRowsMinute() throws {
        let db = try Database(path: ":memory:")
        try Migrator(migrations: Array(Migration.embedded.prefix(7))).migrate(db)
        // A minute's first and last millisecond, one in between, 0, and a time before 1970.
        let times: [Int64] = [1_796_000_040_000, 1_796_000_099_999, 1_796_000_061_234, 0, -1_234]
        for (index, time) in times.enumerated() {
            try db.execute(
                """
                INSERT INTO sessions (id, version, state, token_hash, created_at, updated_at)
                VALUES (?, 1, 'active', 'ab', ?, ?)
                """, [.text("s_\(index)"), .integer(time), .integer(time)])
        }
        try Migrator().migrate(db)
        let minutes = try db.fetchAll("SELECT updated_minute FROM sessions ORDER BY id") { $0.int64(0) }
        // SQLite's % truncates toward zero, as the store's statements do.
        #expect(minutes == [1_796_000_040_000, 1_796_000_040_000, 1_796_000_040_000, 0, 0])
    }

    /// Retention's query, as the store runs it, searches the index
    /// on both of its columns and never scans the table; only the rows of one minute are sorted
    /// by updated_at (the right part of the ORDER BY).
    @Test func retentionsQuerySearchesTheIndex() throws {
        let db = try Database(path: ":memory:")
        try Migrator().migrate(db)
        let plan = try db.fetchAll(
            "EXPLAIN QUERY PLAN \(SQLiteSessionStore.sessionsByStateAndAge)",
            [.text("active"), .integer(1_796_000_040_000), .integer(100)]
        ) { $0.string(3) }
        #expect(
            plan == [
                "SEARCH sessions USING INDEX sessions_by_state_and_updated_minute (state=? AND updated_minute<?)",
                "USE TEMP B-TREE FOR RIGHT PART OF ORDER BY",
            ], "\(plan)")
    }
}
