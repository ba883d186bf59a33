import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesWire
import TestSupport
import Testing

@Suite struct ForkTests {
    /// Forks a random session at several revisions: each fork is the origin as replayed there
    /// (new ids, `origin` added), its history the origin's first N events, and then the two go
    /// their own ways.
    @Test(arguments: Backend.available)
    func aForkAtNIsTheReplayAtNThenDivergesIndependently(backend: Backend) async throws {
        try await withRunningServer(on: backend, configure: { $0.service.snapshotInterval = 4 }) { client, server in
            let origin = try await TestSession.create(client, ["schema": randomHistorySchema, "root": ["name": "R"]])
            try await origin.applyRandomRequests(30, seed: 5)
            let version = try #require(try await origin.get()["version"]?.integerValue)
            let history = try await origin.everyEvent()
            for at in Set([1, 2, version / 2, version - 1, version]) {
                let answer = try await client.send(
                    "POST", "/v1/sessions/fork", json: ["session": .string(origin.id), "at": .integer(at)],
                    token: origin.token)
                #expect(answer.status == 201, "\(answer.text)")
                let json = try #require(answer.json)
                let fork = TestSession(
                    client: client, id: try #require(json["id"]?.stringValue),
                    token: try #require(json["token"]?.stringValue), created: json)
                #expect(json["origin"] == ["session": .string(origin.id), "version": .integer(at)])
                #expect(answer.header("Location") == "/v1/sessions/\(fork.id)")

                let forkHistory = try await fork.everyEvent()
                var map = screenIDMap(from: history, to: forkHistory)
                map[origin.id] = fork.id
                #expect(forkHistory == history.prefix(Int(at)).map { replacingStrings(map, in: $0) })
                var expected = replacingStrings(map, in: try await origin.replay(at: at))
                expected = Self.adding(origin: origin.id, at: at, to: expected)
                #expect(try await fork.get() == expected, "fork at \(at)")
                #expect(try await fork.replay(at: at) == expected)
                // Replayed straight from the store too (what `navigation-values replay` prints).
                let stored = try await SessionReplay.session(SessionID(fork.id), at: 1, in: server.store)
                #expect(stored.origin == SessionOrigin(session: SessionID(origin.id), version: at))
                if at > 1 {
                    let earlier = replacingStrings(map, in: try await origin.replay(at: at - 1))
                    #expect(try await fork.replay(at: at - 1) == Self.adding(origin: origin.id, at: at, to: earlier))
                }

                // They diverge: a change to one is not a change to the other.
                let originBefore = try await origin.get()
                try await fork.push("OnlyInFork")
                #expect(try await origin.get() == originBefore)
                let forkBefore = try await fork.get()
                try await origin.push("OnlyInOrigin")
                #expect(try await fork.get() == forkBefore)
                try await origin.pop()
            }
        }
    }

    private static func adding(origin: String, at: Int64, to session: JSONValue) -> JSONValue {
        guard case .object(var members) = session else { return session }
        members["origin"] = ["session": .string(origin), "version": .integer(at)]
        return .object(members)
    }

    @Test func whoMayForkAndWhatIsRefused() async throws {
        try await withRunningServer(configure: { $0.service.maxCopiedEvents = 3 }) { client, _ in
            let origin = try await TestSession.create(client)
            try await origin.push("A")
            let other = try await TestSession.create(client)
            func fork(_ body: JSONValue, token: String?) async throws -> HTTPResponse {
                try await client.send("POST", "/v1/sessions/fork", json: body, token: token)
            }
            let id = JSONValue.string(origin.id)
            expectProblem(try await fork(["session": id], token: nil), 401, type: "unauthorized")
            expectProblem(try await fork(["session": id], token: other.token), 403, type: "forbidden")
            expectProblem(
                try await fork(["session": "s_unknown"], token: client.adminToken), 404, type: "not-found")
            expectProblem(
                try await fork(["session": id, "at": 0], token: origin.token), 422, type: "unprocessable-content",
                pointers: ["/at"])
            expectProblem(
                try await fork(["session": id, "at": 3], token: origin.token), 422, type: "unprocessable-content",
                pointers: ["/at"])
            expectProblem(
                try await fork([:], token: origin.token), 422, type: "unprocessable-content", pointers: ["/session"])
            expectProblem(
                try await fork(["session": id, "extra": 1], token: origin.token), 422, type: "unprocessable-content",
                pointers: ["/extra"])
            try await origin.push("B")
            try await origin.push("C")
            let tooLong = try await fork(["session": id], token: origin.token)
            expectProblem(tooLong, 422, type: "unprocessable-content", pointers: ["/at"])
            #expect(tooLong.json?["detail"]?.stringValue?.contains("--max-copied-events") == true)
            #expect(try await fork(["session": id, "at": 2], token: client.adminToken).status == 201)
            // An observer of the session may fork it too: a fork only copies what it can read.
            let observer = try await client.send(
                "POST", "/v1/observers", json: ["session": id], token: origin.token)
            let observerToken = try #require(observer.json?["token"]?.stringValue)
            #expect(try await fork(["session": id, "at": 1], token: observerToken).status == 201)
            // A fork outlives its origin.
            let kept = try #require(try await fork(["session": id, "at": 2], token: origin.token).json)
            #expect(try await origin.send("DELETE", "?purge=true").status == 204)
            let fork = TestSession(
                client: client, id: try #require(kept["id"]?.stringValue),
                token: try #require(kept["token"]?.stringValue),
                created: kept)
            #expect(try await fork.get()["origin"]?["session"] == id)
        }
    }

    @Test(arguments: Backend.available)
    func aRetriedForkAnswersTheFirstForkAgain(backend: Backend) async throws {
        try await withRunningServer(on: backend) { client, _ in
            let origin = try await TestSession.create(client)
            let body: JSONValue = ["session": .string(origin.id)]
            let headers = ["Idempotency-Key": "fork-1"]
            let first = try await client.send(
                "POST", "/v1/sessions/fork", json: body, token: origin.token, headers: headers)
            let second = try await client.send(
                "POST", "/v1/sessions/fork", json: body, token: origin.token, headers: headers)
            #expect(first.status == 201)
            #expect(second.header("Idempotent-Replayed") == "true")
            #expect(second.json == first.json)
            // Another credential with the same key and body makes its own fork.
            let admin = try await client.send(
                "POST", "/v1/sessions/fork", json: body, token: client.adminToken, headers: headers)
            #expect(admin.status == 201)
            #expect(admin.header("Idempotent-Replayed") == nil)
            #expect(admin.json?["id"] != first.json?["id"])
        }
    }
}
