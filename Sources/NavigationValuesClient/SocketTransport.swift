#if canImport(Glibc)
    import Foundation
    import Glibc
    import Synchronization

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// HTTP/1.1 over POSIX sockets, for `http://` servers reached without a proxy: the default
    /// transport on Linux for such a base URL.
    ///
    /// Why not FoundationNetworking there: when a kept-alive connection dies after a request went
    /// out, libcurl (under `URLSession`) sends the request again by itself on a new connection, with
    /// its headers but without its body (a `Data` body is not rewound), so the server waits for a
    /// body that never comes and the call stalls for the whole request timeout while a thread spins;
    /// a request without a body is sent again silently. Either way the client's retry policy (its
    /// backoff, `onRetry`) never hears of it. Here a request is sent once: a connection that dies
    /// before the answer is a `URLError(.networkConnectionLost)` the retry policy sees at once.
    ///
    /// Each request runs on one of at most `maxConnectionsPerHost` worker threads, blocking in
    /// `poll` (never spinning) with the request's timeout as the longest silence; a kept-alive
    /// connection is reused unless the server closed it meanwhile. Each event stream has a thread
    /// and a connection of its own. Cancelling the calling task shuts the socket down.
    final class SocketTransport: ClientTransport {
        private let workers: BlockingWorkers
        private let idle = Mutex<[String: [SocketConnection]]>([:])
        private let maxIdlePerHost: Int

        init(maxConnectionsPerHost: Int) {
            maxIdlePerHost = max(1, maxConnectionsPerHost)
            workers = BlockingWorkers(limit: max(1, maxConnectionsPerHost))
        }

        deinit {
            workers.shutDown()
            for connection in idle.withLock({ $0.values.joined() }) { connection.close() }
        }

        /// Whether this transport can carry requests to `url`: `http://` with a host, and no proxy
        /// configured for it in the environment (`http_proxy`, `all_proxy`; `no_proxy` exempts hosts).
        static func canCarry(_ url: URL, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
            guard url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty else { return false }
            let proxy = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"].lazy.compactMap { environment[$0] }
                .first { !$0.isEmpty }
            guard proxy != nil else { return true }
            let exempt = (environment["no_proxy"] ?? environment["NO_PROXY"] ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
            let name = host.lowercased()
            return exempt.contains { entry in
                entry == "*" || entry == name
                    || (!entry.isEmpty && name.hasSuffix(entry.hasPrefix(".") ? entry : "." + entry))
            }
        }

        // MARK: - Requests

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            let endpoint = try Endpoint(request.url)
            let cancellation = SocketCancellation()
            return try await withTaskCancellationHandler {
                try await withUnsafeThrowingContinuation {
                    (continuation: UnsafeContinuation<TransportResponse, any Error>) in
                    workers.run { [self] in
                        continuation.resume(
                            with: Result { try exchange(request, endpoint: endpoint, cancellation: cancellation) })
                    }
                }
            } onCancel: {
                cancellation.cancel()
            }
        }

        /// Sends `request` on a kept-alive connection (or a new one) and reads its answer, on a
        /// worker thread.
        private func exchange(
            _ request: TransportRequest, endpoint: Endpoint, cancellation: SocketCancellation
        ) throws -> TransportResponse {
            let timeout = request.timeout
            let connection = try takeIdle(endpoint) ?? SocketConnection.connect(to: endpoint, timeout: timeout)
            guard cancellation.attach(connection) else {
                connection.close()
                throw URLError(.cancelled)
            }
            let outcome = Result { () throws -> (response: TransportResponse, keepsAlive: Bool) in
                try connection.write(HTTPRequestHead.encode(request, host: endpoint.hostHeader), timeout: timeout)
                let head = try connection.readHead(timeout: timeout)
                let body = try connection.readBody(of: head, method: request.method, timeout: timeout)
                return (TransportResponse(status: head.status, headers: head.headers, body: body), head.keepsAlive)
            }
            // Detached before the connection is closed or handed on, so a late cancellation never
            // shuts down a socket that is no longer this request's.
            let cancelled = cancellation.detach()
            switch outcome {
            case .success(let answer):
                if answer.keepsAlive, !cancelled { putIdle(connection, endpoint) } else { connection.close() }
                return answer.response
            case .failure(let error):
                connection.close()
                throw cancelled ? URLError(.cancelled) : error
            }
        }

        /// A kept-alive connection to `endpoint` the server has not closed meanwhile.
        private func takeIdle(_ endpoint: Endpoint) -> SocketConnection? {
            while let connection = idle.withLock({ $0[endpoint.key]?.popLast() }) {
                if connection.isStillOpen { return connection }
                connection.close()
            }
            return nil
        }

        private func putIdle(_ connection: SocketConnection, _ endpoint: Endpoint) {
            let kept = idle.withLock { idle in
                guard idle[endpoint.key, default: []].count < maxIdlePerHost else { return false }
                idle[endpoint.key, default: []].append(connection)
                return true
            }
            if !kept { connection.close() }
        }

        // MARK: - Streams

        func openStream(_ request: TransportRequest, into stream: TransportStream) {
            let cancellation = SocketCancellation()
            stream.onCancel { cancellation.cancel() }
            let thread = Thread {
                Self.serve(request, into: stream, cancellation: cancellation)
            }
            thread.name = "NavigationValuesClient stream"
            thread.stackSize = 256 << 10
            thread.start()
        }

        /// Connects, sends `request` and hands the answer to `stream` as it arrives, until it ends,
        /// fails, goes silent for `request.timeout`, or the stream is cancelled.
        private static func serve(
            _ request: TransportRequest, into stream: TransportStream, cancellation: SocketCancellation
        ) {
            var connection: SocketConnection?
            do {
                let endpoint = try Endpoint(request.url)
                let opened = try SocketConnection.connect(to: endpoint, timeout: request.timeout)
                connection = opened
                guard cancellation.attach(opened) else { throw URLError(.cancelled) }
                try opened.write(HTTPRequestHead.encode(request, host: endpoint.hostHeader), timeout: request.timeout)
                let head = try opened.readHead(timeout: request.timeout)
                stream.receive(status: head.status, headers: head.headers)
                try opened.streamBody(of: head, method: request.method, timeout: request.timeout) { bytes in
                    stream.receive(bytes)
                    return !stream.isCancelled
                }
                stream.finish()
            } catch {
                stream.finish(
                    cancellation.isCancelled ? URLError(.cancelled) : error as? URLError ?? URLError(.unknown))
            }
            cancellation.detach()
            connection?.close()
        }
    }

    // MARK: - Where to connect

    /// A server's host and port, as the request's URL names them.
    struct Endpoint: Sendable {
        var host: String
        var port: Int
        /// `Host:` as sent (`127.0.0.1:8080`, `[::1]:8080`).
        var hostHeader: String
        /// The pool's key.
        var key: String { "\(host):\(port)" }

        init(_ url: URL) throws {
            guard let host = url.host, !host.isEmpty else { throw URLError(.badURL) }
            // `URL.host` keeps an IPv6 literal's brackets on some platforms.
            self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            port = url.port ?? 80
            let bracketed = self.host.contains(":") ? "[\(self.host)]" : self.host
            hostHeader = url.port.map { "\(bracketed):\($0)" } ?? bracketed
        }
    }

    /// Lets a task's cancellation reach the socket a worker thread is blocked on: cancelling shuts
    /// it down (the blocked `poll` returns), and a socket attached after that is refused.
    final class SocketCancellation: Sendable {
        private let state = Mutex<(connection: SocketConnection?, cancelled: Bool)>((nil, false))

        var isCancelled: Bool { state.withLock { $0.cancelled } }

        /// Shuts the attached socket down, under the lock `detach()` takes before its owner closes it.
        func cancel() {
            state.withLock { state in
                state.cancelled = true
                state.connection?.shutDown()
            }
        }

        /// Attaches `connection`; false when already cancelled.
        func attach(_ connection: SocketConnection) -> Bool {
            state.withLock { state in
                guard !state.cancelled else { return false }
                state.connection = connection
                return true
            }
        }

        /// Detaches the socket; returns whether the request was cancelled.
        @discardableResult
        func detach() -> Bool {
            state.withLock { state in
                state.connection = nil
                return state.cancelled
            }
        }
    }

    // MARK: - Worker threads

    /// At most `limit` threads that run blocking work, made when needed and ended after 30 s
    /// without any; work beyond the limit waits its turn, in order.
    ///
    /// Guarded by an `NSCondition` (a pthread mutex and condition variable) rather than a `Mutex`
    /// and a semaphore: ThreadSanitizer sees pthread's locks, so the hand-over of each piece of work
    /// (and of the continuation it resumes) to a worker is ordered for it too.
    final class BlockingWorkers: @unchecked Sendable {
        typealias Work = @Sendable () -> Void

        private let limit: Int
        /// Guards everything below.
        private let condition = NSCondition()
        private var queue: [Work] = []
        private var queueIndex = 0
        private var idle = 0
        private var count = 0
        private var isShutDown = false

        init(limit: Int) {
            self.limit = limit
        }

        func run(_ work: @escaping Work) {
            condition.lock()
            queue.append(work)
            let spawns = idle == 0 && count < limit
            if spawns { count += 1 } else { condition.signal() }
            condition.unlock()
            guard spawns else { return }
            let thread = Thread { [self] in loop() }
            thread.name = "NavigationValuesClient request"
            thread.stackSize = 256 << 10
            thread.start()
        }

        /// Ends every thread once it has no work.
        func shutDown() {
            condition.lock()
            isShutDown = true
            condition.broadcast()
            condition.unlock()
        }

        private func loop() {
            condition.lock()
            while true {
                if queueIndex < queue.count {
                    let work = queue[queueIndex]
                    queueIndex += 1
                    if queueIndex == queue.count {
                        queue.removeAll(keepingCapacity: true)
                        queueIndex = 0
                    }
                    condition.unlock()
                    work()
                    condition.lock()
                    continue
                }
                if isShutDown { break }
                idle += 1
                let woken = condition.wait(until: Date(timeIntervalSinceNow: 30))
                idle -= 1
                if !woken, queueIndex == queue.count { break }
            }
            count -= 1
            condition.unlock()
        }
    }
#endif
