import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesWire
import TestSupport
import Testing

@Suite struct CrossOriginTests {
    static let allowed = "https://support.example.com"

    private func preflight(
        _ client: TestClient, _ path: String, origin: String, method: String = "POST"
    ) async throws -> HTTPResponse {
        try await client.send(
            "OPTIONS", path,
            headers: [
                "Origin": origin, "Access-Control-Request-Method": method,
                "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
            ])
    }

    @Test func anAllowedOriginsPreflightIsAnsweredAndLogged() async throws {
        let log = LogLines()
        let policy = try CrossOriginPolicy(origins: [Self.allowed, "http://localhost:3000"])
        try await withRunningServer(configure: {
            $0.crossOriginPolicy = policy
            $0.logger = log.logger()
        }) { client, _ in
            let answer = try await preflight(client, "/v1/sessions/s_any/push", origin: Self.allowed)
            #expect(answer.status == 204)
            #expect(answer.body.isEmpty)
            #expect(answer.header("Access-Control-Allow-Origin") == Self.allowed)
            #expect(answer.header("Access-Control-Allow-Methods") == "GET, HEAD, POST, PUT, PATCH, DELETE")
            let headers = try #require(answer.header("Access-Control-Allow-Headers"))
            for name in ["Authorization", "Content-Type", "If-Match", "Idempotency-Key", "Last-Event-ID"] {
                #expect(headers.contains(name))
            }
            #expect(answer.header("Access-Control-Max-Age") == "600")
            let vary = answer.headers.filter { $0.name.lowercased() == "vary" }.map(\.value).joined(separator: ", ")
            #expect(vary.contains("Origin") && vary.contains("Access-Control-Request-Method"))
            #expect(answer.header("X-Request-Id")?.hasPrefix("r_") == true)
            let local = try await preflight(client, "/v1/sessions", origin: "http://localhost:3000", method: "GET")
            #expect(local.header("Access-Control-Allow-Origin") == "http://localhost:3000")
        }
        #expect(log.all.contains { $0.contains("method=OPTIONS route=/v1/sessions/{id}/push status=204") })
    }

    @Test func otherOriginsAndUnknownPathsAreRefused() async throws {
        let policy = try CrossOriginPolicy(origins: [Self.allowed])
        try await withRunningServer(configure: { $0.crossOriginPolicy = policy }) { client, _ in
            let refused = try await preflight(client, "/v1/sessions", origin: "https://evil.example")
            expectProblem(refused, 403, type: "forbidden")
            #expect(refused.header("Access-Control-Allow-Origin") == nil)
            expectProblem(try await preflight(client, "/nowhere", origin: Self.allowed), 404, type: "not-found")
            // An OPTIONS that is not a preflight reaches the routes, as before.
            let plain = try await client.send("OPTIONS", "/v1/sessions")
            expectProblem(plain, 405, type: "method-not-allowed")
            let simple = try await client.send("GET", "/healthz", headers: ["Origin": "https://evil.example"])
            #expect(simple.status == 200)
            #expect(simple.header("Access-Control-Allow-Origin") == nil)
            #expect(simple.header("Vary") == "Origin")
        }
    }

    /// Answers, errors and streams all carry the headers a page needs to read them.
    @Test func answersToAnAllowedOriginExposeTheHeadersClientsNeed() async throws {
        let policy = try CrossOriginPolicy(origins: [Self.allowed])
        try await withRunningServer(configure: { $0.crossOriginPolicy = policy }) { client, _ in
            let origin = ["Origin": Self.allowed]
            let created = try await client.send("POST", "/v1/sessions", json: [:], headers: origin)
            #expect(created.status == 201)
            #expect(created.header("Access-Control-Allow-Origin") == Self.allowed)
            let exposed = try #require(created.header("Access-Control-Expose-Headers"))
            for name in ["ETag", "Location", "Retry-After", "X-Request-Id", "Idempotent-Replayed", "WWW-Authenticate"] {
                #expect(exposed.contains(name), "\(name)")
            }
            #expect(created.header("Vary") == "Origin")
            let id = try #require(created.json?["id"]?.stringValue)
            let token = try #require(created.json?["token"]?.stringValue)
            let problem = try await client.send("GET", "/v1/sessions/\(id)", headers: origin)
            expectProblem(problem, 401, type: "unauthorized")
            #expect(problem.header("Access-Control-Allow-Origin") == Self.allowed)
            let missing = try await client.send("GET", "/nowhere", headers: origin)
            #expect(missing.status == 404)
            #expect(missing.header("Access-Control-Allow-Origin") == Self.allowed)
            let stream = try SSEClient(
                port: client.http.port, path: "/v1/sessions/\(id)/events",
                headers: ["Authorization": "Bearer \(token)", "Origin": Self.allowed])
            defer { stream.close() }
            #expect(await stream.status() == 200)
            // The SSE head came through the middleware too: an event still arrives.
            try await client.send(
                "POST", "/v1/sessions/\(id)/push", json: [:], token: token, headers: origin)
            #expect(await stream.frames.events(1).first?.event == "screen.pushed")
        }
    }

    @Test func everyOriginWithAStarAndNoneByDefault() async throws {
        let every = try CrossOriginPolicy(origins: ["*"])
        try await withRunningServer(configure: { $0.crossOriginPolicy = every }) { client, _ in
            let answer = try await client.send("GET", "/healthz", headers: ["Origin": "https://any.example"])
            #expect(answer.header("Access-Control-Allow-Origin") == "*")
            #expect(answer.header("Vary") == nil)
            #expect(try await preflight(client, "/v1/sessions", origin: "https://any.example").status == 204)
        }
        try await withRunningServer { client, _ in
            let answer = try await client.send("GET", "/healthz", headers: ["Origin": Self.allowed])
            #expect(answer.header("Access-Control-Allow-Origin") == nil)
            #expect(answer.header("Vary") == nil)
            let refused = try await preflight(client, "/v1/sessions", origin: Self.allowed)
            expectProblem(refused, 403, type: "forbidden")
            #expect(refused.json?["detail"]?.stringValue?.contains("--cors-origins") == true)
        }
    }

    @Test func originsAreNormalizedAndNonOriginsRefused() throws {
        let policy = try CrossOriginPolicy(origins: ["HTTPS://Support.Example.com:8443", " http://[::1]:9000 ", ""])
        #expect(policy.origins == ["https://support.example.com:8443", "http://[::1]:9000"])
        #expect(policy.allows("https://support.example.com:8443"))
        #expect(!policy.allows("https://support.example.com"))
        #expect(!policy.allowsEveryOrigin)
        for bad in ["support.example.com", "https://support.example.com/", "null", "ftp://x.example", "https://", "*x"]
        {
            #expect(throws: CrossOriginPolicy.InvalidOrigin.self, "\(bad)") { try CrossOriginPolicy(origins: [bad]) }
        }
        #expect(!CrossOriginPolicy().isEnabled)
    }
}
