import Foundation
import NavigationValuesWire

/// What a database engine gives ``SQLSessionStore``: its connections, how it runs a batch of the
/// group commit, and the few pieces of SQL that differ (``SQLDialect``). Everything else (the
/// write queue, the statements of a mutation, loading a session, idempotency, observers,
/// readiness, retention) the store writes once, for every engine.
///
/// A driver has one writer connection, used on its own serial queue only, where the group
/// commit's batches and every other write run one at a time, and connections for reads. Its
/// calls block (SQLite and libpq do), so they never run on Swift's cooperative pool.
public protocol SQLDriver: Sendable {
    /// A connection, used by one thread at a time.
    associatedtype Connection: SQLConnection
    /// How a store on this engine is opened.
    associatedtype Configuration: Sendable
    /// A connection held for one writer's turn (``holdConnection(until:)``).
    associatedtype Held: HeldConnection where Held.Connection == Connection

    /// The SQL that differs from engine to engine.
    var dialect: any SQLDialect { get }
    /// The settings every SQL store has.
    var options: SQLStoreOptions { get }
    /// Whether other processes may write the same database (``SessionStore/isShared``).
    var isShared: Bool { get }
    /// Other processes' commits, as they become visible (``SessionStore/commitNotices()``).
    func commitNotices() -> AsyncStream<CommitNotice>

    /// Runs `body` on a read connection, in one consistent snapshot of the database where the
    /// engine can give one.
    func read<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T
    /// Runs `body` on the writer connection, between two batches of the group commit; fails with
    /// `.unavailable` at once where the engine knows the database is read-only (SQLite).
    func write<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T
    /// Runs `work` on the writer's serial queue, where the batches run.
    func enqueueOnWriter(_ work: @escaping @Sendable () -> Void)
    /// Commits one batch of the group commit; called on the writer's queue. Each write commits
    /// or fails alone, all of its mutations or none; a result says so only once it is final (a
    /// success is committed). `cleanup`, when given, runs in the batch's transaction and never
    /// fails the batch: when it fails, it is left out.
    func commitBatch(_ writes: [PlannedWrite], cleanup: WriteStep?) -> [Result<Void, any Error>]
    /// Called on the writer's queue after a batch's callers were resumed (SQLite finishes a
    /// checkpoint there).
    func afterBatch()
    /// A connection of its own for one writer's turn on a session, held across awaits until it
    /// is released; waits for a free one until `deadline`. Nil where every write already goes
    /// through one writer, and the sessions' actors order those of a session (SQLite, served by
    /// one process): a turn is then the store's ordinary reads and commits.
    func holdConnection(until deadline: ContinuousClock.Instant) async throws -> Held?
    /// Writes `write` in the transaction a turn opened on `connection` and commits it, with what
    /// the engine adds to a commit (PostgreSQL's notifications); rolls it back when it fails.
    func commitTurn(_ write: PlannedWrite, on connection: Connection) throws
    /// Writes `write` in the transaction a turn opened on `connection` and leaves it open (a
    /// session's state caught up with its log before the turn's own change); rolls it back when
    /// it fails.
    func writeInTurn(_ write: PlannedWrite, on connection: Connection) throws
    /// Adds the engine's own figures (checkpoints, pages written) to the store's.
    func addFigures(to metrics: inout StoreMetrics)
    /// Closes every connection, once the writer's queue has run what was queued on it. Later
    /// calls fail with `.closed`.
    func close() async
}

/// The settings every SQL store has, whatever its engine.
public struct SQLStoreOptions: Sendable {
    /// The most mutations one group-commit transaction takes.
    public var maximumBatchSize: Int
    /// How long an idempotency record is kept (docs/API.md: 24 h).
    public var idempotencyLifetime: Duration
    /// The clock for idempotency expiry and purge tombstones.
    public var now: @Sendable () -> Date

    /// How far the relational state may lag the event log (``WriteBehind``); `.inline` writes it
    /// in each mutation's own transaction.
    public var writeBehind: WriteBehind

