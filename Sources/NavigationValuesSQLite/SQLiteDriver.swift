import Dispatch
import Foundation
import NavigationValuesStore
import NavigationValuesWire
import Synchronization

/// The SQL store on a SQLite file (or `:memory:`): the embedded default, its file served by one
/// process.
///
/// ```swift
/// let store = try SQLiteSessionStore(path: "navigation-values.sqlite")
/// try await store.commit(mutation)
/// let session = try await store.loadSession(mutation.session)
/// ```
public typealias SQLiteSessionStore = SQLSessionStore<SQLiteDriver>

/// SQLite under ``SQLSessionStore``: one write connection, whose batches run in one
/// `BEGIN IMMEDIATE` transaction with each request in a savepoint, and a small pool of read
/// connections that never wait for the writer (WAL mode). The write-ahead log is checkpointed off
/// the writer (`Checkpointer`).
///
/// SQLite calls run on the driver's own serial dispatch queues, never on Swift's cooperative pool.
public final class SQLiteDriver: SQLDriver {
    /// How durable an acknowledged commit is (https://sqlite.org/pragma.html#pragma_synchronous).
    public enum SyncMode: String, Sendable, CaseIterable {
        /// WAL with `synchronous=NORMAL`: an acknowledged write survives a crash or `kill -9` of
        /// the process; a power loss may lose the last commits (never corrupts the file).
        case normal
        /// WAL with `synchronous=FULL`: the WAL is synced at every commit, so an acknowledged
        /// write also survives a power loss.
        case full
    }

    /// How the store opens its database.
    public struct Configuration: Sendable {
        /// Durability of acknowledged commits; `.normal` by default.
        public var sync: SyncMode = .normal
        /// `.readOnly` opens an existing, fully migrated database for reading (`replay`); every
        /// write then fails with `.unavailable`.
        public var access: Database.Access = .readWrite
        /// Read connections (ignored for `:memory:`, which has a single connection).
        public var readerCount = 4
        /// How long a connection waits for a lock held by another process.
        public var busyTimeout: Duration = .seconds(5)
        /// The most mutations one group-commit transaction takes.
        public var maximumBatchSize = 1_000
        /// How long an idempotency record is kept (docs/API.md: 24 h).
        public var idempotencyLifetime: Duration = .seconds(24 * 60 * 60)
        /// The largest the database file may grow, in bytes (`PRAGMA max_page_count`); nil: no
        /// limit. Writes past it fail with `.unavailable`, as on a full disk.
        public var maxDatabaseBytes: Int?
        /// Frames in the write-ahead log (about a page each) after which the writer finishes a
        /// checkpoint between batches, so that the log restarts; the checkpointer copies them into
        /// the database file before that, on a connection and thread of its own, in rounds of a
        /// tenth of this (see `Checkpointer`). At least 1; SQLite's own automatic
        /// checkpoint uses 1,000, which puts a stall of a few milliseconds in front of commits
        /// five times a second at 500 mutations/s; the default, 10,000 (a log of about 40 MB),
        /// every couple of seconds.
        public var walCheckpointPages = 10_000
        /// Frames past which the writer forces a RESTART checkpoint between batches (the log
        /// could not be copied while commits ran, or a reader held it); nil: four times
        /// ``walCheckpointPages``.
        public var walHardLimitPages: Int?
        /// The clock for idempotency expiry and purge tombstones.
        public var now: @Sendable () -> Date = { Date() }
        /// How far the state rows may lag the event log (log-first commits); `.inline` (the
        /// default here; the server's is `.standard`) writes them in each mutation's transaction.
        /// Written behind, a mutation's state changes are not checked against the rows when it
        /// commits: a change to a row that does not exist fails the state's write later, and the
        /// session's state is then rebuilt from its log (``SessionStore/replayStates(using:)``).
        public var writeBehind: WriteBehind = .inline

        /// The defaults.
        public init() {}
    }

    /// The path the store was opened with.
    public let path: String
    public let options: SQLStoreOptions
    let configuration: Configuration
    let writer: SerialConnection
    /// Checkpoints the write-ahead log off the writer; nil for `:memory:` and read-only stores.
    let checkpointer: Checkpointer?
    /// Read connections; empty for `:memory:`, whose reads go through the writer.
    let readers: [SerialConnection]
    private let nextReader = Mutex(0)
    /// Pages the writer has written, as of its latest batch.
    private let pagesWritten = Atomic<Int>(0)
    /// Transactions of state written behind the log committed without the log's sync.
    let unsyncedTransactions = Atomic<Int>(0)
    /// Whether the writer's connection is left at `synchronous=NORMAL` (setting it back failed).
    private let isWriterUnsynced = Atomic<Bool>(false)

