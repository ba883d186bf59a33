import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

extension TestClient {
    /// Issues an observer token with `body`, asked with `token`; returns the answer's body.
    func observer(_ body: JSONValue, token: String) async throws -> JSONValue {
        let answer = try await send("POST", "/v1/observers", json: body, token: token)
        try #require(answer.status == 201, "observer answered \(answer.status): \(answer.text)")
        return try #require(answer.json)
    }
}

@Suite struct ObserverTokenTests {
    @Test(arguments: Backend.available)
    func aSessionsObserverReadsEverythingOfItAndChangesNothing(backend: Backend) async throws {
        try await withRunningServer(on: backend) { client, _ in
            let session = try await TestSession.create(client)
            let screen = try await session.push("Detail")
            let answer = try await client.send(
                "POST", "/v1/observers", json: ["session": .string(session.id), "label": "support desk"],
                token: session.token)
            #expect(answer.status == 201)
            let json = try #require(answer.json)
            let id = try #require(json["id"]?.stringValue)
            let token = try #require(json["token"]?.stringValue)
            #expect(id.hasPrefix("o_"))
            #expect(token.hasPrefix("ro_"))
            #expect(json["session"] == .string(session.id))
            #expect(json["label"] == "support desk")
            #expect(json["expiresAt"] == .null)
            #expect(answer.header("Location") == "/v1/observers/\(id)")
            #expect(answer.header("Cache-Control") == "no-store")

            let base = "/v1/sessions/\(session.id)"
            for path in [
                base, "\(base)/screens/\(screen)", "\(base)/history", "\(base)/replay?at=1", "\(base)/diff",
                "\(base)/export", "\(base)/events?after=0",
            ] {
                #expect(try await client.send("GET", path, token: token).status == 200, "\(path)")
            }
            let stream = try SSEClient(
                port: client.http.port, path: "\(base)/events?after=0", headers: ["Authorization": "Bearer \(token)"])
            #expect(await stream.status() == 200)
            stream.close()
            for (method, path, body) in [
                ("POST", "\(base)/push", [:]), ("PATCH", "\(base)/screens/root/values", ["k": 1]),
                ("POST", "\(base)/pop", [:]), ("DELETE", base, nil), ("PUT", "\(base)/path", ["screens": []]),
            ] as [(String, String, JSONValue?)] {
                let refused = try await client.send(method, path, json: body, token: token)
                expectProblem(refused, 403, type: "forbidden")
                #expect(refused.json?["detail"]?.stringValue?.contains("read-only") == true)
            }
            #expect(try await session.get()["version"] == 2)
            let other = try await TestSession.create(client)
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(other.id)", token: token), 403, type: "forbidden")
            expectProblem(try await client.send("GET", "/v1/sessions", token: token), 403, type: "forbidden")
            expectProblem(try await client.send("GET", "/v1/events", token: token), 403, type: "forbidden")
            // It can get a stream ticket for its session, not more; nor issue observer tokens.
            #expect(try await client.ticket(for: session.id, token: token).hasPrefix("st_"))
            expectProblem(
                try await client.send("POST", "/v1/tickets", json: ["all": true], token: token), 403, type: "forbidden")
            expectProblem(
                try await client.send("POST", "/v1/observers", json: ["session": .string(session.id)], token: token),
                403, type: "forbidden")
        }
    }

    @Test(arguments: Backend.available)
    func anObserverOfEverySessionListsAndWatchesThemAll(backend: Backend) async throws {
        try await withRunningServer(on: backend) { client, _ in
            let first = try await TestSession.create(client)
            let second = try await TestSession.create(client)
            let created = try await client.observer(["label": "dashboard"], token: client.adminToken)
            #expect(created["session"] == .null)
            let token = try #require(created["token"]?.stringValue)
            #expect(try await client.send("GET", "/v1/sessions/\(first.id)", token: token).status == 200)
            #expect(try await client.send("GET", "/v1/sessions/\(second.id)/history", token: token).status == 200)
            let list = try await client.send("GET", "/v1/sessions", token: token)
            #expect(list.json?["sessions"]?.arrayValue?.count == 2)
            let all = try SSEClient(
                port: client.http.port, path: "/v1/events", headers: ["Authorization": "Bearer \(token)"])
            #expect(await all.status() == 200)
            all.close()
            #expect(try await client.ticket(for: nil, token: token).hasPrefix("st_"))
            expectProblem(
                try await client.send("POST", "/v1/sessions/\(first.id)/push", json: [:], token: token), 403,
                type: "forbidden")
            // Only the admin issues one for every session.
            expectProblem(
                try await client.send("POST", "/v1/observers", json: [:], token: first.token), 403, type: "forbidden")
            expectProblem(try await client.send("POST", "/v1/observers", json: [:]), 401, type: "unauthorized")
        }
    }

