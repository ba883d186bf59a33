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
        sessionConfiguration.withoutCookies()
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

/// One streaming answer: an `AsyncStream` of its chunks, and a way to cut it.
final class StreamConnection: Sendable {
    let chunks: AsyncStream<StreamChunk>
    private let continuation: AsyncStream<StreamChunk>.Continuation
    private let task: URLSessionDataTask
    private let maxBufferedBytes: Int
    private let buffered = Mutex(0)

    init(task: URLSessionDataTask, maxBufferedBytes: Int) {
        self.task = task
        self.maxBufferedBytes = maxBufferedBytes
        (chunks, continuation) = AsyncStream.makeStream(of: StreamChunk.self)
        continuation.onTermination = { _ in task.cancel() }
    }

    /// Cuts the connection; the stream ends.
    func cancel() {
        task.cancel()
        continuation.finish()
    }

    /// The reader took `count` bytes off the stream.
    func consumed(_ count: Int) {
        buffered.withLock { $0 -= count }
    }

    // MARK: - From the delegate

    func received(status: Int, headers: [String: String]) {
        continuation.yield(.head(status: status, headers: headers))
    }

    func received(_ data: Data) {
        let total = buffered.withLock { bytes in
            bytes += data.count
            return bytes
        }
        continuation.yield(.bytes(data))
        if total > maxBufferedBytes {
            // What is buffered is still read; the reader then reconnects after the last event it saw.
            task.cancel()
            continuation.yield(.end(nil))
            continuation.finish()
        }
    }

    func completed(_ error: (any Error)?) {
        continuation.yield(.end(error.map { $0 as? URLError ?? URLError(.networkConnectionLost) }))
        continuation.finish()
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
