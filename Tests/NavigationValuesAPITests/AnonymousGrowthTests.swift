import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import TestSupport
import Testing

/// Anonymous growth bounded: creation without the admin token
/// is rate limited per address, sessions in memory are capped (least recently used unload and
/// reload as after a restart), and a token is checked before its session loads.
@Suite struct AnonymousGrowthTests {
    func loadedSessions(_ client: TestClient) async throws -> Double? {
        try parseExposition(try await client.send("GET", "/metrics").text)["navigation_values_sessions_loaded"]
    }

    @Test func creationPastTheBurstIs429WithRetryAfterAndTheAdminTokenIsExempt() async throws {
        try await withRunningServer(configure: {
            $0.createRate = 0.001  // one token every 1,000 s: nothing refills during the test
            $0.createBurst = 3
        }) { client, _ in
            for _ in 0..<3 { #expect(try await client.send("POST", "/v1/sessions", json: [:]).status == 201) }
            let refused = try await client.send("POST", "/v1/sessions", json: [:])
            expectProblem(refused, 429, type: "too-many-requests")
            #expect(refused.json?["limit"] == "create-rate")
            let retryAfter = try #require(refused.header("Retry-After").flatMap(Int.init))
            #expect(retryAfter >= 1 && retryAfter <= 1_000)
            // Nothing was created by the refused request.
            let list = try await client.send("GET", "/v1/sessions", token: client.adminToken)
            #expect(list.json?["sessions"]?.arrayValue?.count == 3)
            // Bulk tools create with the admin token.
            for _ in 0..<5 {
                #expect(
                    try await client.send("POST", "/v1/sessions", json: [:], token: client.adminToken).status == 201)
            }
            // Other routes are not limited.
            #expect(try await client.send("GET", "/healthz").status == 200)
        }
    }

    @Test func theDefaultQuotaIsOneAnOrdinaryClientNeverMeets() async throws {
        let defaults = NavigationValuesServer.Configuration()
        #expect(defaults.createRate == 20)
        #expect(defaults.createBurst == 200)
        try await withRunningServer { client, _ in
            for _ in 0..<50 {
                let created = try await client.send("POST", "/v1/sessions", json: [:])
                #expect(created.status == 201)
            }
        }
    }

