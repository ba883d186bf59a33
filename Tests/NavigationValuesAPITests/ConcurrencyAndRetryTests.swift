import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

/// Many clients on one session, `If-Match` and `Idempotency-Key`.
@Suite struct ConcurrencyAndRetryTests {
    @Test func sixteenClientsPushingAtOnceGetDistinctGapFreeVersions() async throws {
        try await withRunningServer { client, server in
            let session = try await TestSession.create(client)
            let clients = 16
            // One client each, so each has its own connection.
            let versions = try await withThrowingTaskGroup(of: Int64.self) { group in
                for index in 0..<clients {
                    let own = TestClient(port: server.port, adminToken: client.adminToken)
                    let mine = TestSession(client: own, id: session.id, token: session.token, created: session.created)
                    group.addTask {
                        let answer = try await mine.send("POST", "/push", json: ["name": .string("client \(index)")])
                        try #require(answer.status == 201)
                        let version = try #require(answer.json?["version"]?.integerValue)
                        try #require(answer.header("ETag") == "\"\(version)\"")
                        return version
                    }
                }
                var versions: [Int64] = []
                for try await version in group { versions.append(version) }
                return versions
            }
            #expect(versions.sorted() == Array(2...Int64(clients + 1)))
            let final = try await session.get()
            #expect(final["version"] == .integer(Int64(clients + 1)))
            #expect(final.screenIDs.count == clients + 1)
            let events = try await server.store.events(of: SessionID(session.id), after: 0, limit: 100)
            #expect(events.map(\.seq) == Array(1...Int64(clients + 1)))
            #expect(events.dropFirst().allSatisfy { $0.type == "screen.pushed" })
            // Each push landed on top of the one before it: the stack order is the version order.
            let names = final["screens"]?.arrayValue?.dropFirst().compactMap { $0["name"]?.stringValue } ?? []
            #expect(Set(names).count == clients)
        }
    }

    @Test func ifMatchAppliesOnlyAtTheNamedVersion() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            // Two writers race from version 1 with If-Match: exactly one wins.
            let results = try await withThrowingTaskGroup(of: Int.self) { group in
                for name in ["A", "B"] {
                    group.addTask {
                        try await session.send(
                            "POST", "/push", json: ["name": .string(name)], headers: ["If-Match": "\"1\""]
                        )
                        .status
                    }
                }
                var statuses: [Int] = []
                for try await status in group { statuses.append(status) }
                return statuses.sorted()
            }
            #expect(results == [201, 412])
            let read = try await session.get()
            #expect(read["version"] == 2)
            #expect(read.screenIDs.count == 2)
        }
    }

    @Test func aRetriedRequestReplaysTheFirstAnswerAndAppliesOnce() async throws {
        try await withRunningServer { client, server in
            let session = try await TestSession.create(client)
            let key = ["Idempotency-Key": "push-1"]
            let first = try await session.send("POST", "/push", json: ["name": "A"], headers: key)
            #expect(first.status == 201)
            let again = try await session.send("POST", "/push", json: ["name": "A"], headers: key)
            #expect(again.status == 201)
            #expect(again.json == first.json)
            #expect(again.header("ETag") == first.header("ETag"))
            #expect(try await session.get().screenIDs.count == 2)

            // Later writes do not change what the retry answers.
            try await session.patch("root", ["a": 1])
            let late = try await session.send("POST", "/push", json: ["name": "A"], headers: key)
            #expect(late.json == first.json)
            #expect(late.header("ETag") == "\"2\"")
            // A retry replays even when If-Match names a version the session has left.
            let conditional = try await session.send(
                "POST", "/push", json: ["name": "A"], headers: key.merging(["If-Match": "\"2\""]) { $1 })
            #expect(conditional.json == first.json)

            // The same key on another route or another session is independent.
            let pop = try await session.send("POST", "/pop", headers: key)
            #expect(pop.status == 200)
            #expect(pop.json?["version"] == 4)
            let other = try await TestSession.create(client)
            let otherPush = try await other.send("POST", "/push", json: ["name": "A"], headers: key)
            #expect(otherPush.status == 201)
            #expect(otherPush.json?["screen"]?["id"] != first.json?["screen"]?["id"])
            #expect(try await other.get()["version"] == 2)

            let events = try await server.store.events(of: SessionID(session.id), after: 0, limit: 100)
            #expect(events.map(\.type) == ["session.created", "screen.pushed", "values.updated", "screens.popped"])
            let publish = ["Idempotency-Key": "publish-1"]
            try await session.handle("root", "k", passBack: true)
            let published = try await session.send(
                "POST", "/screens/root/preferences/k", json: ["value": 1], headers: publish)
            let replayed = try await session.send(
                "POST", "/screens/root/preferences/k", json: ["value": 1], headers: publish)
            #expect(replayed.json == published.json)
            #expect(replayed.json?["deliveries"]?.arrayValue?.count == 1)
            #expect(try await session.get()["version"] == 6)

            // After the session ended, a retry still gets its first answer; a new write is 410.
            #expect(try await session.send("DELETE").status == 204)
            let afterEnd = try await session.send("POST", "/push", json: ["name": "A"], headers: key)
            #expect(afterEnd.status == 201)
            #expect(afterEnd.json == first.json)
            let fresh = try await session.send(
                "POST", "/push", json: ["name": "A"], headers: ["Idempotency-Key": "new"])
            expectProblem(fresh, 410, type: "gone")
        }
    }

    @Test func concurrentRetriesOfACreateMakeOneSession() async throws {
        try await withRunningServer { client, _ in
            let key = ["Idempotency-Key": "create-1"]
            let answers = try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
                for _ in 0..<4 {
                    group.addTask { try await client.send("POST", "/v1/sessions", json: [:], headers: key) }
                }
                var answers: [HTTPResponse] = []
                for try await answer in group { answers.append(answer) }
                return answers
            }
            #expect(answers.allSatisfy { $0.status == 201 })
            #expect(Set(answers.compactMap { $0.json?["id"]?.stringValue }).count == 1)
            #expect(Set(answers.compactMap { $0.header("Location") }).count == 1)
            let list = try await client.send("GET", "/v1/sessions", token: client.adminToken)
            #expect(list.json?["sessions"]?.arrayValue?.count == 1)
        }
    }

    @Test func aCreateKeyReusedWithAnotherBodyDoesNotHandOverTheFirstSession() async throws {
        try await withRunningServer { client, _ in
            let key = ["Idempotency-Key": "shared-key"]
            let first = try await client.send("POST", "/v1/sessions", json: ["root": ["name": "Mine"]], headers: key)
            let retry = try await client.send("POST", "/v1/sessions", json: ["root": ["name": "Mine"]], headers: key)
            let other = try await client.send("POST", "/v1/sessions", json: ["root": ["name": "Theirs"]], headers: key)
            #expect(first.status == 201 && retry.status == 201 && other.status == 201)
            #expect(retry.json?["token"] == first.json?["token"])
            #expect(other.json?["id"] != first.json?["id"])
            #expect(other.json?["token"] != first.json?["token"])
        }
    }
}
