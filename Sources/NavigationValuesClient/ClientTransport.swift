import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What carries the client's requests and event streams to a server: the one place the client
/// touches the network. Everything above it (retries and their backoff, `Idempotency-Key`s,
/// `If-Match`, tokens, turning error answers into `RemoteError`s, splitting event streams into
/// events, reconnecting them) runs the same whatever the transport, so a transport that answers
/// from memory runs the same client code as one that talks HTTP.
///
/// The default (``URLSessionTransport``) sends over the network; set
/// `NavigationValuesClient.Configuration.transport` to use another:
///
/// ```swift
/// var configuration = NavigationValuesClient.Configuration()
/// configuration.transport = MyTransport()
/// let client = NavigationValuesClient(baseURL: URL(string: "http://localhost")!, configuration: configuration)
/// ```
///
/// A transport sends each request once: it never re-sends one by itself (the client retries, with
/// its backoff, and tells `Configuration.onRetry`).
public protocol ClientTransport: Sendable {
    /// Sends `request` once and returns the server's answer, whatever its status.
    ///
    /// - Throws: a `URLError` when no answer arrived. Its code tells the client whether to retry
    ///   and whether the request may have been applied: `.cannotConnectToHost` means the request
    ///   never left (nothing was applied); `.networkConnectionLost`, `.timedOut` and the other
    ///   retryable codes mean an answer was lost (the retry carries the same `Idempotency-Key`);
    ///   `.cancelled` (or `CancellationError`) when the calling task was cancelled.
    func send(_ request: TransportRequest) async throws -> TransportResponse

    /// Starts a streaming answer (an event stream, `text/event-stream`) and returns at once: the
    /// transport hands the answer's head, then its body bytes as they arrive, then its end to
    /// `stream` (`receive(status:headers:)`, `receive(_:)`, `finish(_:)`), from any thread, and
    /// stops when the stream is cancelled (`stream.onCancel(_:)`: the reader went away, or it
    /// holds too many unread bytes). A stream that gets no byte for `request.timeout` is dead:
    /// finish it with `URLError(.timedOut)`.
    func openStream(_ request: TransportRequest, into stream: TransportStream)
}

/// One request, as the client sends it: method, path and query below the server's base URL,
/// headers and body. The client has set every header it sends (`Accept`, `Authorization`,
/// `If-Match`, `Idempotency-Key`, `Content-Type`, `Last-Event-ID`, `User-Agent` and what request
/// middleware added), so a transport sends them as they are.
public struct TransportRequest: Sendable {
    /// One query parameter, not encoded.
    public struct QueryItem: Sendable, Hashable, Codable {
        /// The parameter's name.
        public var name: String
        /// The parameter's value.
        public var value: String

        /// A parameter named `name` with `value`.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// `GET`, `POST`, `PUT`, `PATCH` or `DELETE`.
    public var method: String
    /// The percent-encoded path below the base URL (`/v1/sessions/s_1/push`).
    public var path: String
    /// The query parameters, in order.
    public var query: [QueryItem]
    /// The headers, by name as the client spells them (`Idempotency-Key`).
    public var headers: [String: String]
    /// The body (JSON), or nil.
    public var body: Data?
    /// How long the server may take to answer; for a stream, the longest silence.
    public var timeout: Duration
    /// The whole URL: the client's base URL, `path` and the encoded query.
    public var url: URL

    /// A request with these members.
    public init(
        method: String, path: String, query: [QueryItem] = [], headers: [String: String] = [:], body: Data? = nil,
        timeout: Duration = .seconds(30), url: URL
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.url = url
    }

    /// The path and its encoded query (`/v1/sessions/s_1/history?after=2&limit=10`): an HTTP/1.1
    /// request target.
    public var target: String {
        query.isEmpty ? path : path + "?" + Self.encodedQuery(query)
    }

    /// The value of the header `name`, whatever its case.
    public func header(_ name: String) -> String? {
        if let value = headers[name] { return value }
        return headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// `name=value&…`, each percent-encoded.
    static func encodedQuery(_ query: [QueryItem]) -> String {
        query.map { "\(HTTPTransport.encoded($0.name))=\(HTTPTransport.encoded($0.value))" }.joined(separator: "&")
    }
}

/// A transport's answer: its status, its headers and its body.
public struct TransportResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// The headers, names lowercased.
    public private(set) var headers: [String: String]
    /// The body.
    public var body: Data

