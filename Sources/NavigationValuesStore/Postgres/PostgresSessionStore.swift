import Dispatch
import Foundation
import NavigationValues
import NavigationValuesWire
import Synchronization

/// The PostgreSQL implementation of ``SessionStore``, on libpq: several server instances share
/// one database, and the database decides the order of each session's writes.
///
/// - Group commit: concurrent ``commit(_:)`` calls that queue up while a transaction runs share
///   the next one, sent as one pipeline (BEGIN, every mutation's prepared statements, COMMIT)
///   and answered in one round trip. A mutation that fails is taken out and the others are sent
///   again, so one failure fails only its own caller.
/// - One truth across instances: every mutation of an existing session is conditional on the
///   version it was made from (its event's `seq` - 1): the session's row is locked and checked
///   in the transaction, and `(session, seq)` is the events' primary key. A stale instance gets
///   `.conflict`, reloads and retries.
/// - Fan-out: each commit sends `NOTIFY navigation_values_events` with `(session, seq)` per
///   mutation (one notification carries many lines);
///   ``commitNotices()`` yields the other instances' commits, read by a listening connection.
/// - Faults: a lost connection fails calls with `.unavailable` and is opened again on a later
///   call (after `reconnectDelay`); the listener reconnects by itself and then yields
///   ``CommitNotice/mayHaveMissed``.
///
/// libpq calls block, so they run on the store's own serial queues and listener thread, never on
/// Swift's cooperative pool.
///
/// ```swift
/// let store = try await PostgresSessionStore.open(url: "postgres://nv@127.0.0.1:5432/nv")
/// try await store.commit(mutation)
/// ```
public final class PostgresSessionStore: SessionStore {
    /// How the store connects.
    public struct Configuration: Sendable {
        /// Read connections (the writer has one of its own, the listener another).
        public var readerCount = 4
        /// The most mutations one group-commit transaction takes.
        public var maximumBatchSize = 500
        /// How long an idempotency record is kept (API.md: 24 h).
        public var idempotencyLifetime: Duration = .seconds(24 * 60 * 60)
        /// The clock for idempotency expiry and purge tombstones.
        public var now: @Sendable () -> Date = { Date() }
        /// The longest a statement may run on the server (`statement_timeout`), and a round
        /// trip may take before the connection counts as lost.
        public var statementTimeout: Duration = .seconds(10)
        /// How long after a failed connection attempt calls fail at once before the next attempt.
        public var reconnectDelay: Duration = .milliseconds(500)
        /// Whether to listen for other instances' commits (``commitNotices()``).
        public var listens = true
        /// Whether to apply pending migrations at open (`migrate` and `serve`); when false, a
        /// database with pending migrations is refused (`replay`).
        public var migrates = true

        /// The defaults.
        public init() {}
    }

    /// The channel every commit notifies: payload lines `INSTANCE SESSION SEQ`, plus ` JSON`
    /// (the event) for a purge, whose event is not stored.
    static let channel = "navigation_values_events"

    /// The connection string or URL the store was opened with (it may hold a password: never log it).
    let url: String
    let configuration: Configuration
    /// Tells this store's own notifications from other instances'.
    let instance: String
    let writer: PostgresLink
    let readers: [PostgresLink]
    let nextReader = Mutex(0)
    private let writeQueue = Mutex(WriteQueue())
    private let figures = Mutex(StoreMetrics())
    let lastIdempotencyCleanup = Mutex(Date.distantPast)
    /// The outcome of the latest write (a batch or a readiness probe), for `/readyz`.
    let lastWrite = Mutex<WriteOutcome?>(nil)
    let listener: PostgresListener?

