import Foundation
// Requests, responses, the router and middleware are HTTPCore's (no sockets, any platform); every
// user of the server names them through this module, as before they moved.
@_exported import HTTPCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/1.1 server on non-blocking sockets and `epoll`, one event loop per core.
///
/// ```swift
/// let router = Router()
/// router.get("/healthz") { _ in try Response(json: ["status": "ok"]) }
/// let server = HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), responder: router.buildResponder())
/// server.shutdownOnSignals()             // SIGTERM/SIGINT: graceful shutdown
/// try await server.start()
/// print("listening on http://127.0.0.1:\(server.port)")
/// await server.waitUntilStopped()
/// ```
///
/// Errors thrown by handlers, and those the server finds itself (`HTTPRequestError`: 400, 404,
/// 405, 413, 414, 431, …), become responses in one place: the `errorResponder`, which by default
/// answers RFC 9457 `application/problem+json`.
public final class HTTPServer: Sendable {
    /// Turns an error into a response. The request is nil when the error is in the request's
    /// framing (the server could not parse one).
    public typealias ErrorResponder = HTTPErrorResponder

    /// Where to listen, how many threads, and the limits and timeouts of docs/API.md.
    public struct Configuration: Sendable {
        /// An IPv4 or IPv6 literal, or `localhost`.
        public var host: String
        /// The port; 0 picks a free one (read it back from `HTTPServer.port`).
        public var port: Int
        /// Event-loop threads; defaults to the number of active cores.
        public var eventLoopCount: Int
        /// Threads that run handlers and streams (never the event loops'); defaults to the number
        /// of active cores.
        public var workerCount: Int
        /// Size limits of a request.
        public var limits: HTTPLimits
        /// Time to receive a request's head (a new connection's first head included).
        public var headerTimeout: Duration
        /// Time a connection may stay quiet between requests or within a body.
        public var idleTimeout: Duration
        /// On shutdown, how long requests and streams under way may take before being cut.
        public var shutdownGracePeriod: Duration
        /// Bytes a stream may have waiting for the client before `write` suspends.
        public var streamHighWaterMark: Int
        /// The kernel's send buffer of each connection (`SO_SNDBUF`; Linux doubles it), which a
        /// client that stops reading fills; nil keeps the kernel's default, which grows with need
        /// (up to `net.ipv4.tcp_wmem`'s maximum, 4 MiB by default).
        public var sendBufferSize: Int?
        /// The listen backlog.
        public var backlog: Int32
        /// When set, the server speaks HTTPS only, with this certificate and key; nil: plain HTTP.
        /// The handshake counts toward the first head's `headerTimeout`.
        public var tls: TLSIdentity?
        /// Called, on an event loop, when a TLS handshake fails (a client refusing the certificate,
        /// speaking plain HTTP or an old TLS version, or too slow), with the client's address and
        /// OpenSSL's reason. It must return quickly (count, log).
        public var tlsHandshakeFailed: (@Sendable (_ peer: String?, _ reason: String) -> Void)?

        /// Creates a configuration; the defaults are those of docs/API.md.
        public init(
            host: String = "127.0.0.1",
            port: Int = 8080,
            eventLoopCount: Int = ProcessInfo.processInfo.activeProcessorCount,
            workerCount: Int = ProcessInfo.processInfo.activeProcessorCount,
            limits: HTTPLimits = HTTPLimits(),
            headerTimeout: Duration = .seconds(10),
            idleTimeout: Duration = .seconds(60),
            shutdownGracePeriod: Duration = .seconds(30),
            streamHighWaterMark: Int = 64 * 1024,
            sendBufferSize: Int? = nil,
            backlog: Int32 = 4096
        ) {
            self.host = host
            self.port = port
            self.eventLoopCount = max(1, eventLoopCount)
            self.workerCount = max(1, workerCount)
            self.limits = limits
            self.headerTimeout = headerTimeout
            self.idleTimeout = idleTimeout
            self.shutdownGracePeriod = shutdownGracePeriod
            self.streamHighWaterMark = max(1, streamHighWaterMark)
            self.sendBufferSize = sendBufferSize.map { max(1, $0) }
            self.backlog = backlog
        }
    }

    private enum Phase {
        case created
        case running(listener: Int32, loops: [EventLoop], port: Int)
        case stopping
        case stopped
    }

    private let context: ServerContext
    private let phase = Mutex(Phase.created)
    private let stopWaiters = Mutex<[CheckedContinuation<Void, Never>]>([])
    /// The tasks of `shutdownOnSignals`, cancelled once the server has stopped.
    let signalWaiters = Mutex<[Task<Void, Never>]>([])

