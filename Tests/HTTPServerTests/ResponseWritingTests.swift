import Foundation
import Synchronization
import TestSupport
import Testing

@testable import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif

/// How complete responses reach the socket: heads encoded into the connection's buffer, small
/// bodies copied behind them, large ones queued as they are, pipelined responses sharing the
/// buffer; byte for byte, in order, over plain HTTP and TLS, with the queue bounded.
@Suite struct ResponseWritingTests {
    /// A body of `size` letters that differs from every other size's. It repeats every 26 bytes,
    /// so it is made from one period: a byte at a time, the 2 MiB bodies took seconds each in the
    /// sanitized debug build, long enough that the client's read timed out waiting for the handler.
    static func body(_ size: Int) -> [UInt8] {
        let period = (0..<26).map { UInt8(ascii: "a") + UInt8((($0 &* 7) &+ size) % 26) }
        var body: [UInt8] = []
        body.reserveCapacity(size)
        while body.count < size {
            body.append(contentsOf: period.prefix(size - body.count))
        }
        return body
    }

    /// How many requests a handler answered.
    final class Counter: Sendable {
        private let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
        func increment() { count.add(1, ordering: .relaxed) }
    }

    static func makeRouter(answered: Counter? = nil) -> Router {
        let router = Router()
        router.get("/bytes/{n}") { request in
            let size = Int(request.parameters["n"] ?? "") ?? 0
            return Response(
                headers: ["Content-Type": "application/octet-stream", "X-Size": "\(size)"], body: Self.body(size))
        }
        router.get("/later/{n}") { request in
            await Task.yield()
            let size = Int(request.parameters["n"] ?? "") ?? 0
            return Response(
                headers: ["Content-Type": "application/octet-stream", "X-Size": "\(size)"], body: Self.body(size))
        }
        // Given a body, which a 204 or a 304 must not send.
        router.get("/none") { _ in Response(status: .noContent, body: Array("never sent".utf8)) }
        router.get("/same") { _ in
            Response(status: .notModified, headers: ["ETag": "\"v1\""], body: Array("never sent".utf8))
        }
        router.get("/counted/{n}") { request in
            answered?.increment()
            return Response(body: Self.body(Int(request.parameters["n"] ?? "") ?? 0))
        }
        return router
    }

    /// One request of a pipelined burst and the exact response it must get, with `Date: *`
    /// standing for the date.
    struct Exchange {
        var request: String
        var response: [UInt8]
    }

    static func sized(_ size: Int, path: String = "bytes", head: Bool = false, close: Bool = false) -> Exchange {
        let request =
            "\(head ? "HEAD" : "GET") /\(path)/\(size) HTTP/1.1\r\nHost: t\r\n\(close ? "Connection: close\r\n" : "")\r\n"
        let response =
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nX-Size: \(size)\r\n"
            + "Content-Length: \(size)\r\nDate: *\r\n\(close ? "Connection: close\r\n" : "")\r\n"
        return Exchange(request: request, response: Array(response.utf8) + (head ? [] : body(size)))
    }

    static let noContent = Exchange(
        request: get("/none"), response: Array("HTTP/1.1 204 No Content\r\nDate: *\r\n\r\n".utf8))
    static let notModified = Exchange(
        request: get("/same"), response: Array("HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nDate: *\r\n\r\n".utf8))

    static func keptAlive10(_ size: Int) -> Exchange {
        Exchange(
            request: "GET /bytes/\(size) HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
            response: Array(
                ("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nX-Size: \(size)\r\n"
                    + "Content-Length: \(size)\r\nDate: *\r\nConnection: keep-alive\r\n\r\n").utf8) + body(size))
    }

