import Foundation
import NavigationValuesSQLite
import NavigationValuesStore
import Testing

@Suite struct DatabaseTests {
    @Test func everyKindOfValueRoundTripsThroughBindingAndColumns() async throws {
        try await withTemporaryDatabase { path in
            let db = try Database(path: path)
            try db.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n TEXT)")
            let text = "nul\u{0}inside, ünïcödé, 'quotes'; DROP TABLE t; --"
            let bytes = Data([0, 1, 2, 255])
            try db.execute(
                "INSERT INTO t VALUES (?, ?, ?, ?, ?)",
                [.integer(Int64.min), .real(0.125), .text(text), .blob(bytes), .null])
            try db.execute(
                "INSERT INTO t VALUES (?, ?, ?, ?, ?)", [.integer(0), .real(-1), .text(""), .blob(Data()), .text(nil)])
            struct Read: Equatable { var i: Int64, r: Double, s: String, b: Data, n: String?, isBlobNull: Bool }
            let rows = try db.fetchAll("SELECT i, r, s, b, n FROM t ORDER BY rowid") {
                Read(
                    i: $0.int64(0), r: $0.double(1), s: $0.string(2), b: $0.data(3), n: $0.optionalString(4),
                    isBlobNull: $0.isNull(3))
            }
            #expect(
                rows == [
                    Read(i: Int64.min, r: 0.125, s: text, b: bytes, n: nil, isBlobNull: false),
                    Read(i: 0, r: -1, s: "", b: Data(), n: nil, isBlobNull: false),
                ])
            // The empty string is text, not NULL.
            #expect(try db.fetchOne("SELECT count(*) FROM t WHERE s IS NOT NULL") { $0.int(0) } == 2)
        }
    }

    @Test func aWrongNumberOfArgumentsIsAnErrorNamingTheSQL() async throws {
        try await withTemporaryDatabase { path in
            let db = try Database(path: path)
            let error = await expectStoreError(.failed) { try db.execute("SELECT ?, ?", [.integer(1)]) }
            #expect(error?.sql == "SELECT ?, ?")
        }
    }

    @Test func aStatementWithTwoCommandsIsRefused() async throws {
        try await withTemporaryDatabase { path in
            let db = try Database(path: path)
            await expectStoreError(.failed) { try db.execute("SELECT 1; SELECT 2") }
            await expectStoreError(.failed) { try db.execute("SELEKT 1") }
        }
    }

    /// The commands a transaction is made of, as short as they come (a String of up to 15 bytes is
    /// copied to a temporary C string for SQLite, whose tail pointer once outlived it), and one
    /// command followed only by spaces and a semicolon, are accepted; on a new connection each
    /// time, since a statement is prepared once per connection.
    @Test func shortCommandsAndTrailingBlanksPrepareOnEveryConnection() async throws {
        try await withTemporaryDatabase { path in
            for _ in 0..<200 {
                let db = try Database(path: path)
                try db.execute("BEGIN IMMEDIATE")
                try db.execute("SAVEPOINT s")
                try db.execute("RELEASE s")
                try db.execute("COMMIT")
                try db.execute("BEGIN")
                try db.execute("ROLLBACK")
                #expect(!db.isInTransaction)
                #expect(try db.fetchOne("SELECT 1;  \n ") { $0.int(0) } == 1)
            }
        }
    }

    @Test func aFailedTransactionRollsBackAndASavepointUndoesOnlyItsOwnChanges() async throws {
        try await withTemporaryDatabase { path in
            let db = try Database(path: path)
            try db.execute("CREATE TABLE t (k TEXT PRIMARY KEY)")
            await expectStoreError(.conflict) {
                try db.inTransaction {
                    try db.execute("INSERT INTO t VALUES ('a')")
                    try db.execute("INSERT INTO t VALUES ('a')")
                }
            }
            #expect(!db.isInTransaction)
            try db.inTransaction {
                try db.execute("INSERT INTO t VALUES ('b')")
                try? db.inSavepoint {
                    try db.execute("INSERT INTO t VALUES ('c')")
                    try db.execute("INSERT INTO t VALUES ('b')")
                }
            }
            #expect(try db.fetchAll("SELECT k FROM t ORDER BY k") { $0.string(0) } == ["b"])
        }
    }

    @Test func foreignKeysAreEnforced() async throws {
        try await withTemporaryDatabase { path in
            let db = try Database(path: path)
            try db.execute("CREATE TABLE parent (id TEXT PRIMARY KEY)")
            try db.execute("CREATE TABLE child (parent TEXT REFERENCES parent (id))")
            await expectStoreError(.invalidData) { try db.execute("INSERT INTO child VALUES ('none')") }
        }
    }
}