    /// Creates a server answering with `responder` (see `Router.buildResponder()`); nothing is
    /// bound until `start()`.
    public init(
        configuration: Configuration,
        responder: RouterResponder,
        errorResponder: @escaping ErrorResponder = HTTPServer.problemResponse
    ) {
        context = ServerContext(configuration: configuration, responder: responder, errorResponder: errorResponder)
    }

    /// The configuration the server was created with.
    public var configuration: Configuration { context.configuration }

    /// The bound port once started (useful with port 0), else 0.
    public var port: Int {
        phase.withLock { phase in
            if case .running(_, _, let port) = phase { return port }
            return 0
        }
    }

    /// The number of client connections open now (idle, busy and streaming), for metrics.
    public var openConnectionCount: Int { context.openConnections.load(ordering: .relaxed) }

    /// Binds, listens and starts the event loops. Raises the open-file limit to its hard maximum
    /// so that thousands of connections fit.
    /// - Throws: `SocketError` when the address cannot be bound (`EADDRINUSE`, …).
    public func start() async throws {
        let configuration = context.configuration
        Socket.raiseDescriptorLimit()
        let listener = try Socket.listen(
            host: configuration.host, port: configuration.port, backlog: configuration.backlog)
        var loops: [EventLoop] = []
        var started: [EventLoop] = []
        do {
            let port = try Socket.localPort(listener)
            for _ in 0..<configuration.eventLoopCount {
                loops.append(try EventLoop(context: context))
            }
            for (index, loop) in loops.enumerated() {
                try loop.start(listener: listener, sharingWith: loops, name: "http-loop-\(index)")
                started.append(loop)
            }
            try phase.withLock { phase throws(SocketError) in
                guard case .created = phase else { throw SocketError(call: "start", errno: EALREADY) }
                context.workers.start()
                phase = .running(listener: listener, loops: loops, port: port)
            }
        } catch {
            for loop in started {
                await loop.stopAccepting()
                await loop.drainAndStop(gracePeriod: .zero)
            }
            Socket.close(listener)
            throw error
        }
    }

    /// Shuts down gracefully: stops accepting, closes idle connections, lets requests under way
    /// finish (their responses say `Connection: close`), ends streams, and returns once every
    /// connection is closed or `shutdownGracePeriod` has passed. Calling it again waits for the first call.
    public func shutdown() async {
        let current = phase.withLock { phase -> Phase in
            let current = phase
            if case .running = phase { phase = .stopping }
            return current
        }
        switch current {
        case .running(let listener, let loops, _):
            for loop in loops { await loop.stopAccepting() }
            Socket.close(listener)
            await withTaskGroup(of: Void.self) { group in
                for loop in loops {
                    group.addTask {
                        await loop.drainAndStop(gracePeriod: self.context.configuration.shutdownGracePeriod)
                    }
                }
            }
            await context.workers.stop()
            markStopped()
        case .stopping:
            await waitUntilStopped()
        case .created, .stopped:
            markStopped()
        }
    }

    private func markStopped() {
        let waiters = phase.withLock { phase in
            phase = .stopped
            return stopWaiters.withLock { waiters in
                defer { waiters = [] }
                return waiters
            }
        }
        for waiter in waiters { waiter.resume() }
        for task in signalWaiters.withLock({ $0 }) { task.cancel() }
    }

    /// Returns once the server has shut down.
    public func waitUntilStopped() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isStopped = phase.withLock { phase in
                if case .stopped = phase { return true }
                stopWaiters.withLock { $0.append(continuation) }
                return false
            }
            if isStopped { continuation.resume() }
        }
    }
}

/// What every connection of a server shares; immutable.
final class ServerContext: Sendable {
    let configuration: HTTPServer.Configuration
    let responder: RouterResponder
    let errorResponder: HTTPServer.ErrorResponder
    /// Where handlers and streams run.
    let workers: WorkerPool
    /// Connections open across all loops.
    let openConnections = Atomic<Int>(0)
    /// The memory for bodies over the usual limit (`HTTPLimits.largeBodies`).
    let bodyBudget: BodyBudget

    init(
        configuration: HTTPServer.Configuration, responder: RouterResponder,
        errorResponder: @escaping HTTPServer.ErrorResponder
    ) {
        self.configuration = configuration
        self.responder = responder
        self.errorResponder = errorResponder
        self.bodyBudget = BodyBudget(bytes: configuration.limits.maxLargeBodyBytesInFlight)
        self.workers = WorkerPool(count: configuration.workerCount, name: "http-worker")
    }
}