    /// Bodies on both sides of every size the queue treats differently (copied behind the head up
    /// to 16 KiB, a buffer filled to 64 KiB, shared beyond), far more than the socket takes at
    /// once, answered at once and from tasks, HEAD, 204, 304, HTTP/1.0 kept alive, and a last
    /// request that closes.
    static let burst: [Exchange] =
        [0, 1, 100, 4096].map { sized($0) }
        + [noContent, sized(16_383), sized(16_384), sized(16_385), notModified]
        + [sized(1000, head: true), sized(65_535), sized(65_536), sized(70_000, path: "later"), sized(5)]
        + [keptAlive10(10), sized(300_000), sized(1 << 20, head: true), sized(1 << 20), sized(7, path: "later")]
        + [noContent, sized(2 << 20), keptAlive10(70_000)] + (0..<20).map { sized($0 * 37) }
        + [sized(3, close: true)]

    /// `bytes` with each `Date` field's value replaced by `*`, after checking it is an IMF-fixdate's length.
    static func withDatesMasked(_ bytes: [UInt8]) throws -> [UInt8] {
        let marker = Array("\r\nDate: ".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == marker[0], bytes[index...].starts(with: marker) {
                out += marker
                index += marker.count
                let end = index + 29  // "Thu, 03 Dec 2026 18:00:00 GMT"
                try #require(end + 2 <= bytes.count && bytes[end] == 0x0D && bytes[end + 1] == 0x0A)
                #expect(String(decoding: bytes[(end - 4)..<end], as: UTF8.self) == " GMT")
                out.append(UInt8(ascii: "*"))
                index = end
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    /// Sends the whole burst at once, waits before reading so that the server's writes block,
    /// then checks every byte up to the close.
    static func expectBurstAnswered(by client: RawClient) async throws {
        let received = try await offload {
            try client.send(Self.burst.map(\.request).joined())
            Thread.sleep(forTimeInterval: 0.3)
            return try client.readUntilClosed()
        }
        let expected = Self.burst.flatMap(\.response)
        let masked = try withDatesMasked(received)
        #expect(masked.count == expected.count)
        let isIdentical = masked == expected
        #expect(isIdentical, "the bytes received differ from those expected")
        if !isIdentical,
            let first = (0..<min(masked.count, expected.count)).first(where: { masked[$0] != expected[$0] })
        {
            Issue.record(
                "first difference at byte \(first): \(String(decoding: masked[first...].prefix(120), as: UTF8.self))")
        }
    }

    @Test func aPipelinedBurstOfMixedResponsesIsAnsweredByteForByteInOrder() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port, timeout: HTTPClient.defaultTimeout, receiveBufferSize: 16 * 1024)
            try await Self.expectBurstAnswered(by: client)
        }
    }

    @Test func theSameBurstOverTLS() async throws {
        let (authority, identity) = try await TLSTests.makeIdentity("burst")
        defer { authority.remove() }
        try await withRunningServer(Self.makeRouter(), tls: identity) { server in
            let client = try RawClient(
                port: server.port, timeout: HTTPClient.defaultTimeout, receiveBufferSize: 16 * 1024,
                tls: TLSClientOptions(trusting: authority.certificate))
            try await Self.expectBurstAnswered(by: client)
        }
    }

    /// A client that pipelines requests and reads nothing makes the server answer only as many
    /// as its queue's bound (64 KiB, plus what the sockets hold) lets it, not all of them; once
    /// the client reads, the rest are answered, in order.
    @Test func aPipeliningClientThatDoesNotReadCannotMakeTheQueueGrowWithoutBound() async throws {
        let answered = Counter()
        try await withRunningServer(Self.makeRouter(answered: answered), sendBufferSize: 4096) { server in
            let client = try RawClient(port: server.port, timeout: .seconds(30), receiveBufferSize: 4096)
            let count = 100
            try await client.write((0..<count).map { _ in get("/counted/10000") }.joined())
            try await waitUntil { answered.value > 0 }
            // Settled: nothing more is answered while the client reads nothing.
            var settled = answered.value
            for _ in 0..<10 {
                try await Task.sleep(for: .milliseconds(50))
                let now = answered.value
                if now == settled { break }
                settled = now
            }
            // 64 KiB of 10,000-byte answers, one more past the bound, and what the two small
            // socket buffers hold.
            #expect(settled < 20, "\(settled) of \(count) answered while the client read nothing")
            let bodies = try await offload { try (0..<count).map { _ in try client.readResponse().body } }
            #expect(bodies.allSatisfy { $0 == Self.body(10_000) })
            #expect(answered.value == count)
        }
    }
}