    public init(
        maximumBatchSize: Int, idempotencyLifetime: Duration, now: @escaping @Sendable () -> Date,
        writeBehind: WriteBehind = .inline
    ) {
        self.maximumBatchSize = maximumBatchSize
        self.idempotencyLifetime = idempotencyLifetime
        self.now = now
        self.writeBehind = writeBehind
    }
}

/// Log-first commits: a mutation of an existing session commits its event (and its idempotency
/// record) only, and the state rows it changes (screens, values, preferences, stacks, the
/// session's version) are written behind, a session's changes coalesced, in transactions of
/// their own on the writer. The state then reflects some version at or before the log's latest;
/// reading a session brings it up to the log first (``SessionStore/replayStates(using:)``).
public struct WriteBehind: Sendable, Equatable {
    /// Committed events whose state may wait at most; 0 writes the state inline, in each
    /// mutation's transaction (today's write path).
    public var maximumEvents: Int
    /// How long a committed event's state may wait at most.
    public var maximumDelay: Duration
    /// The most sessions one transaction of writes behind takes. The waiting state is written in
    /// parts of at most this many sessions, the group commit's batches running between two
    /// parts: a commit never waits behind more than one part (about 60 µs of the writer's time
    /// per session on SQLite), where one transaction of every waiting session held the writer
    /// for 5-15 ms every `maximumDelay` under load. At least 1.
    public var maximumSessionsPerWrite: Int
    /// For tests only: the writer never writes the state behind on its own (neither the bounds
    /// nor the timer start it; reading a session and closing the store still do), so that a test
    /// can kill the process between an event's commit and its state's.
    public var isHeldForTests: Bool

    public init(
        maximumEvents: Int, maximumDelay: Duration, maximumSessionsPerWrite: Int = 16, isHeldForTests: Bool = false
    ) {
        self.maximumEvents = max(0, maximumEvents)
        self.maximumDelay = maximumDelay
        self.maximumSessionsPerWrite = max(1, maximumSessionsPerWrite)
        self.isHeldForTests = isHeldForTests
    }

    /// The state written in each mutation's own transaction.
    public static let inline = WriteBehind(maximumEvents: 0, maximumDelay: .zero)
    /// The server's default for a file one process serves: at most 1,000 events or 50 ms behind.
    public static let standard = WriteBehind(maximumEvents: 1_000, maximumDelay: .milliseconds(50))

    /// Whether mutations of existing sessions commit their events only.
    public var isOn: Bool { maximumEvents > 0 }
}

/// A connection a driver lends for one writer's turn, held across awaits.
public protocol HeldConnection: Sendable {
    associatedtype Connection: SQLConnection
    /// Runs `body` on the connection, on its own queue.
    func run<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T
    /// Gives the connection back (rolling back a transaction left open).
    func release() async
}

/// What a driver that holds no connections for turns names as its ``SQLDriver/Held``: no value
/// of it exists.
public enum NoHeldConnection<Connection: SQLConnection>: HeldConnection {
    public func run<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        switch self {}
    }

    public func release() async {}
}

/// One connection of a driver, as the store uses it: statements with bound values, rows read
/// through ``SQLRow``, and write transactions.
public protocol SQLConnection {
    associatedtype Row: SQLRow

    /// Runs one statement; returns how many rows it changed.
    @discardableResult
    func execute(_ sql: String, _ arguments: [DatabaseValue]) throws -> Int
    /// Runs a query and calls `body` with each row until it returns false; the rows after it
    /// may never be read.
    func scan(_ sql: String, _ arguments: [DatabaseValue], _ body: (Row) throws -> Bool) throws
    /// Runs several queries in order, as of one instant (SQLite: one read transaction;
    /// PostgreSQL: one repeatable-read transaction, sent at once), calling `body` with the index
    /// of each row's query and the row.
    func readAll(_ queries: [SQLQuery], _ body: (Int, Row) throws -> Void) throws
    /// Opens a write transaction and runs `queries` in it, in order, calling `body` with the index
    /// of each row's query and the row (a turn's lock and reads; PostgreSQL sends them at once).
    /// The transaction stays open; on failure it is rolled back.
    func begin(_ queries: [SQLQuery], _ body: (Int, Row) throws -> Void) throws
    /// Runs `body` in a write transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T
    /// Fails (`.unavailable`) when the database cannot take a write now: a read-only file, a
    /// standby, read-only mode.
    func checkWritable() throws
}

