import Dispatch
import Foundation
import NavigationValuesWire
import Synchronization

/// The SQLite implementation of ``SessionStore``: one write connection with group commit, and a
/// small pool of read connections that never wait for the writer (WAL mode).
///
/// SQLite calls run on the store's own serial dispatch queues, never on Swift's cooperative
/// pool. Concurrent ``commit(_:)`` calls that queue up while a transaction runs share the next
/// transaction and its sync (group commit); each caller resumes only after that COMMIT.
///
/// ```swift
/// let store = try SQLiteSessionStore(path: "navigation-values.sqlite")
/// try await store.commit(mutation)
/// let session = try await store.loadSession(mutation.session)
/// ```
public final class SQLiteSessionStore: SessionStore {
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
        /// How long an idempotency record is kept (API.md: 24 h).
        public var idempotencyLifetime: Duration = .seconds(24 * 60 * 60)
        /// The largest the database file may grow, in bytes (`PRAGMA max_page_count`); nil: no
        /// limit. Writes past it fail with `.unavailable`, as on a full disk.
        public var maxDatabaseBytes: Int?
        /// Frames in the write-ahead log (about a page each) that start a checkpoint, which copies
        /// them into the database file on a connection and thread of its own and lets the writer
        /// finish between batches (see `Checkpointer`). At least 1; SQLite's own automatic
        /// checkpoint uses 1,000, which puts a stall of a few milliseconds in front of commits
        /// five times a second at 500 mutations/s; the default, 10,000 (a log of about 40 MB),
        /// every couple of seconds.
        public var walCheckpointPages = 10_000
        /// Frames past which the writer forces a RESTART checkpoint between batches (the log
        /// could not be copied while commits ran, or a reader held it); nil: four times
        /// ``walCheckpointPages``.
        public var walHardLimitPages: Int?
        /// The clock for idempotency expiry.
        public var now: @Sendable () -> Date = { Date() }

