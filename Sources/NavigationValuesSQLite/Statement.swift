import CSQLite
import Foundation
import NavigationValuesStore

/// A prepared SQLite statement. It belongs to the ``Database`` that prepared it and must be
/// used on that connection's thread only.
///
/// Obtain one with ``Database/cachedStatement(_:)``; run it with ``execute(_:)`` or
/// ``forEachRow(_:_:)``. Values are always bound, never pasted into the SQL.
public final class Statement {
    /// The SQL text, as prepared.
    public let sql: String
    let handle: OpaquePointer
    /// The connection's handle, for error messages. `sqlite3_close_v2` keeps it valid while
    /// this statement lives, so the statement never dangles even if it outlives its `Database`.
    private let connection: OpaquePointer

    init(connection: OpaquePointer, sql: String) throws {
        var handle: OpaquePointer?
        // The tail points into the C string, which lives only inside the closure (a short String
        // is copied to a temporary for it): it is read there. Read after the closure, it read
        // freed memory and, now and then, refused a plain `ROLLBACK` (ThreadSanitizer runs).
        let (code, hasMore) = sql.withCString { text -> (Int32, Bool) in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(connection, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, &tail)
            guard code == SQLITE_OK, let tail, tail.pointee != 0 else { return (code, false) }
            return (code, !String(cString: tail).allSatisfy(\.isWhitespace))
        }
        guard code == SQLITE_OK, let handle else {
            throw Database.error(connection, code: code, sql: sql)
        }
        if hasMore {
            sqlite3_finalize(handle)
            throw StoreError(code: .failed, message: "a statement must hold exactly one SQL command", sql: sql)
        }
        self.sql = sql
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Resets the statement and binds `arguments` to its parameters, in order.
    ///
    /// - Throws: ``StoreError`` when the count of arguments differs from the parameters'.
    public func bind(_ arguments: [DatabaseValue]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard arguments.count == expected else {
            throw StoreError(
                code: .failed, message: "expected \(expected) arguments, got \(arguments.count)", sql: sql)
        }
        for (offset, value) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .null:
                code = sqlite3_bind_null(handle, index)
            case .integer(let integer):
                code = sqlite3_bind_int64(handle, index, integer)
            case .real(let real):
                code = sqlite3_bind_double(handle, index, real)
            case .text(let text):
                code = Self.bind(text, to: handle, at: index)
            case .blob(let data):
                code = data.withUnsafeBytes { bytes in
                    // A zero-length blob with a nil pointer would bind NULL; bind a zeroblob instead.
                    guard let base = bytes.baseAddress, bytes.count > 0 else {
                        return sqlite3_bind_zeroblob(handle, index, 0)
                    }
                    return sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), csqlite_transient())
                }
            }
            guard code == SQLITE_OK else { throw Database.error(connection, code: code, sql: sql) }
        }
    }

    /// Binds text by its UTF-8 bytes and length, so a NUL inside it is kept, not a terminator.
    private static func bind(_ text: String, to handle: OpaquePointer, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { bytes in
            // An empty buffer may have no address, which SQLite would bind as NULL.
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                return sqlite3_bind_text(handle, index, "", 0, csqlite_transient())
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text64(handle, index, $0, UInt64(bytes.count), csqlite_transient(), UInt8(SQLITE_UTF8))
            }
        }
    }

    /// Runs the statement to completion with `arguments`, ignoring any rows.
    public func execute(_ arguments: [DatabaseValue] = []) throws {
        try withArguments(arguments) { while try step() {} }
    }

    /// Runs the statement with `arguments` and calls `body` for each row.
    public func forEachRow(_ arguments: [DatabaseValue] = [], _ body: (Row) throws -> Void) throws {
        try withArguments(arguments) {
            let row = Row(statement: self)
            while try step() {
                try body(row)
            }
        }
    }

    /// Binds `arguments` without copying text or blobs, runs `body`, then resets the statement
    /// and clears its bindings. Each text or blob is bound inside its own `withUTF8` or
    /// `withUnsafeBytes` (SQLITE_STATIC), and `body` runs innermost, so every pointer SQLite holds
    /// stays valid while the statement steps, and none is left behind once it returns.
    private func withArguments(_ arguments: [DatabaseValue], _ body: () throws -> Void) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard arguments.count == expected else {
            throw StoreError(
                code: .failed, message: "expected \(expected) arguments, got \(arguments.count)", sql: sql)
        }
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        try bindInPlace(arguments, from: 0, then: body)
    }

    private func bindInPlace(_ arguments: [DatabaseValue], from offset: Int, then body: () throws -> Void) throws {
        guard offset < arguments.count else { return try body() }
        let index = Int32(offset + 1)
        let code: Int32
        switch arguments[offset] {
        case .null:
            code = sqlite3_bind_null(handle, index)
        case .integer(let integer):
            code = sqlite3_bind_int64(handle, index, integer)
        case .real(let real):
            code = sqlite3_bind_double(handle, index, real)
        case .text(var text):
            return try text.withUTF8 { bytes in
                // An empty buffer may have no address, which SQLite would bind as NULL.
                let code =
                    if let base = bytes.baseAddress, bytes.count > 0 {
                        base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                            sqlite3_bind_text64(handle, index, $0, UInt64(bytes.count), nil, UInt8(SQLITE_UTF8))
                        }
                    } else {
                        sqlite3_bind_text(handle, index, "", 0, csqlite_transient())
                    }
                guard code == SQLITE_OK else { throw Database.error(connection, code: code, sql: sql) }
                try bindInPlace(arguments, from: offset + 1, then: body)
            }
        case .blob(let data):
            return try data.withUnsafeBytes { bytes in
                // A zero-length blob with a nil pointer would bind NULL; bind a zeroblob instead.
                let code =
                    if let base = bytes.baseAddress, bytes.count > 0 {
                        sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), nil)
                    } else {
                        sqlite3_bind_zeroblob(handle, index, 0)
                    }
                guard code == SQLITE_OK else { throw Database.error(connection, code: code, sql: sql) }
                try bindInPlace(arguments, from: offset + 1, then: body)
            }
        }
        guard code == SQLITE_OK else { throw Database.error(connection, code: code, sql: sql) }
        try bindInPlace(arguments, from: offset + 1, then: body)
    }

    /// Runs the statement with `arguments` and calls `body` for each row until it returns false.
    public func scanRows(_ arguments: [DatabaseValue] = [], _ body: (Row) throws -> Bool) throws {
        try withArguments(arguments) {
            let row = Row(statement: self)
            while try step() {
                guard try body(row) else { return }
            }
        }
    }

    /// Steps once: true when a row is ready, false when the statement is done.
    private func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw Database.error(connection, code: code, sql: sql)
        }
    }
}

