import Dispatch
import NavigationValuesStore

/// A ``Database`` owned by its own serial dispatch queue: every use of the connection runs on
/// that queue, never on Swift's cooperative pool, because SQLite calls block.
///
/// @unchecked because the wrapped `Database` is not Sendable: only `queue` ever touches it.
final class SerialConnection: @unchecked Sendable {
    let queue: DispatchQueue
    private var database: Database?

    init(_ database: Database, label: String) {
        self.database = database
        self.queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    /// Runs `body` on the connection's queue and returns its result to the awaiting task.
    func run<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.onQueue(body) })
            }
        }
    }

    /// Runs `body` with the connection; call on `queue` only.
    func onQueue<T>(_ body: (Database) throws -> T) throws -> T {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let database else {
            throw StoreError(code: .closed, message: "the store is closed")
        }
        return try body(database)
    }

    /// Closes the connection once the work queued before this call has run.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.database = nil
                continuation.resume()
            }
        }
    }
}