    @Test(arguments: Backend.available)
    func aRevokedOrExpiredTokenAndItsTicketsStopWorking(backend: Backend) async throws {
        let clock = ManualClock()
        try await withRunningServer(
            on: backend,
            configure: {
                $0.now = { clock.now }
                $0.service.ticketLifetime = .seconds(600)
            }
        ) { client, _ in
            let session = try await TestSession.create(client)
            let created = try await client.observer(["session": .string(session.id)], token: session.token)
            let id = try #require(created["id"]?.stringValue)
            let token = try #require(created["token"]?.stringValue)
            let ticket = try await client.ticket(for: session.id, token: token)
            #expect(try await client.send("GET", "/v1/observers/\(id)", token: session.token).status == 200)
            #expect(try await client.send("DELETE", "/v1/observers/\(id)", token: session.token).status == 204)
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(session.id)", token: token), 401, type: "unauthorized")
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(session.id)/events?ticket=\(ticket)"), 401,
                type: "unauthorized")
            expectProblem(
                try await client.send("GET", "/v1/observers/\(id)", token: session.token), 404, type: "not-found")
            expectProblem(
                try await client.send("DELETE", "/v1/observers/\(id)", token: session.token), 404, type: "not-found")

            let expiring = try await client.observer(
                ["session": .string(session.id), "expiresIn": 60], token: session.token)
            let expiringToken = try #require(expiring["token"]?.stringValue)
            #expect(expiring["expiresAt"]?.stringValue != nil)
            let short = try await client.ticket(for: session.id, token: expiringToken)
            clock.advance(by: 59)
            #expect(try await client.send("GET", "/v1/sessions/\(session.id)", token: expiringToken).status == 200)
            clock.advance(by: 1)
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(session.id)", token: expiringToken), 401,
                type: "unauthorized")
            // Its ticket ended when it did, though tickets live 600 s here.
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(session.id)/events?ticket=\(short)"), 401,
                type: "unauthorized")
        }
    }

    @Test(arguments: Backend.available)
    func observersAreListedByWhoMayManageThemAndBounded(backend: Backend) async throws {
        try await withRunningServer(on: backend, configure: { $0.service.maxObserversPerScope = 2 }) { client, _ in
            let session = try await TestSession.create(client)
            let other = try await TestSession.create(client)
            let body: JSONValue = ["session": .string(session.id)]
            let a = try await client.observer(body, token: session.token)
            let b = try await client.observer(body, token: client.adminToken)
            let third = try await client.send("POST", "/v1/observers", json: body, token: session.token)
            expectProblem(third, 422, type: "unprocessable-content")
            #expect(third.json?["detail"]?.stringValue?.contains("--max-observers") == true)
            _ = try await client.observer(["session": .string(other.id)], token: other.token)
            _ = try await client.observer([:], token: client.adminToken)

            let mine = try await client.send("GET", "/v1/observers?session=\(session.id)", token: session.token)
            #expect(mine.status == 200)
            let ids = mine.json?["observers"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
            #expect(Set(ids ?? []) == Set([a["id"], b["id"]].compactMap { $0?.stringValue }))
            #expect(mine.json?["observers"]?.arrayValue?.allSatisfy { $0["token"] == nil } == true)
            let everything = try await client.send("GET", "/v1/observers?limit=3", token: client.adminToken)
            #expect(everything.json?["observers"]?.arrayValue?.count == 3)
            let cursor = try #require(everything.json?["nextCursor"]?.stringValue)
            let rest = try await client.send("GET", "/v1/observers?cursor=\(cursor)", token: client.adminToken)
            #expect(rest.json?["observers"]?.arrayValue?.count == 1)
            #expect(rest.json?["nextCursor"] == .null)
            expectProblem(try await client.send("GET", "/v1/observers", token: session.token), 403, type: "forbidden")
            expectProblem(
                try await client.send("GET", "/v1/observers?session=\(session.id)", token: other.token), 403,
                type: "forbidden")
            let otherID = try #require(a["id"]?.stringValue)
            expectProblem(
                try await client.send("DELETE", "/v1/observers/\(otherID)", token: other.token), 403, type: "forbidden")
            expectProblem(
                try await client.send(
                    "POST", "/v1/observers", json: ["session": .string(session.id), "expiresIn": 0],
                    token: session.token), 422, type: "unprocessable-content", pointers: ["/expiresIn"])
            expectProblem(
                try await client.send(
                    "POST", "/v1/observers", json: ["label": .string(String(repeating: "x", count: 129))],
                    token: client.adminToken), 422, type: "unprocessable-content", pointers: ["/label"])
        }
    }

    /// The token is kept only as its SHA-256: its text is nowhere in the database files, and a
    /// purge of its session revokes it.
    @Test func theTokenIsStoredOnlyAsAHashAndGoesWithItsSession() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-observer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("observers.sqlite").path
        let token = try await withRunningServer(databasePath: path) { client, _ in
            let session = try await TestSession.create(client)
            let created = try await client.observer(["session": .string(session.id)], token: session.token)
            let token = try #require(created["token"]?.stringValue)
            #expect(try await session.send("DELETE", "?purge=true").status == 204)
            expectProblem(try await client.send("GET", "/v1/observers", token: token), 401, type: "unauthorized")
            return token
        }
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let bytes = try Data(contentsOf: folder.appendingPathComponent(file))
            #expect(bytes.range(of: Data(token.utf8)) == nil, "\(file) holds the token")
        }
    }

    @Test(arguments: Backend.available)
    func aRetryWithTheSameKeyIssuesNoSecondToken(backend: Backend) async throws {
        try await withRunningServer(on: backend) { client, _ in
            let session = try await TestSession.create(client)
            let body: JSONValue = ["session": .string(session.id)]
            let headers = ["Idempotency-Key": "observer-1"]
            let first = try await client.send(
                "POST", "/v1/observers", json: body, token: session.token, headers: headers)
            let second = try await client.send(
                "POST", "/v1/observers", json: body, token: session.token, headers: headers)
            #expect(first.status == 201)
            #expect(second.header("Idempotent-Replayed") == "true")
            #expect(second.json == first.json)
            let list = try await client.send("GET", "/v1/observers?session=\(session.id)", token: session.token)
            #expect(list.json?["observers"]?.arrayValue?.count == 1)
        }
    }
}
