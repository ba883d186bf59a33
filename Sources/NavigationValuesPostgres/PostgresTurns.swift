import Foundation
import NavigationValuesStore
import Synchronization

/// The connections the driver lends to writers' turns, one turn at a time. A writer that finds
/// none free waits for one, in arrival order, until its deadline.
final class TurnLinks: Sendable {
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Int?, Never>
        /// Gives up at the writer's deadline; cancelled when a link comes first.
        var timer: Task<Void, Never>?
    }

    private struct State {
        var free: [Int]
        var waiters: [Waiter] = []
        var lastWaiter: UInt64 = 0
    }

    private let links: [PostgresLink]
    private let state: Mutex<State>

    init(_ links: [PostgresLink]) {
        self.links = links
        state = Mutex(State(free: Array(links.indices.reversed())))
    }

    /// A free connection, waiting for one until `deadline`.
    ///
    /// - Throws: `StoreError` `.unavailable` when none came free by then.
    func take(until deadline: ContinuousClock.Instant) async throws -> HeldLink {
        let taken: Int? = await withCheckedContinuation { continuation in
            let (index, waiter) = state.withLock { state -> (Int?, UInt64?) in
                if let index = state.free.popLast() { return (index, nil) }
                state.lastWaiter += 1
                state.waiters.append(Waiter(id: state.lastWaiter, continuation: continuation))
                return (nil, state.lastWaiter)
            }
            if let index { return continuation.resume(returning: index) }
            guard let waiter else { return }
            let timer = Task {
                try? await Task.sleep(until: deadline)
                self.resume(waiter, with: nil)
            }
            let isWaiting = state.withLock { state in
                guard let position = state.waiters.firstIndex(where: { $0.id == waiter }) else { return false }
                state.waiters[position].timer = timer
                return true
            }
            if !isWaiting { timer.cancel() }
        }
        guard let taken else {
            throw StoreError(code: .unavailable, message: "no connection for a writer's turn came free in time")
        }
        return HeldLink(link: links[taken], index: taken, pool: self)
    }

    /// Resumes waiter `id`, if it still waits, with `index` (nil: it gave up).
    private func resume(_ id: UInt64, with index: Int?) {
        let waiter = state.withLock { state -> Waiter? in
            guard let position = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: position)
        }
        waiter?.continuation.resume(returning: index)
    }

    /// Hands connection `index` to the first writer waiting, or keeps it free.
    fileprivate func giveBack(_ index: Int) {
        let waiter = state.withLock { state -> Waiter? in
            guard !state.waiters.isEmpty else {
                state.free.append(index)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.timer?.cancel()
        waiter?.continuation.resume(returning: index)
    }

    func close() async {
        for link in links { await link.close() }
    }
}

/// A connection lent to one writer's turn.
public struct HeldLink: HeldConnection {
    let link: PostgresLink
    let index: Int
    let pool: TurnLinks

    public func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await link.run(body)
    }

    /// Rolls back a transaction the turn left open (it ended without committing), so that the
    /// session's row goes to the next writer, and gives the connection back.
    public func release() async {
        _ = try? await link.run { connection in
            if connection.isInTransaction { try connection.query("ROLLBACK") }
        }
        pool.giveBack(index)
    }
}
