import Dispatch
import Foundation
import NavigationValuesWire
import Synchronization

/// The ``SessionStore`` on a SQL database, written once for every engine its ``SQLDriver``
/// drives: SQLite (`SQLiteSessionStore`, in `NavigationValuesSQLite`) and PostgreSQL
/// (`PostgresSessionStore`, in `NavigationValuesPostgres`).
///
/// - Group commit: concurrent ``commit(_:)`` calls that queue up while a batch runs share the
///   next one (one transaction, one sync); each caller resumes only once it is committed, and a
///   failing request fails only its own caller (the driver runs each request in a savepoint, or
///   sends the batch again without it).
/// - Every mutation of an existing session is conditional on the version it was made from (its
///   event's `seq` - 1), checked inside its transaction, so a stale writer gets `.conflict`.
/// - Statements are written once (``SQLText``), with the few pieces that differ between engines
///   taken from the driver's ``SQLDialect``.
///
/// ```swift
/// let store = try SQLiteSessionStore(path: "navigation-values.sqlite")
/// try await store.commit(mutation)
/// let session = try await store.loadSession(mutation.session)
/// ```
public final class SQLSessionStore<Driver: SQLDriver>: SessionStore {
    /// How a store on this engine is opened.
    public typealias Configuration = Driver.Configuration

    /// The engine's connections and batches.
    package let driver: Driver
    let text: SQLText
    /// Whether the session's indexed columns get a statement of their own (``SQLDialect/rewritesIndexOnAssignment``).
    let splitsSessionUpdate: Bool
    let options: SQLStoreOptions
    private let writeQueue = Mutex(WriteQueue())
    let figures = Mutex(StoreMetrics())
    /// When expired idempotency records were last removed.
    private let lastIdempotencyCleanup = Mutex(Date.distantPast)
    /// The outcome of the latest write (a batch or a readiness probe), for `/readyz`.
    let lastWrite = Mutex<WriteOutcome?>(nil)
    /// State changes of log-first commits not yet written (``WriteBehind``).
    let behind = Mutex(PendingStates())
    /// Replays events onto a session's state, to bring a state left behind its log up to it.
    let stateReplayer = Mutex<StateReplayer?>(nil)
    /// Whether a session's state may be behind its log with no changes held here to catch it up
    /// (until the first ``settleState()``): an earlier process may have stopped before writing it.
    let mayLagItsLog: Mutex<Bool>
    /// The version each session's event log reached at its latest log-first commit (``LogVersions``),
    /// kept only where this process is the file's only writer (``remembersLogVersions``).
    let logVersions = Mutex(LogVersions())
    /// False where other instances write (and where turns commit outside the group commit: only
    /// such drivers hold connections for them).
    let remembersLogVersions: Bool

    /// A store on `driver`'s database, which the driver opened (and migrated).
    public init(driver: Driver) {
        self.driver = driver
        text = SQLText(driver.dialect)
        splitsSessionUpdate = driver.dialect.rewritesIndexOnAssignment
        options = driver.options
        mayLagItsLog = Mutex(!driver.isShared)
        remembersLogVersions = !driver.isShared
    }