    /// Opens (creating and migrating it when needed) the database at `path`; `:memory:` keeps
    /// everything in memory on one connection. Blocks while it opens and migrates.
    ///
    /// - Throws: ``StoreError``: `.migrationRefused` when the file's schema does not match this
    ///   binary, `.unavailable` when it cannot be opened.
    public init(path: String, configuration: Configuration = Configuration()) throws {
        do {
            (writer, readers, checkpointer) = try Self.openConnections(path: path, configuration: configuration)
        } catch var error as StoreError {
            // SQLite's messages do not name the file; operators need it.
            if !error.message.contains(path) { error.message = "\(path): \(error.message)" }
            throw error
        }
        self.path = path
        self.configuration = configuration
        options = SQLStoreOptions(
            maximumBatchSize: configuration.maximumBatchSize, idempotencyLifetime: configuration.idempotencyLifetime,
            now: configuration.now,
            writeBehind: configuration.access == .readWrite && path != ":memory:" ? configuration.writeBehind : .inline)
    }

    private static func openConnections(
        path: String, configuration: Configuration
    ) throws -> (writer: SerialConnection, readers: [SerialConnection], checkpointer: Checkpointer?) {
        let database = try Database(path: path, access: configuration.access, busyTimeout: configuration.busyTimeout)
        var checkpointer: Checkpointer?
        if configuration.access == .readWrite {
            let synchronous: Database.Synchronous = configuration.sync == .full ? .full : .normal
            try database.enableWriteAheadLog(synchronous: synchronous)
            try Migrator().migrate(database, now: configuration.now())
            if let bytes = configuration.maxDatabaseBytes { try database.limitSize(to: bytes) }
            if path != ":memory:" {
                let threshold = max(1, configuration.walCheckpointPages)
                let opened = try Checkpointer(
                    path: path, synchronous: synchronous, threshold: threshold,
                    hardLimit: configuration.walHardLimitPages ?? threshold * 4, forcedWait: .milliseconds(200))
                // A log that restarts is cut back to four times the threshold's frames: more than
                // a checkpoint cycle appends, so the file is overwritten in place cycle after
                // cycle (no new blocks to allocate and journal at each sync).
                let frameBytes = try database.pageSize + 24
                try database.observeWriteAheadLog(journalSizeLimit: 4 * threshold * frameBytes + 32) { frames in
                    opened.committed(frames: frames)
                }
                checkpointer = opened
            }
        } else {
            let pending = try Migrator().pendingMigrations(in: database)
            guard pending.isEmpty else {
                throw StoreError(
                    code: .migrationRefused,
                    message: "\(path) needs migrations \(pending.map(\.fileName)); run `navigation-values migrate`")
            }
        }
        var readers: [SerialConnection] = []
        if path != ":memory:" {
            for index in 0..<max(1, configuration.readerCount) {
                let reader = try Database(path: path, access: .readOnly, busyTimeout: configuration.busyTimeout)
                readers.append(SerialConnection(reader, label: "NavigationValuesStore.reader.\(index)"))
            }
        }
        return (SerialConnection(database, label: "NavigationValuesStore.writer"), readers, checkpointer)
    }

    public var dialect: any SQLDialect { SQLiteDialect() }

    /// False: a SQLite file is served by one process.
    public var isShared: Bool { false }

    /// A finished stream: no other process writes the file.
    public func commitNotices() -> AsyncStream<CommitNotice> { AsyncStream { $0.finish() } }

    // MARK: - Connections

