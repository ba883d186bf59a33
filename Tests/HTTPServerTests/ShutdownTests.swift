import Foundation
import HTTPServer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Graceful shutdown: stop accepting, finish requests under way, end streams.
@Suite struct ShutdownTests {
    private func makeServer(_ router: Router) -> HTTPServer {
        HTTPServer(
            configuration: .init(host: "127.0.0.1", port: 0, eventLoopCount: 2, shutdownGracePeriod: .seconds(5)),
            responder: router.buildResponder()
        )
    }

    /// Waits (bounded) until connecting fails: the listening socket is closed.
    private func waitUntilRefused(port: Int) async throws {
        try await waitUntil("connecting is refused") { (try? RawClient(port: port)) == nil }
    }

    @Test func aRequestInFlightCompletesDuringShutdown() async throws {
        let (started, startedSink) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseSink) = AsyncStream.makeStream(of: Void.self)
        let router = Router()
        router.post("/work") { request in
            startedSink.yield()
            for await _ in release { break }
            return Response(body: request.body)
        }
        let server = makeServer(router)
        try await server.start()
        let port = server.port
        let client = try RawClient(port: port)
        try await client.write("POST /work HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\ndone")
        try await first(of: started)
        let idle = try RawClient(port: port)
        let shutdown = Task { await server.shutdown() }
        try await waitUntilRefused(port: port)
        releaseSink.yield()
        let response = try await client.response()
        #expect(response.status == 200)
        #expect(response.text == "done")
        #expect(try await client.untilClosed().isEmpty)
        #expect(try await idle.untilClosed().isEmpty)
        await shutdown.value
        await server.waitUntilStopped()
    }

    @Test func shutdownEndsStreamsWithTheirLastChunk() async throws {
        let (opened, openedSink) = AsyncStream.makeStream(of: Void.self)
        let router = Router()
        router.get("/events") { _ in
            Response(headers: ["Content-Type": "text/event-stream"]) { writer in
                try await writer.write(": keep-alive\n\n")
                openedSink.yield()
                await writer.waitUntilClosed()
            }
        }
        let server = makeServer(router)
        try await server.start()
        let client = try RawClient(port: server.port)
        try await client.write(get("/events"))
        _ = try await offload { try client.readHead() }
        try await first(of: opened)
        await server.shutdown()
        let body = try await offload { try client.readChunkedBody() }
        #expect(body == Array(": keep-alive\n\n".utf8))
        #expect(try await client.untilClosed().isEmpty)
    }

    @Test func shutdownOfAnIdleServerIsQuickAndRepeatable() async throws {
        let server = makeServer(Router())
        try await server.start()
        #expect(server.port > 0)
        await server.shutdown()
        await server.shutdown()
        #expect(server.port == 0)
    }

    @Test func aSecondServerCannotBindATakenPort() async throws {
        let first = makeServer(Router())
        try await first.start()
        let second = HTTPServer(
            configuration: .init(host: "127.0.0.1", port: first.port), responder: Router().buildResponder())
        do {
            try await second.start()
            Issue.record("expected EADDRINUSE")
            await second.shutdown()
        } catch let error as SocketError {
            #expect(error.call == "bind")
            #expect(error.errno == EADDRINUSE)
        }
        await first.shutdown()
    }
}

extension ShutdownTests {
    @Test func waitingForAServerThatNeverStartedEndsWithItsShutdown() async throws {
        let server = makeServer(Router())
        let (stopped, stoppedSink) = AsyncStream.makeStream(of: Void.self)
        let waiter = Task {
            await server.waitUntilStopped()
            stoppedSink.yield()
        }
        await server.shutdown()
        try await first(of: stopped)
        await waiter.value
    }
}
