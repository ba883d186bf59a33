import CHTTPSystem
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Catches signals from the moment it is created and hands them out in order; their default
/// action (ending the process) no longer runs. Create it before announcing a server, so that a
/// signal sent right after the announcement is neither lost nor fatal.
///
/// ```swift
/// let signals = SignalCatcher([SIGTERM, SIGINT])
/// try await server.start()
/// print("listening on http://127.0.0.1:\(server.port)")
/// let signal = try await signals.next()
/// await server.shutdown()
/// ```
///
/// A signal sent to the process goes to any one of its threads that does not block it, so a
/// per-thread mechanism (a signal mask, or Dispatch's signal sources, whose registration is also
/// asynchronous) can miss one in a process with many threads. This installs a handler with
/// `sigaction(2)` instead, which runs whichever thread receives the signal, before `init` returns;
/// the handler only writes the signal's number to a pipe (`write(2)` is async-signal-safe), and
/// a read source hands it to the catchers of that signal.
public final class SignalCatcher: Sendable {
    private let signals: [Int32]
    private let id: UInt64
    private let stream: AsyncStream<Int32>

    /// Starts catching `signals`.
    public init(_ signals: [Int32] = [SIGTERM, SIGINT]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.signals = signals
        self.stream = stream
        id = SignalRelay.shared.add(continuation, for: signals)
    }

    /// The next signal caught (one caught earlier and not yet handed out comes first).
    /// - Throws: `CancellationError` when the waiting task is cancelled first.
    public func next() async throws -> Int32 {
        for await number in stream { return number }
        throw CancellationError()
    }

    deinit {
        SignalRelay.shared.remove(id, for: signals)
    }
}

/// The process's one relay from signal handlers to catchers. Signal dispositions belong to the
/// process, not to any value, so this is the one piece of global state the server keeps.
private final class SignalRelay: Sendable {
    static let shared = SignalRelay()

    private struct State {
        var nextID: UInt64 = 0
        var catchers: [Int32: [UInt64: AsyncStream<Int32>.Continuation]] = [:]
        var installed: Set<Int32> = []
    }

    private let state = Mutex(State())
    private let readSource: SignalReadSource?

    private init() {
        var fds: [Int32] = [-1, -1]
        // Close-on-exec and non-blocking from the start: no child spawned meanwhile inherits it.
        guard chttp_pipe_cloexec(&fds) == 0 else {
            readSource = nil
            return
        }
        signalPipeWriteEnd.store(fds[1], ordering: .releasing)
        let source = DispatchSource.makeReadSource(
            fileDescriptor: fds[0], queue: DispatchQueue(label: "HTTPServer.signals"))
        readSource = SignalReadSource(source: source)
        let readEnd = fds[0]
        source.setEventHandler { [weak self] in
            var bytes = [UInt8](repeating: 0, count: 64)
            while true {
                let count = read(readEnd, &bytes, bytes.count)
                guard count > 0 else { return }
                for byte in bytes.prefix(count) { self?.deliver(Int32(byte)) }
            }
        }
        source.resume()
    }

    /// Registers a catcher and installs the handler of each signal not yet handled.
    func add(_ continuation: AsyncStream<Int32>.Continuation, for signals: [Int32]) -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            for number in signals {
                state.catchers[number, default: [:]][state.nextID] = continuation
                if state.installed.insert(number).inserted { Self.install(number) }
            }
            return state.nextID
        }
    }

    func remove(_ id: UInt64, for signals: [Int32]) {
        let removed = state.withLock { state in
            signals.compactMap { state.catchers[$0]?.removeValue(forKey: id) }
        }
        for continuation in removed { continuation.finish() }
    }

    private func deliver(_ number: Int32) {
        let catchers = state.withLock { Array(($0.catchers[number] ?? [:]).values) }
        for catcher in catchers { catcher.yield(number) }
    }

    /// From now on the signal runs `relaySignal` (and never its default action), in whichever
    /// thread receives it. Once installed, a handler stays: a catcher that goes away leaves the
    /// signal caught and dropped, rather than fatal again.
    private static func install(_ number: Int32) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = relaySignal
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(number, &action, nil)
    }
}

/// The write end of the relay's pipe, read by the signal handler (an atomic load is
/// async-signal-safe; -1 until the pipe exists).
private let signalPipeWriteEnd = Atomic<Int32>(-1)

/// The handler of every caught signal: one byte, the signal's number, to the relay's pipe. A full
/// pipe drops the byte; a burst of one signal is still seen once.
private func relaySignal(_ number: Int32) {
    let fd = signalPipeWriteEnd.load(ordering: .acquiring)
    guard fd >= 0 else { return }
    let savedErrno = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(fd, &byte, 1)
    errno = savedErrno
}

/// Keeps the relay's read source alive as long as the relay.
private struct SignalReadSource: @unchecked Sendable {
    // @unchecked: Dispatch sources are thread-safe; the protocol existential is not marked Sendable.
    let source: any DispatchSourceRead
}
