import CHTTPSystem

#if canImport(Glibc)
    import Glibc
#endif

/// One accepted socket: reads and parses requests, runs handlers one at a time (so pipelined
/// requests are answered in order), writes responses. Decisions about timeouts and keep-alive
/// are the state machine's; this class does the I/O.
final class Connection: @unchecked Sendable {
    // @unchecked: used only on its loop's thread. Tasks hold a reference only to hand work back
    // through `loop.execute`.

    /// The request being answered.
    struct InFlight {
        var keepAlive: Bool
        var isHead: Bool
        var minorVersion: Int
        var lingersAfterResponse = false
        /// The whole response is queued; when the queue empties, the request is done.
        var isResponseQueued = false
        var writer: ResponseWriter?
        var streamTask: Task<Void, Never>?
        var isChunked = false
    }

    let fd: Int32
    /// The client's address, as `Request.remoteAddress` gives it.
    let peer: String?
    unowned let loop: EventLoop
    var machine: ConnectionStateMachine
    var parser: RequestParser
    var outbound = OutboundQueue()
    var inFlight: InFlight?
    var isClosed = false
    /// Edge-triggered sockets report readability once: remember it while not reading.
    var mayHaveUnreadInput = true
    /// The client has closed its sending side (`EPOLLRDHUP`), even if its last bytes are unread.
    var hasSeenReadHangup = false
    /// Set while `processBufferedRequests` runs, so that a synchronous response does not recurse into it.
    var isProcessing = false
    var streamGeneration = 0
    /// The lookup of a request whose head asked for `100 Continue`, kept until its body has
    /// arrived, so that each request is looked up once.
    var expectedRoute: RouteMatch?

    init(fd: Int32, peer: String?, loop: EventLoop, connectedAt now: ContinuousClock.Instant) {
        self.fd = fd
        self.peer = peer
        self.loop = loop
        let configuration = loop.context.configuration
        self.machine = ConnectionStateMachine(
            connectedAt: now,
            headerTimeout: configuration.headerTimeout,
            idleTimeout: configuration.idleTimeout
        )
        self.parser = RequestParser(limits: configuration.limits, budget: loop.context.bodyBudget)
    }

    // MARK: - Events from the loop

