import Foundation
import HTTPServer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Requests over real sockets on 127.0.0.1.
@Suite struct ServerTests {
    static func makeRouter() -> Router {
        let router = Router()
        router.get("/healthz") { _ in try Response(json: ["status": "ok"]) }
        router.post("/echo") { request in
            Response(headers: ["Content-Type": "application/octet-stream"], body: request.body)
        }
        router.get("/items/{id}") { request in
            try Response(json: [
                "id": request.parameters["id"] ?? "",
                "path": request.path,
                "q": request.query["q"] ?? "",
            ])
        }
        router.get("/slow/{n}") { request in
            // Simulated work: the first of a pipelined pair finishes after the second would have.
            try await Task.sleep(for: .milliseconds(50))
            return Response(body: Array("slow \(request.parameters["n"] ?? "")".utf8))
        }
        router.get("/fast/{n}") { request in Response(body: Array("fast \(request.parameters["n"] ?? "")".utf8)) }
        return router
    }

    @Test func reusesAKeptAliveConnection() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            for _ in 0..<3 {
                let response = try await client.exchange(get("/healthz"))
                #expect(response.status == 200)
                #expect(response.text == #"{"status":"ok"}"#)
                #expect(response.header("Content-Type") == "application/json; charset=utf-8")
                #expect(response.header("Date") != nil)
                #expect(response.header("Connection") == nil)
            }
        }
    }

    @Test func answersPipelinedRequestsInOrder() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let texts = try await offload {
                try client.send(get("/slow/1") + get("/fast/2") + get("/slow/3") + get("/fast/4"))
                return try (0..<4).map { _ in try client.readResponse().text }
            }
            #expect(texts == ["slow 1", "fast 2", "slow 3", "fast 4"])
        }
    }

    @Test func echoesContentLengthAndChunkedBodies() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let plain = try await client.exchange("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello")
            #expect(plain.text == "hello")
            let chunked = try await client.exchange(
                "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4;x=y\r\ndefg\r\n0\r\n\r\n"
            )
            #expect(chunked.text == "abcdefg")
            #expect(chunked.header("Content-Length") == "7")
        }
    }

    @Test func decodesPathParametersAndQuery() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let response = try await client.exchange(get("/items/a%20b%2Fc?q=x+y%3D1"))
            let json = try response.jsonObject()
            #expect(json["id"] as? String == "a b/c")
            #expect(json["path"] as? String == "/items/a b/c")
            #expect(json["q"] as? String == "x y=1")
        }
    }

    @Test func answers404And405WithAllowAsProblemDetails() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let notFound = try await client.exchange(get("/nope"))
            #expect(notFound.status == 404)
            #expect(notFound.header("Content-Type") == "application/problem+json")
            let problem = try notFound.jsonObject()
            #expect(problem["status"] as? Int == 404)
            #expect(problem["title"] as? String == "Not Found")
            #expect(problem["type"] as? String == "about:blank")
            let notAllowed = try await client.exchange("DELETE /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(notAllowed.status == 405)
            #expect(notAllowed.header("Allow") == "GET, HEAD")
            #expect(try notAllowed.jsonObject()["status"] as? Int == 405)
            // The connection stays usable after a routing error.
            #expect(try await client.exchange(get("/healthz")).status == 200)
        }
    }

    @Test func answersHeadWithoutABody() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let head = try await client.exchange("HEAD /healthz HTTP/1.1\r\nHost: t\r\n\r\n", isHead: true)
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "15")
            #expect(try await client.exchange(get("/healthz")).text == #"{"status":"ok"}"#)
        }
    }

    @Test func sendsContinueBeforeReadingAnExpectedBody() async throws {
        // The helper's timeouts are far past the test's own pace: on a loaded machine its steps
        // can be 30 s apart, and the connection must not be closed as idle between the 100 and
        // the body.
        try await withRunningServer(Self.makeRouter()) {
            server in
            let client = try RawClient(port: server.port)
            try await client.write(
                "POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
            let interim = try await client.response()
            #expect(interim.status == 100)
            let response = try await client.exchange("ping")
            #expect(response.status == 200)
            #expect(response.text == "ping")
        }
    }

    @Test func closesAfterAnHTTP10Request() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let response = try await client.exchange("GET /healthz HTTP/1.0\r\n\r\n")
            #expect(response.status == 200)
            #expect(response.header("Connection") == "close")
            #expect(try await client.untilClosed().isEmpty)
        }
    }

    @Test func closesWhenTheClientAsksTo() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let response = try await client.exchange(get("/healthz", "Connection: close\r\n"))
            #expect(response.header("Connection") == "close")
            #expect(try await client.untilClosed().isEmpty)
        }
    }

    @Test func servesURLSession() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/items/x%2Fy?q=1"))
            let (data, response) = try await URLSession.shared.data(from: url)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
            #expect(json == ["id": "x/y", "path": "/items/x/y", "q": "1"])
        }
    }

    @Test func handlerErrorsGoThroughTheErrorResponder() async throws {
        struct Teapot: Error {}
        let router = Router()
        router.get("/sync") { _ in throw Teapot() }
        router.get("/async") { _ in
            await Task.yield()
            throw Teapot()
        }
        router.get("/default") { _ in throw HTTPRequestError(.badRequest, detail: "nope") }
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0, eventLoopCount: 1)
        configuration.shutdownGracePeriod = .seconds(2)
        let server = HTTPServer(configuration: configuration, responder: router.buildResponder()) { error, request in
            if error is Teapot { return Response(status: HTTPStatus(code: 418, reasonPhrase: "I'm a teapot")) }
            return HTTPServer.problemResponse(for: error, request: request)
        }
        try await server.start()
        defer { Task { await server.shutdown() } }
        let client = try RawClient(port: server.port)
        #expect(try await client.exchange(get("/sync")).status == 418)
        #expect(try await client.exchange(get("/async")).status == 418)
        let problem = try await client.exchange(get("/default"))
        #expect(problem.status == 400)
        #expect(try problem.jsonObject()["detail"] as? String == "nope")
        await server.shutdown()
    }
}