    /// Runs `body` in one read transaction (a consistent snapshot of the file) on a read
    /// connection, taken in turn; through the writer for `:memory:`.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let connection: SerialConnection
        if readers.isEmpty {
            connection = writer
        } else {
            let index = nextReader.withLock { next in
                defer { next = (next + 1) % readers.count }
                return next
            }
            connection = readers[index]
        }
        return try await connection.run { db in try db.inTransaction(.deferred) { try body(db) } }
    }

    /// Runs `body` on the writer; fails with `.unavailable` when the database is read-only.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writer.run { db in
            try db.checkWritable()
            try self.restoreSync(db)
            return try body(db)
        }
    }

    /// Sets the writer's `synchronous=FULL` back where setting it back after a transaction of
    /// state written behind failed: nothing else commits on the writer until it is.
    private func restoreSync(_ db: Database) throws {
        guard isWriterUnsynced.load(ordering: .relaxed) else { return }
        try db.execute("PRAGMA synchronous = \(Database.Synchronous.full.rawValue)")
        isWriterUnsynced.store(false, ordering: .relaxed)
    }

    public func enqueueOnWriter(_ work: @escaping @Sendable () -> Void) {
        writer.queue.async(execute: work)
    }

    /// None: one process serves the file, its one writer runs every write, and a session's actor
    /// runs the session's commands one at a time.
    public func holdConnection(until deadline: ContinuousClock.Instant) async throws -> NoHeldConnection<Database>? {
        nil
    }

    public func commitTurn(_ write: PlannedWrite, on connection: Database) throws {
        throw StoreError(code: .failed, message: "SQLite holds no connection for a turn")
    }

    public func writeInTurn(_ write: PlannedWrite, on connection: Database) throws {
        throw StoreError(code: .failed, message: "SQLite holds no connection for a turn")
    }

    public func close() async {
        await writer.close()
        for reader in readers { await reader.close() }
        await checkpointer?.close(busyTimeout: configuration.busyTimeout)
    }

    // MARK: - Group commit

    public func commitBatch(_ writes: [PlannedWrite], cleanup: WriteStep?) -> [Result<Void, any Error>] {
        do {
            return try writer.onQueue { db in
                defer { pagesWritten.store(db.pagesWritten, ordering: .relaxed) }
                // State written behind the log only: under `--sync full`, committed without the
                // log's sync (as `--sync normal` commits); the next commit's sync, or the
                // checkpoint's, makes it durable, and until then the event log rebuilds it. A
                // mutation's own transaction never goes without. Not changeable inside a
                // transaction, so set around it (and set back even when the batch fails).
                guard configuration.sync == .full else { return runBatch(writes, cleanup: cleanup, in: db) }
                let skipsSync = !writes.isEmpty && writes.allSatisfy(\.isUnsynced) && cleanup == nil
                if !skipsSync {
                    do {
                        try restoreSync(db)
                    } catch {
                        return Array(repeating: .failure(error), count: writes.count)
                    }
                }
                guard skipsSync, !db.isInTransaction,
                    (try? db.execute("PRAGMA synchronous = \(Database.Synchronous.normal.rawValue)")) != nil
                else { return runBatch(writes, cleanup: cleanup, in: db) }
                isWriterUnsynced.store(true, ordering: .relaxed)
                unsyncedTransactions.add(1, ordering: .relaxed)
                let results = runBatch(writes, cleanup: cleanup, in: db)
                if (try? db.execute("PRAGMA synchronous = \(Database.Synchronous.full.rawValue)")) != nil {
                    isWriterUnsynced.store(false, ordering: .relaxed)
                }
                return results
            }
        } catch {
            return Array(repeating: .failure(error), count: writes.count)
        }
    }

    public func afterBatch() {
        if let checkpointer { _ = try? writer.onQueue { db in checkpointer.afterBatch(db) } }
    }

    /// One transaction over the writes, each in its own savepoint (unless it needs none) so that
    /// one failing write fails only its own caller. Every result is final: successes are committed.
    private func runBatch(_ writes: [PlannedWrite], cleanup: WriteStep?, in db: Database) -> [Result<Void, any Error>] {
        // A transaction still open here was left by a rollback that failed (the last resort
        // below): none of its callers were told it committed. Try again, so that one failure does
        // not fail every later batch; if it fails again, this batch's BEGIN fails and its callers
        // hear of it, and readiness (checkWritable) reports the store unwritable.
        if db.isInTransaction { try? db.rollback() }
        // Writes rarely fail here (a session's actor runs its commands one at a time, and a
        // state written behind is where its changes start): a batch runs first without a
        // savepoint per write, and only when one fails, again from the start with them.
        if writes.contains(where: { !Self.undoesItselfOnFailure($0) }),
            let results = runWithoutSavepoints(writes, cleanup: cleanup, in: db)
        {
            return results
        }
        do {
            try db.execute("BEGIN IMMEDIATE")
        } catch {
            return Array(repeating: .failure(error), count: writes.count)
        }
        var results: [Result<Void, any Error>] = []
        results.reserveCapacity(writes.count)
        for write in writes {
            do {
                if Self.undoesItselfOnFailure(write) {
                    for step in write.steps { try db.run(step) }
                } else {
                    try db.inSavepoint {
                        for step in write.steps { try db.run(step) }
                    }
                }
                results.append(.success(()))
            } catch {
                results.append(.failure(error))
                // Some errors (disk full, I/O) make SQLite roll back the whole transaction
                // (https://sqlite.org/lang_transaction.html): nothing of this batch was kept.
                if !db.isInTransaction {
                    return Array(repeating: .failure(error), count: writes.count)
                }
            }
        }
        return commit(results, cleanup: cleanup, in: db)
    }

    /// Runs `cleanup` (a failure there must not fail the batch, so it is only skipped) and
    /// commits the open transaction: `results`, or, when the commit fails, each success turned
    /// into its error.
    private func commit(
        _ results: [Result<Void, any Error>], cleanup: WriteStep?, in db: Database
    ) -> [Result<Void, any Error>] {
        if let cleanup { try? db.inSavepoint { try db.run(cleanup) } }
        do {
            try db.execute("COMMIT")
        } catch {
            // A rollback that fails leaves the transaction open: the next batch tries again before
            // its BEGIN; nothing is committed by mistake.
            try? db.rollback()
            return results.map { result in result.flatMap { .failure(error) } }
        }
        return results
    }

    /// Runs the batch in one transaction with no savepoint per write; nil when a write failed,
    /// after rolling the transaction back (a rollback that fails leaves it open, and the caller's
    /// next BEGIN tries again): nothing of the batch is kept, and the caller runs it again with
    /// savepoints, so that the write that failed fails alone. Otherwise every result is final.
    private func runWithoutSavepoints(
        _ writes: [PlannedWrite], cleanup: WriteStep?, in db: Database
    ) -> [Result<Void, any Error>]? {
        do {
            try db.execute("BEGIN IMMEDIATE")
        } catch {
            return Array(repeating: .failure(error), count: writes.count)
        }
        do {
            for write in writes {
                for step in write.steps { try db.run(step) }
            }
        } catch {
            try? db.rollback()
            return nil
        }
        return commit(Array(repeating: .success(()), count: writes.count), cleanup: cleanup, in: db)
    }

    /// Whether a write needs no savepoint of its own for a failure to leave nothing of it: its
    /// steps only read (version checks), but for the last one, which changes rows with nothing
    /// to check afterwards. A statement that fails undoes its own changes and leaves the
    /// transaction open (https://sqlite.org/lang_conflict.html, ABORT), and the reads before it
    /// changed nothing. A log-first commit without an idempotency key is such a write (its
    /// version check, then its event): two statements fewer per commit.
    static func undoesItselfOnFailure(_ write: PlannedWrite) -> Bool {
        guard let last = write.steps.last, last.check == .none else { return false }
        return write.steps.dropLast().allSatisfy { step in
            switch step.check {
            case .version, .logVersion: true
            case .none, .changesOneRow: false
            }
        }
    }

    // MARK: - Figures

    public func addFigures(to metrics: inout StoreMetrics) {
        metrics.pagesWritten = pagesWritten.load(ordering: .relaxed)
        guard let checkpoints = checkpointer?.metrics else { return }
        metrics.checkpoints = checkpoints.passive
        metrics.partialCheckpoints = checkpoints.passivePartial
        metrics.failedCheckpoints = checkpoints.failed
        metrics.writerCheckpoints = checkpoints.writer
        metrics.partialWriterCheckpoints = checkpoints.writerPartial
        metrics.walRestarts = checkpoints.restarts
        metrics.writerCheckpointCPUSeconds = checkpoints.writerCheckpointCPUSeconds
        metrics.writerCheckpointSeconds = checkpoints.writerCheckpointSeconds
        metrics.writerCheckpointPages = checkpoints.writerPagesCopied
        metrics.forcedCheckpoints = checkpoints.forced
        metrics.busyForcedCheckpoints = checkpoints.forcedBusy
        metrics.failedForcedCheckpoints = checkpoints.forcedFailed
        metrics.failedWriterCheckpoints = checkpoints.writerFailed
        metrics.pagesCheckpointed = checkpoints.pagesCheckpointed
        metrics.walPages = checkpoints.logFrames
        metrics.walBytes = checkpoints.logBytes
        metrics.checkpointerCPUSeconds = checkpoints.cpuSeconds
    }
}

