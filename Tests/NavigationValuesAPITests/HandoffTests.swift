import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesPostgres
import NavigationValuesSessions
import TestSupport
import Testing

/// Hand-offs over HTTP ("continue on my other device"): a code made with a session's token,
/// redeemed once by another device for a token of its own onto the session, or for a fork at the
/// version the code was made at; and every way a redeem is refused, each with its own type.
@Suite(.serialized) struct HandoffTests {
    /// `POST /v1/sessions/{id}/handoff` with `body`, by `session`'s token.
    func handoff(_ session: TestSession, _ body: JSONValue = [:]) async throws -> JSONValue {
        let answer = try await session.send("POST", "/handoff", json: body)
        try #require(answer.status == 201, "handoff answered \(answer.status): \(answer.text)")
        #expect(answer.header("Cache-Control") == "no-store")
        return try #require(answer.json)
    }

    func redeem(_ client: TestClient, _ code: String) async throws -> HTTPResponse {
        try await client.send("POST", "/v1/handoffs/redeem", json: ["code": .string(code)])
    }

    @Test(arguments: Backend.available)
    func anotherDeviceJoinsTheSessionWithATokenOfItsOwnOnce(_ backend: Backend) async throws {
        try await withLeanServer(on: backend) { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "Home"]])
            try await session.push("Cart")
            let made = try await handoff(session)
            let code = try #require(made["code"]?.stringValue)
            #expect(code.hasPrefix("h_") && code.count == 38)
            let urlSafe = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            #expect(code.allSatisfy(urlSafe.contains))
            #expect(!code.contains(session.id) && !code.contains(session.token))
            #expect(made["session"] == .string(session.id))
            #expect(made["fork"] == false)
            #expect(made["version"] == 2)
            #expect(made["expiresAt"]?.stringValue != nil)

            let joined = try await redeem(client, code)
            #expect(joined.status == 200, "\(joined.text)")
            #expect(joined.header("Cache-Control") == "no-store")
            let json = try #require(joined.json)
            #expect(json["id"] == .string(session.id))
            #expect(json["version"] == 2)
            #expect(json.screenNames == ["Home", "Cart"])
            let device = try #require(json["token"]?.stringValue)
            #expect(device.hasPrefix("td_") && device != session.token)

            // The new device reads and changes the session; the first device's token still works.
            let pushed = try await client.send(
                "POST", "/v1/sessions/\(session.id)/push", json: ["name": "Checkout"], token: device)
            #expect(pushed.status == 201, "\(pushed.text)")
            #expect(try await session.get()["version"] == 3)
            // A device token is the session's only: another session is 403.
            let other = try await TestSession.create(client)
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(other.id)", token: device), 403, type: "forbidden")
            // It opens the session's event stream as its token does.
            let ticket = try await client.send(
                "POST", "/v1/tickets", json: ["session": .string(session.id)], token: device)
            #expect(ticket.status == 200, "\(ticket.text)")
            // It may make a hand-off of its own (a third device).
            let again = try await client.send("POST", "/v1/sessions/\(session.id)/handoff", token: device)
            #expect(again.status == 201)

            // Single use.
            expectProblem(try await redeem(client, code), 409, type: "handoff-code-used")
            // Making a hand-off appended no event.
            #expect(try await session.get()["version"] == 3)
        }
    }

    @Test(arguments: Backend.available)
    func aForkHandoffMakesANewSessionAtTheVersionTheCodeWasMadeAt(_ backend: Backend) async throws {
        try await withLeanServer(on: backend) { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "Home"]])
            try await session.push("Cart")
            let made = try await handoff(session, ["fork": true])
            #expect(made["fork"] == true)
            #expect(made["version"] == 2)
            // The first device goes on after the code was made; the fork starts where it was made.
            try await session.push("Checkout")
            let forked = try await redeem(client, try #require(made["code"]?.stringValue))
            #expect(forked.status == 201, "\(forked.text)")
            let json = try #require(forked.json)
            let id = try #require(json["id"]?.stringValue)
            #expect(id != session.id)
            #expect(forked.header("Location") == "/v1/sessions/\(id)")
            #expect(json["version"] == 2)
            #expect(json["origin"]?["session"] == .string(session.id))
            #expect(json["origin"]?["version"] == 2)
            #expect(json.screenNames == ["Home", "Cart"])
            let token = try #require(json["token"]?.stringValue)
            let fork = TestSession(client: client, id: id, token: token, created: json)
            try await fork.push("Elsewhere")
            // The original is untouched by the fork.
            #expect(try await session.get().screenIDs.count == 3)
            expectProblem(
                try await redeem(client, try #require(made["code"]?.stringValue)), 409, type: "handoff-code-used")
        }
    }

    @Test(arguments: Backend.available)
    func aDamagedExpiredOrUnknownCodeIsRefusedWithItsOwnType(_ backend: Backend) async throws {
        try await withRunningServer(
            on: backend, configure: { $0.service.handoffLifetime = .seconds(1) }
        ) { client, _ in
            let session = try await TestSession.create(client)
            let code = try #require(try await handoff(session)["code"]?.stringValue)
            // One character changed anywhere is caught by the signature.
            for index in [2, 10, 20, 37] {
                var characters = Array(code)
                characters[index] = characters[index] == "A" ? "B" : "A"
                expectProblem(try await redeem(client, String(characters)), 400, type: "handoff-code-invalid")
            }
            for garbage in ["h_", "hello", String(repeating: "h", count: 5_000), "st_" + code.dropFirst(2)] {
                expectProblem(try await redeem(client, garbage), 400, type: "handoff-code-invalid")
            }
            expectProblem(
                try await client.send("POST", "/v1/handoffs/redeem", json: [:]), 422, type: "unprocessable-content",
                pointers: ["/code"])
            try await Task.sleep(for: .milliseconds(1_100))
            let expired = try await redeem(client, code)
            expectProblem(expired, 410, type: "handoff-code-expired")
            #expect(!expired.text.contains(code))
        }
        // A genuine code (same secret) from another server's database: unknown here.
        let foreign = try await withRunningServer { client, _ in
            try #require(try await handoff(try await TestSession.create(client))["code"]?.stringValue)
        }
        try await withLeanServer(on: backend) { client, _ in
            expectProblem(try await redeem(client, foreign), 404, type: "handoff-code-unknown")
        }
        // Under another secret the same code is forged.
        try await withRunningServer(configure: { $0.adminToken = "another-secret" }) { client, _ in
            expectProblem(try await redeem(client, foreign), 400, type: "handoff-code-invalid")
        }
    }

    @Test(arguments: Backend.available)
    func aSessionEndedOrPurgedSinceTheCodeWasMadeIsRefusedAndItsDeviceTokensStop(_ backend: Backend) async throws {
        try await withLeanServer(on: backend) { client, _ in
            let ended = try await TestSession.create(client)
            let endedCode = try #require(try await handoff(ended)["code"]?.stringValue)
            #expect(try await ended.send("DELETE").status == 204)
            expectProblem(try await redeem(client, endedCode), 410, type: "handoff-session-ended")
            // Nothing to continue on an ended session.
            expectProblem(try await ended.send("POST", "/handoff"), 410, type: "gone")

            let purged = try await TestSession.create(client)
            let joined = try await redeem(client, try #require(try await handoff(purged)["code"]?.stringValue))
            let device = try #require(joined.json?["token"]?.stringValue)
            let code = try #require(try await handoff(purged, ["fork": true])["code"]?.stringValue)
            #expect(try await purged.send("DELETE", "?purge=true").status == 204)
            expectProblem(try await redeem(client, code), 410, type: "handoff-session-purged")
            // The purge revoked the device's token.
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(purged.id)", token: device), 401, type: "unauthorized")
        }
    }

    @Test(arguments: Backend.available)
    func whoMayMakeAHandoff(_ backend: Backend) async throws {
        try await withLeanServer(on: backend) { client, _ in
            let session = try await TestSession.create(client)
            let other = try await TestSession.create(client)
            let path = "/v1/sessions/\(session.id)/handoff"
            expectProblem(try await client.send("POST", path), 401, type: "unauthorized")
            expectProblem(try await client.send("POST", path, token: other.token), 403, type: "forbidden")
            expectProblem(
                try await client.send("POST", path, token: "td_" + String(repeating: "A", count: 43)), 401,
                type: "unauthorized")
            let observer = try await client.send(
                "POST", "/v1/observers", json: ["session": .string(session.id)], token: session.token)
            let readOnly = try #require(observer.json?["token"]?.stringValue)
            expectProblem(try await client.send("POST", path, token: readOnly), 403, type: "forbidden")
            expectProblem(
                try await session.send("POST", "/handoff", json: ["fork": "yes"]), 422, type: "unprocessable-content",
                pointers: ["/fork"])
            expectProblem(
                try await session.send("POST", "/handoff", json: ["at": 1]), 422, type: "unprocessable-content")
            #expect(try await client.send("POST", path, token: client.adminToken).status == 201)
            expectProblem(
                try await client.send("POST", "/v1/sessions/s_nothere/handoff", token: client.adminToken), 404,
                type: "not-found")
        }
    }

    /// A refused hand-off says when to retry: by then the codes in the way have expired, and the
    /// same request succeeds.
    @Test func aRefusedHandoffSaysWhenARetrySucceeds() async throws {
        try await withRunningServer(configure: {
            $0.service.handoffLifetime = .seconds(2)
            $0.service.maxHandoffsPerSession = 1
        }) { client, _ in
            let session = try await TestSession.create(client)
            _ = try await handoff(session)
            let refused = try await session.send("POST", "/handoff")
            expectProblem(refused, 429, type: "too-many-handoffs")
            let seconds = try #require(refused.header("Retry-After").flatMap { Int($0) })
            #expect(seconds == 2)
            try await Task.sleep(for: .seconds(seconds))
            #expect(try await session.send("POST", "/handoff").status == 201)
        }
    }

    @Test(arguments: Backend.available)
    func outstandingHandoffsAndJoinedDevicesAreBounded(_ backend: Backend) async throws {
        try await withRunningServer(
            on: backend,
            configure: {
                $0.service.maxHandoffsPerSession = 2
                $0.service.maxDevicesPerSession = 1
            }
        ) { client, _ in
            let session = try await TestSession.create(client)
            let first = try #require(try await handoff(session)["code"]?.stringValue)
            let second = try #require(try await handoff(session)["code"]?.stringValue)
            let refused = try await session.send("POST", "/handoff")
            expectProblem(refused, 429, type: "too-many-handoffs")
            #expect(refused.json?["limit"] == "max-handoffs")
            // By then every code standing in the way has expired: the hand-off lifetime (300 s).
            #expect(refused.header("Retry-After") == "300")
            // A redeemed code no longer counts.
            #expect(try await redeem(client, first).status == 200)
            // One device may join: the second is refused and its code stays unused.
            let tooMany = try await redeem(client, second)
            expectProblem(tooMany, 409, type: "too-many-devices")
            #expect(tooMany.json?["limit"] == "max-devices")
            expectProblem(try await redeem(client, second), 409, type: "too-many-devices")
            // A fork makes no device token: still possible.
            let fork = try #require(try await handoff(session, ["fork": true])["code"]?.stringValue)
            #expect(try await redeem(client, fork).status == 201)
        }
    }

    @Test func redeemingSharesTheCreationRateLimit() async throws {
        try await withRunningServer(configure: {
            $0.createRate = 0.001  // nothing refills during the test
            $0.createBurst = 2
        }) { client, _ in
            let session = try await TestSession.create(client)
            let code = try #require(try await handoff(session)["code"]?.stringValue)
            #expect(try await redeem(client, code).status == 200)
            let refused = try await redeem(client, code)
            expectProblem(refused, 429, type: "too-many-requests")
            #expect(refused.header("Retry-After") != nil)
        }
    }
}

/// `withRunningServer(on:)` with the fewest PostgreSQL connections (one reader, one turn), so the
/// suite's many servers running at once stay within the test cluster's connections.
func withLeanServer<T>(
    on backend: Backend, configure: (inout NavigationValuesServer.Configuration) -> Void = { _ in },
    _ body: (TestClient, NavigationValuesServer) async throws -> T
) async throws -> T {
    try await withRunningServer(
        on: backend,
        configure: { configuration in
            configuration.postgres.readerCount = 1
            configuration.postgres.turnConnectionCount = 1
            configure(&configuration)
        }, body)
}

extension JSONValue {
    /// The names of a session's screens, root first.
    fileprivate var screenNames: [JSONValue?] { (self["screens"]?.arrayValue ?? []).map { $0["name"] } }
}