    /// Opens a store on the driver `open` makes, on a thread of its own rather than the caller's:
    /// opening blocks while it connects and migrates.
    public static func opening(_ open: @escaping @Sendable () throws -> Driver) async throws -> SQLSessionStore {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { SQLSessionStore(driver: try open()) })
            }
        }
    }

    /// Commits waiting for the writer (not counting the batch it is running).
    package var queuedCommitCount: Int { writeQueue.withLock { $0.count } }

    /// The write figures so far (commit latency, batch sizes, the engine's own), for `/metrics`.
    public var metrics: StoreMetrics {
        var metrics = figures.withLock { $0 }
        (metrics.stateLagEvents, metrics.stateLagSessions, metrics.stateLagSeconds) = behind.withLock { pending in
            let oldest = pending.sessions.values.map(\.since).min()
            return (pending.eventCount, pending.sessions.count, oldest.map { (ContinuousClock.now - $0).seconds } ?? 0)
        }
        driver.addFigures(to: &metrics)
        return metrics
    }

    public var isShared: Bool { driver.isShared }

    public func commitNotices() -> AsyncStream<CommitNotice> { driver.commitNotices() }

    public func replayStates(using replayer: @escaping StateReplayer) {
        stateReplayer.withLock { $0 = replayer }
    }

    /// Finishes every queued commit, then closes the connections. Later calls fail with `.closed`.
    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isDraining = writeQueue.withLock { $0.close(notifying: continuation) }
            if !isDraining { continuation.resume() }
        }
        if options.writeBehind.isOn { await onWriter { self.writeStateBehind() } }
        await driver.close()
    }

    // MARK: - Committing

    public func commit(_ mutation: StoredMutation) async throws {
        try await enqueue([mutation])
    }

    public func commitAll(_ mutations: [StoredMutation]) async throws {
        guard !mutations.isEmpty else { return }
        try await enqueue(mutations)
    }

    /// Queues mutations that commit together and waits until their transaction is committed.
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
                driver.enqueueOnWriter { self.drainWriteQueue() }
            }
        }
    }

    /// Runs one batch on the writer's queue, then queues itself again while commits wait, so
    /// that other work on the writer (reads of `:memory:`, maintenance, readiness probes) runs
    /// between batches.
    private func drainWriteQueue() {
        let (batch, closeWaiters) = writeQueue.withLock { $0.takeBatch(maximum: options.maximumBatchSize) }
        for waiter in closeWaiters { waiter.resume() }
        guard !batch.isEmpty else { return }
        let cpuStart = threadCPUSeconds()
        let started = ContinuousClock.now
        var results = [Result<Void, any Error>?](repeating: nil, count: batch.count)
        var writes: [PlannedWrite] = []
        var positions: [Int] = []
        var isLogFirst = [Bool](repeating: false, count: batch.count)
        writes.reserveCapacity(batch.count)
        positions.reserveCapacity(batch.count)
        var known = remembersLogVersions ? logVersions.withLock { $0.take() } : LogVersions()
        for (index, request) in batch.enumerated() {
            do {
                isLogFirst[index] = writesBehind(request.mutations)
                writes.append(try plan(request.mutations, isLogFirst: isLogFirst[index], known: &known))
                positions.append(index)
            } catch {
                results[index] = .failure(error)
            }
        }
        if !writes.isEmpty {
            for (index, result) in zip(positions, driver.commitBatch(writes, cleanup: dueIdempotencyCleanup())) {
                results[index] = result
            }
        }
        let final = results.map { $0 ?? .failure(StoreError(code: .failed, message: "the mutation was not run")) }
        if remembersLogVersions {
            for (index, result) in final.enumerated() {
                let isCommitted = if case .success = result { isLogFirst[index] } else { false }
                known.record(batch[index].mutations, isCommitted: isCommitted)
            }
            logVersions.withLock { $0 = known }
        }
        let finished = ContinuousClock.now
        if let outcome = WriteOutcome.of(final, at: finished) { lastWrite.withLock { $0 = outcome } }
        figures.withLock { metrics in
            metrics.recordBatch(size: batch.count, duration: (finished - started).seconds)
            for (request, result) in zip(batch, final) {
                let error: (any Error)? = if case .failure(let error) = result { error } else { nil }
                metrics.recordCommit(latency: (finished - request.start).seconds, error: error)
            }
        }
        // Before the callers resume: a read of theirs must find the changes waiting.
        recordCommitted(
            zip(batch.indices, final).compactMap { index, result in
                guard case .success = result else { return nil }
                return (batch[index].mutations, isLogFirst[index])
            })
        for (request, result) in zip(batch, final) {
            request.continuation.resume(with: result)
        }
        driver.afterBatch()
        writeStateBehindIfDue()
        let spent = threadCPUSeconds() - cpuStart
        figures.withLock { $0.writerCPUSeconds += spent }
        driver.enqueueOnWriter { self.drainWriteQueue() }
    }

    /// Deletes expired idempotency records at most once a minute, in a batch's transaction.
    private func dueIdempotencyCleanup() -> WriteStep? {
        let now = options.now()
        let isDue = lastIdempotencyCleanup.withLock { last in
            guard now.timeIntervalSince(last) >= 60 else { return false }
            last = now
            return true
        }
        guard isDue else { return nil }
        return WriteStep(text.deleteExpiredIdempotencyRecords, [.milliseconds(idempotencyCutoff)])
    }

    /// Records created before this instant count as absent.
    var idempotencyCutoff: Date {
        options.now().addingTimeInterval(-options.idempotencyLifetime.seconds)
    }

    // MARK: - Readiness

    /// Fails while writes fail (a full disk, a read-only file or database, a standby, a lost
    /// connection), and succeeds again once one works. It answers from the latest write when
    /// that worked less than a second ago or failed less than ten seconds ago, so a server whose
    /// commits fail is not ready even when a tiny probe would slip through; otherwise it writes
    /// the one row of `readiness_probe` in a transaction of its own.
    ///
    /// - Throws: `StoreError` `.unavailable` (or `.closed`).
    public func checkWritable() async throws {
        let now = ContinuousClock.now
        if let last = lastWrite.withLock({ $0 }), now - last.at < last.lifetime {
            if let error = last.error { throw error }
            return
        }
        let probe = WriteStep(text.readinessProbe, [.milliseconds(options.now())])
        do {
            try await driver.write { connection in
                try connection.checkWritable()
                try connection.transaction { _ = try connection.execute(probe.sql, probe.arguments) }
            }
            lastWrite.withLock { $0 = WriteOutcome(at: .now, error: nil) }
        } catch let error as StoreError {
            lastWrite.withLock { $0 = WriteOutcome(at: .now, error: error) }
            throw error
        }
    }
}