    /// Connects, checks the server (PostgreSQL 14 or newer, for pipeline mode) and applies
    /// pending migrations. Blocks while it does: call it at start-up, or use ``open(url:configuration:)``.
    ///
    /// - Throws: ``StoreError``: `.unavailable` when the server cannot be reached,
    ///   `.migrationRefused` when the database's schema does not match this binary.
    public init(url: String, configuration: Configuration = Configuration()) throws {
        let first = try PostgresConnection(url: url)
        guard first.serverMajorVersion >= 14 else {
            throw StoreError(
                code: .unavailable, message: "PostgreSQL \(first.serverMajorVersion) is too old; 14 or newer is needed")
        }
        if configuration.migrates {
            try PostgresMigrator().migrate(first)
        } else {
            let pending = try PostgresMigrator().pendingMigrations(in: first)
            guard pending.isEmpty else {
                throw StoreError(
                    code: .migrationRefused,
                    message: "the database needs migrations \(pending.map(\.fileName)); run `navigation-values migrate`"
                )
            }
        }
        self.url = url
        self.configuration = configuration
        instance = "i" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let timeout = configuration.statementTimeout
        let setUp: (PostgresConnection) throws -> Void = { connection in
            let milliseconds =
                timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
            try connection.query("SELECT set_config('statement_timeout', $1, false)", ["\(milliseconds)"])
        }
        let linkTimeout = timeout + .seconds(5)
        writer = PostgresLink(
            url: url, label: "NavigationValuesStore.postgres.writer", timeout: linkTimeout,
            reconnectDelay: configuration.reconnectDelay, setUp: setUp)
        readers = (0..<max(1, configuration.readerCount)).map { index in
            PostgresLink(
                url: url, label: "NavigationValuesStore.postgres.reader.\(index)", timeout: linkTimeout,
                reconnectDelay: configuration.reconnectDelay, setUp: setUp)
        }
        listener =
            configuration.listens
            ? PostgresListener(url: url, channel: Self.channel, instance: instance, timeout: linkTimeout) : nil
    }

