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

    /// SQLite's primary result code (the low byte of the extended one).
    public var primaryResultCode: Int32? { resultCode.map { $0 & 0xff } }

    public var description: String {
        var text = "\(code): \(message)"
        if let resultCode { text += " (SQLite \(resultCode))" }
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        if let sql { text += " in `\(sql)`" }
        return text
    }
}