/// The queue alone, over a socket pair.
@Suite struct OutboundQueueTests {
    /// A connected pair of Unix stream sockets, the first non-blocking as the server's are.
    final class SocketPair {
        let writer: Int32
        let reader: Int32

        init() throws {
            var fds: [Int32] = [0, 0]
            try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            writer = fds[0]
            reader = fds[1]
            _ = fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) | O_NONBLOCK)
        }

        deinit {
            Glibc.close(writer)
            Glibc.close(reader)
        }

        /// Reads exactly `count` bytes.
        func read(_ count: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            var got = 0
            while got < count {
                let result = bytes.withUnsafeMutableBytes { recv(reader, $0.baseAddress! + got, count - got, 0) }
                if result <= 0 { break }
                got += result
            }
            return Array(bytes[..<got])
        }

        /// Reads what the socket holds now, without waiting.
        func readAvailable() -> [UInt8] {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let result = chunk.withUnsafeMutableBytes {
                    recv(reader, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                }
                if result <= 0 { return bytes }
                bytes += chunk[..<result]
            }
        }
    }

    @Test func aHeadTheLargeBodyAfterItAndWhatFollowsGoInOneCall() throws {
        let pair = try SocketPair()
        var queue = OutboundQueue()
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 20000\r\n\r\n".utf8)
        let body = ResponseWritingTests.body(20_000)
        queue.encode(reserving: head.count) { $0.append(contentsOf: head) }
        queue.append(sharing: body)
        queue.append(copying: Array("next".utf8))
        #expect(queue.count == head.count + body.count + 4)
        let progress = try queue.flush(to: pair.writer)
        #expect(progress.calls == 1)
        #expect(progress.written == head.count + body.count + 4)
        #expect(queue.isEmpty && queue.count == 0)
        let isIdentical = pair.read(progress.written) == head + body + Array("next".utf8)
        #expect(isIdentical, "the bytes received differ from those queued")
    }

    @Test func writtenBytesLeaveTheirBufferForTheNextResponseUntilASweepFindsItUnused() throws {
        let pair = try SocketPair()
        var queue = OutboundQueue()
        queue.append(copying: [UInt8](repeating: 0x41, count: 3000))
        #expect(queue.spareCapacity == 0)
        _ = try queue.flush(to: pair.writer)
        let kept = queue.spareCapacity
        #expect(kept >= 3000)
        // The next response is written into the same buffer.
        queue.append(copying: [UInt8](repeating: 0x42, count: 2000))
        #expect(queue.spareCapacity == 0)
        _ = try queue.flush(to: pair.writer)
        #expect(queue.spareCapacity == kept)
        #expect(pair.read(5000) == [UInt8](repeating: 0x41, count: 3000) + [UInt8](repeating: 0x42, count: 2000))
        // Used since the last sweep: kept; unused for a whole sweep interval: freed.
        queue.releaseIfIdle()
        #expect(queue.spareCapacity == kept)
        queue.releaseIfIdle()
        #expect(queue.spareCapacity == 0)
    }

    @Test func aWriteThatBlocksResumesWhereItStoppedAcrossEntries() throws {
        let pair = try SocketPair()
        var queue = OutboundQueue()
        var expected: [UInt8] = []
        for index in 0..<40 {
            let bytes = ResponseWritingTests.body(index * 997 % 70_000 + 1)
            if index % 3 == 0 {
                queue.append(sharing: bytes, payload: bytes.count)
            } else {
                queue.append(copying: bytes, payload: bytes.count)
            }
            expected += bytes
        }
        var received: [UInt8] = []
        var payload = 0
        while !queue.isEmpty {
            let progress = try queue.flush(to: pair.writer)
            payload += progress.payload
            if !queue.isEmpty { received += pair.readAvailable() }
        }
        received += pair.read(expected.count - received.count)
        #expect(payload == expected.count)
        #expect(received.count == expected.count)
        let isIdentical = received == expected
        #expect(isIdentical, "the bytes received differ from those queued")
    }
}