    /// An import and a fork make a session too (the inspector's routes): the same bucket.
    @Test func importsAndForksSpendTheCreationQuotaAndImportsNeedTheCreateToken() async throws {
        let exported = try await withRunningServer(configure: {
            $0.createRate = 0.001
            $0.createBurst = 3
        }) { client, _ in
            let original = try await TestSession.create(client)  // 1
            let export = try await original.send("GET", "/export")
            #expect(export.status == 200)
            let ndjson = ["Content-Type": "application/x-ndjson"]
            func importIt() async throws -> HTTPResponse {
                try await client.send("POST", "/v1/sessions/import", raw: Data(export.body), headers: ndjson)
            }
            func forkIt() async throws -> HTTPResponse {
                try await client.send(
                    "POST", "/v1/sessions/fork", json: ["session": .string(original.id)], token: original.token)
            }
            #expect(try await importIt().status == 201)  // 2
            #expect(try await forkIt().status == 201)  // 3
            for refused in [
                try await importIt(), try await forkIt(), try await client.send("POST", "/v1/sessions", json: [:]),
            ] {
                expectProblem(refused, 429, type: "too-many-requests")
                #expect(refused.json?["limit"] == "create-rate")
            }
            // The admin token is exempt here too.
            #expect(
                try await client.send(
                    "POST", "/v1/sessions/import", raw: Data(export.body),
                    headers: ndjson.merging(["Authorization": "Bearer \(client.adminToken)"]) { $1 }
                ).status == 201)
            return export.body
        }
        try await withRunningServer(configure: { $0.createToken = "let-me-create" }) { client, _ in
            let ndjson = ["Content-Type": "application/x-ndjson"]
            let anonymous = try await client.send("POST", "/v1/sessions/import", raw: Data(exported), headers: ndjson)
            expectProblem(anonymous, 401, type: "unauthorized")
            let allowed = try await client.send(
                "POST", "/v1/sessions/import", raw: Data(exported),
                headers: ndjson.merging(["Authorization": "Bearer let-me-create"]) { $1 })
            #expect(allowed.status == 201, "\(allowed.text)")
        }
    }

    @Test func withACreateTokenCreationNeedsIt() async throws {
        try await withRunningServer(configure: { $0.createToken = "let-me-create" }) { client, _ in
            let anonymous = try await client.send("POST", "/v1/sessions", json: [:])
            expectProblem(anonymous, 401, type: "unauthorized")
            #expect(anonymous.header("WWW-Authenticate") == "Bearer")
            expectProblem(
                try await client.send("POST", "/v1/sessions", json: [:], token: "not-it"), 403, type: "forbidden")
            #expect(try await client.send("POST", "/v1/sessions", json: [:], token: "let-me-create").status == 201)
            #expect(try await client.send("POST", "/v1/sessions", json: [:], token: client.adminToken).status == 201)
        }
    }

    @Test func theLeastRecentlyUsedSessionsUnloadAndReloadExactlyAsTheyWere() async throws {
        try await withRunningServer(configure: { $0.service.maxLoadedSessions = 4 }) { client, _ in
            var sessions: [TestSession] = []
            var shown: [JSONValue] = []
            for index in 0..<12 {
                let session = try await TestSession.create(client, ["root": ["name": .string("S\(index)")]])
                try await session.push("Detail", values: ["n": .integer(Int64(index))])
                try await session.handle("top", "pick", passBack: true)
                try await session.publish("top", "pick", .integer(Int64(index)))
                sessions.append(session)
                shown.append(try await session.get())
                #expect(try await loadedSessions(client) ?? 99 <= 4)
            }
            // Every one reads back exactly, the unloaded ones loading again from the database.
            for (session, before) in zip(sessions, shown) {
                #expect(try await session.get() == before)
                #expect(try await loadedSessions(client) ?? 99 <= 4)
            }
            // And goes on from where it was: the handler's memory came back too.
            let again = try await sessions[0].publish("top", "pick", 0)
            #expect(again["deliveries"] == [])
            #expect(again["version"] == 5)
        }
    }

    @Test func requestsWithAnotherSessionsTokenLoadNothing() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-forged-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("forged.sqlite").path
        let ids = try await withRunningServer(databasePath: path) { client, _ in
            var ids: [String] = []
            for _ in 0..<200 { ids.append(try await TestSession.create(client).id) }
            return ids
        }
        // After a restart nothing is loaded; 200 requests with a well-formed token of no session
        // (and 200 with a malformed one) are refused without loading any.
        try await withRunningServer(databasePath: path) { client, _ in
            #expect(try await loadedSessions(client) == 0)
            let forged = "t_" + String(repeating: "A", count: 43)
            for id in ids {
                expectProblem(try await client.send("GET", "/v1/sessions/\(id)", token: forged), 403, type: "forbidden")
                expectProblem(
                    try await client.send("GET", "/v1/sessions/\(id)/history", token: "garbage"), 401,
                    type: "unauthorized")
            }
            #expect(try await loadedSessions(client) == 0)
        }
    }

    @Test(arguments: [
        ("GET", ""), ("DELETE", ""), ("POST", "/push"), ("POST", "/pop"), ("PUT", "/path"), ("GET", "/screens/root"),
        ("PATCH", "/screens/root/values"), ("PUT", "/screens/root/handlers/k"), ("DELETE", "/screens/root/handlers/k"),
        ("POST", "/screens/root/preferences/k"), ("GET", "/events"), ("GET", "/history"), ("GET", "/replay"),
    ])
    func authenticationComesBeforeExistence(method: String, suffix: String) async throws {
        try await withRunningServer { client, _ in
            let body: JSONValue? = ["PUT", "POST", "PATCH"].contains(method) ? [:] : nil
            let path = "/v1/sessions/s_no-such-session\(suffix)"
            let anonymous = try await client.send(method, path, json: body)
            expectProblem(anonymous, 401, type: "unauthorized")
            let malformed = try await client.send(method, path, json: body, token: "not-a-token")
            expectProblem(malformed, 401, type: "unauthorized")
            // A credential that could be valid learns that the session does not exist.
            let wellFormed = try await client.send(
                method, path, json: body, token: "t_" + String(repeating: "B", count: 43))
            #expect(wellFormed.status == 404)
        }
    }
}
