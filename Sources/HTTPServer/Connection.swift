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
    @exclusivity(unchecked) var machine: ConnectionStateMachine
    let parser: RequestParser
    // The state below is not checked for exclusivity at run time (a check on each of the dozen or
    // so accesses every request makes): it is used on the loop's thread only, and no method holds
    // an access to one of these fields while it calls code that could reach the same field.
    @exclusivity(unchecked) var outbound = OutboundQueue()
    @exclusivity(unchecked) var inFlight: InFlight?
    @exclusivity(unchecked) var isClosed = false
    /// Edge-triggered sockets report readability once: remember it while not reading.
    @exclusivity(unchecked) var mayHaveUnreadInput = true
    /// The client has closed its sending side (`EPOLLRDHUP`), even if its last bytes are unread.
    @exclusivity(unchecked) var hasSeenReadHangup = false
    /// Set while `processBufferedRequests` runs, so that a synchronous response does not recurse into it.
    @exclusivity(unchecked) var isProcessing = false
    @exclusivity(unchecked) var streamGeneration = 0
    /// The lookup of a request whose head asked for `100 Continue`, kept until its body has
    /// arrived, so that each request is looked up once.
    @exclusivity(unchecked) var expectedRoute: RouteMatch?
    /// The TLS side, on an HTTPS server: until its handshake is done, events drive the handshake.
    let tls: TLSStream?
    /// Why the handshake failed, reported when the connection closes before it is done.
    var handshakeFailure: String?
    /// False when the server closes a connection mid-handshake for its own reasons (shutdown).
    var reportsHandshakeFailure = true

    init(fd: Int32, peer: String?, loop: EventLoop, connectedAt now: LoopInstant, tls: TLSStream? = nil) {
        self.fd = fd
        self.peer = peer
        self.loop = loop
        self.tls = tls
        let configuration = loop.context.configuration
        self.machine = ConnectionStateMachine(
            connectedAt: now,
            headerTimeout: configuration.headerTimeout,
            idleTimeout: configuration.idleTimeout
        )
        self.parser = RequestParser(limits: configuration.limits, budget: loop.context.bodyBudget)
    }

    // MARK: - Events from the loop

    func handle(events: UInt32, at now: LoopInstant) {
        let isHungUp = events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
        if let tls, !tls.isEstablished {
            // Even when the client has gone, what it sent last (an alert saying why) is read first.
            continueHandshake(tls, at: now)
            if isHungUp { close() }
            return
        }
        if isHungUp {
            close()
            return
        }
        // Over TLS a write may wait for the socket to be readable, and a read for it to be writable.
        let isReadable = events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0
        let isWritable = events & EPOLLOUT.rawValue != 0
        if isWritable || (isReadable && tls?.writeWantsRead == true), !outbound.isEmpty {
            flush(at: now)
        }
        guard !isClosed else { return }
        if isReadable || (isWritable && tls?.readWantsWrite == true) {
            mayHaveUnreadInput = true
            if events & EPOLLRDHUP.rawValue != 0 { hasSeenReadHangup = true }
            if machine.isReading {
                readAndProcess(at: now)
            } else if events & EPOLLRDHUP.rawValue != 0, machine.peerClosed() == .close {
                close()  // a streaming client went away
            }
        }
    }

    func timerFired(at now: LoopInstant) {
        // A connection that wrote nothing since the last sweep gives its write buffer back, and
        // one that parsed no request its recycled request.
        outbound.releaseIfIdle()
        parser.releaseIdleSpare()
        guard machine.timerFired(at: now) == .close else { return }
        // The handshake counts toward the first head's time (the header timeout).
        if isHandshaking { handshakeFailure = "handshake timed out" }
        close()
    }

    func shutdownRequested() {
        if machine.shutdownRequested() == .close {
            reportsHandshakeFailure = false  // not the client's failure
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

    // MARK: - TLS

    /// Whether this is a TLS connection whose handshake is not done.
    var isHandshaking: Bool { tls.map { !$0.isEstablished } ?? false }

    /// Takes the handshake further; once done, reads the request that may have come with it.
    private func continueHandshake(_ tls: TLSStream, at now: LoopInstant) {
        switch tls.handshake() {
        case .inProgress:
            return
        case .failed(let reason):
            handshakeFailure = reason
            close()
        case .established:
            mayHaveUnreadInput = true
            readAndProcess(at: now)
        }
    }

    /// Reads what the socket holds, decrypted on a TLS connection: `.processed(0)` at its end.
    func receive() throws(SocketError) -> IOResult<Int> {
        if let tls { return try tls.read(into: loop.readBuffer) }
        return try Socket.receive(fd, into: loop.readBuffer)
    }

    // MARK: - Reading

    func readAndProcess(at now: LoopInstant) {
        while !isClosed && machine.isReading {
            if case .lingering = machine.state {
                guard discardInput() else { return }
                continue
            }
            processBufferedRequests(at: now)
            guard !isClosed, machine.isReading, mayHaveUnreadInput else { return }
            let result: IOResult<Int>
            do {
                result = try receive()
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
                // A TLS read returns one record at most, and OpenSSL may hold more already read
                // from the socket: read on until it would block.
                mayHaveUnreadInput = count == loop.readBuffer.count || hasSeenReadHangup || tls != nil
                parser.append(UnsafeRawBufferPointer(rebasing: loop.readBuffer[..<count]))
                machine.bytesReceived(at: now, isBody: parser.isReceivingBody)
            }
        }
    }

    /// Reads and drops input while lingering; returns whether to keep reading.
    private func discardInput() -> Bool {
        switch try? receive() {
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
    /// synchronously or more bytes are needed, then writes what was queued.
    ///
    /// Pipelined requests answered at once share the outbound buffer: while a complete response
    /// to a kept-alive connection is queued and the next request is already here, that request
    /// is answered behind it before anything is written, so a burst goes out in one write. Only
    /// up to `OutboundQueue.coalescingLimit` bytes are queued so; beyond it, or when the next
    /// request is not complete, the queue is written first and the next request waits for the
    /// response to reach the socket, as it does when a handler runs in a task.
    private func processBufferedRequests(at now: LoopInstant) {
        guard !isProcessing else { return }
        isProcessing = true
        defer { isProcessing = false }
        // Set once the parser has answered that the next request is not complete.
        var isNextIncomplete = false
        while !isClosed {
            if let current = inFlight {
                guard !isNextIncomplete, answersNextBeforeWriting(current) else {
                    // A handler or stream runs, or what is queued must be written first. A
                    // response that goes out whole is done, and then the next request is answered.
                    flush(at: now)
                    guard !isClosed, inFlight == nil else { return }
                    continue
                }
            } else {
                guard machine.isReading else { return }
                if case .lingering = machine.state { return }
            }
            var parsed: RequestParser.Event?
            do {
                parsed = try parser.next()
            } catch {
                retireQueuedResponse(at: now)
                respondToMalformedRequest(error, at: now)
                continue
            }
            // Taken out of the optional, so that the request is held once, here, and is changed
            // in place (a request shares its storage until then: see `Request`).
            guard let event = parsed.take() else {
                if inFlight != nil {
                    isNextIncomplete = true
                    continue
                }
                // A head without its body yet: from now on the idle timeout applies, not the header one.
                if parser.isReceivingBody { machine.bytesReceived(at: now, isBody: true) }
                return
            }
            retireQueuedResponse(at: now)
            switch consume event {
            case .sendContinue(var head):
                head.remoteAddress = peer
                let route = loop.context.responder.route(head)
                if route.isRefusal {
                    // Refused before the body is sent (RFC 9110 §10.1.1): the client may skip it, and
                    // since we do not read it, the connection closes after the answer. The 404 or 405
                    // still goes through the middleware, as it would after a body.
                    machine.requestReceived()
                    inFlight = InFlight(keepAlive: false, isHead: false, minorVersion: 1, lingersAfterResponse: true)
                    answer(head, route: route, at: now)
                    continue
                }
                expectedRoute = route
                machine.bytesReceived(at: now, isBody: true)
                outbound.append(copying: ResponseEncoder.continueHead)
                flush(at: now)
            case .request(let request, let keepAlive):
                dispatch(request, keepAlive: keepAlive, at: now)
            }
        }
    }

    /// Whether the next pipelined request may be answered before `current`, complete and
    /// queued, is written: the connection stays open after it, and the queue has room.
    private func answersNextBeforeWriting(_ current: InFlight) -> Bool {
        current.isResponseQueued && current.writer == nil && current.keepAlive && !current.lingersAfterResponse
            && !machine.isShuttingDown && parser.hasBufferedBytes
            && outbound.count < OutboundQueue.coalescingLimit
    }

    /// Ends the request in flight whose complete response is queued but not yet written, because
    /// the next request is answered behind it (see `processBufferedRequests`): the state machine
    /// goes through idle straight to the next request, so no timeout starts in between, and
    /// the socket is written when that request's response is queued too.
    private func retireQueuedResponse(at now: LoopInstant) {
        guard let current = inFlight, current.isResponseQueued, current.writer == nil else { return }
        inFlight = nil
        _ = machine.responseSent(at: now, keepAlive: current.keepAlive)
    }

    private func respondToMalformedRequest(_ error: HTTPRequestError, at now: LoopInstant) {
        expectedRoute = nil
        machine.requestReceived()
        inFlight = InFlight(keepAlive: false, isHead: false, minorVersion: 1, lingersAfterResponse: true)
        send(loop.context.errorResponder(error, nil), at: now)
    }

    // MARK: - Handlers

    private func dispatch(_ request: consuming Request, keepAlive: Bool, at now: LoopInstant) {
        machine.requestReceived()
        inFlight = InFlight(keepAlive: keepAlive, isHead: request.method == .head, minorVersion: request.minorVersion)
        request.remoteAddress = peer
        let route = expectedRoute.take() ?? loop.context.responder.route(request)
        answer(request, route: route, at: now)
    }

    /// Runs the responder's chain for a looked-up request: a ready response (a synchronous
    /// handler such as `/healthz`, or a refusal) is sent at once, on this thread; deferred work
    /// runs in a task on the server's worker threads, never on a loop, so that one slow handler
    /// (parsing a large body, rendering a large answer, waiting for an actor) delays no other
    /// connection of this loop. Only the response goes back to the loop, to be written.
    /// The request is held here, once: the chain borrows it, and only deferred work (which may
    /// need it for an error response) keeps a copy.
    private func answer(_ request: consuming Request, route: consuming RouteMatch, at now: LoopInstant) {
        let context = loop.context
        switch context.responder.respond(to: &request, routedBy: route) {
        case .ready(.success(let response)):
            // Answered: the parser's next request reuses its storage, unless something kept it.
            parser.recycle(consume request)
            send(response, at: now)
        case .ready(.failure(let error)):
            let response = context.errorResponder(error, request)
            parser.recycle(consume request)
            send(response, at: now)
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
            loop.submit(.respond(self, response))
        }
    }
}
