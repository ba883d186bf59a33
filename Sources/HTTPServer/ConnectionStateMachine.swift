/// The lifetime of one connection as a pure value: the caller reports what happened, with the
/// time, and gets back what to do (Hummingbird's `HTTPConnectionStateHandler.StateMachine`).
/// No clock and no I/O, so every timeout is tested by passing instants.
///
/// - A new connection must send a complete head within `headerTimeout` of connecting; later
///   requests within `headerTimeout` of their first byte (docs/API.md "Limits": 10 s).
/// - Between requests, and between reads of a body, a connection may stay quiet for
///   `idleTimeout` (60 s).
/// - While a handler runs or a response is written, no timeout applies.
struct ConnectionStateMachine {
    typealias Instant = LoopInstant

    enum State: Equatable {
        /// Between requests; closed after `idleTimeout`.
        case idle(since: Instant)
        /// Part of a head has arrived (or the connection is new); closed `headerTimeout` after `since`.
        case receivingHead(since: Instant)
        /// The head is in, the body is coming; closed after `idleTimeout` without bytes.
        case receivingBody(lastActivity: Instant)
        /// A handler runs, or its response is being written.
        case responding
        /// A streaming response is being written.
        case streaming
        /// A last response (an error, or one with unread requests behind it) was sent and our side
        /// shut down; what the client still sends is read and dropped until it closes or
        /// `lingerTimeout` passes, so that closing does not reset the connection before the
        /// client has read the response (RFC 9112 §9.6).
        case lingering(since: Instant)
        case closed
    }

    enum Action: Equatable {
        case none
        /// Close the connection now.
        case close
    }

    private(set) var state: State
    private(set) var isShuttingDown = false
    /// Since when bytes have waited for a client that reads nothing; nil while writes progress.
    private(set) var writeBlockedSince: Instant?
    let headerTimeout: Duration
    let idleTimeout: Duration

    init(connectedAt now: Instant, headerTimeout: Duration, idleTimeout: Duration) {
        self.state = .receivingHead(since: now)
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
    }

    /// Whether the connection should read the socket now: only between responses, so that a
    /// pipelining client is answered in order and cannot make us buffer without bound.
    var isReading: Bool {
        switch state {
        case .idle, .receivingHead, .receivingBody, .lingering: true
        case .responding, .streaming, .closed: false
        }
    }

    /// Bytes arrived while reading; `isBody` when they belong to a body whose head is complete.
    mutating func bytesReceived(at now: Instant, isBody: Bool) {
        switch state {
        case .idle:
            state = isBody ? .receivingBody(lastActivity: now) : .receivingHead(since: now)
        case .receivingHead, .receivingBody:
            if isBody { state = .receivingBody(lastActivity: now) }
        case .responding, .streaming, .lingering, .closed:
            break
        }
    }

    /// A complete request was handed to the responder.
    mutating func requestReceived() {
        guard state != .closed else { return }
        state = .responding
    }

    /// The response turned out to be a stream.
    mutating func streamStarted() {
        guard state == .responding else { return }
        state = .streaming
    }

    /// The last byte of a response reached the socket.
    mutating func responseSent(at now: Instant, keepAlive: Bool) -> Action {
        guard state != .closed else { return .none }
        if !keepAlive || isShuttingDown {
            state = .closed
            return .close
        }
        state = .idle(since: now)
        return .none
    }

    /// A response after which the connection closes reached the socket (an error response, or
    /// `Connection: close` with more requests unread): start lingering.
    mutating func finalResponseSent(at now: Instant) {
        guard state != .closed else { return }
        state = .lingering(since: now)
    }

    /// The client closed its side. While a handler runs this is not final: a client may
    /// half-close after sending its request, and pipelined requests may still be buffered.
    mutating func peerClosed() -> Action {
        switch state {
        case .idle, .receivingHead, .receivingBody, .streaming, .lingering:
            state = .closed
            return .close
        case .responding, .closed:
            return .none
        }
    }

    /// The connection was closed for another reason (a socket error, a forced shutdown).
    mutating func closed() {
        state = .closed
    }

    /// How long an error response lingers: at most 2 s, less when the header timeout is shorter.
    var lingerTimeout: Duration { min(headerTimeout, .seconds(2)) }

    /// A write left bytes waiting (the client's window is full). `madeProgress` when some bytes
    /// went out; a client that takes none for `idleTimeout` is closed, whatever the state, so a
    /// client that never reads cannot hold a response (or a stream) open for ever.
    mutating func writeBlocked(at now: Instant, madeProgress: Bool) {
        if madeProgress || writeBlockedSince == nil { writeBlockedSince = now }
    }

    /// Every queued byte reached the socket.
    mutating func writeDrained() {
        writeBlockedSince = nil
    }

    /// The periodic timer fired.
    mutating func timerFired(at now: Instant) -> Action {
        let expired: Bool
        switch state {
        case .idle(let since): expired = now - since >= idleTimeout
        case .receivingHead(let since): expired = now - since >= headerTimeout
        case .receivingBody(let lastActivity): expired = now - lastActivity >= idleTimeout
        case .lingering(let since): expired = now - since >= lingerTimeout
        case .responding, .streaming, .closed: expired = false
        }
        let isWriteStalled = writeBlockedSince.map { now - $0 >= idleTimeout } ?? false
        guard expired || isWriteStalled else { return .none }
        state = .closed
        return .close
    }

    /// The server is shutting down: idle and half-received requests are closed now; a request
    /// under way finishes first, and its response says `Connection: close`.
    mutating func shutdownRequested() -> Action {
        isShuttingDown = true
        switch state {
        case .idle, .receivingHead, .receivingBody, .lingering:
            state = .closed
            return .close
        case .responding, .streaming, .closed:
            return .none
        }
    }

    /// Whether the response being prepared should keep the connection open.
    func keepsAlive(requested: Bool) -> Bool {
        requested && !isShuttingDown
    }
}