        /// The defaults.
        public init() {}
    }

    /// The path the store was opened with.
    public let path: String
    let configuration: Configuration
    let writer: SerialConnection
    /// Checkpoints the write-ahead log off the writer; nil for `:memory:` and read-only stores.
    let checkpointer: Checkpointer?
    /// Read connections; empty for `:memory:`, whose reads go through the writer.
    let readers: [SerialConnection]
    let nextReader = Mutex(0)
    private let writeQueue = Mutex(WriteQueue())
    private let figures = Mutex(StoreMetrics())
    /// When expired idempotency records were last removed.
    let lastIdempotencyCleanup = Mutex(Date.distantPast)
    /// The outcome of the latest write (a batch or a readiness probe), for `/readyz`.
    let lastWrite = Mutex<WriteOutcome?>(nil)

    /// Opens (creating and migrating it when needed) the database at `path`; `:memory:` keeps
    /// everything in memory on one connection. Blocks while it opens and migrates: call it at
    /// start-up.
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

    /// Commits waiting for the writer (not counting the batch it is running).
    var queuedCommitCount: Int { writeQueue.withLock { $0.count } }

    /// The write figures so far (commit latency, batch sizes), for `/metrics`.
    public var metrics: StoreMetrics {
        var metrics = figures.withLock { $0 }
        if let checkpoints = checkpointer?.metrics {
            metrics.checkpoints = checkpoints.passive
            metrics.partialCheckpoints = checkpoints.passivePartial
            metrics.failedCheckpoints = checkpoints.failed
            metrics.writerCheckpoints = checkpoints.writer
            metrics.partialWriterCheckpoints = checkpoints.writerPartial
            metrics.walRestarts = checkpoints.restarts
            metrics.writerCheckpointCPUSeconds = checkpoints.writerCheckpointCPUSeconds
            metrics.forcedCheckpoints = checkpoints.forced
            metrics.busyForcedCheckpoints = checkpoints.forcedBusy
            metrics.failedForcedCheckpoints = checkpoints.forcedFailed
            metrics.failedWriterCheckpoints = checkpoints.writerFailed
            metrics.pagesCheckpointed = checkpoints.pagesCheckpointed
            metrics.walPages = checkpoints.logFrames
            metrics.walBytes = checkpoints.logBytes
            metrics.checkpointerCPUSeconds = checkpoints.cpuSeconds
        }
        return metrics
    }

    /// False: a SQLite file is served by one process.
    public var isShared: Bool { false }

    /// A finished stream: no other process writes the file.
    public func commitNotices() -> AsyncStream<CommitNotice> { AsyncStream { $0.finish() } }

    /// Opens the store like ``init(path:configuration:)``, on a thread of its own rather than
    /// the caller's, for callers in async code.
    public static func open(path: String, configuration: Configuration = Configuration()) async throws
        -> SQLiteSessionStore
    {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try SQLiteSessionStore(path: path, configuration: configuration) })
            }
        }
    }

    /// Finishes every queued commit, then closes the connections. Later calls fail with `.closed`.
    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isDraining = writeQueue.withLock { $0.close(notifying: continuation) }
            if !isDraining { continuation.resume() }
        }
        await writer.close()
        for reader in readers { await reader.close() }
        await checkpointer?.close(busyTimeout: configuration.busyTimeout)
    }

    // MARK: - SessionStore

    public func commit(_ mutation: StoredMutation) async throws {
        try await enqueue([mutation])
    }

    public func commitAll(_ mutations: [StoredMutation]) async throws {
        guard !mutations.isEmpty else { return }
        try await enqueue(mutations)
    }

    /// Queues mutations that commit together (in one savepoint of a group-commit transaction)
    /// and waits until that transaction is committed.
    private func enqueue(_ mutations: [StoredMutation]) async throws {
        let start = ContinuousClock.now
        // Not cancellable once queued: a half-acknowledged write would be worse than a late one.
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let request = WriteQueue.Request(mutations: mutations, continuation: continuation, start: start)
            switch writeQueue.withLock({ $0.enqueue(request) }) {
            case .refused:
                continuation.resume(throwing: StoreError(code: .closed, message: "the store is closed"))
            case .queued:
                break
            case .startDraining:
                writer.queue.async { self.drainWriteQueue() }
            }
        }
    }

    // MARK: - Group commit

    /// Runs one batch on the writer queue, then queues itself again while commits wait, so that
    /// other work on the writer (reads of `:memory:`, `checkWritable`) runs between batches.
    private func drainWriteQueue() {
        let (batch, closeWaiters) = writeQueue.withLock { $0.takeBatch(maximum: configuration.maximumBatchSize) }
        for waiter in closeWaiters { waiter.resume() }
        guard !batch.isEmpty else { return }
        let cpuStart = threadCPUSeconds()
        let started = ContinuousClock.now
        let results: [Result<Void, any Error>]
        var pagesWritten: Int?
        do {
            results = try writer.onQueue { db in
                defer { pagesWritten = db.pagesWritten }
                return runBatch(batch.map(\.mutations), in: db)
            }
        } catch {
            results = Array(repeating: .failure(error), count: batch.count)
        }
        let finished = ContinuousClock.now
        recordWriteOutcome(results, at: finished)
        figures.withLock { metrics in
            metrics.recordBatch(size: batch.count, duration: (finished - started).seconds)
            if let pagesWritten { metrics.pagesWritten = pagesWritten }
            for (request, result) in zip(batch, results) {
                let succeeded = if case .success = result { true } else { false }
                metrics.recordCommit(latency: (finished - request.start).seconds, succeeded: succeeded)
            }
        }
        for (request, result) in zip(batch, results) {
            request.continuation.resume(with: result)
        }
        if let checkpointer { _ = try? writer.onQueue { db in checkpointer.afterBatch(db) } }
        let spent = threadCPUSeconds() - cpuStart
        figures.withLock { $0.writerCPUSeconds += spent }
        writer.queue.async { self.drainWriteQueue() }
    }

    /// One transaction over the requests' mutations, each request in its own savepoint so that
    /// one failing request fails only its own caller. Every result is final: successes are
    /// committed.
    private func runBatch(_ requests: [[StoredMutation]], in db: Database) -> [Result<Void, any Error>] {
        // A transaction still open here was left by a rollback that failed (the last resort
        // below): none of its callers were told it committed. Try again, so that one failure does
        // not fail every later batch; if it fails again, this batch's BEGIN fails and its callers
        // hear of it, and readiness (checkWritable) reports the store unwritable.
        if db.isInTransaction { try? db.rollback() }
        do {
            try db.execute("BEGIN IMMEDIATE")
        } catch {
            return Array(repeating: .failure(error), count: requests.count)
        }
        var results: [Result<Void, any Error>] = []
        results.reserveCapacity(requests.count)
        for mutations in requests {
            do {
                try db.inSavepoint {
                    for mutation in mutations { try apply(mutation, in: db) }
                }
                results.append(.success(()))
            } catch {
                results.append(.failure(error))
                // Some errors (disk full, I/O) make SQLite roll back the whole transaction
                // (https://sqlite.org/lang_transaction.html): nothing of this batch was kept.
                if !db.isInTransaction {
                    return Array(repeating: .failure(error), count: requests.count)
                }
            }
        }
        removeExpiredIdempotencyRecords(in: db)
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
}

// MARK: - Write queue

/// The commits waiting for the writer; guarded by the store's mutex.
struct WriteQueue {
    struct Request: Sendable {
        /// Committed together, in one savepoint.
        var mutations: [StoredMutation]
        var continuation: CheckedContinuation<Void, any Error>
        var start: ContinuousClock.Instant
    }

    enum EnqueueOutcome {
        /// The store is closed.
        case refused
        /// A drain is running and will take it.
        case queued
        /// The caller must start a drain on the writer queue.
        case startDraining
    }

    private var pending: [Request] = []
    private var isDraining = false
    private var isClosed = false
    /// `close()` calls waiting for the queued commits to finish.
    private var closeWaiters: [CheckedContinuation<Void, Never>] = []

    var count: Int { pending.count }

    mutating func enqueue(_ request: Request) -> EnqueueOutcome {
        guard !isClosed else { return .refused }
        pending.append(request)
        guard !isDraining else { return .queued }
        isDraining = true
        return .startDraining
    }

    /// Refuses later commits; true when queued ones are still running, in which case
    /// `continuation` is resumed once they are done.
    mutating func close(notifying continuation: CheckedContinuation<Void, Never>) -> Bool {
        isClosed = true
        guard isDraining else { return false }
        closeWaiters.append(continuation)
        return true
    }

    /// Up to `maximum` requests, oldest first. An empty batch ends the drain and hands back the
    /// `close()` calls to resume.
    mutating func takeBatch(maximum: Int) -> (batch: [Request], closeWaiters: [CheckedContinuation<Void, Never>]) {
        guard !pending.isEmpty else {
            isDraining = false
            defer { closeWaiters = [] }
            return ([], closeWaiters)
        }
        let count = min(max(1, maximum), pending.count)
        let batch = Array(pending.prefix(count))
        pending.removeFirst(count)
        return (batch, [])
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
