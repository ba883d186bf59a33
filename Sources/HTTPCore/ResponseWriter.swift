import Synchronization

/// Writes the body of a streaming response, from any task.
///
/// Writes are bounded: once more than the high-water mark of bytes is waiting to reach the
/// socket, `write` suspends until the client has read half of it. When the client goes away,
/// or the server shuts down, pending and later writes throw `ResponseWriter.ClosedError`,
/// `onClose` handlers run, `waitUntilClosed()` returns and the stream's task is cancelled.
///
/// ```swift
/// Response(headers: ["Content-Type": "text/event-stream"]) { writer in
///     try await writer.write(": keep-alive\n\n")
///     await writer.waitUntilClosed()
/// }
/// ```
public final class ResponseWriter: Sendable {
    /// Thrown by `write` once the client is gone or the stream has ended.
    public struct ClosedError: Error, Sendable, Equatable {}

    private struct State {
        var isClosed = false
        var bufferedBytes = 0
        var writeWaiters: [CheckedContinuation<Void, any Error>] = []
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        var closeHandlers: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())
    private let highWaterMark: Int
    private let send: @Sendable ([UInt8]) -> Void
    /// Where the stream's task runs, for the tasks `aside` starts (nil: the global executor).
    private let executor: (any TaskExecutor)?

    /// `send` hands bytes to the connection's event loop; it is called under the writer's lock so
    /// that bytes keep the order of the writes. `executor` is the one the stream's task prefers.
    package init(
        highWaterMark: Int, executor: (any TaskExecutor)? = nil, send: @escaping @Sendable ([UInt8]) -> Void
    ) {
        self.highWaterMark = highWaterMark
        self.executor = executor
        self.send = send
    }

    /// Starts `body` in a task of its own, on the executor the stream runs on: for a step that
    /// awaits through many frames once (reading a store) in a stream that then waits for a long
    /// time. A task keeps the slabs that hold its async frames until it ends, so what the
    /// stream's own task awaited once, every idle stream would keep; awaiting the returned
    /// task's `value` costs the stream one small frame.
    ///
    /// The task is not cancelled with the stream's: a stream ends when its writer closes, and
    /// then the step's writes throw too.
    package func aside<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Task<T, any Error> {
        Task(executorPreference: executor, operation: body)
    }

    /// Whether the stream has ended or the client has gone away.
    public var isClosed: Bool { state.withLock { $0.isClosed } }

    /// Sends bytes as one chunk; suspends while the client is too far behind.
    /// - Throws: `ResponseWriter.ClosedError` once the client is gone or the stream has ended.
    public func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }  // an empty chunk would end a chunked body
        let mustWait = try state.withLock { state throws(ClosedError) -> Bool in
            guard !state.isClosed else { throw ClosedError() }
            state.bufferedBytes += bytes.count
            send(bytes)
            return state.bufferedBytes > highWaterMark
        }
        guard mustWait else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome: Result<Void, ClosedError>? = state.withLock { state in
                if state.isClosed { return .failure(ClosedError()) }
                if state.bufferedBytes <= highWaterMark / 2 { return .success(()) }
                state.writeWaiters.append(continuation)
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// Sends `bytes` as one chunk if that needs no waiting: the stream is open, no write is
    /// suspended, and the bytes keep what waits for the socket within the high-water mark.
    /// Otherwise sends nothing and returns false (a `write` of them would wait, or throw).
    ///
    /// For a publisher that writes to many streams from one thread: it never blocks on a slow
    /// client, and leaves the bytes a stream cannot take now to the stream's own task.
    package func writeIfReady(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return true }
        return state.withLock { state in
            guard !state.isClosed, state.writeWaiters.isEmpty, state.bufferedBytes + bytes.count <= highWaterMark
            else { return false }
            state.bufferedBytes += bytes.count
            send(bytes)
            return true
        }
    }

    /// Sends a string's UTF-8 bytes as one chunk.
    /// - Throws: `ResponseWriter.ClosedError` once the client is gone or the stream has ended.
    public func write(_ string: String) async throws {
        try await write(Array(string.utf8))
    }

    /// Runs `handler` once the stream is closed (at once if it already is). Handlers run on the
    /// event loop's thread: keep them short.
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state in
            if state.isClosed { return true }
            state.closeHandlers.append(handler)
            return false
        }
        if runNow { handler() }
    }

    /// Returns once the stream is closed: the client went away, the server is shutting down,
    /// or the stream ended.
    public func waitUntilClosed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let runNow = state.withLock { state in
                if state.isClosed { return true }
                state.closeWaiters.append(continuation)
                return false
            }
            if runNow { continuation.resume() }
        }
    }

    // MARK: - Called by the connection

    /// How many writes are suspended for back-pressure (for tests).
    package var suspendedWriteCount: Int { state.withLock { $0.writeWaiters.count } }

    /// The loop wrote `count` payload bytes to the socket.
    package func didFlush(_ count: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.bufferedBytes -= count
            guard state.bufferedBytes <= highWaterMark / 2 else { return [] }
            defer { state.writeWaiters = [] }
            return state.writeWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Marks the stream closed and wakes everyone waiting on it.
    package func close() {
        let (writeWaiters, closeWaiters, handlers) = state.withLock { state in
            guard !state.isClosed else {
                return (
                    [CheckedContinuation<Void, any Error>](), [CheckedContinuation<Void, Never>](),
                    [@Sendable () -> Void]()
                )
            }
            state.isClosed = true
            defer {
                state.writeWaiters = []
                state.closeWaiters = []
                state.closeHandlers = []
            }
            return (state.writeWaiters, state.closeWaiters, state.closeHandlers)
        }
        for waiter in writeWaiters { waiter.resume(throwing: ClosedError()) }
        for waiter in closeWaiters { waiter.resume() }
        for handler in handlers { handler() }
    }
}
