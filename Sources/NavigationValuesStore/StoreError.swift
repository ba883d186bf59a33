import CSQLite

/// An error of the store: what kind of failure it is, and, when the database reported it, SQLite's
/// result code or PostgreSQL's SQLSTATE, its message and the SQL of the statement (never its
/// bound values).
///
/// Match on ``code``:
///
/// ```swift
/// do { try await store.commit(mutation) }
/// catch let error as StoreError where error.code == .conflict { … }
/// ```
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is, stable across SQLite versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, such as `conflict`.
        public var rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A row with the same key already exists (a duplicate event `seq`, session id, screen id
        /// or idempotency key), or the session is no longer at the version the mutation was
        /// made from (another process moved it on): reload and retry.
        public static let conflict = Code("conflict")
        /// A string or blob is larger than SQLite's length limit (`SQLITE_TOOBIG`): the request
        /// asked to store too much at once (HTTP 422), the database is fine.
        public static let tooLarge = Code("tooLarge")
        /// The database cannot serve the request now: busy, locked, read-only, out of space, an
        /// I/O error, or the file cannot be opened. Worth retrying later (HTTP 503).
        public static let unavailable = Code("unavailable")
        /// The data broke a rule of the schema other than uniqueness (a missing parent row, a
        /// value outside its allowed set, text that is not JSON): a bug of the caller.
        public static let invalidData = Code("invalidData")
        /// The file is damaged or is not a SQLite database.
        public static let corrupt = Code("corrupt")
        /// The database's applied migrations do not match the ones this binary carries.
        public static let migrationRefused = Code("migrationRefused")
        /// The store was closed.
        public static let closed = Code("closed")
        /// Any other failure reported by SQLite.
        public static let failed = Code("failed")
    }

    /// What kind of failure this is.
    public var code: Code
    /// SQLite's extended result code (such as 2067, `SQLITE_CONSTRAINT_UNIQUE`), when SQLite
    /// reported the error.
    public var resultCode: Int32?
    /// A message for operators: SQLite's own message, or the store's.
    public var message: String
    /// The SQL of the failing statement, if any. Bound values are never included.
    public var sql: String?
    /// PostgreSQL's SQLSTATE (such as `23505`, `unique_violation`), when PostgreSQL reported
    /// the error (https://www.postgresql.org/docs/current/errcodes-appendix.html).
    public var sqlState: String?

    /// Creates an error.
    public init(code: Code, resultCode: Int32? = nil, message: String, sql: String? = nil) {
        self.code = code
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
    }

    /// An error from SQLite's extended result code, classified into a ``Code``.
    init(resultCode: Int32, message: String, sql: String?) {
        self.init(code: Self.classify(resultCode), resultCode: resultCode, message: message, sql: sql)
    }

    /// SQLite's primary result code (the low byte of the extended one).
    public var primaryResultCode: Int32? { resultCode.map { $0 & 0xff } }

    /// An error from PostgreSQL's SQLSTATE, classified into a ``Code``.
    init(sqlState: String, message: String, sql: String?) {
        self.init(code: Self.classify(sqlState: sqlState), message: message, sql: sql)
        self.sqlState = sqlState
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let resultCode { text += " (SQLite \(resultCode))" }
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        if let sql { text += " in `\(sql)`" }
        return text
    }

    /// Sorts a result code into a kind. See https://sqlite.org/rescode.html.
    static func classify(_ resultCode: Int32) -> Code {
        switch resultCode {
        case CSQLITE_CONSTRAINT_UNIQUE, CSQLITE_CONSTRAINT_PRIMARYKEY, CSQLITE_CONSTRAINT_ROWID:
            return .conflict
        default:
            break
        }
        switch resultCode & 0xff {
        case SQLITE_TOOBIG:
            return .tooLarge
        case SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_RANGE:
            return .invalidData
        case SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN,
            SQLITE_PERM, SQLITE_NOMEM, SQLITE_PROTOCOL, SQLITE_NOLFS, SQLITE_AUTH:
            return .unavailable
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return .corrupt
        default:
            return .failed
        }
    }

    /// Sorts a PostgreSQL SQLSTATE into a kind. The `NV…` states are raised by the schema's own
    /// functions (Migrations/postgres/0001_create_schema.sql).
    static func classify(sqlState: String) -> Code {
        switch sqlState {
        case "23505", "NV409":  // unique_violation; the session moved on
            return .conflict
        case "NV404", "NV422":  // the session, or the row a change targets, does not exist
            return .invalidData
        case "54000":  // program_limit_exceeded: a value over PostgreSQL's 1 GB field limit
            return .tooLarge
        case "XX001", "XX002":  // data_corrupted, index_corrupted
            return .corrupt
        case "25006", "40001", "40P01", "55P03", "57014":
            // read_only_sql_transaction, serialization_failure, deadlock_detected,
            // lock_not_available, query_canceled (statement_timeout)
            return .unavailable
        default:
            break
        }
        switch sqlState.prefix(2) {
        case "08", "53", "57", "58":  // connection, resources, operator intervention, system errors
            return .unavailable
        case "22", "23":  // data exceptions, other integrity constraints
            return .invalidData
        default:
            return .failed
        }
    }
}
