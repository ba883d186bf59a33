import Foundation
import NavigationValuesSQLite
import NavigationValuesStore
import TestSupport
import Testing

/// Migration 0007 rebuilds screen_contexts (with the tables that reference it) WITHOUT ROWID and
/// changes nothing else: every column, CHECK, foreign key and index of the schema before
/// it is still there, and the store's reads still find their order in an index, not in a sort.
@Suite struct RowidFreeSchemaTests {
    /// A table's shape, compared before and after the migration.
    struct Shape: Equatable, CustomStringConvertible {
        var columns: [String]
        var foreignKeys: [String]
        var indexes: Set<String>
        var checks: [String]
        var isWithoutRowid: Bool
        var description: String { "\(columns) \(foreignKeys) \(indexes.sorted()) \(checks) \(isWithoutRowid)" }
    }

    func shapes(_ migrations: [Migration]) throws -> [String: Shape] {
        let db = try Database(path: ":memory:")
        try Migrator(migrations: migrations).migrate(db)
        let tables = try db.fetchAll(
            "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        ) { ($0.string(0), $0.string(1)) }
        var shapes: [String: Shape] = [:]
        for (table, sql) in tables {
            let argument: [DatabaseValue] = [.text(table)]
            let columns = try db.fetchAll(
                "SELECT name, type, \"notnull\", dflt_value, hidden FROM pragma_table_xinfo(?) ORDER BY cid", argument
            ) { "\($0.string(0)) \($0.string(1)) notnull=\($0.int(2)) default=\($0.optionalString(3) ?? "-")" }
            let foreignKeys = try db.fetchAll(
                "SELECT \"table\", \"from\", \"to\", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq",
                argument
            ) {
                "\($0.string(1)) → \($0.string(0))(\($0.optionalString(2) ?? "")) update \($0.string(3)) delete \($0.string(4))"
            }
            let indexes = try db.fetchAll(
                """
                SELECT il."unique", il.partial, il.origin,
                       (SELECT group_concat(name, ',') FROM pragma_index_info(il.name))
                FROM pragma_index_list(?) AS il
                """, argument
            ) { row in
                // A PRIMARY KEY or UNIQUE constraint's index ('pk' or 'u') is compared by its columns
                // and uniqueness: on a WITHOUT ROWID table the primary key's is the table's own b-tree.
                let origin = row.string(2) == "c" ? "created" : "constraint"
                return "\(row.string(3)) unique=\(row.int(0)) partial=\(row.int(1)) \(origin)"
            }
            shapes[table] = Shape(
                columns: columns, foreignKeys: foreignKeys, indexes: Set(indexes), checks: Self.checks(in: sql),
                isWithoutRowid: sql.hasSuffix("WITHOUT ROWID"))
        }
        return shapes
    }

    /// The CHECK clauses of a CREATE TABLE statement, in order, without comments or spacing.
    static func checks(in sql: String) -> [String] {
        let text = sql.split(separator: "\n").map { line in
            line.range(of: "--").map { String(line[..<$0.lowerBound]) } ?? String(line)
        }.joined(separator: " ").filter { !$0.isWhitespace }
        var checks: [String] = []
        var rest = Substring(text)
        while let start = rest.range(of: "CHECK(") {
            var depth = 1
            var index = start.upperBound
            while index < rest.endIndex, depth > 0 {
                if rest[index] == "(" { depth += 1 } else if rest[index] == ")" { depth -= 1 }
                index = rest.index(after: index)
            }
            checks.append(String(rest[start.lowerBound..<index]))
            rest = rest[index...]
        }
        return checks
    }

    @Test func everyColumnCheckForeignKeyAndIndexSurvivesTheRebuild() throws {
        let before = try shapes(Array(Migration.embedded.prefix(6)))
        let after = try shapes(Array(Migration.embedded.prefix(7)))
        #expect(before.keys.sorted() == after.keys.sorted())
        let rebuilt: Set = ["screen_contexts"]
        for (table, old) in before {
            let new = try #require(after[table])
            var expected = old
            if rebuilt.contains(table) { expected.isWithoutRowid = true }
            #expect(new == expected, "\(table)")
        }
        // The tables that already were WITHOUT ROWID still are; screen_contexts now is, and events
        // stays a rowid table (0007 says why).
        #expect(
            after.filter(\.value.isWithoutRowid).keys.sorted() == [
                "context_values", "idempotency_keys", "preference_handlers", "purged_sessions",
                "received_preferences", "screen_contexts", "screen_stacks", "snapshots",
            ])
    }

    @Test func theStoresReadsFollowAnIndexAndNeverSort() throws {
        let db = try Database(path: ":memory:")
        try Migrator().migrate(db)
        let reads: [(String, [DatabaseValue])] = [
            (
                "SELECT seq, type, json, at FROM events WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?",
                [.text("s_1"), .integer(0), .integer(10)]
            ),
            ("DELETE FROM events WHERE session = ?1 AND seq <= ?2", [.text("s_1"), .integer(5)]),
            (
                "SELECT id, idx, name, role, previous, stack FROM screen_contexts WHERE session = ? ORDER BY stack, idx",
                [.text("s_1")]
            ),
            ("DELETE FROM screen_contexts WHERE id = ?", [.text("c_1")]),
            ("SELECT id FROM screen_contexts WHERE previous = ?", [.text("c_1")]),
        ]
        for (sql, arguments) in reads {
            let plan = try db.fetchAll("EXPLAIN QUERY PLAN \(sql)", arguments) {
                $0.string(3)
            }
            #expect(!plan.isEmpty, "\(sql)")
            #expect(plan.allSatisfy { !$0.contains("TEMP B-TREE") && !$0.hasPrefix("SCAN") }, "\(sql): \(plan)")
        }
    }
}