extension SQLConnection {
    /// Every row of a query, each read by `read`.
    func fetchAll<T>(_ sql: String, _ arguments: [DatabaseValue], _ read: (Row) throws -> T) throws -> [T] {
        var result: [T] = []
        try scan(sql, arguments) { row in
            result.append(try read(row))
            return true
        }
        return result
    }

    /// The first row of a query, read by `read`, or nil when there is none.
    func fetchOne<T>(_ sql: String, _ arguments: [DatabaseValue], _ read: (Row) throws -> T) throws -> T? {
        var result: T?
        try scan(sql, arguments) { row in
            result = try read(row)
            return false
        }
        return result
    }
}

/// A query and its bound values.
public struct SQLQuery: Sendable {
    public var sql: String
    public var arguments: [DatabaseValue]

    public init(_ sql: String, _ arguments: [DatabaseValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }
}

/// The current row of a query, its columns read by index from 0. A column that does not read
/// back as asked throws `.corrupt`.
public protocol SQLRow {
    func int64(_ column: Int) throws -> Int64
    /// The column as text.
    func string(_ column: Int) throws -> String
    /// True when the column is NULL.
    func isNull(_ column: Int) throws -> Bool
    /// The column as bytes.
    func data(_ column: Int) throws -> Data
    /// The column as a boolean (SQLite's 0 or 1, PostgreSQL's `t` or `f`).
    func bool(_ column: Int) throws -> Bool
}

extension SQLRow {
    func int(_ column: Int) throws -> Int { Int(try int64(column)) }

    /// The column as text, or nil when it is NULL.
    func optionalString(_ column: Int) throws -> String? { try isNull(column) ? nil : try string(column) }

    /// The column, read as whole milliseconds since 1970 (``SQLDialect/milliseconds(_:)``), as a date.
    func date(_ column: Int) throws -> Date { Date(millisecondsSince1970: try int64(column)) }

