import Dispatch
import Foundation
import NavigationValuesStore

/// A ``PostgresConnection`` owned by its own serial dispatch queue, reconnected when lost: every
/// use runs on that queue, never on Swift's cooperative pool, because libpq calls block.
///
/// A call that finds the connection lost fails with `.unavailable` (the API answers 503 with
/// `Retry-After`); the next call after `reconnectDelay` connects again, so the store heals by
/// itself once the server is back, without every request paying a connection attempt meanwhile.
///
/// @unchecked because the wrapped connection is not Sendable: only `queue` ever touches it.
final class PostgresLink: @unchecked Sendable {
    let queue: DispatchQueue
    let url: String
    private let timeout: Duration
    private let reconnectDelay: Duration
    private let setUp: (PostgresConnection) throws -> Void
    private var connection: PostgresConnection?
    private var lastFailure: (at: ContinuousClock.Instant, error: StoreError)?
    private var isClosed = false

    /// A link that connects on first use; `setUp` runs on every new connection.
    init(
        url: String, label: String, timeout: Duration, reconnectDelay: Duration,
        setUp: @escaping (PostgresConnection) throws -> Void
    ) {
        self.url = url
        self.timeout = timeout
        self.reconnectDelay = reconnectDelay
        self.setUp = setUp
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    /// Runs `body` with the connection on the link's queue and returns its result to the awaiting task.
    func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.onQueue(body) })
            }
        }
    }

    /// Runs `body` with the connection, connecting first when needed; call on `queue` only.
    func onQueue<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        dispatchPrecondition(condition: .onQueue(queue))
        let connection = try connected()
        do {
            return try body(connection)
        } catch let error as StoreError where error.code == .unavailable {
            if !connection.isUsable { self.connection = nil }
            throw error
        }
    }

    /// Whether the link holds a live connection now (for `/readyz` and tests).
    var isConnected: Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        return connection?.isUsable == true
    }

    private func connected() throws -> PostgresConnection {
        guard !isClosed else { throw StoreError(code: .closed, message: "the store is closed") }
        if let connection, connection.isUsable { return connection }
        connection = nil
        if let lastFailure, ContinuousClock.now - lastFailure.at < reconnectDelay {
            var error = lastFailure.error
            error.message = "reconnecting to PostgreSQL: \(error.message)"
            throw error
        }
        do {
            let fresh = try PostgresConnection(url: url, timeout: timeout)
            try setUp(fresh)
            connection = fresh
            lastFailure = nil
            return fresh
        } catch let error as StoreError {
            var unavailable = error
            if unavailable.code != .migrationRefused { unavailable.code = .unavailable }
            lastFailure = (ContinuousClock.now, unavailable)
            throw unavailable
        }
    }

    /// Drops the connection (a test's way to simulate a lost one; also `close`).
    func disconnect() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.connection = nil
                continuation.resume()
            }
        }
    }

    /// Closes the connection once the work queued before this call has run; later calls fail
    /// with `.closed`.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.isClosed = true
                self.connection = nil
                continuation.resume()
            }
        }
    }
}