// MARK: - The store's names

extension SQLSessionStore where Driver == SQLiteDriver {
    /// How durable an acknowledged commit is.
    public typealias SyncMode = SQLiteDriver.SyncMode

    /// Opens (creating and migrating it when needed) the database at `path`; `:memory:` keeps
    /// everything in memory on one connection. Blocks while it opens and migrates: call it at
    /// start-up, or use ``open(path:configuration:)``.
    ///
    /// - Throws: ``StoreError``: `.migrationRefused` when the file's schema does not match this
    ///   binary, `.unavailable` when it cannot be opened.
    public convenience init(path: String, configuration: Configuration = Configuration()) throws {
        self.init(driver: try SQLiteDriver(path: path, configuration: configuration))
    }

    /// Opens the store like ``init(path:configuration:)``, on a thread of its own rather than
    /// the caller's, for callers in async code.
    public static func open(path: String, configuration: Configuration = Configuration()) async throws
        -> SQLiteSessionStore
    {
        try await opening { try SQLiteDriver(path: path, configuration: configuration) }
    }

    /// The path the store was opened with.
    public var path: String { driver.path }

    /// Retention's query (state ?1, before ?2, limit ?3), as this store runs it.
    package static var sessionsByStateAndAge: String { SQLText(SQLiteDialect()).sessionsByStateAndAge }

