import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension HTTPServer {
    /// Waits for one of `signals` (SIGTERM and SIGINT by default), then shuts down gracefully.
    /// The signals' default action is disabled while waiting, so the process is not killed.
    ///
    /// ```swift
    /// try await server.start()
    /// await server.runUntilSignal()
    /// exit(0)
    /// ```
    public func runUntilSignal(_ signals: [Int32] = [SIGTERM, SIGINT]) async {
        let queue = DispatchQueue(label: "HTTPServer.signals")
        let sources = signals.map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            return DispatchSource.makeSignalSource(signal: number, queue: queue)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = OnceFlag()
            for source in sources {
                source.setEventHandler {
                    if once.claim() { continuation.resume() }
                }
                source.resume()
            }
        }
        for source in sources { source.cancel() }
        await shutdown()
    }
}

/// True for the first caller only.
private final class OnceFlag: Sendable {
    private let flag = Mutex(false)

    func claim() -> Bool {
        flag.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }
}
