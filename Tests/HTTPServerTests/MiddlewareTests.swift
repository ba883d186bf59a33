import Foundation
import HTTPServer
import TestSupport
import Testing

/// Adds its name to `X-Trail` on the way in (the handler echoes it) and to `X-Out` on the way out.
private struct Trail: Middleware {
    var name: String

    func respond(to request: Request, next: Next) -> ResponseFuture {
        var request = request
        request.headers["X-Trail"] = (request.headers["X-Trail"].map { $0 + "," } ?? "") + name
        return next(request).map { [name] result in
            var response = try result.get()
            response.headers["X-Out"] = (response.headers["X-Out"].map { $0 + "," } ?? "") + name
            return response
        }
    }
}

/// Answers errors itself and says what it saw: the route pattern, and whether it ran in a task.
private struct RouteReporter: Middleware {
    func respond(to request: Request, next: Next) -> ResponseFuture {
        let route = request.route ?? "none"
        let inTask = isInTask()
        return next(request).map { result in
            var response: Response
            switch result {
            case .success(let answer): response = answer
            case .failure(let error): response = HTTPServer.problemResponse(for: error, request: request)
            }
            response.headers["X-Route"] = route
            response.headers["X-Middleware-In-Task"] = inTask ? "yes" : "no"
            return response
        }
    }
}

/// Whether the caller runs inside a Swift task: the server's fast path runs synchronous handlers
/// straight from the event loop, outside any task.
private func isInTask() -> Bool {
    withUnsafeCurrentTask { $0 != nil }
}

@Suite struct MiddlewareTests {
    private static func makeRouter() -> Router {
        let router = Router()
        router.add(middleware: RouteReporter())
        router.get("/items/{id}") { request in
            Response(body: Array("item \(request.parameters["id"] ?? "")".utf8))
        }
        router.post("/items/{id}") { request in
            Response(
                body: Array(
                    "\(request.parameters["id"] ?? "") got \(String(decoding: request.body, as: UTF8.self))".utf8))
        }
        router.get("/sync") { _ in Response(body: Array((isInTask() ? "task" : "no task").utf8)) }
        router.get("/async") { _ in
            await Task.yield()
            return Response(body: Array((isInTask() ? "task" : "no task").utf8))
        }
        return router
    }

    @Test func middlewareRunInTheOrderAddedTheFirstOutermost() async throws {
        let router = Router()
        router.add(middleware: Trail(name: "a"))
        router.get("/trail") { request in Response(body: Array((request.headers["X-Trail"] ?? "").utf8)) }
        router.add(middleware: Trail(name: "b"))
        try await withRunningServer(router) { server in
            let client = try RawClient(port: server.port)
            let response = try await client.exchange(get("/trail"))
            #expect(response.text == "a,b")
            #expect(response.header("X-Out") == "b,a")
        }
    }

    @Test func middlewareSeeTheRoutePatternOfAMatchA404AndA405() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let matched = try await client.exchange(get("/items/7"))
            #expect(matched.status == 200)
            #expect(matched.text == "item 7")
            #expect(matched.header("X-Route") == "/items/{id}")
            let notFound = try await client.exchange(get("/nowhere/7"))
            #expect(notFound.status == 404)
            #expect(notFound.header("X-Route") == "none")
            let notAllowed = try await client.exchange("DELETE /items/7 HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(notAllowed.status == 405)
            #expect(notAllowed.header("Allow") == "GET, HEAD, POST")
            #expect(notAllowed.header("X-Route") == "/items/{id}")
        }
    }

    @Test func aSynchronousHandlerIsAnsweredWithoutATaskThroughSynchronousMiddleware() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            // A fresh connection each: after a task's response, the next request on the same
            // connection may be read from inside that task.
            let sync = try await RawClient(port: server.port).exchange(get("/sync"))
            #expect(sync.text == "no task")
            #expect(sync.header("X-Middleware-In-Task") == "no")
            let async = try await RawClient(port: server.port).exchange(get("/async"))
            #expect(async.text == "task")
            #expect(async.header("X-Route") == "/async")
        }
    }

    @Test func anExpectedBodyToNoRouteIsRefusedBeforeItIsSentThroughTheMiddleware() async throws {
        try await withRunningServer(Self.makeRouter()) { server in
            let client = try RawClient(port: server.port)
            let notFound = try await client.exchange(
                "POST /nowhere HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
            #expect(notFound.status == 404)
            #expect(notFound.header("X-Route") == "none")
            #expect(notFound.header("X-Middleware-In-Task") == "no")
            #expect(notFound.header("Connection") == "close")
            #expect(try await client.untilClosed().isEmpty)

            let other = try RawClient(port: server.port)
            let notAllowed = try await other.exchange(
                "PUT /items/7 HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
            #expect(notAllowed.status == 405)
            #expect(notAllowed.header("Allow") == "GET, HEAD, POST")
            #expect(notAllowed.header("X-Route") == "/items/{id}")
            #expect(notAllowed.header("Connection") == "close")
            #expect(try await other.untilClosed().isEmpty)
        }
    }

    @Test func anAcceptedExpectedBodyIsAnsweredByTheRouteItsHeadFound() async throws {
        // The helper's timeouts are far past the test's own pace: on a loaded machine its steps
        // can be 30 s apart, and the connection must not be closed as idle between the 100 and
        // the body.
        try await withRunningServer(Self.makeRouter()) {
            server in
            let client = try RawClient(port: server.port)
            try await client.write(
                "POST /items/a%20b HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
            #expect(try await client.response().status == 100)
            let response = try await client.exchange("ping")
            #expect(response.status == 200)
            #expect(response.text == "a b got ping")
            #expect(response.header("X-Route") == "/items/{id}")
            #expect(response.header("Connection") == nil)
        }
    }
}
