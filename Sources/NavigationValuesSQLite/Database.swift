import CSQLite
import Foundation
import NavigationValuesStore

/// One SQLite connection, with its statement cache.
///
/// A `Database` has one owner and is used from one thread at a time; it is not `Sendable`
/// (SQLite is opened in multi-thread mode, https://sqlite.org/threadsafe.html). Every
/// connection turns foreign keys on and waits up to `busyTimeout` for a lock.
///
/// ```swift
/// let db = try Database(path: "/tmp/app.sqlite")
/// try db.inTransaction { try db.execute("INSERT INTO t(a) VALUES (?)", [.integer(1)]) }
/// ```
public final class Database {
    /// Whether the connection may write.
    public enum Access: Sendable {
        case readWrite
        case readOnly
    }

    /// SQLite's `synchronous` setting (https://sqlite.org/pragma.html#pragma_synchronous).
    public enum Synchronous: String, Sendable {
        /// In WAL mode, commits survive a crash of the process but not a power loss.
        case normal = "NORMAL"
        /// Commits survive a power loss too: the WAL is synced at every commit.
        case full = "FULL"
    }

    /// The path the connection was opened with (`:memory:` for an in-memory database).
    public let path: String
    let handle: OpaquePointer
    private var statements: [StatementKey: Statement] = [:]
    /// The write-ahead-log hook's closure, kept alive as long as SQLite may call it.
    private var walHook: WALHookBox?