extension ServerTests {
    @Test func answersAPipelinedCloseAndDropsWhatFollows() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let (first, rest) = try await offload {
                try client.send(get("/fast/1", "Connection: close\r\n") + get("/fast/2"))
                return (try client.readResponse(), try client.readUntilClosed())
            }
            #expect(first.text == "fast 1")
            #expect(first.header("Connection") == "close")
            #expect(rest.isEmpty)
        }
    }

    @Test func seesTheEndOfAClientThatHalfClosesAfterItsRequest() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let (response, rest) = try await offload {
                try client.send(get("/fast/1"))
                shutdown(client.fd, Int32(SHUT_WR))
                return (try client.readResponse(), try client.readUntilClosed())
            }
            #expect(response.text == "fast 1")
            #expect(rest.isEmpty)
        }
    }
}

extension ServerTests {
    @Test func aHandlerCannotSplitAResponseWithLineBreaksInAHeader() async throws {
        let router = Router()
        router.get("/inject") { _ in
            Response(headers: ["X-Note": "a\r\nX-Injected: 1", "Content-Length": "999"], body: Array("ok".utf8))
        }
        try await withRunningServer(router) { server in
            let client = try RawClient(port: server.port)
            let response = try await client.exchange(get("/inject"))
            #expect(response.header("X-Note") == "a  X-Injected: 1")
            #expect(response.header("X-Injected") == nil)
            #expect(response.header("Content-Length") == "2")
            #expect(response.text == "ok")
        }
    }
}

