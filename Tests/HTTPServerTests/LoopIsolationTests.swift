import Dispatch
import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

/// Event loops do I/O only: a handler that keeps its thread busy delays no other
/// connection, since handlers run on the server's worker threads; `/healthz` had waited
/// 646-1,161 ms behind one heavy request on its loop.
@Suite struct LoopIsolationTests {
    /// Blocks the thread of whatever calls `hold()` until `release()`; says when one is held.
    final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private let threads = Mutex<[String]>([])
        let held: AsyncStream<Void>
        private let heldContinuation: AsyncStream<Void>.Continuation

        init() {
            (held, heldContinuation) = AsyncStream.makeStream(of: Void.self)
        }

        /// Blocks the calling thread, as a handler busy with CPU work would.
        func hold() {
            threads.withLock { $0.append(Self.currentThreadName()) }
            heldContinuation.yield()
            semaphore.wait()
        }

        func release() { semaphore.signal() }

        var threadNames: [String] { threads.withLock { $0 } }

        /// The calling thread's name as the kernel has it (`http-loop-0`, `http-worker-1`).
        static func currentThreadName() -> String {
            let data = FileHandle(forReadingAtPath: "/proc/thread-self/comm")?.readDataToEndOfFile() ?? Data()
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
        }
    }

    @Test func aHandlerThatKeepsItsThreadBusyDelaysNoOtherConnectionOfItsLoop() async throws {
        let gate = Gate()
        let loopThreads = Mutex<[String]>([])
        let router = Router()
        router.get("/healthz") { _ in
            loopThreads.withLock { $0.append(Gate.currentThreadName()) }  // synchronous: on the loop
            return Response(body: Array("ok".utf8))
        }
        router.get("/heavy") { _ in
            await Task.yield()
            gate.hold()
            return Response(body: Array("done".utf8))
        }
        // One loop: every connection shares it, as the connections of one loop do in production.
        try await withRunningServer(router, eventLoopCount: 1) { server in
            let heavy = try RawClient(port: server.port, timeout: .seconds(60))
            try heavy.send(get("/heavy"))
            _ = try await first(of: gate.held, timeout: .seconds(30))
            defer { gate.release() }
            let probe = try RawClient(port: server.port, timeout: .seconds(30))
            let health = try await probe.exchange(get("/healthz"))
            #expect(health.status == 200)
            #expect(health.text == "ok")
            gate.release()
            let done = try await heavy.response()
            #expect(done.text == "done")
        }
        // On one of the server's workers.
        #expect(gate.threadNames.count == 1)
        #expect(gate.threadNames.allSatisfy { $0.hasPrefix("http-worker-") }, "\(gate.threadNames)")
        #expect(loopThreads.withLock { $0 } == ["http-loop-0"])
    }

    @Test func streamsAlsoRunOnTheWorkers() async throws {
        let names = Mutex<[String]>([])
        let router = Router()
        router.get("/stream") { _ in
            Response(headers: ["Content-Type": "text/event-stream"]) { writer in
                names.withLock { $0.append(Gate.currentThreadName()) }
                try await writer.write("data: done\n\n")
            }
        }
        try await withRunningServer(router, eventLoopCount: 1) { server in
            let stream = try SSEClient(port: server.port, path: "/stream")
            defer { stream.close() }
            #expect(await stream.frames.events(1).map(\.data) == ["done"])
        }
        let seen = names.withLock { $0 }
        #expect(seen.count == 1)
        #expect(seen.allSatisfy { $0.hasPrefix("http-worker-") }, "\(seen)")
    }
}
