import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension HTTPServer {
    /// From now on, the first of `signals` (SIGTERM and SIGINT by default) shuts the server down
    /// gracefully; the signals' default action (ending the process) is disabled. Call it before
    /// announcing the server, so that no signal can arrive in between and kill the process.
    /// A caller that must act on the signal itself (log it, close more than the server) uses a
    /// `SignalCatcher` instead.
    ///
    /// ```swift
    /// server.shutdownOnSignals()
    /// try await server.start()
    /// print("listening on http://127.0.0.1:\(server.port)")
    /// await server.waitUntilStopped()
    /// exit(0)
    /// ```
    public func shutdownOnSignals(_ signals: [Int32] = [SIGTERM, SIGINT]) {
        let catcher = SignalCatcher(signals)
        let waiter = Task {
            guard (try? await catcher.next()) != nil else { return }
            await self.shutdown()
        }
        signalWaiters.withLock { $0.append(waiter) }
    }
}
