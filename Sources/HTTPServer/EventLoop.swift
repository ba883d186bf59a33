import CHTTPSystem
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One thread with its own `epoll` instance, owning the connections handed to it.
///
/// Every loop registers the one listening socket with `EPOLLEXCLUSIVE`, so the kernel wakes one
/// loop (rarely a few) when connections arrive, and there is no acceptor thread. The loop that
/// wakes accepts a batch and hands each connection to the least loaded loop, itself on a tie,
/// through that loop's `execute`; the receiving loop registers the socket and owns it from then
/// on. Connection sockets are edge-triggered (`EPOLLET`) and registered once: reading and writing
/// never need an `epoll_ctl` per request.
///
/// A loop does I/O only: handlers and streams run in tasks on the server's worker threads and hand
/// their bytes back through `execute`, so no request's work delays the other connections of
/// its loop. Only synchronous handlers (constant answers such as `/healthz`) run here.
final class EventLoop: @unchecked Sendable {
    // @unchecked: `connections`, `readBuffer`, `now` and the other plain vars are used only on
    // the loop's own thread; what other threads touch is in `inbox` (a Mutex) and atomics.

    /// What other threads hand a loop: a closure, or one of the hand-offs every deferred response
    /// and every stream write makes, carried as values so that handing them over allocates no
    /// closure context.
    enum Work: Sendable {
        case run(@Sendable () -> Void)
        /// A handler's response, for `Connection.send`.
        case respond(Connection, Response)
        /// Bytes a stream wrote, for `Connection.writeStreamChunk`.
        case streamChunk(Connection, [UInt8], generation: Int)
    }

    private struct Inbox {
        var work: [Work] = []
        var isWakePending = false
        var hasStopped = false
    }

    let context: ServerContext
    private let epollFD: Int32
    private let wakeFD: Int32
    private let inbox = Mutex(Inbox())
    private let threadID = Atomic<UInt>(0)
    /// Connections this loop owns or is being handed; read by the other loops when they accept.
    let load = Atomic<Int>(0)
    /// Every loop of the server (this one included), fixed before the threads start.
    private var siblings: [EventLoop] = []
    private var listenFD: Int32 = -1
    private var isAcceptPaused = false
    // Used on the loop's thread only, by methods that hold no access to one of them while they
    // call code that could reach it: not checked for exclusivity at run time (a check per access,
    // several per request).
    @exclusivity(unchecked) private var connections: [Int32: Connection] = [:]
    /// The inbox's previous array, emptied, kept to be swapped in for the next round.
    @exclusivity(unchecked) private var spareWork: [Work] = []
    private var isRunning = true
    private var isShuttingDown = false
    private var forceCloseAt: LoopInstant?
    private var drainedContinuation: CheckedContinuation<Void, Never>?
    private var stoppedContinuation: CheckedContinuation<Void, Never>?
    private var lastSweep: LoopInstant
    private let sweepInterval: Duration
    /// Shared by all connections of this loop: a socket is read here, then parsed.
    let readBuffer: UnsafeMutableRawBufferPointer
    /// The time at the start of this loop iteration.
    @exclusivity(unchecked) private(set) var now: LoopInstant
    @exclusivity(unchecked) var dateCache = DateCache()

    init(context: ServerContext) throws(SocketError) {
        self.context = context
        self.epollFD = try blockingSyscall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        do {
            self.wakeFD = try blockingSyscall("eventfd") {
                eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
            }
        } catch {
            Glibc.close(epollFD)
            throw error
        }
        self.readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        self.now = .now
        self.lastSweep = .now
        let shortest = min(context.configuration.headerTimeout, context.configuration.idleTimeout)
        self.sweepInterval = max(.milliseconds(10), min(.seconds(1), shortest / 4))
        try register(wakeFD, events: UInt32(EPOLLIN.rawValue))
    }

    deinit {
        Glibc.close(epollFD)
        Glibc.close(wakeFD)
        readBuffer.deallocate()
    }

    // MARK: - Threads

