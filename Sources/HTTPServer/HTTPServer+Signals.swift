import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension HTTPServer {
    /// From now on, the first of `signals` (SIGTERM and SIGINT by default) shuts the server down
    /// gracefully; the signals' default action (ending the process) is disabled. Call it before
    /// announcing the server, so that no signal can arrive in between and kill the process.
    ///
    /// ```swift
    /// server.shutdownOnSignals()
    /// try await server.start()
    /// print("listening on http://127.0.0.1:\(server.port)")
    /// await server.waitUntilStopped()
    /// exit(0)
    /// ```
    public func shutdownOnSignals(_ signals: [Int32] = [SIGTERM, SIGINT]) {
        let queue = DispatchQueue(label: "HTTPServer.signals")
        let once = OnceFlag()
        let sources = signals.map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                guard once.claim() else { return }
                Task { await self.shutdown() }
            }
            source.resume()
            return source
        }
        signalSources.withLock { $0.append(contentsOf: sources.map(SignalSource.init)) }
    }

    /// Shuts down gracefully on SIGTERM or SIGINT (see `shutdownOnSignals`), and returns once stopped.
    public func runUntilSignal(_ signals: [Int32] = [SIGTERM, SIGINT]) async {
        shutdownOnSignals(signals)
        await waitUntilStopped()
    }
}

/// Keeps a signal source alive as long as the server.
struct SignalSource: @unchecked Sendable {
    // @unchecked: Dispatch sources are thread-safe; the protocol existential is not marked Sendable.
    let source: any DispatchSourceSignal
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
