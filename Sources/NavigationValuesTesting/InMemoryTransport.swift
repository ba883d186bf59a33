import Foundation
import HTTPCore
import NavigationValuesClient
import NavigationValuesRoutes
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `ClientTransport` that answers in this process with the server's own API (`SessionAPI`):
/// each request is written as HTTP/1.1 and read back by the server's parser (so its limits and
/// its 4xx answers are the server's), routed through the same middleware and routes, and its
/// errors become the same problem documents. Event streams are the server's, written by its
/// routes into the client's stream. No socket, no thread of its own: it runs on any platform.
///
/// What only a socket does is not here: the `Date`, `Content-Length`, `Connection` and
/// `Transfer-Encoding` headers, and connections that break (the transport never loses an answer).
/// After ``shutdown()`` it refuses every request as a server that is gone (`.cannotConnectToHost`).
///
/// Made by ``InMemoryServer``; give it to a client of your own with
/// `NavigationValuesClient.Configuration.transport`.
public final class InMemoryTransport: ClientTransport {
    /// The API this transport answers with.
    public let api: SessionAPI
    /// The memory for bodies over the usual limit (imports), as the server holds it.
    private let bodyBudget: BodyBudget
    private let isShutDown = Atomic(false)

    init(api: SessionAPI) {
        self.api = api
        bodyBudget = BodyBudget(bytes: api.limits.maxLargeBodyBytesInFlight)
    }

    deinit {
        // Nothing can reach the API any more: its keep-alive ticks and retention stop with it.
        api.stop()
    }

    /// Ends every event stream and refuses later requests (`URLError(.cannotConnectToHost)`), as
    /// a server that shut down.
    public func shutdown() async {
        isShutDown.store(true, ordering: .relaxed)
        await api.shutdown()
    }

    // MARK: - ClientTransport

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard !isShutDown.load(ordering: .relaxed) else { throw URLError(.cannotConnectToHost) }
        // The server's side runs to its end whatever the client does, as it does behind a socket:
        // a client that gives up (times out, is cancelled) does not cancel the request it sent.
        let exchange = Task { await self.exchange(request) }
        let answer = try await Wait.forAnswer(of: exchange, within: request.timeout)
        let body: [UInt8]
        switch answer.response.body {
        case .bytes(let bytes):
            body = bytes
        case .stream(let produce):
            body = await Self.collect(produce)
        }
        return TransportResponse(
            status: Int(answer.response.status.code), headers: Self.headers(of: answer.response),
            body: answer.isBodyless ? Data() : Data(body))
    }

    public func openStream(_ request: TransportRequest, into stream: TransportStream) {
        guard !isShutDown.load(ordering: .relaxed) else {
            stream.finish(URLError(.cannotConnectToHost))
            return
        }
        Task { deliver(await exchange(request), into: stream) }
    }

    // MARK: - Answering

    /// A request's response, and whether it carries no body (an answer to `HEAD`, a 204 or a 304).
    struct Answer: Sendable {
        var response: Response
        var isBodyless: Bool
    }

    /// Parses `transportRequest` as the server parses what a socket receives, then answers it
    /// through the API's responder as a connection does: a refusal or a thrown error becomes the
    /// API's problem document.
    func exchange(_ transportRequest: TransportRequest) async -> Answer {
        var request: Request
        do {
            request = try parse(transportRequest)
        } catch {
            return Answer(response: api.errorResponder(error, nil), isBodyless: false)
        }
        let route = api.responder.route(request)
        let response: Response
        switch api.responder.respond(to: &request, routedBy: route) {
        case .ready(.success(let ready)):
            response = ready
        case .ready(.failure(let error)):
            response = api.errorResponder(error, request)
        case .deferred(let work):
            switch await work() {
            case .success(let answered): response = answered
            case .failure(let error): response = api.errorResponder(error, request)
            }
        }
        return Answer(response: response, isBodyless: request.method == .head || response.status.forbidsBody)
    }

    /// The request the server's parser reads from `transportRequest`'s bytes.
    private func parse(_ transportRequest: TransportRequest) throws(HTTPRequestError) -> Request {
        let parser = RequestParser(limits: api.limits, budget: bodyBudget)
        parser.append(Self.bytes(of: transportRequest))
        // A `100 Continue` the head asks for is skipped: its body is there already.
        while let event = try parser.next() {
            if case .request(let request, _) = event { return request }
        }
        throw HTTPRequestError(.badRequest, detail: "The request ended before its body did.")
    }

    /// Hands an answer to a client's stream: its head, then its body (a stream's writes as they
    /// come), then its end. Cancelling the stream (the reader went away) ends the server's
    /// stream as a closed connection does: its writes throw and its task is cancelled.
    private func deliver(_ answer: Answer, into stream: TransportStream) {
        let response = answer.response
        stream.receive(status: Int(response.status.code), headers: Self.headers(of: response))
        switch response.body {
        case .bytes(let bytes):
            if !answer.isBodyless, !bytes.isEmpty { stream.receive(Data(bytes)) }
            stream.finish()
        case .stream where answer.isBodyless:
            stream.finish()
        case .stream(let produce):
            // The client's stream bounds what waits unread (past it, it is cut), as a socket's
            // buffers do: a write is handed over at once, and never waits.
            let writer = ResponseWriter(highWaterMark: .max) { bytes in stream.receive(Data(bytes)) }
            let task = Task {
                try? await produce(writer)
                writer.close()
                stream.finish()
            }
            stream.onCancel {
                task.cancel()
                // Not here: a cut made inside a write runs this under the writer's lock.
                Task { writer.close() }
            }
        }
    }

    /// The bytes a streaming response writes until it returns, for a request that is not a stream's.
    private static func collect(_ produce: @Sendable (ResponseWriter) async throws -> Void) async -> [UInt8] {
        let collected = Mutex<[UInt8]>([])
        let writer = ResponseWriter(highWaterMark: .max) { bytes in collected.withLock { $0 += bytes } }
        try? await produce(writer)
        writer.close()
        return collected.withLock { $0 }
    }

    // MARK: - HTTP/1.1

    /// The request as a client sends it on a connection: its request line, `Host`, its headers,
    /// `Content-Length` for a body, and the body.
    static func bytes(of request: TransportRequest) -> [UInt8] {
        var head = "\(request.method) \(request.target) HTTP/1.1\r\n"
        if request.header("Host") == nil { head += "Host: \(request.url.host ?? "localhost")\r\n" }
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            if name.caseInsensitiveCompare("Content-Length") == .orderedSame
                || name.caseInsensitiveCompare("Transfer-Encoding") == .orderedSame
            {
                continue  // the body below is framed by its length
            }
            head += "\(name): \(value)\r\n"
        }
        let body = request.body.map { [UInt8]($0) } ?? []
        if request.body != nil { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    /// A response's headers as a client reads them: several fields of one name joined with `, `.
    static func headers(of response: Response) -> [String: String] {
        var headers: [String: String] = [:]
        for field in response.headers {
            let name = field.name.lowercased()
            headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
        }
        return headers
    }
}