    /// Opens (creating it when `access` is `.readWrite`) the database at `path`.
    ///
    /// - Throws: ``StoreError`` (`.unavailable` when the file cannot be opened).
    public init(path: String, access: Access = .readWrite, busyTimeout: Duration = .seconds(5)) throws {
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        flags |= access == .readWrite ? (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) : SQLITE_OPEN_READONLY
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open database"
            sqlite3_close_v2(handle)
            throw StoreError(resultCode: code, message: "\(message): \(path)", sql: nil)
        }
        self.path = path
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        csqlite_db_config_defensive(handle, 1)
        sqlite3_busy_timeout(handle, Int32(clamping: busyTimeout.milliseconds))
        try execute("PRAGMA foreign_keys = ON")
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
        // After the close: SQLite no longer calls the hook.
        walHook = nil
    }

    /// Pages this connection has written since it opened: in WAL mode, the frames appended to
    /// the log at commits (`SQLITE_DBSTATUS_CACHE_WRITE`; checkpoints into the main file are
    /// not counted).
    public var pagesWritten: Int {
        var current: Int32 = 0
        var highest: Int32 = 0
        guard sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_WRITE, &current, &highest, 0) == SQLITE_OK else {
            return 0
        }
        return Int(current)
    }

    // MARK: - Settings

    /// Switches the file to write-ahead logging (https://sqlite.org/wal.html), so readers on
    /// other connections never wait for the writer, and sets `synchronous`.
    /// An in-memory database keeps its own journal mode.
    public func enableWriteAheadLog(synchronous: Synchronous) throws {
        let mode = try fetchOne("PRAGMA journal_mode = WAL") { $0.string(0) }
        if mode?.lowercased() != "wal" && path != ":memory:" {
            throw StoreError(code: .unavailable, message: "cannot switch \(path) to WAL (journal mode \(mode ?? "?"))")
        }
        // PRAGMA arguments cannot be bound; the value comes from a closed enum, not from input.
        try execute("PRAGMA synchronous = \(synchronous.rawValue)")
    }

    /// Takes checkpoints away from commits (https://sqlite.org/wal.html#ckpt): turns off
    /// SQLite's automatic checkpoint (which runs inside whichever commit crosses its threshold)
    /// and calls `committed` after every commit of this connection with the frames now in the
    /// write-ahead log, so that another connection can checkpoint on its own thread. Also caps
    /// what the log file keeps once it restarts at `journalSizeLimit` bytes.
    ///
    /// `committed` runs on the committing thread, inside SQLite: it must be quick and must not
    /// use this connection.
    func observeWriteAheadLog(journalSizeLimit: Int, _ committed: @escaping (Int) -> Void) throws {
        try execute("PRAGMA wal_autocheckpoint = 0")
        // PRAGMA arguments cannot be bound; the value is an integer we computed.
        _ = try fetchOne("PRAGMA journal_size_limit = \(max(0, journalSizeLimit))") { $0.int(0) }
        let box = WALHookBox(committed)
        walHook = box
        let hook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
            context, _, _, frames in
            if let context {
                Unmanaged<WALHookBox>.fromOpaque(context).takeUnretainedValue().committed(Int(frames))
            }
            return SQLITE_OK
        }
        sqlite3_wal_hook(handle, hook, Unmanaged.passUnretained(box).toOpaque())
    }

    /// What one `sqlite3_wal_checkpoint_v2` did.
    struct CheckpointOutcome {
        /// SQLite's result: `SQLITE_OK`, or `SQLITE_BUSY` when a lock or a reader stopped it.
        var code: Int32
        /// Frames in the log when it ran.
        var frames: Int
        /// Frames of the log now copied into the database file (including earlier checkpoints').
        var backfilled: Int
    }

    /// Runs a checkpoint of the main database (https://sqlite.org/c3ref/wal_checkpoint_v2.html).
    func checkpoint(_ mode: Int32) -> CheckpointOutcome {
        var frames: Int32 = -1
        var backfilled: Int32 = -1
        let code = sqlite3_wal_checkpoint_v2(handle, "main", mode, &frames, &backfilled)
        return CheckpointOutcome(code: code, frames: Int(max(0, frames)), backfilled: Int(max(0, backfilled)))
    }

    /// Sets how long this connection waits for a lock, from now on.
    func setBusyTimeout(_ timeout: Duration) {
        sqlite3_busy_timeout(handle, Int32(clamping: timeout.milliseconds))
    }

    /// The database's page size in bytes.
    var pageSize: Int {
        get throws { try fetchOne("PRAGMA page_size") { $0.int(0) } ?? 4096 }
    }

    /// Caps the main database at `bytes` (https://sqlite.org/pragma.html#pragma_max_page_count):
    /// a write that needs more pages fails with `SQLITE_FULL`, as on a full disk. Never below
    /// the pages the file already has.
    public func limitSize(to bytes: Int) throws {
        let pageSize = try fetchOne("PRAGMA page_size") { $0.int(0) } ?? 4096
        let pages = max(1, bytes / max(1, pageSize))
        // PRAGMA arguments cannot be bound; the value is an integer we computed.
        try execute("PRAGMA max_page_count = \(pages)")
    }

    /// True when the connection cannot write to its main database.
    public var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    // MARK: - Statements

    /// The prepared statement for `sql`, prepared once and kept for reuse.
    public func cachedStatement(_ sql: String) throws -> Statement {
        let key = StatementKey(sql)
        if let statement = statements[key] { return statement }
        let statement = try Statement(connection: handle, sql: sql)
        statements[key] = statement
        return statement
    }

    /// Runs one statement with `arguments`; returns ``changes``, the rows it changed when it is
    /// an INSERT, UPDATE or DELETE.
    @discardableResult
    public func execute(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> Int {
        try cachedStatement(sql).execute(arguments)
        return changes
    }

    /// Runs a script of several statements without arguments (a migration). Not cached.
    public func executeScript(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw StoreError(resultCode: sqlite3_extended_errcode(handle), message: text, sql: sql)
        }
    }

    /// Calls `body` for each row of `sql` run with `arguments`.
    public func forEachRow(_ sql: String, _ arguments: [DatabaseValue] = [], _ body: (Row) throws -> Void) throws {
        try cachedStatement(sql).forEachRow(arguments, body)
    }

    /// Calls `body` for each row of `sql` run with `arguments` until it returns false: the rows
    /// after it are never read.
    public func scanRows(_ sql: String, _ arguments: [DatabaseValue] = [], _ body: (Row) throws -> Bool) throws {
        try cachedStatement(sql).scanRows(arguments, body)
    }

    /// The first row of `sql`, read by `read`, or nil when there is none.
    public func fetchOne<T>(_ sql: String, _ arguments: [DatabaseValue] = [], _ read: (Row) throws -> T) throws -> T? {
        var result: T?
        try forEachRow(sql, arguments) { row in
            if result == nil { result = try read(row) }
        }
        return result
    }

    /// Every row of `sql`, each read by `read`.
    public func fetchAll<T>(_ sql: String, _ arguments: [DatabaseValue] = [], _ read: (Row) throws -> T) throws -> [T] {
        var result: [T] = []
        try forEachRow(sql, arguments) { result.append(try read($0)) }
        return result
    }

    // MARK: - Transactions

    /// How a transaction takes its locks (https://sqlite.org/lang_transaction.html).
    public enum TransactionKind: String, Sendable {
        /// Takes the write lock at once, so the transaction never fails to upgrade later.
        case immediate = "BEGIN IMMEDIATE"
        /// Takes locks as statements need them; for read-only transactions.
        case deferred = "BEGIN DEFERRED"
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    public func inTransaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        try execute(kind.rawValue)
        let result: T
        do {
            result = try body()
            try execute("COMMIT")
        } catch {
            try rollback(after: error)
            throw error
        }
        return result
    }

    /// Runs `body` inside a savepoint of the current transaction: on error only its own changes
    /// are undone (https://sqlite.org/lang_savepoint.html).
    ///
    /// When they cannot be undone, the whole transaction is rolled back instead, so that nothing
    /// of a failed `body` can be committed by the transaction's `COMMIT`; the error then says so.
    public func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        try execute("SAVEPOINT nested")
        do {
            let result = try body()
            try execute("RELEASE nested")
            return result
        } catch {
            // Undo the savepoint's changes, then drop it; the outer transaction stays open.
            do {
                try execute("ROLLBACK TO nested")
                try execute("RELEASE nested")
            } catch let undo {
                try rollback(after: error)
                throw StoreError(
                    code: .failed,
                    message:
                        "\(error); its changes could not be undone alone (\(undo)), so the whole transaction was rolled back"
                )
            }
            throw error
        }
    }

    /// Rolls back the open transaction, if any.
    ///
    /// - Throws: ``StoreError`` when SQLite could not roll it back and it is still open. The
    ///   connection must not be used for writes then: its next `COMMIT` would keep what the
    ///   failed transaction wrote.
    func rollback() throws {
        guard sqlite3_get_autocommit(handle) == 0 else { return }
        do {
            try execute("ROLLBACK")
        } catch {
            // Some errors roll the transaction back by themselves; only one still open is a failure.
            guard sqlite3_get_autocommit(handle) == 0 else { return }
            throw error
        }
    }

    /// Rolls back after `error` ended a transaction's body, or throws both errors together.
    private func rollback(after error: any Error) throws {
        do { try rollback() } catch let rollbackError {
            throw StoreError(
                code: .failed,
                message: "\(error); then the rollback failed, and the transaction is still open: \(rollbackError)")
        }
    }

    /// True while a transaction is open.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    // MARK: - Errors

    /// The connection's last error as a ``StoreError``.
    func error(code: Int32, sql: String?) -> StoreError {
        Self.error(handle, code: code, sql: sql)
    }

    static func error(_ connection: OpaquePointer, code: Int32, sql: String?) -> StoreError {
        let extended = sqlite3_extended_errcode(connection)
        // The extended code belongs to the same failure only when its primary part matches.
        let resultCode = (extended & 0xff) == (code & 0xff) ? extended : code
        return StoreError(resultCode: resultCode, message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }
}

@available(*, unavailable)
extension Database: Sendable {}

/// A statement cache's key: the SQL text, hashed by its length and its first and last bytes
/// only. The store runs the same few texts (a few hundred bytes each) thousands of times a second,
/// and hashing each whole text at every lookup cost more than the lookup's other work; equal
/// texts still have equal hashes, and texts that share a hash are told apart by `==`, which for
/// the store's texts (the same string each time) compares their storage, not their bytes.
private struct StatementKey: Hashable {
    let sql: String

    init(_ sql: String) { self.sql = sql }

    static func == (left: StatementKey, right: StatementKey) -> Bool { left.sql == right.sql }

    func hash(into hasher: inout Hasher) {
        var sql = sql
        sql.withUTF8 { bytes in
            hasher.combine(bytes.count)
            let edge = min(bytes.count, 32)
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[..<edge])))
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[(bytes.count - edge)...])))
        }
    }
}

/// The closure a connection's write-ahead-log hook calls, boxed so SQLite can hold a pointer.
private final class WALHookBox {
    let committed: (Int) -> Void
    init(_ committed: @escaping (Int) -> Void) { self.committed = committed }
}