    /// Opens the store like ``init(url:configuration:)``, on a thread of its own rather than the
    /// caller's, for callers in async code.
    public static func open(url: String, configuration: Configuration = Configuration()) async throws
        -> PostgresSessionStore
    {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try PostgresSessionStore(url: url, configuration: configuration) })
            }
        }
    }

    /// Whether `text` names a PostgreSQL database (`postgres://` or `postgresql://`) rather than
    /// a SQLite file.
    public static func isDatabaseURL(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
    }

    /// The URL with any password replaced by `***`, for logs and messages.
    public static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "postgres://…" }
        if components.password != nil { components.password = "***" }
        if let items = components.queryItems {
            components.queryItems = items.map {
                $0.name == "password" ? URLQueryItem(name: "password", value: "***") : $0
            }
        }
        return components.string ?? "postgres://…"
    }

    /// Commits waiting for the writer (not counting the batch it is running).
    var queuedCommitCount: Int { writeQueue.withLock { $0.count } }

    public var metrics: StoreMetrics { figures.withLock { $0 } }

    public var isShared: Bool { true }

    public func commitNotices() -> AsyncStream<CommitNotice> {
        listener?.notices ?? AsyncStream { $0.finish() }
    }

    /// Finishes every queued commit, then closes the connections and stops listening. Later
    /// calls fail with `.closed`.
    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isDraining = writeQueue.withLock { $0.close(notifying: continuation) }
            if !isDraining { continuation.resume() }
        }
        await writer.close()
        for reader in readers { await reader.close() }
        await listener?.stop()
    }

    /// Drops every connection as if the server had gone away, so the next calls reconnect (tests).
    func dropConnections() async {
        await writer.disconnect()
        for reader in readers { await reader.disconnect() }
    }

    // MARK: - SessionStore

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

    /// Fails while writes fail (a full disk on the server, a standby, read-only mode, a lost
    /// connection), and succeeds again once one works. It answers from the latest batch when that
    /// worked less than a second ago or failed less than ten seconds ago; otherwise it writes the
    /// one row of `readiness_probe`.
    ///
    /// - Throws: `StoreError` `.unavailable` (or `.closed`).
    public func checkWritable() async throws {
        let now = ContinuousClock.now
        if let last = lastWrite.withLock({ $0 }), now - last.at < last.lifetime {
            if let error = last.error { throw error }
            return
        }
        let probedAt = Self.milliseconds(configuration.now())
        do {
            try await writer.run { connection in
                let row = try connection.query(
                    "SELECT pg_is_in_recovery(), current_setting('transaction_read_only')"
                ).rows.first
                guard let row, row.count == 2, row[0] == "f", row[1] == "off" else {
                    throw StoreError(
                        code: .unavailable, message: "the database is read-only (a standby, or read-only mode)")
                }
                _ = try connection.query(
                    """
                    INSERT INTO readiness_probe (id, probed_at) VALUES (1, \(Self.time(1)))
                    ON CONFLICT (id) DO UPDATE SET probed_at = excluded.probed_at
                    """, [probedAt])
            }
            lastWrite.withLock { $0 = WriteOutcome(at: .now, error: nil) }
        } catch let error as StoreError {
            lastWrite.withLock { $0 = WriteOutcome(at: .now, error: error) }
            throw error
        }
    }

    // MARK: - Group commit

    private func drainWriteQueue() {
        let (batch, closeWaiters) = writeQueue.withLock { $0.takeBatch(maximum: configuration.maximumBatchSize) }
        for waiter in closeWaiters { waiter.resume() }
        guard !batch.isEmpty else { return }
        let started = ContinuousClock.now
        let results: [Result<Void, any Error>]
        do {
            results = try writer.onQueue { connection in runRequests(batch.map(\.mutations), on: connection) }
        } catch {
            results = Array(repeating: .failure(error), count: batch.count)
        }
        let finished = ContinuousClock.now
        if let outcome = WriteOutcome.of(results, at: finished) { lastWrite.withLock { $0 = outcome } }
        figures.withLock { metrics in
            metrics.recordBatch(size: batch.count, duration: (finished - started).seconds)
            for (request, result) in zip(batch, results) {
                let succeeded = if case .success = result { true } else { false }
                metrics.recordCommit(latency: (finished - request.start).seconds, succeeded: succeeded)
            }
        }
        for (request, result) in zip(batch, results) {
            request.continuation.resume(with: result)
        }
        writer.queue.async { self.drainWriteQueue() }
    }

    /// Each request's result: single mutations share one group-commit transaction, a request of
    /// several (a copied history) runs in a transaction of its own.
    private func runRequests(_ requests: [[StoredMutation]], on connection: PostgresConnection)
        -> [Result<Void, any Error>]
    {
        var results = [Result<Void, any Error>?](repeating: nil, count: requests.count)
        let singles = requests.indices.filter { requests[$0].count == 1 }
        for (index, result) in zip(singles, runBatch(singles.map { requests[$0][0] }, on: connection)) {
            results[index] = result
        }
        for index in requests.indices where requests[index].count != 1 {
            results[index] = runCopy(requests[index], on: connection)
        }
        return results.map { $0 ?? .failure(StoreError(code: .failed, message: "the mutation was not run")) }
    }

    /// Statements a copy sends per round trip: bounded, so that each round trip ends well within
    /// the connection's timeout however long the copy.
    static let copyChunkSize = 2_000

    /// Commits every mutation of a copy in one transaction, all or none, sent in chunks of
    /// pipelined statements.
    private func runCopy(_ mutations: [StoredMutation], on connection: PostgresConnection) -> Result<Void, any Error> {
        typealias Statement = PostgresConnection.Statement
        var statements: [Statement] = []
        // A copy makes a new session: its row is written by the first mutation and, with the final
        // version, by the last. Updating one row once per copied event in one transaction would
        // grow a chain of row versions that each later update walks (quadratic: 34 s for 20,000
        // events on the CI machine), and no other writer can see the row before the commit.
        let session = mutations.first?.session
        let isNewSession =
            mutations.first?.changes.contains {
                if case .insertSession(let record) = $0, record.id == session { true } else { false }
            } ?? false
        let mutations = isNewSession ? Self.coalescedCopy(mutations) : mutations
        do {
            for (index, mutation) in mutations.enumerated() {
                let isInner = isNewSession && index > 0 && mutation.session == session
                statements += try self.statements(for: mutation, checksVersion: !isInner)
            }
        } catch {
            return .failure(error)
        }
        // Other instances hear of the copy as of one commit, its last event, as this instance's
        // own readers do (a new session announced once, not once per copied event).
        statements += notifications(for: Array(mutations.suffix(1)))
        do {
            try connection.query("BEGIN")
            var start = 0
            while start < statements.count {
                let end = min(start + Self.copyChunkSize, statements.count)
                _ = try Self.rows(of: try connection.pipeline(Array(statements[start..<end])))
                start = end
            }
            try connection.query("COMMIT")
            return .success(())
        } catch {
            _ = try? connection.query("ROLLBACK")
            return .failure(error)
        }
    }

    /// A new session's copied history with the row writes that a later one overwrites left out:
    /// the session row's version and selected stack (only the last of each stays), and a value, a handler's
    /// memory or a received preference written again later for the same screen and key (an
    /// upsert, or an update of a row the later one needs too). Each would otherwise update one
    /// row many times in one transaction. Events and snapshots stay as they are.
    static func coalescedCopy(_ mutations: [StoredMutation]) -> [StoredMutation] {
        guard let session = mutations.first?.session else { return mutations }
        var later: Set<CopiedRow> = []
        var isSessionWritten = false
        var isStackSelected = false
        var result = mutations
        for index in result.indices.reversed() {
            var kept: [StateChange] = []
            for change in result[index].changes.reversed() {
                let written: CopiedRow?
                switch change {
                case .updateSession(let id, _, _, _) where id == session:
                    if isSessionWritten { continue }
                    isSessionWritten = true
                    written = nil
                case .selectStack(let id, _) where id == session:
                    if isStackSelected { continue }
                    isStackSelected = true
                    written = nil
                case .setValue(let screen, let key, _): written = CopiedRow.value(screen, key)
                case .rememberDelivery(let screen, let key, _, _): written = CopiedRow.memory(screen, key)
                case .setReceivedPreference(let screen, let key, _): written = CopiedRow.received(screen, key)
                default: written = nil
                }
                if let written {
                    if later.contains(written) { continue }
                    later.insert(written)
                }
                kept.append(change)
            }
            result[index].changes = kept.reversed()
        }
        return result
    }

    /// One transaction over `mutations`, sent as one pipeline. When a mutation fails, the
    /// transaction is rolled back and sent again without it; every result is final.
    private func runBatch(_ mutations: [StoredMutation], on connection: PostgresConnection) -> [Result<Void, any Error>]
    {
        guard !mutations.isEmpty else { return [] }
        var results = [Result<Void, any Error>?](repeating: nil, count: mutations.count)
        var remaining = Array(mutations.indices)
        var prepared: [Int: [PostgresConnection.Statement]] = [:]
        for index in remaining {
            do {
                prepared[index] = try statements(for: mutations[index])
            } catch {
                results[index] = .failure(error)
            }
        }
        remaining.removeAll { results[$0] != nil }
        var cleanup = expiredIdempotencyCleanup()
        while !remaining.isEmpty {
            var pipeline = [PostgresConnection.Statement("BEGIN")]
            var owners: [Int?] = [nil]
            for index in remaining {
                for statement in prepared[index] ?? [] {
                    pipeline.append(statement)
                    owners.append(index)
                }
            }
            for statement in notifications(for: remaining.map { mutations[$0] }) {
                pipeline.append(statement)
                owners.append(nil)
            }
            let cleanupPosition = pipeline.count
            if let cleanup {
                pipeline.append(cleanup)
                owners.append(nil)
            }
            pipeline.append(PostgresConnection.Statement("COMMIT"))
            owners.append(nil)
            let outcomes: [PostgresConnection.Outcome]
            do {
                outcomes = try connection.pipeline(pipeline)
            } catch {
                // The connection went away mid-transaction: whether it committed is unknown.
                for index in remaining { results[index] = .failure(error) }
                break
            }
            guard let failed = outcomes.indices.first(where: { if case .failed = outcomes[$0] { true } else { false } })
            else {
                for index in remaining { results[index] = .success(()) }
                break
            }
            guard case .failed(let error) = outcomes[failed] else { break }
            _ = try? connection.query("ROLLBACK")
            if cleanup != nil, failed == cleanupPosition {
                cleanup = nil  // removing expired records must not fail the batch: skip it this time
            } else if let owner = owners[failed] {
                results[owner] = .failure(error)
                remaining.removeAll { $0 == owner }
            } else {
                // BEGIN, a notification (its queue full), the clean-up or COMMIT failed: nothing was kept.
                for index in remaining { results[index] = .failure(error) }
                break
            }
        }
        return results.map { $0 ?? .failure(StoreError(code: .failed, message: "the mutation was not run")) }
    }
}

/// A row a copied mutation writes, by screen and key (``PostgresSessionStore/coalescedCopy(_:)``).
private enum CopiedRow: Hashable {
    case value(ScreenID, String)
    case memory(ScreenID, String)
    case received(ScreenID, String)
}