    /// Starts the loop's thread, accepting from `listener` and sharing connections with `loops`.
    func start(listener: Int32, sharingWith loops: [EventLoop], name: String) throws(SocketError) {
        listenFD = listener
        try register(listener, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue)
        siblings = loops  // a cycle between loops, broken when the thread ends
        let thread = Thread { [self] in
            _ = chttp_set_thread_name(name)
            run()
        }
        thread.start()
    }

    /// Whether the caller runs on this loop's thread.
    var inEventLoop: Bool { threadID.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// Runs `work` on the loop's thread, after what was submitted before it.
    /// Work submitted after the loop has stopped is dropped: its connections are closed.
    func execute(_ work: @escaping @Sendable () -> Void) {
        submit(.run(work))
    }

    /// Hands `work` to the loop's thread, after what was submitted before it; dropped, as
    /// `execute`'s, once the loop has stopped.
    func submit(_ work: Work) {
        let (mustWake, hasStopped) = inbox.withLock { inbox -> (Bool, Bool) in
            if inbox.hasStopped { return (false, true) }
            inbox.work.append(work)
            defer { inbox.isWakePending = true }
            return (!inbox.isWakePending, false)
        }
        if hasStopped { return }
        if mustWake && !inEventLoop {
            var one: UInt64 = 1
            _ = try? syscall("write(eventfd)") { Glibc.write(wakeFD, &one, 8) }
        }
    }

    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .relaxed)
        let capacity: Int32 = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(capacity))
        defer { events.deallocate() }
        while isRunning {
            // Work submitted from this thread (a cancelled task resuming after a sweep, say)
            // wrote no wake-up: do not sleep on it.
            let hasWork = inbox.withLock { !$0.work.isEmpty }
            let timeout = hasWork ? 0 : Int32(sweepInterval / .milliseconds(1))
            let count: Int32
            switch try? syscall("epoll_wait", { epoll_wait(epollFD, events, capacity, timeout) }) {
            case .processed(let ready): count = ready
            default: count = 0
            }
            now = .now
            for index in 0..<Int(count) {
                let event = events[index]
                let fd = event.data.fd
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = try? syscall("read(eventfd)") { Glibc.read(wakeFD, &value, 8) }
                } else if fd == listenFD {
                    acceptConnections()
                } else if let connection = connections[fd] {
                    connection.handle(events: event.events, at: now)
                }
            }
            runSubmittedWork()
            if now - lastSweep >= sweepInterval { sweep() }
        }
        let leftover = inbox.withLock { inbox in
            inbox.hasStopped = true
            defer { inbox.work = [] }
            return inbox.work
        }
        for work in leftover { perform(work) }
        siblings = []
        stoppedContinuation?.resume()
    }

    /// Runs what other threads (and tasks) submitted, a few rounds at most so that I/O is not starved.
    /// The inbox and `spareWork` trade their arrays, so that taking a round allocates nothing.
    private func runSubmittedWork() {
        for _ in 0..<4 {
            var batch: [Work] = []
            swap(&batch, &spareWork)
            inbox.withLock { inbox in
                inbox.isWakePending = false
                swap(&inbox.work, &batch)
            }
            let isEmpty = batch.isEmpty
            for item in batch { perform(item) }
            batch.removeAll(keepingCapacity: batch.capacity <= 1024)
            spareWork = batch
            if isEmpty { return }
        }
    }

    private func perform(_ work: Work) {
        switch work {
        case .run(let body): body()
        case .respond(let connection, let response): connection.send(response, at: now)
        case .streamChunk(let connection, let bytes, let generation):
            connection.writeStreamChunk(bytes, generation: generation)
        }
    }

    // MARK: - Connections

    private func register(_ fd: Int32, events: UInt32) throws(SocketError) {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        try blockingSyscall("epoll_ctl") { epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) }
    }

    /// Accepts a batch of connections and gives each to the least loaded loop (this one on a
    /// tie). EPOLLEXCLUSIVE alone does not spread a burst: the kernel keeps waking the same idle
    /// loop, which took all 64 connections of a wrk run while the other loop sat idle.
    private func acceptConnections() {
        guard !isShuttingDown, !isAcceptPaused else { return }
        for _ in 0..<16 {
            do {
                guard case .processed(let (fd, peer)) = try Socket.accept(listenFD) else { return }
                let target = leastLoadedLoop()
                target.load.add(1, ordering: .relaxed)
                context.openConnections.add(1, ordering: .relaxed)
                if target === self {
                    adopt(fd, peer: peer)
                } else {
                    target.execute { target.adopt(fd, peer: peer) }
                }
            } catch let error {
                switch error.errno {
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors: stop accepting until the next sweep rather than spin.
                    pauseAccepting()
                    return
                default:
                    continue  // ECONNABORTED and the like concern that one connection only
                }
            }
        }
    }

    private func leastLoadedLoop() -> EventLoop {
        var best = self
        var bestLoad = load.load(ordering: .relaxed)
        for loop in siblings where loop !== self {
            let candidate = loop.load.load(ordering: .relaxed)
            if candidate < bestLoad {
                best = loop
                bestLoad = candidate
            }
        }
        return best
    }

    /// Takes ownership of an accepted socket, on this loop's thread.
    private func adopt(_ fd: Int32, peer: String?) {
        do {
            guard !isShuttingDown else { throw SocketError(call: "adopt", errno: ESHUTDOWN) }
            if let size = context.configuration.sendBufferSize {
                try Socket.setOption(fd, SOL_SOCKET, SO_SNDBUF, Int32(clamping: size))
            }
            var tls: TLSStream?
            if let identity = context.configuration.tls {
                guard let stream = identity.makeStream(fd: fd) else {
                    throw SocketError(call: "SSL_new", errno: ENOMEM)
                }
                tls = stream
            }
            try register(fd, events: EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue)
            connections[fd] = Connection(fd: fd, peer: peer, loop: self, connectedAt: now, tls: tls)
        } catch {
            Socket.close(fd)
            load.subtract(1, ordering: .relaxed)
            context.openConnections.subtract(1, ordering: .relaxed)
        }
    }

    private func pauseAccepting() {
        isAcceptPaused = true
        unregisterListener()
    }

    /// Removes the listening socket from this loop's set. It can only fail if it was not there,
    /// which the callers rule out; there is nothing else to do about it.
    private func unregisterListener() {
        _ = try? syscall("epoll_ctl(DEL)") { epoll_ctl(epollFD, EPOLL_CTL_DEL, listenFD, nil) }
    }

    private func resumeAccepting() {
        guard isAcceptPaused, !isShuttingDown else { return }
        isAcceptPaused = false
        try? register(listenFD, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue)
    }

    /// Called by a connection once it has closed its socket.
    func connectionClosed(_ connection: Connection) {
        connections[connection.fd] = nil
        load.subtract(1, ordering: .relaxed)
        context.openConnections.subtract(1, ordering: .relaxed)
        if isShuttingDown && connections.isEmpty { finishDraining() }
    }

    private func sweep() {
        lastSweep = now
        resumeAccepting()
        for connection in connections.values { connection.timerFired(at: now) }
        if let forceCloseAt, now >= forceCloseAt {
            for connection in connections.values { connection.close() }
        }
    }

    // MARK: - Shutdown

    /// Stops accepting; returns once the listening socket is out of this loop's epoll set.
    func stopAccepting() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            execute {
                self.isShuttingDown = true
                if !self.isAcceptPaused { self.unregisterListener() }
                self.listenFD = -1
                continuation.resume()
            }
        }
    }

    /// Lets requests under way finish, ends streams and closes idle connections; connections
    /// still open after `gracePeriod` are closed. Then stops the thread.
    func drainAndStop(gracePeriod: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            execute {
                self.isShuttingDown = true
                self.drainedContinuation = continuation
                self.forceCloseAt = self.now + gracePeriod
                for connection in Array(self.connections.values) { connection.shutdownRequested() }
                if self.connections.isEmpty { self.finishDraining() }
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            execute {
                self.stoppedContinuation = continuation
                self.isRunning = false
            }
        }
    }

    private func finishDraining() {
        drainedContinuation?.resume()
        drainedContinuation = nil
    }
}