    /// An answer with these members (header names are lowercased).
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        var lowercased: [String: String] = [:]
        lowercased.reserveCapacity(headers.count)
        for (name, value) in headers { lowercased[name.lowercased()] = value }
        self.headers = lowercased
        self.body = body
    }

    /// The value of the header `name`, whatever its case.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// What a streaming answer delivers, in order: its head, body bytes as they arrive, its end.
enum StreamChunk: Sendable {
    case head(status: Int, headers: [String: String])
    case bytes(Data)
    /// The answer ended: cleanly (nil), or with the transport's error.
    case end(URLError?)
}

/// One streaming answer (an event stream) between a transport, which writes into it, and the
/// client, which reads it: its head, its body bytes, its end. A transport calls
/// `receive(status:headers:)` once, `receive(_:)` for each piece of the body as it arrives, and
/// `finish(_:)` at the end, from any thread; it registers with `onCancel(_:)` what stops it.
///
/// At most the client's `StreamOptions.maxBufferedBytes` of body wait unread: past that the stream
/// is cut (cancelled and finished), so a slow reader costs bounded memory and resumes by id.
///
/// Not an `AsyncStream`: its `next(isolation:)` hops to the global executor to wait and back to the
/// reader's actor for every chunk (FoundationNetworking hands over each chunk of a chunked answer
/// alone, so each event of a stream is one), and its buffer keeps the chunks apart. Here the reader
/// waits on its own actor, and bytes that arrive while it is busy are joined into one chunk.
public final class TransportStream: Sendable {
    private let maxBufferedBytes: Int
    private let state = Mutex(State())

    private struct State {
        /// What arrived and was not read yet, bytes joined.
        var pending: [StreamChunk] = []
        var pendingIndex = 0
        /// Nothing more is added; what is pending is still read, then nil.
        var isFinished = false
        var isCancelled = false
        /// What stops the transport's side, run once on cancellation.
        var cancelHandlers: [@Sendable () -> Void] = []
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

    /// A stream that holds at most `maxBufferedBytes` unread body bytes.
    public init(maxBufferedBytes: Int = 4 << 20) {
        self.maxBufferedBytes = maxBufferedBytes
    }

    // MARK: - The transport's side

    /// The answer's status and headers (names in any case): call once, first.
    public func receive(status: Int, headers: [String: String]) {
        var lowercased: [String: String] = [:]
        for (name, value) in headers { lowercased[name.lowercased()] = value }
        add(.head(status: status, headers: lowercased))
    }

    /// A piece of the answer's body, as it arrived.
    public func receive(_ bytes: Data) {
        let total = add(.bytes(bytes))
        if total > maxBufferedBytes {
            // What is buffered is still read; the reader then reconnects after the last event it saw.
            add(.end(nil))
            cancel()
        }
    }

    /// The answer ended: cleanly (nil), or with the failure that ended it (`.timedOut` after
    /// `timeout` of silence, `.networkConnectionLost`…). Nothing is delivered after it.
    public func finish(_ error: URLError? = nil) {
        add(.end(error))
        markFinished()
    }

    /// Runs `handler` once when the stream is cancelled (at once if it already is): stop reading
    /// and release the connection there.
    public func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.isCancelled { return true }
            state.cancelHandlers.append(handler)
            return false
        }
        if runNow { handler() }
    }

    /// Whether the stream was cancelled: nothing more is read.
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }

    // MARK: - The reader's side

    /// Cuts the stream: the transport is told to stop; the reader gets what already arrived, then nil.
    public func cancel() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.isCancelled else { return [] }
            state.isCancelled = true
            defer { state.cancelHandlers = [] }
            return state.cancelHandlers
        }
        for handler in handlers { handler() }
        markFinished()
    }

    /// The next chunk, in order; nil once the answer ended and every chunk was read, or when the
    /// reading task is cancelled (which cuts the stream). One reader at a time.
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

    /// The reader took `count` bytes off the stream.
    func consumed(_ count: Int) {
        state.withLock { $0.bufferedBytes -= count }
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

    private func markFinished() {
        let waiter = state.withLock { state -> UnsafeContinuation<StreamChunk?, Never>? in
            state.isFinished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}