extension ServerTests {
    @Test func tellsHandlersTheClientAddressAndCountsOpenConnections() async throws {
        let router = Router()
        router.get("/whoami") { request in Response(body: Array((request.remoteAddress ?? "unknown").utf8)) }
        // Idle connections are not closed while the test counts them, however slowly a loaded
        // machine runs it (a 30 s idle timeout closed the first one once: 2, not 3).
        try await withRunningServer(router) { server in
            var clients: [RawClient] = []
            for _ in 0..<3 {
                let client = try RawClient(port: server.port)
                let address = try await client.exchange(get("/whoami")).text
                #expect(address.hasPrefix("127.0.0.1:"))
                #expect(Int(address.dropFirst("127.0.0.1:".count)) != nil)
                clients.append(client)
            }
            // Three answered connections are open; `waitUntil` rather than a bare read, so that a
            // loaded machine's scheduling cannot make the count lag behind the answers.
            try await waitUntil("3 open connections, not \(server.openConnectionCount)") {
                server.openConnectionCount == 3
            }
            for client in clients { client.abort() }
            try await waitUntil { server.openConnectionCount == 0 }
        }
    }
}

extension ServerTests {
    @Test func refusesAnUnknownRouteBeforeAnExpectedBodyIsSent() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let response = try await client.exchange(
                "POST /nowhere HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"
            )
            #expect(response.status == 404)
            #expect(response.header("Connection") == "close")
            #expect(try await client.untilClosed().isEmpty)
        }
    }
}

extension ServerTests {
    @Test func echoesALargeURLSessionUpload() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/echo"))
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            let body = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0) })
            let (data, response) = try await URLSession.shared.upload(for: request, from: body)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data == body)
        }
    }
}

extension ServerTests {
    /// Pipelined requests whose heads and bodies arrive cut across reads, one of them answered in a
    /// task (holding its request while those behind it are parsed) and one refused by its handler:
    /// each is answered in order with its own path parameter, field and body, and the refusal
    /// keeps the connection for the request after it.
    @Test func pipelinedBodiesCutAcrossReadsKeepTheirOwnFieldsAndAnErrorKeepsTheConnection() async throws {
        @Sendable func echo(_ label: String, _ request: Request) -> Response {
            let tag = request.headers["x-tag"] ?? "-"
            let body = String(decoding: request.body, as: UTF8.self)
            return Response(body: Array("\(label) \(request.parameters["n"] ?? "-") \(tag) \(body)".utf8))
        }
        let router = Router()
        router.post("/later/{n}") { request in
            try await Task.sleep(for: .milliseconds(30))
            return echo("later", request)
        }
        router.post("/now/{n}") { request in echo("now", request) }
        router.get("/refuse") { _ in throw HTTPRequestError(.badRequest, detail: "refused") }
        func post(_ path: String, tag: String, body: String) -> String {
            "POST \(path) HTTP/1.1\r\nHost: t\r\nX-Tag: \(tag)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        }
        let first = post("/later/1", tag: "a", body: "first body")
        let second = post("/now/2", tag: "b", body: "second, cut across reads")
        let third = post("/now/3", tag: "c", body: "third")
        let bytes = Array((first + second + get("/refuse") + third).utf8)
        // Inside the first head, inside the second body, inside the last head.
        let cuts = [
            12, first.utf8.count + second.utf8.count - 10,
            first.utf8.count + second.utf8.count + get("/refuse").utf8.count + 9, bytes.count,
        ]
        try await withRunningServer(router) { server in
            let client = try RawClient(port: server.port)
            let answers = try await offload {
                var start = 0
                for cut in cuts {
                    try client.send(Array(bytes[start..<cut]))
                    start = cut
                    usleep(20_000)
                }
                return try (0..<4).map { _ in try client.readResponse() }
            }
            #expect(answers.map(\.status) == [200, 200, 400, 200])
            #expect(answers[0].text == "later 1 a first body")
            #expect(answers[1].text == "now 2 b second, cut across reads")
            #expect(try answers[2].jsonObject()["detail"] as? String == "refused")
            #expect(answers[2].header("Connection") == nil)
            #expect(answers[3].text == "now 3 c third")
        }
    }
}
