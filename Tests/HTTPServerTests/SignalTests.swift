import Foundation
import HTTPServer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Signals sent to this very process. Each test uses a signal of its own (nothing else here uses
/// SIGUSR1, SIGUSR2 or SIGURG), since tests run in parallel; `serve`'s SIGTERM and SIGINT, and its exit
/// status, are tested on the built binary in NavigationValuesCLITests.
@Suite struct SignalTests {
    @Test func aSignalSentAsSoonAsTheCatcherExistsIsCaught() async throws {
        let signals = SignalCatcher([SIGUSR2])
        kill(getpid(), SIGUSR2)
        let (caught, caughtSink) = AsyncStream.makeStream(of: Int32.self)
        let waiter = Task { if let signal = try? await signals.next() { caughtSink.yield(signal) } }
        defer { waiter.cancel() }
        #expect(try await first(of: caught) == SIGUSR2)
    }

    /// Each signal reaches the process's catcher whichever of its many threads the kernel picks.
    @Test func everySignalOfARunIsCaughtInAManyThreadedProcess() async throws {
        for round in 0..<20 {
            let signals = SignalCatcher([SIGURG])
            let (caught, caughtSink) = AsyncStream.makeStream(of: Int32.self)
            let waiter = Task { if let signal = try? await signals.next() { caughtSink.yield(signal) } }
            // From another thread than the waiting one, as a signal from outside would arrive.
            try await offload { _ = kill(getpid(), SIGURG) }
            let first = try await first(of: caught)
            waiter.cancel()
            #expect(first == SIGURG, "round \(round)")
        }
    }

    @Test func aSignalShutsTheServerDownGracefully() async throws {
        let router = Router()
        router.get("/healthz") { _ in try Response(json: ["status": "ok"]) }
        let server = HTTPServer(
            configuration: .init(host: "127.0.0.1", port: 0, eventLoopCount: 2, shutdownGracePeriod: .seconds(5)),
            responder: router.buildResponder()
        )
        server.shutdownOnSignals([SIGUSR1])
        try await server.start()
        let client = try RawClient(port: server.port)
        #expect(try await client.exchange(get("/healthz")).text == #"{"status":"ok"}"#)
        let (stopped, stoppedSink) = AsyncStream.makeStream(of: Void.self)
        Task {
            await server.waitUntilStopped()
            stoppedSink.yield()
        }
        kill(getpid(), SIGUSR1)
        // The graceful shutdown runs on the cooperative pool, which a full parallel run on a loaded
        // machine can starve for more than 30 s (seen in a traced run at load 10: hundreds of
        // servers starting meanwhile).
        try await first(of: stopped, timeout: .seconds(300))
        #expect(server.port == 0)
        #expect(try await client.untilClosed().isEmpty)
    }
}
