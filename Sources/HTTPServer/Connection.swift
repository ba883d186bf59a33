import CHTTPSystem

#if canImport(Glibc)
    import Glibc
#endif

/// One accepted socket: reads and parses requests, runs handlers one at a time (so pipelined
/// requests are answered in order), writes responses. Decisions about timeouts and keep-alive
/// are the state machine's; this class does the I/O.
final class Connection: @unchecked Sendable {
    // @unchecked: used only on its loop's thread. Tasks hold a reference only to hand work back
    // through `loop.execute`, or call in directly after checking `loop.inEventLoop`.

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
        self.parser = RequestParser(limits: configuration.limits)
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
            writer.close()
            inFlight.streamTask?.cancel()
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
                if let refusal = refusal(of: head) {
                    // Refused before the body is sent (RFC 9110 §10.1.1): the client may skip it, and
                    // since we do not read it, the connection closes after the answer.
                    machine.requestReceived()
                    inFlight = InFlight(keepAlive: false, isHead: false, minorVersion: 1, lingersAfterResponse: true)
                    send(loop.context.errorResponder(refusal, head), at: now)
                    return
                }
                machine.bytesReceived(at: now, isBody: true)
                outbound.append(ResponseEncoder.continueHead)
                flush(at: now)
            case .request(let request, let keepAlive)?:
                dispatch(request, keepAlive: keepAlive, at: now)
            }
        }
    }

    /// The router's 404 or 405 for a request whose body has not been sent yet.
    private func refusal(of head: Request) -> HTTPRequestError? {
        guard let router = loop.context.router else { return nil }
        var probe = head
        do {
            _ = try router.handler(for: &probe)
            return nil
        } catch {
            return error
        }
    }

    private func respondToMalformedRequest(_ error: HTTPRequestError, at now: ContinuousClock.Instant) {
        machine.requestReceived()
        inFlight = InFlight(keepAlive: false, isHead: false, minorVersion: 1, lingersAfterResponse: true)
        send(loop.context.errorResponder(error, nil), at: now)
    }

    // MARK: - Handlers

    private func dispatch(_ request: Request, keepAlive: Bool, at now: ContinuousClock.Instant) {
        machine.requestReceived()
        inFlight = InFlight(keepAlive: keepAlive, isHead: request.method == .head, minorVersion: request.minorVersion)
        let context = loop.context
        guard let router = context.router else {
            let responder = context.responder
            var request = request
            request.remoteAddress = peer
            startHandler(request) { try await responder.respond(to: $0) }
            return
        }
        var request = request
        request.remoteAddress = peer
        do {
            switch try router.handler(for: &request) {
            case .synchronous(let handler):
                let response: Response
                do {
                    response = try handler(request)
                } catch {
                    response = context.errorResponder(error, request)
                }
                send(response, at: now)
            case .asynchronous(let handler):
                startHandler(request, handler)
            }
        } catch {
            send(context.errorResponder(error, request), at: now)
        }
    }

    private func startHandler(_ request: Request, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        let loop = self.loop
        Task(executorPreference: loop) {
            let response: Response
            do {
                response = try await handler(request)
            } catch {
                response = loop.context.errorResponder(error, request)
            }
            if loop.inEventLoop {
                self.send(response, at: loop.now)
            } else {
                loop.execute { self.send(response, at: loop.now) }
            }
        }
    }
}