@available(*, unavailable)
extension Statement: Sendable {}

/// The current row of a running ``Statement``; valid only inside the `forEachRow` closure.
///
/// Columns are read by index, from 0. Reading a column of the wrong type converts it as SQLite
/// does (https://sqlite.org/c3ref/column_blob.html); the `optional…` readers return nil for NULL.
public struct Row: SQLRow {
    let statement: Statement

    /// The column as an integer.
    public func int64(_ column: Int) -> Int64 { sqlite3_column_int64(statement.handle, Int32(column)) }

    /// The column as an `Int`.
    public func int(_ column: Int) -> Int { Int(int64(column)) }

    /// The column as a floating-point number.
    public func double(_ column: Int) -> Double { sqlite3_column_double(statement.handle, Int32(column)) }

    /// True when the column is SQL NULL.
    public func isNull(_ column: Int) -> Bool { sqlite3_column_type(statement.handle, Int32(column)) == SQLITE_NULL }

    /// The column as text (empty for NULL).
    public func string(_ column: Int) -> String {
        guard let text = sqlite3_column_text(statement.handle, Int32(column)) else { return "" }
        let count = Int(sqlite3_column_bytes(statement.handle, Int32(column)))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column as text, or nil when it is NULL.
    public func optionalString(_ column: Int) -> String? { isNull(column) ? nil : string(column) }

    /// The column as bytes (empty for NULL).
    public func data(_ column: Int) -> Data {
        guard let bytes = sqlite3_column_blob(statement.handle, Int32(column)) else { return Data() }
        let count = Int(sqlite3_column_bytes(statement.handle, Int32(column)))
        return Data(bytes: bytes, count: count)
    }

    /// The column as a boolean: any integer but 0 is true.
    public func bool(_ column: Int) -> Bool { int64(column) != 0 }

    /// The column, read as milliseconds since 1970, as a date.
    public func date(_ column: Int) -> Date { Date(millisecondsSince1970: int64(column)) }
}

@available(*, unavailable)
extension Row: Sendable {}
