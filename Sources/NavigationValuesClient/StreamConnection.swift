import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a streaming answer delivers, in order: its head, body bytes as they arrive, its end.
enum StreamChunk: Sendable {
    case head(status: Int, headers: [String: String])
    case bytes(Data)
    /// The answer ended: cleanly (nil), or with the transport's error.
    case end(URLError?)
}

/// The `URLSession` that streams answers (event streams), with a delegate that hands each task's
/// bytes to its connection as they arrive. `URLSession.bytes(for:)` does not exist in
/// FoundationNetworking (Linux); delegate callbacks work on every platform.
final class StreamSessions: Sendable {
    private let session: URLSession
    private let delegate: StreamDelegate

    init(configuration: NavigationValuesClient.Configuration) {
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        // An inactivity timeout: no byte (not even the 15 s keep-alive comment) for this long means
        // the connection is dead; the stream reconnects.
        sessionConfiguration.timeoutIntervalForRequest = configuration.streams.idleTimeout.seconds
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.urlCache = nil
        delegate = StreamDelegate()
        session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Starts `request`; its chunks arrive on the connection. At most `maxBufferedBytes` of body
    /// wait unread: past that the connection is cut (it ends), so a slow reader costs bounded
    /// memory and resumes by id.
    func open(_ request: URLRequest, maxBufferedBytes: Int) -> StreamConnection {
        let task = session.dataTask(with: request)
        let connection = StreamConnection(task: task, maxBufferedBytes: maxBufferedBytes)
        delegate.register(connection, for: task.taskIdentifier)
        task.resume()
        return connection
    }
}

/// One streaming answer: its chunks, read in order by one reader, and a way to cut it.
///
/// Not an `AsyncStream`: its `next(isolation:)` hops to the global executor to wait and back to the
/// reader's actor for every chunk (FoundationNetworking hands over each chunk of a chunked answer
/// alone, so each event of a stream is one), and its buffer keeps the chunks apart. Here the reader
/// waits on its own actor, and bytes that arrive while it is busy are joined into one chunk.
final class StreamConnection: Sendable {
    private let task: URLSessionDataTask
    private let maxBufferedBytes: Int
    private let state = Mutex(State())

    private struct State {
        /// What arrived and was not read yet, bytes joined.
        var pending: [StreamChunk] = []
        var pendingIndex = 0
        /// Nothing more is added; what is pending is still read, then nil.
        var isFinished = false
        /// The reader, waiting for the next chunk.
        var waiter: UnsafeContinuation<StreamChunk?, Never>?
        /// Body bytes handed over and not yet consumed by the reader.
        var bufferedBytes = 0

        enum Next {
            case chunk(StreamChunk?)
            case wait
        }

        mutating func take() -> Next {
            if pendingIndex < pending.count {
                pendingIndex += 1
                let chunk = pending[pendingIndex - 1]
                if pendingIndex == pending.count {
                    pending.removeAll(keepingCapacity: true)
                    pendingIndex = 0
                }
                return .chunk(chunk)
            }
            return isFinished ? .chunk(nil) : .wait
        }
    }

    init(task: URLSessionDataTask, maxBufferedBytes: Int) {
        self.task = task
        self.maxBufferedBytes = maxBufferedBytes
    }

    /// The next chunk, in order; nil once the answer ended and every chunk was read, or when the
    /// reading task is cancelled (which cuts the connection). One reader at a time.
    func next(isolation: isolated (any Actor)? = #isolation) async -> StreamChunk? {
        if case .chunk(let chunk) = state.withLock({ $0.take() }) { return chunk }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: isolation) { (waiter: UnsafeContinuation<StreamChunk?, Never>) in
                let next = state.withLock { state in
                    let next = state.take()
                    if case .wait = next { state.waiter = waiter }
                    return next
                }
                if case .chunk(let chunk) = next { waiter.resume(returning: chunk) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Cuts the connection; the reader gets what already arrived, then nil.
    func cancel() {
        task.cancel()
        finish()
    }

    /// The reader took `count` bytes off the stream.
    func consumed(_ count: Int) {
        state.withLock { $0.bufferedBytes -= count }
    }

    // MARK: - From the delegate

    func received(status: Int, headers: [String: String]) {
        add(.head(status: status, headers: headers))
    }

    func received(_ data: Data) {
        let total = add(.bytes(data))
        if total > maxBufferedBytes {
            // What is buffered is still read; the reader then reconnects after the last event it saw.
            task.cancel()
            add(.end(nil))
            finish()
        }
    }

    func completed(_ error: (any Error)?) {
        add(.end(error.map { $0 as? URLError ?? URLError(.networkConnectionLost) }))
        finish()
    }

    /// Hands `chunk` to the waiting reader, or keeps it (joined to the bytes before it) until the
    /// reader asks; nothing once finished. Returns the body bytes not yet consumed.
    @discardableResult
    private func add(_ chunk: StreamChunk) -> Int {
        let (waiter, total) = state.withLock { state -> (UnsafeContinuation<StreamChunk?, Never>?, Int) in
            guard !state.isFinished else { return (nil, state.bufferedBytes) }
            if case .bytes(let data) = chunk { state.bufferedBytes += data.count }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, state.bufferedBytes)
            }
            if case .bytes(let data) = chunk, state.pending.count > state.pendingIndex,
                case .bytes(var joined) = state.pending[state.pending.count - 1]
            {
                state.pending[state.pending.count - 1] = .end(nil)  // drop the reference: append in place
                joined.append(data)
                state.pending[state.pending.count - 1] = .bytes(joined)
            } else {
                state.pending.append(chunk)
            }
            return (nil, state.bufferedBytes)
        }
        waiter?.resume(returning: chunk)
        return total
    }

    private func finish() {
        let waiter = state.withLock { state -> UnsafeContinuation<StreamChunk?, Never>? in
            state.isFinished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}

/// Routes each streaming task's callbacks to its connection.
private final class StreamDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let connections = Mutex<[Int: StreamConnection]>([:])

    func register(_ connection: StreamConnection, for task: Int) {
        connections.withLock { $0[task] = connection }
    }

    private func connection(_ task: URLSessionTask) -> StreamConnection? {
        connections.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse {
            connection(dataTask)?.received(status: http.statusCode, headers: HTTPTransport.headers(of: http))
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        connection(dataTask)?.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let connection = connections.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        connection?.completed(error)
    }
}