// MARK: - Readiness

/// Whether a write worked, and when: what `/readyz` answers from.
struct WriteOutcome: Sendable {
    var at: ContinuousClock.Instant
    var error: StoreError?

    /// How long a write that worked stands for the database's state before a probe asks again.
    static let lifetime: Duration = .seconds(1)
    /// How long a write that failed does: longer, since a probe's one small row may still fit
    /// (in the write-ahead log's space, say) where the commits that failed did not.
    static let failureLifetime: Duration = .seconds(10)

    /// How long this outcome stands.
    var lifetime: Duration { error == nil ? Self.lifetime : Self.failureLifetime }

    /// What a batch's results say of the database: a success says it writes; a failure of the
    /// database itself (`.unavailable`) says it does not; a refused mutation (a conflict,
    /// invalid data) says nothing about it (nil when the batch held only such).
    static func of(_ results: [Result<Void, any Error>], at instant: ContinuousClock.Instant) -> WriteOutcome? {
        var outcome: WriteOutcome?
        for result in results {
            switch result {
            case .success:
                outcome = WriteOutcome(at: instant, error: nil)
            case .failure(let error as StoreError) where error.code == .unavailable:
                if outcome == nil { outcome = WriteOutcome(at: instant, error: error) }
            case .failure:
                continue
            }
        }
        return outcome
    }
}

// MARK: - Write queue

/// The commits waiting for the writer; guarded by the store's mutex.
struct WriteQueue {
    struct Request: Sendable {
        /// Committed together, all or none.
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

/// The calling thread's CPU time so far, in seconds (`CLOCK_THREAD_CPUTIME_ID`).
package func threadCPUSeconds() -> Double {
    var time = timespec()
    guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) == 0 else { return 0 }
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole milliseconds.
    package var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
