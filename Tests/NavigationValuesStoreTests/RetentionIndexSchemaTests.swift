import Foundation
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

/// Migration 0008 moves retention's index from (state, updated_at) to (state, updated_minute) and
/// changes nothing else; it fills updated_minute for the rows already there, retention's query
/// still finds its rows through the index, and an ordinary change no longer writes a page of it.
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

    /// The pages a commit wrote: the page numbers of the write-ahead log's frames from `start`
    /// on (those of its current generation: a frame's salts match the header's).
    static func framePages(of path: String, from start: Int = 0) throws -> (count: Int, pages: [Int]) {
        let log = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        let bytes = [UInt8](log)
        func word(_ offset: Int) -> UInt32 {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        guard bytes.count >= 32 else { return (0, []) }
        let pageSize = Int(word(8))
        let salts = (word(16), word(20))
        var pages: [Int] = []
        var offset = 32
        while offset + 24 + pageSize <= bytes.count, (word(offset + 8), word(offset + 12)) == salts {
            pages.append(Int(word(offset)))
            offset += 24 + pageSize
        }
        return (pages.count, Array(pages.dropFirst(start)))
    }

    /// What a commit writes: no page of retention's index for an ordinary change within a minute;
    /// a page of it when the change crosses into another minute, or ends the session. Pages are
    /// told apart by `dbstat`, which maps each page to its b-tree.
    @Test func anOrdinaryChangeWritesNoPageOfRetentionsIndex() async throws {
        try await withTemporaryDatabase { path in
            let minute = Date(millisecondsSince1970: 1_796_000_040_000)
            let sessions = (0..<50).map { SampleSession("s_\($0)", at: minute) }
            let store = try SQLiteSessionStore(path: path)
            for session in sessions { try await store.commit(session.creation) }
            func commitWrites(_ mutation: StoredMutation) async throws -> Set<String> {
                let before = try Self.framePages(of: path).count
                try await store.commit(mutation)
                let written = try Self.framePages(of: path, from: before).pages
                let db = try Database(path: path, access: .readOnly)
                let owners = try db.fetchAll("SELECT pageno, name FROM dbstat") { ($0.int(0), $0.string(1)) }
                let owner = Dictionary(owners, uniquingKeysWith: { first, _ in first })
                return Set(written.compactMap { owner[$0] })
            }
            func change(_ session: SampleSession, seconds: Double, _ state: SessionState = .active)
                -> StoredMutation
            {
                StoredMutation(
                    session: session.id, event: session.event(2),
                    changes: [
                        .updateSession(
                            session.id, version: 2, state: state, updatedAt: minute.addingTimeInterval(seconds))
                    ])
            }
            let index = "sessions_by_state_and_updated_minute"
            let ordinary = try await commitWrites(change(sessions[10], seconds: 30))
            #expect(ordinary.contains("sessions") && ordinary.contains("events"), "\(ordinary)")
            #expect(!ordinary.contains(index), "\(ordinary)")
            let crossing = try await commitWrites(change(sessions[20], seconds: 61))
            #expect(crossing.contains(index), "\(crossing)")
            let ending = try await commitWrites(change(sessions[30], seconds: 31, .ended))
            #expect(ending.contains(index), "\(ending)")
            await store.close()
        }
    }
}