    func handle(events: UInt32, at now: ContinuousClock.Instant) {
        if events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
            close()
            return
        }
        if events & EPOLLOUT.rawValue != 0, !outbound.isEmpty {
            flush(at: now)
        }
        guard !isClosed else { return }
        if events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0 {
            mayHaveUnreadInput = true
            if events & EPOLLRDHUP.rawValue != 0 { hasSeenReadHangup = true }
            if machine.isReading {
                readAndProcess(at: now)
            } else if events & EPOLLRDHUP.rawValue != 0, machine.peerClosed() == .close {
                close()  // a streaming client went away
            }
        }
    }

    func timerFired(at now: ContinuousClock.Instant) {
        if machine.timerFired(at: now) == .close { close() }
    }

    func shutdownRequested() {
        if machine.shutdownRequested() == .close {
            close()
            return
        }
        // A stream ends now: its writes throw, its task is cancelled, and once it returns the
        // last chunk is written and the connection closes.
        if let inFlight, let writer = inFlight.writer {
            // Cancelled before the writer closes, so that a stream woken by the close finds
            // itself cancelled.
            inFlight.streamTask?.cancel()
            writer.close()
        }
    }

    // MARK: - Reading

    func readAndProcess(at now: ContinuousClock.Instant) {
        while !isClosed && machine.isReading {
            if case .lingering = machine.state {
                guard discardInput() else { return }
                continue
            }
            processBufferedRequests(at: now)
            guard !isClosed, machine.isReading, mayHaveUnreadInput else { return }
            let result: IOResult<Int>
            do {
                result = try Socket.receive(fd, into: loop.readBuffer)
            } catch {
                close()
                return
            }
            switch result {
            case .wouldBlock:
                mayHaveUnreadInput = false
                return
            case .processed(0):
                if machine.peerClosed() == .close { close() }
                return
            case .processed(let count):
                // A short read drained the socket and the next arrival raises a new edge; but an
                // end of stream already signalled raises none, so then read on until it shows.
                mayHaveUnreadInput = count == loop.readBuffer.count || hasSeenReadHangup
                parser.append(UnsafeRawBufferPointer(rebasing: loop.readBuffer[..<count]))
                machine.bytesReceived(at: now, isBody: parser.isReceivingBody)
            }
        }
    }

    /// Reads and drops input while lingering; returns whether to keep reading.
    private func discardInput() -> Bool {
        switch try? Socket.receive(fd, into: loop.readBuffer) {
        case .wouldBlock?:
            mayHaveUnreadInput = false
            return false
        case .processed(let count)? where count > 0:
            return true
        default:
            close()
            return false
        }
    }

    /// Answers complete requests waiting in the parser, in order, until one cannot be answered
    /// synchronously or more bytes are needed.
    private func processBufferedRequests(at now: ContinuousClock.Instant) {
        guard !isProcessing else { return }
        isProcessing = true
        defer { isProcessing = false }
        while !isClosed, machine.isReading, inFlight == nil {
            if case .lingering = machine.state { return }
            let event: RequestParser.Event?
            do {
                event = try parser.next()
            } catch {
                respondToMalformedRequest(error, at: now)
                return
            }
            switch event {
            case nil:
                // A head without its body yet: from now on the idle timeout applies, not the header one.
                if parser.isReceivingBody { machine.bytesReceived(at: now, isBody: true) }
                return
            case .sendContinue(var head)?:
                head.remoteAddress = peer
                let route = loop.context.responder.route(head)
                if route.isRefusal {
                    // Refused before the body is sent (RFC 9110 §10.1.1): the client may skip it, and
                    // since we do not read it, the connection closes after the answer. The 404 or 405
                    // still goes through the middleware, as it would after a body.
                    machine.requestReceived()
                    inFlight = InFlight(keepAlive: false, isHead: false, minorVersion: 1, lingersAfterResponse: true)
                    answer(head, route: route, at: now)
                    return
                }
                expectedRoute = route
                machine.bytesReceived(at: now, isBody: true)
                outbound.append(ResponseEncoder.continueHead)
                flush(at: now)
            case .request(let request, let keepAlive)?:
                dispatch(request, keepAlive: keepAlive, at: now)
            }
        }
    }

    private func respondToMalformedRequest(_ error: HTTPRequestError, at now: ContinuousClock.Instant) {
        expectedRoute = nil
        machine.requestReceived()
        inFlight = InFlight(keepAlive: false, isHead: false, minorVersion: 1, lingersAfterResponse: true)
        send(loop.context.errorResponder(error, nil), at: now)
    }

    // MARK: - Handlers

    private func dispatch(_ request: Request, keepAlive: Bool, at now: ContinuousClock.Instant) {
        machine.requestReceived()
        inFlight = InFlight(keepAlive: keepAlive, isHead: request.method == .head, minorVersion: request.minorVersion)
        var request = request
        request.remoteAddress = peer
        let route = expectedRoute ?? loop.context.responder.route(request)
        expectedRoute = nil
        answer(request, route: route, at: now)
    }

    /// Runs the responder's chain for a looked-up request: a ready response (a synchronous
    /// handler such as `/healthz`, or a refusal) is sent at once, on this thread; deferred work
    /// runs in a task on the server's worker threads, never on a loop, so that one slow handler
    /// (parsing a large body, rendering a large answer, waiting for an actor) delays no other
    /// connection of this loop. Only the response goes back to the loop, to be written.
    private func answer(_ request: Request, route: RouteMatch, at now: ContinuousClock.Instant) {
        var request = request
        route.apply(to: &request)
        let context = loop.context
        switch context.responder.respond(to: request, target: route.target) {
        case .ready(.success(let response)):
            send(response, at: now)
        case .ready(.failure(let error)):
            send(context.errorResponder(error, request), at: now)
        case .deferred(let work):
            startHandler(request, work)
        }
    }

    private func startHandler(
        _ request: Request, _ work: @escaping @Sendable () async -> Result<Response, any Error>
    ) {
        let loop = self.loop
        Task(executorPreference: loop.context.workers) {
            let response: Response
            switch await work() {
            case .success(let answer): response = answer
            case .failure(let error): response = loop.context.errorResponder(error, request)
            }
            loop.execute { self.send(response, at: loop.now) }
        }
    }
}
