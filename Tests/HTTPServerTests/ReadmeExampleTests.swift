import HTTPServer
import TestSupport
import Testing

/// The `HTTPServer` example of docs/Internals.md, as written there (without the signals, which would
/// change this test process's SIGTERM and SIGINT).
private struct ServerHeader: Middleware {
    func respond(to request: Request, next: Next) -> ResponseFuture {
        // request.route is the matched pattern, such as "/v1/sessions/{id}" (nil for a 404)
        next(request).map { result in
            var response = try result.get()
            response.headers["Server"] = "example"
            return response
        }
    }
}

@Suite struct ReadmeExampleTests {
    @Test func theReadmeExampleServesThroughItsMiddleware() async throws {
        let router = Router()
        router.add(middleware: ServerHeader())
        router.get("/healthz") { _ in try Response(json: ["status": "ok"]) }
        router.post("/v1/sessions/{id}/push") { request in
            // request.parameters["id"], request.query["after"], request.headers["if-match"], request.body
            Response(status: .created)
        }
        try await withRunningServer(router) { server in
            let client = try RawClient(port: server.port)
            let health = try await client.exchange(get("/healthz"))
            #expect(health.status == 200)
            #expect(health.text == #"{"status":"ok"}"#)
            #expect(health.header("Server") == "example")
            let pushed = try await client.exchange(
                "POST /v1/sessions/s1/push HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
            #expect(pushed.status == 201)
            #expect(pushed.header("Server") == "example")
        }
    }
}
