import Foundation
import HTTPServer
import TestSupport
import Testing

/// Limits, malformed input, slow and vanishing clients: each is answered or cut off, and the
/// server keeps serving.
@Suite struct HostileClientTests {
    static func makeRouter() -> Router {
        let router = Router()
        router.get("/healthz") { _ in Response(body: Array("ok".utf8)) }
        router.post("/echo") { request in Response(body: request.body) }
        return router
    }

    private func expectProblem(_ response: HTTPResponse, status: Int) throws {
        #expect(response.status == status)
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(response.header("Connection") == "close")
        #expect(try response.jsonObject()["status"] as? Int == status)
    }

    private func expectStillServing(_ server: HTTPServer) async throws {
        let client = try RawClient(port: server.port)
        #expect(try await client.exchange(get("/healthz")).text == "ok")
    }

    @Test func aHeadOver16KiBIs431AndCloses() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let big = String(repeating: "x", count: 8000)
            let response = try await client.exchange(get("/healthz", "A: \(big)\r\nB: \(big)\r\nC: \(big)\r\n"))
            try expectProblem(response, status: 431)
            #expect(try await client.untilClosed().isEmpty)
            try await expectStillServing(server)
        }
    }

    @Test func aRequestLineOver8KiBIs414EvenWithAHeadOver16KiB() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let target = "/" + String(repeating: "a", count: 9000)
            let big = String(repeating: "x", count: 10000)
            let response = try await client.exchange(get(target, "A: \(big)\r\n"))
            try expectProblem(response, status: 414)
            #expect(try await client.untilClosed().isEmpty)
        }
    }

    @Test func aBodyOver1MiBIs413() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let response = try await client.exchange(
                "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1048577\r\n\r\n")
            try expectProblem(response, status: 413)

            // Chunked: the limit applies to the decoded size, while the client is still sending.
            let chunked = try RawClient(port: server.port)
            let chunk = "100000\r\n" + String(repeating: "z", count: 0x100000) + "\r\n"
            let second = try await offload {
                try chunked.send(
                    "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk + "1\r\nz\r\n")
                return try chunked.readResponse()
            }
            try expectProblem(second, status: 413)
            try await expectStillServing(server)
        }
    }

    @Test func aBodyAtTheLimitIsAccepted() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let body = String(repeating: "b", count: 1_048_576)
            let response = try await client.exchange(
                "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            #expect(response.status == 200)
            #expect(response.body.count == 1_048_576)
        }
    }

    @Test(arguments: [
        "\u{16}\u{3}\u{1}\u{2}\u{0}garbage", "GET / HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n",
        "\u{0}\u{0}\u{0}\u{0}",
    ])
    func garbageIs400AndCloses(_ garbage: String) async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let response = try await client.exchange(garbage)
            try expectProblem(response, status: 400)
            #expect(try await client.untilClosed().isEmpty)
            try await expectStillServing(server)
        }
    }

    @Test func slowHeadersAreCutOff() async throws {
        try await withRunningServer(Self.makeRouter(), headerTimeout: .milliseconds(200)) { server in
            let silent = try RawClient(port: server.port)
            let slow = try RawClient(port: server.port)
            try await slow.write("GET /healthz HTTP/1.1\r\nHo")
            // Both are closed by the server without an answer (the client read times out after 5 s).
            #expect(try await silent.untilClosed().isEmpty)
            #expect(try await slow.untilClosed().isEmpty)
            try await expectStillServing(server)
        }
    }

    @Test func idleKeepAliveConnectionsAreClosed() async throws {
        try await withRunningServer(Self.makeRouter(), idleTimeout: .milliseconds(200)) { server in
            let client = try RawClient(port: server.port)
            #expect(try await client.exchange(get("/healthz")).status == 200)
            #expect(try await client.untilClosed().isEmpty)
        }
    }

    @Test func aClientVanishingMidBodyLeavesTheServerHealthy() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            for _ in 0..<20 {
                let client = try RawClient(port: server.port)
                try await client.write(
                    "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\nonly a few bytes")
                client.abort()
            }
            // Every half-received request is dropped and its connection closed.
            try await waitUntil { server.openConnectionCount == 0 }
            try await expectStillServing(server)
        }
    }

    @Test func aThousandConcurrentConnectionsAreServed() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let port = server.port
            let statuses = try await offload {
                let clients = try (0..<1000).map { _ in try RawClient(port: port) }
                for client in clients { try client.send(get("/healthz")) }
                return try clients.map { try $0.readResponse().status }
            }
            #expect(statuses.count == 1000)
            #expect(statuses.allSatisfy { $0 == 200 })
        }
    }
}
