import HTTPServer
import Testing

@Suite struct RouterTests {
    private func text(_ response: Response) -> String {
        guard case .bytes(let bytes) = response.body else { return "<stream>" }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func fillsPathParametersDecoded() async throws {
        let router = Router()
        router.post("/v1/sessions/{id}/screens/{screen}") { request in
            Response(body: Array("\(request.parameters["id"] ?? "-")|\(request.parameters["screen"] ?? "-")".utf8))
        }
        let request = Request(method: .post, path: "/v1/sessions/s%201/screens/top")
        #expect(text(try await router.buildResponder().respond(to: request)) == "s 1|top")
    }

    @Test func aLiteralSegmentWinsOverAParameter() async throws {
        let router = Router()
        router.get("/items/{id}") { _ in Response(body: Array("param".utf8)) }
        router.get("/items/new") { _ in Response(body: Array("literal".utf8)) }
        #expect(
            text(try await router.buildResponder().respond(to: Request(method: .get, path: "/items/new"))) == "literal")
        #expect(text(try await router.buildResponder().respond(to: Request(method: .get, path: "/items/7"))) == "param")
    }

    @Test func anUnknownPathIs404() async {
        let router = Router()
        router.get("/a") { _ in Response() }
        await #expect(throws: HTTPRequestError.self) {
            try await router.buildResponder().respond(to: Request(method: .get, path: "/b"))
        }
        do {
            _ = try await router.buildResponder().respond(to: Request(method: .get, path: "/a/b"))
            Issue.record("expected 404")
        } catch let error as HTTPRequestError {
            #expect(error.code == .notFound)
            #expect(error.status == .notFound)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func aKnownPathWithAnotherMethodIs405WithAllow() async {
        let router = Router()
        router.get("/v1/sessions/{id}") { _ in Response() }
        router.delete("/v1/sessions/{id}") { _ in Response() }
        do {
            _ = try await router.buildResponder().respond(to: Request(method: .put, path: "/v1/sessions/x"))
            Issue.record("expected 405")
        } catch let error as HTTPRequestError {
            #expect(error.code == .methodNotAllowed)
            #expect(error.headers["Allow"] == "DELETE, GET, HEAD")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// A concrete path shadows a templated one in `Allow` (as OpenAPI reads paths), while
    /// a method only the templated route takes still reaches it.
    @Test func allowNamesTheMethodsOfTheMostSpecificRouteOnly() async throws {
        let router = Router()
        router.get("/v1/sessions/{id}") { _ in Response(body: Array("param".utf8)) }
        router.delete("/v1/sessions/{id}") { _ in Response() }
        router.post("/v1/sessions/fork") { _ in Response() }
        do {
            _ = try await router.buildResponder().respond(to: Request(method: .put, path: "/v1/sessions/fork"))
            Issue.record("expected 405")
        } catch let error as HTTPRequestError {
            #expect(error.code == .methodNotAllowed)
            #expect(error.headers["Allow"] == "POST")
        }
        let get = try await router.buildResponder().respond(to: Request(method: .get, path: "/v1/sessions/fork"))
        #expect(text(get) == "param")
    }

    @Test func getHandlersAnswerHead() async throws {
        let router = Router()
        router.get("/a") { _ in Response(status: .accepted) }
        #expect(try await router.buildResponder().respond(to: Request(method: .head, path: "/a")).status == .accepted)
    }

    @Test func asyncHandlersAndThrownErrorsPassThrough() async {
        struct Failure: Error {}
        let router = Router()
        router.get("/fail") { _ in
            await Task.yield()
            throw Failure()
        }
        await #expect(throws: Failure.self) {
            try await router.buildResponder().respond(to: Request(method: .get, path: "/fail"))
        }
    }

    @Test func aBuiltResponderKeepsTheRoutesItWasBuiltWith() async throws {
        let router = Router()
        router.get("/a") { _ in Response(body: Array("first".utf8)) }
        let responder = router.buildResponder()
        router.get("/a") { _ in Response(body: Array("second".utf8)) }
        router.get("/b") { _ in Response() }
        #expect(text(try await responder.respond(to: Request(method: .get, path: "/a"))) == "first")
        await #expect(throws: HTTPRequestError.self) {
            try await responder.respond(to: Request(method: .get, path: "/b"))
        }
        #expect(text(try await router.buildResponder().respond(to: Request(method: .get, path: "/a"))) == "second")
    }

    /// A method added to a path after a responder was built reaches later responders only: the
    /// path's endpoint, shared by lookups, is replaced, not changed.
    @Test func aBuiltResponderKeepsTheMethodsOfAPathItWasBuiltWith() async throws {
        let router = Router()
        router.get("/a/{id}") { _ in Response(body: Array("get".utf8)) }
        let responder = router.buildResponder()
        router.post("/a/{id}") { _ in Response(body: Array("post".utf8)) }
        do {
            _ = try await responder.respond(to: Request(method: .post, path: "/a/1"))
            Issue.record("the responder built before POST answered it")
        } catch let error as HTTPRequestError {
            #expect(error.status == .methodNotAllowed)
            #expect(error.headers["Allow"] == "GET, HEAD")
        }
        #expect(text(try await responder.respond(to: Request(method: .get, path: "/a/1"))) == "get")
        #expect(text(try await router.buildResponder().respond(to: Request(method: .post, path: "/a/1"))) == "post")
    }
}
