import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

/// Streaming responses (server-sent events): writes from other tasks, back-pressure, and
/// prompt notice when the client goes away.
@Suite struct StreamingTests {
    @Test func chunksWrittenFromAnotherTaskReachTheClientAndTheConnectionStaysUsable() async throws {
        let (writers, writerSink) = AsyncStream.makeStream(of: ResponseWriter.self)
        let (done, doneSink) = AsyncStream.makeStream(of: Void.self)
        let router = Router()
        router.get("/events") { _ in
            Response(headers: ["Content-Type": "text/event-stream"]) { writer in
                writerSink.yield(writer)
                for await _ in done { break }
            }
        }
        router.get("/healthz") { _ in Response(body: Array("ok".utf8)) }
        try await withRunningServer(router) { server in
            let client = try RawClient(port: server.port)
            try await client.write(get("/events"))
            let head = try await offload { try client.readHead() }
            #expect(head.status == 200)
            #expect(head.headers.contains { $0.name == "Transfer-Encoding" && $0.value == "chunked" })
            let writer = try await first(of: writers)
            try await writer.write("data: one\n\n")
            #expect(try await offload { try client.readChunk() } == Array("data: one\n\n".utf8))
            try await writer.write("data: two\n\n")
            #expect(try await offload { try client.readChunk() } == Array("data: two\n\n".utf8))
            doneSink.yield()
            #expect(try await offload { try client.readChunk() } == nil)
            await writer.waitUntilClosed()
            #expect(writer.isClosed)
            await #expect(throws: ResponseWriter.ClosedError.self) { try await writer.write("late") }
            #expect(try await client.exchange(get("/healthz")).text == "ok")
        }
    }

    @Test func aStreamLargerThanTheHighWaterMarkFlowsAsTheClientReads() async throws {
        let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)
        let router = Router()
        router.get("/big") { _ in
            Response { writer in
                for _ in 0..<64 { try await writer.write(chunk) }
            }
        }
        try await withRunningServer(router, streamHighWaterMark: 16 * 1024) { server in
            let client = try RawClient(port: server.port)
            let response = try await client.exchange(get("/big"))
            #expect(response.body.count == 64 * 64 * 1024)
        }
    }

    @Test func aClientVanishingMidStreamIsNoticedPromptly() async throws {
        let (events, eventSink) = AsyncStream.makeStream(of: String.self)
        let router = Router()
        router.get("/events") { _ in
            Response(headers: ["Content-Type": "text/event-stream"]) { writer in
                writer.onClose { eventSink.yield("onClose") }
                try await writer.write("data: hello\n\n")
                await writer.waitUntilClosed()
                eventSink.yield(Task.isCancelled ? "closed, cancelled" : "closed")
                do {
                    try await writer.write("data: after\n\n")
                } catch is ResponseWriter.ClosedError {
                    eventSink.yield("write threw")
                }
            }
        }
        router.get("/healthz") { _ in Response(body: Array("ok".utf8)) }
        try await withRunningServer(router) { server in
            let client = try RawClient(port: server.port)
            try await client.write(get("/events"))
            _ = try await offload { try client.readHead() }
            #expect(try await offload { try client.readChunk() } == Array("data: hello\n\n".utf8))
            client.abort()
            let seen = try await collect(3, of: events)
            #expect(Set(seen) == ["onClose", "closed, cancelled", "write threw"])
            let healthy = try RawClient(port: server.port)
            #expect(try await healthy.exchange(get("/healthz")).text == "ok")
        }
    }
}

@Suite struct ResponseWriterTests {
    @Test func writesSuspendAboveTheHighWaterMarkUntilHalfIsFlushed() async throws {
        let sent = Mutex<[[UInt8]]>([])
        let writer = ResponseWriterProbe.make(highWaterMark: 100) { bytes in sent.withLock { $0.append(bytes) } }
        try await writer.write([UInt8](repeating: 1, count: 60))
        #expect(ResponseWriterProbe.suspendedWrites(writer) == 0)
        let blocked = Task { try await writer.write([UInt8](repeating: 2, count: 60)) }  // 120 buffered > 100
        try await waitUntil { ResponseWriterProbe.suspendedWrites(writer) == 1 }
        ResponseWriterProbe.flushed(writer, 60)  // 60 left: still above half the mark
        #expect(ResponseWriterProbe.suspendedWrites(writer) == 1)
        ResponseWriterProbe.flushed(writer, 10)  // 50 left: the writer may go on
        #expect(ResponseWriterProbe.suspendedWrites(writer) == 0)
        try await blocked.value
        #expect(sent.withLock { $0.map(\.count) } == [60, 60])
    }

    @Test func closingFailsWaitingAndLaterWritesAndRunsHandlers() async throws {
        let writer = ResponseWriterProbe.make(highWaterMark: 10) { _ in }
        let (closed, closedSink) = AsyncStream.makeStream(of: Void.self)
        writer.onClose { closedSink.yield() }
        let blocked = Task { try await writer.write([UInt8](repeating: 0, count: 20)) }
        try await waitUntil { ResponseWriterProbe.suspendedWrites(writer) == 1 }
        ResponseWriterProbe.close(writer)
        try await first(of: closed)
        await #expect(throws: ResponseWriter.ClosedError.self) { try await blocked.value }
        await #expect(throws: ResponseWriter.ClosedError.self) { try await writer.write([1]) }
        await writer.waitUntilClosed()
    }
}

extension StreamingTests {
    @Test func framesServerSentEventsAndComments() async throws {
        let router = Router()
        router.get("/events") { _ in
            Response(headers: ["Content-Type": "text/event-stream"]) { writer in
                try await writer.writeComment("keep-alive")
                try await writer.writeEvent(id: "4", event: "screen\npushed", data: "{\"a\":1}\nsecond line")
                try await writer.writeEvent(data: "")
            }
        }
        try await withRunningServer(router) { server in
            let client = try RawClient(port: server.port)
            let response = try await client.exchange(get("/events"))
            #expect(response.header("Content-Type") == "text/event-stream")
            #expect(
                response.text
                    == ": keep-alive\n\nid: 4\nevent: screenpushed\ndata: {\"a\":1}\ndata: second line\n\ndata: \n\n"
            )
        }
    }
}

extension StreamingTests {
    @Test func aClientThatStopsReadingIsCutOffAfterTheIdleTimeout() async throws {
        let (outcome, outcomeSink) = AsyncStream.makeStream(of: Int.self)
        let chunk = [UInt8](repeating: 0x62, count: 64 * 1024)
        let router = Router()
        router.get("/flood") { _ in
            Response { writer in
                var written = 0
                do {
                    while true {
                        try await writer.write(chunk)
                        written += chunk.count
                    }
                } catch {
                    outcomeSink.yield(written)
                }
            }
        }
        try await withRunningServer(router, idleTimeout: .milliseconds(200)) { server in
            let client = try RawClient(port: server.port)
            try await client.write(get("/flood"))
            // The client reads nothing: the socket buffers fill, writes stall, the server gives up.
            let written = try await first(of: outcome)
            #expect(written > 0)
            // The handler hears of the close (its writer fails) before the loop finishes closing
            // and counts the connection gone: wait for that.
            #expect(try await eventually { server.openConnectionCount == 0 })
        }
    }
}