    /// The write connection (tests hold its queue).
    var writer: SerialConnection { driver.writer }
}

// MARK: - SQL

/// What SQLite's SQL says its own way.
struct SQLiteDialect: SQLDialect {
    func parameter(_ index: Int) -> String { "?\(index)" }
    /// Times are INTEGER milliseconds since 1970 (Migrations/0001).
    func time(_ parameter: String) -> String { parameter }
    func milliseconds(_ column: String) -> String { column }
    /// Milliseconds truncated to the minute, as SQLite's `%` truncates (Migrations/0008).
    func minute(_ time: String) -> String { "(\(time) - \(time) % 60000)" }
    func byteLength(_ column: String) -> String { "length(CAST(\(column) AS BLOB))" }
    func isIn(_ column: String, list parameter: String) -> String {
        "\(column) IN (SELECT value FROM json_each(\(parameter)))"
    }
    /// A JSON array of the texts, for `json_each`.
    func list(_ texts: [String]) -> DatabaseValue {
        // Encoding an array of strings cannot fail.
        .text((try? JSONEncoder().encode(texts)).map { String(decoding: $0, as: UTF8.self) } ?? "[]")
    }
    func isSame(_ left: String, _ right: String) -> String { "\(left) IS \(right)" }
    /// `BEGIN IMMEDIATE` holds the database's one write lock until the transaction ends.
    var lockingRead: String { "" }
    var transactionLock: String? { nil }
    /// A writer waits `busyTimeout` for another process's lock; there is no row to wait for.
    var lockTimeout: String? { nil }
    /// An UPDATE rewrites the entry of every index whose columns it assigns, changed or not.
    var rewritesIndexOnAssignment: Bool { true }
    var unsyncedCommit: String? { nil }
}

extension Database: SQLConnection {
    public func scan(_ sql: String, _ arguments: [DatabaseValue], _ body: (Row) throws -> Bool) throws {
        try scanRows(sql, arguments, body)
    }

    /// Runs each query in turn: the caller's read transaction makes them one snapshot.
    public func readAll(_ queries: [SQLQuery], _ body: (Int, Row) throws -> Void) throws {
        for (index, query) in queries.enumerated() {
            try forEachRow(query.sql, query.arguments) { row in try body(index, row) }
        }
    }

    /// An IMMEDIATE transaction, and the queries in it.
    public func begin(_ queries: [SQLQuery], _ body: (Int, Row) throws -> Void) throws {
        try execute(Database.TransactionKind.immediate.rawValue)
        do {
            try readAll(queries, body)
        } catch {
            try? rollback()
            throw error
        }
    }

    /// An IMMEDIATE transaction, after rolling back one a failed rollback left open.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if isInTransaction { try? rollback() }
        return try inTransaction(.immediate, body)
    }

    public func checkWritable() throws {
        guard !isReadOnly else { throw StoreError(code: .unavailable, message: "the database is read-only") }
    }

    /// Runs one step of a write, checking what it must find.
    func run(_ step: WriteStep) throws {
        switch step.check {
        case .none:
            try execute(step.sql, step.arguments)
        case .changesOneRow(let message):
            guard try execute(step.sql, step.arguments) == 1 else {
                throw StoreError(code: .invalidData, message: message)
            }
        case .version(let id, let expected), .logVersion(let id, let expected):
            // One row at most (the session's, by its key): read it and stop, without stepping
            // the statement again to learn that no other row follows.
            var current: Int64?
            try scanRows(step.sql, step.arguments) { row in
                current = row.int64(0)
                return false
            }
            guard let current else { throw StoreError(code: .invalidData, message: "session \(id) does not exist") }
            guard current == expected else {
                throw StoreError(code: .conflict, message: "session \(id) is at version \(current), not \(expected)")
            }
        }
    }
}
