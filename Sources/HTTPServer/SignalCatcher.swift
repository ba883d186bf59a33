import Dispatch

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
public final class SignalCatcher: @unchecked Sendable {
    // @unchecked: Dispatch sources are thread-safe; the protocol existential is not marked Sendable.
    private let sources: [any DispatchSourceSignal]
    private let stream: AsyncStream<Int32>

    /// Starts catching `signals`; returns once each is caught (at most a second per signal, when
    /// the system will not say so).
    public init(_ signals: [Int32] = [SIGTERM, SIGINT]) {
        let queue = DispatchQueue(label: "HTTPServer.signals")
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        let registered = DispatchSemaphore(value: 0)
        sources = signals.map { number in
            // Ignored, so the default action never runs; the source still sees the signal.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield(number) }
            // Dispatch installs the source on its own thread: a signal sent before that is dropped.
            source.setRegistrationHandler { registered.signal() }
            source.resume()
            return source
        }
        for _ in sources { _ = registered.wait(timeout: .now() + 1) }
    }

    /// The next signal caught (one caught earlier and not yet handed out comes first).
    /// - Throws: `CancellationError` when the waiting task is cancelled first.
    public func next() async throws -> Int32 {
        for await number in stream { return number }
        throw CancellationError()
    }

    deinit {
        for source in sources { source.cancel() }
    }
}