/// Waiting for the server's answer the way a client waits for one: at most the request's
/// timeout, and no longer than the calling task is not cancelled.
enum Wait {
    /// The answer `exchange` produces; `URLError(.timedOut)` when it takes longer than
    /// `timeout`, `URLError(.cancelled)` when the calling task is cancelled first. Either way
    /// `exchange` goes on.
    static func forAnswer<Value: Sendable>(of exchange: Task<Value, Never>, within timeout: Duration) async throws
        -> Value
    {
        let race = Race<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                race.start(continuation)
                race.addTimer(
                    Task {
                        try await Task.sleep(for: timeout)
                        race.finish(.failure(URLError(.timedOut)))
                    })
                Task { race.finish(.success(await exchange.value)) }
            }
        } onCancel: {
            race.finish(.failure(URLError(.cancelled)))
        }
    }

    /// A continuation resumed once, by whichever outcome comes first.
    private final class Race<Value: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Value, any Error>?
            /// An outcome that came before the continuation was there (cancelled at once).
            var early: Result<Value, any Error>?
            var timer: Task<Void, any Error>?
            var isFinished = false
        }

        private let state = Mutex(State())

        func start(_ continuation: CheckedContinuation<Value, any Error>) {
            let early = state.withLock { state -> Result<Value, any Error>? in
                if state.isFinished { return state.early }
                state.continuation = continuation
                return nil
            }
            if let early { continuation.resume(with: early) }
        }

        func addTimer(_ timer: Task<Void, any Error>) {
            let isFinished = state.withLock { state in
                state.timer = timer
                return state.isFinished
            }
            if isFinished { timer.cancel() }
        }

        func finish(_ outcome: Result<Value, any Error>) {
            let (continuation, timer) = state.withLock {
                state -> (CheckedContinuation<Value, any Error>?, Task<Void, any Error>?) in
                guard !state.isFinished else { return (nil, nil) }
                state.isFinished = true
                if state.continuation == nil { state.early = outcome }
                defer { state.continuation = nil }
                return (state.continuation, state.timer)
            }
            timer?.cancel()
            continuation?.resume(with: outcome)
        }
    }
}