    /// The column as a date, or nil when it is NULL.
    func optionalDate(_ column: Int) throws -> Date? { try isNull(column) ? nil : try date(column) }
}

/// The SQL that differs between engines. The store writes its statements once, with numbered
/// parameters `?1`, `?2`… and these pieces, and has them rendered once, when it opens.
public protocol SQLDialect: Sendable {
    /// Parameter `index` (from 1): SQLite `?1`, PostgreSQL `$1`.
    func parameter(_ index: Int) -> String
    /// A parameter of whole milliseconds since 1970 as the engine stores a time: SQLite keeps
    /// the integer, PostgreSQL a timestamptz.
    func time(_ parameter: String) -> String
    /// A stored time, read back as whole milliseconds since 1970.
    func milliseconds(_ column: String) -> String
    /// A stored time rounded down to its minute, as stored (the sessions' `updated_minute`).
    func minute(_ time: String) -> String
    /// The length in bytes of a stored JSON text.
    func byteLength(_ column: String) -> String
    /// True when `column` is one of the texts of a list parameter made by ``list(_:)``.
    func isIn(_ column: String, list parameter: String) -> String
    /// A list of texts, bound as one parameter for ``isIn(_:list:)``.
    func list(_ texts: [String]) -> DatabaseValue
    /// True when `left` and `right` are equal or both NULL.
    func isSame(_ left: String, _ right: String) -> String
    /// What ends a SELECT of the row a write is about to change, to keep other writers off it
    /// until the transaction ends: PostgreSQL's ` FOR UPDATE`; empty where a write transaction
    /// holds the whole database (SQLite).
    var lockingRead: String { get }
    /// A statement that keeps other writers of the same key (its `?1`, a text) waiting until the
    /// transaction ends; nil where a write transaction holds the whole database (SQLite).
    var transactionLock: String? { get }
    /// A statement that bounds how long the rest of the transaction waits for a lock, to `?1`
    /// milliseconds (a text); nil where the engine has no such setting.
    var lockTimeout: String? { get }
    /// Whether an UPDATE that assigns an indexed column rewrites its index entry even when the
    /// value does not change (SQLite). The session's indexed columns (state, updated_minute) are
    /// then assigned by a statement of their own, only when one of them changes; an engine that
    /// compares values (PostgreSQL) assigns them with the version, in one statement.
    var rewritesIndexOnAssignment: Bool { get }
    /// A statement that lets the rest of the transaction commit without waiting for its log to
    /// reach the disk (PostgreSQL's `synchronous_commit` off), for state written behind the event
    /// log, which a crash lets the log rebuild; nil where a commit's sync is the connection's and
    /// the driver sets it around the transaction (SQLite, ``PlannedWrite/isUnsynced``).
    var unsyncedCommit: String? { get }
}

extension SQLDialect {
    /// `sql` with its parameters `?1`, `?2`… written as the engine writes them.
    func render(_ sql: String) -> String {
        var result = ""
        result.reserveCapacity(sql.utf8.count)
        var characters = sql[...]
        while let mark = characters.firstIndex(of: "?") {
            result += characters[..<mark]
            let digits = characters[characters.index(after: mark)...].prefix(while: \.isNumber)
            if let index = Int(digits) {
                result += parameter(index)
            } else {
                result += "?"
            }
            characters = characters[characters.index(mark, offsetBy: 1 + digits.count)...]
        }
        return result + characters
    }
}

// MARK: - Writes

/// One statement of a write, with its values and what it must find for the write to stand.
public struct WriteStep: Sendable {
    /// What a statement must find.
    public enum Check: Sendable, Equatable {
        /// Nothing.
        case none
        /// The statement must change exactly one row; otherwise the write is `.invalidData` with
        /// this message (the row it targets does not exist).
        case changesOneRow(String)
        /// The session must be at `expected` (`.conflict` otherwise, `.invalidData` when it does
        /// not exist). The statement reads its version; an engine may check it its own way, as
        /// long as the session's row stays locked until the transaction ends.
        case version(SessionID, expected: Int64)
        /// As ``version(_:expected:)``, for a log-first mutation (``WriteBehind``): the version
        /// compared is the one the session's log reaches, which its state rows may lag.
        case logVersion(SessionID, expected: Int64)
    }

    public var sql: String
    public var arguments: [DatabaseValue]
    public var check: Check

    public init(_ sql: String, _ arguments: [DatabaseValue], check: Check = .none) {
        self.sql = sql
        self.arguments = arguments
        self.check = check
    }
}

/// What one commit request writes, planned once for every engine: its mutations (committed
/// together, all or none) and their statements, in order.
public struct PlannedWrite: Sendable {
    public var mutations: [StoredMutation]
    public var steps: [WriteStep]
    /// True for state written behind the event log (``WriteBehind``): its transaction need not
    /// wait for the disk, since the log, committed durably first, rebuilds what a crash loses.
    /// A driver may then commit a batch of such writes only without a sync of its own (SQLite:
    /// `synchronous=NORMAL` for that transaction; the next synced commit or checkpoint syncs it).
    public var isUnsynced: Bool

    public init(mutations: [StoredMutation], steps: [WriteStep], isUnsynced: Bool = false) {
        self.mutations = mutations
        self.steps = steps
        self.isUnsynced = isUnsynced
    }
}

extension StoredMutation {
    /// Whether this mutation purges its own session (and so stores no event and no snapshot).
    public var purgesItsSession: Bool {
        changes.contains { if case .purgeSession(let id) = $0, id == session { true } else { false } }
    }

    /// Whether this mutation creates its own session.
    public var createsItsSession: Bool {
        changes.contains { if case .insertSession(let record) = $0, record.id == session { true } else { false } }
    }
}
