import Foundation
import NavigationValuesWire
import Synchronization

// MARK: - Turns: the database orders a session's writers

extension SQLSessionStore {
    /// Where the driver holds connections for turns (PostgreSQL), a transaction on one of them
    /// takes the session's row (`SELECT … FOR UPDATE`, waiting behind every writer that holds
    /// it, at most until `deadline`), reads the session in that transaction and keeps the row
    /// until the turn's commit or end: every other writer of the session, on any instance, waits
    /// for it (their version check takes the same row), so the turn's commit meets no conflict.
    /// Elsewhere (SQLite) the session's actor already orders its writers: the turn reads and
    /// commits as usual.
    public func beginTurn(on id: SessionID, until deadline: ContinuousClock.Instant) async throws
        -> any SessionTurn
    {
        let started = ContinuousClock.now
        defer {
            let waited = (ContinuousClock.now - started).seconds
            figures.withLock { metrics in
                metrics.turns += 1
                metrics.turnWaitSeconds += waited
            }
        }
        do {
            guard let held = try await driver.holdConnection(until: deadline) else {
                return StoreTurn(store: self, session: try await loadSession(id))
            }
            // This instance's waiting state of the session first, so that the turn's commit,
            // which writes its state inline, leaves nothing behind it.
            if options.writeBehind.isOn, hasWaitingState(id) { await onWriter { self.writeStateBehind(only: id) } }
            // The wait bounded by the deadline, the session's row (waiting behind its other
            // writers), then the session as stored once this writer holds it.
            var queries: [SQLQuery] = []
            if let lockTimeout = text.lockTimeout {
                let milliseconds = max(1, (deadline - ContinuousClock.now).milliseconds)
                queries.append(SQLQuery(lockTimeout, [.text(String(milliseconds))]))
            }
            queries.append(SQLQuery(text.expectVersion, [.text(id.rawValue)]))
            let reads = queries.count
            let load = loadQueries(of: id)
            let statements = queries + load
            let driver = driver
            do {
                let session = try await held.run { connection -> StoredSession? in
                    var loaded = LoadedSession(id: id)
                    try connection.begin(statements) { query, row in
                        if query >= reads { try loaded.add(row, of: query - reads) }
                    }
                    // A state behind its log (its changes wait in another instance, or that one
                    // stopped first) is caught up in this transaction, which holds the session's
                    // row, and read again: the turn's commit writes its own change inline on it.
                    guard let stored = try loaded.session(), self.replaysStates,
                        let write = try self.catchUpWrite(stored, with: loaded.eventsAfter)
                    else { return try loaded.session() }
                    try driver.writeInTurn(write, on: connection)
                    var caughtUp = LoadedSession(id: id)
                    try connection.readAll(load) { query, row in try caughtUp.add(row, of: query) }
                    guard caughtUp.eventsAfter.isEmpty else {
                        throw StoreError(code: .corrupt, message: "the state of session \(id) did not catch up with its log")
                    }
                    return try caughtUp.session()
                }
                return HeldTurn(store: self, held: held, session: session)
            } catch {
                await held.release()
                throw error
            }
        } catch let error as StoreError where error.code == .unavailable && ContinuousClock.now >= deadline {
            // The wait ran out (the turn's lock timeout, or no connection for turns came free).
            throw StoreError(
                code: .conflict,
                message: "session \(id) kept changing: this writer's turn did not come within its wait (\(error))")
        }
    }

    /// Records a commit made in a turn, outside the group commit.
    fileprivate func recordTurnCommit(started: ContinuousClock.Instant, error: (any Error)?) {
        let finished = ContinuousClock.now
        let result: [Result<Void, any Error>] = [error.map { .failure($0) } ?? .success(())]
        if let outcome = WriteOutcome.of(result, at: finished) { lastWrite.withLock { $0 = outcome } }
        figures.withLock { $0.recordCommit(latency: (finished - started).seconds, error: error) }
    }
}

/// A turn on a connection the driver holds for it: the session's row is locked in its
/// transaction until it commits or ends.
private final class HeldTurn<Driver: SQLDriver>: SessionTurn {
    let session: StoredSession?
    private let store: SQLSessionStore<Driver>
    private let held: Driver.Held
    /// Whether the connection is still held (false once committed or ended).
    private let isHeld = Atomic(true)

    init(store: SQLSessionStore<Driver>, held: Driver.Held, session: StoredSession?) {
        self.store = store
        self.held = held
        self.session = session
    }

    func commit(_ mutation: StoredMutation) async throws {
        let started = ContinuousClock.now
        guard isHeld.exchange(false, ordering: .acquiringAndReleasing) else {
            throw StoreError(code: .failed, message: "the turn on session \(mutation.session) has ended")
        }
        do {
            let write = try store.plan([mutation])
            let driver = store.driver
            try await held.run { connection in try driver.commitTurn(write, on: connection) }
            store.recordTurnCommit(started: started, error: nil)
        } catch {
            store.recordTurnCommit(started: started, error: error)
            await held.release()
            throw error
        }
        await held.release()
    }

    func end() async {
        guard isHeld.exchange(false, ordering: .acquiringAndReleasing) else { return }
        await held.release()
    }
}

/// A turn where the sessions' actors already order the writers (one process on its file): the
/// session read and the commit are the store's own.
private struct StoreTurn<Driver: SQLDriver>: SessionTurn {
    let store: SQLSessionStore<Driver>
    let session: StoredSession?

    func commit(_ mutation: StoredMutation) async throws { try await store.commit(mutation) }
    func end() async {}
}
