import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

/// Each endpoint of docs/API.md's table (sessions, stack, screens, values, handlers, preferences), through
/// real HTTP against a server on a real SQLite file, checking whole answers.
@Suite struct SessionEndpointTests {
    static let schema: JSONValue = [
        "values": [
            "title": ["type": "string", "default": ""],
            "counter": ["type": "integer", "default": 0],
            "draft": ["type": "string", "default": "", "observationIgnored": true],
        ],
        "preferences": ["selectedItem": ["type": "string", "default": ""]],
        "strict": true,
    ]

    /// A session answer without its timestamps (they are checked for shape separately).
    static func withoutTimes(_ session: JSONValue) -> JSONValue {
        guard case .object(var members) = session else { return session }
        members["createdAt"] = nil
        members["updatedAt"] = nil
        members["token"] = nil
        return .object(members)
    }

    static func isTimestamp(_ value: JSONValue?) -> Bool {
        guard let text = value?.stringValue else { return false }
        return text.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil
    }

    // MARK: - Sessions

    @Test func creatingASessionAnswersItWithTokenETagAndLocation() async throws {
        try await withRunningServer { client, _ in
            let answer = try await client.send(
                "POST", "/v1/sessions",
                json: ["root": ["name": "Home", "values": ["title": "x"]], "schema": Self.schema])
            #expect(answer.status == 201)
            #expect(answer.header("Content-Type") == "application/json; charset=utf-8")
            let json = try #require(answer.json)
            let id = try #require(json["id"]?.stringValue)
            let token = try #require(json["token"]?.stringValue)
            #expect(id.hasPrefix("s_") && id.count == 14)
            #expect(token.count >= 22 && token != id)  // >= 128 bits of base64url
            #expect(answer.header("ETag") == "\"1\"")
            #expect(answer.header("Location") == "/v1/sessions/\(id)")
            #expect(Self.isTimestamp(json["createdAt"]) && Self.isTimestamp(json["updatedAt"]))
            let rootID = try #require(json.screenIDs.first)
            #expect(rootID.hasPrefix("c_"))
            let expected: JSONValue = [
                "id": .string(id), "version": 1, "state": "active", "schema": Self.schema,
                "screens": [
                    [
                        "id": .string(rootID), "index": 0, "name": "Home", "role": "screen",
                        "previous": .null, "next": .null, "values": ["title": "x"],
                        "resolved": ["title": "x", "counter": 0, "draft": ""],
                        "preferences": [:], "handlers": [:],
                    ]
                ],
                // The members of several stacks (docs/Stacks.md): one main stack, selected, its root seen.
                "selectedStack": "main", "visibleScreen": .string(rootID), "stacks": [],
            ]
            #expect(Self.withoutTimes(json) == expected)
        }
    }

    @Test func creatingWithoutABodyMakesAnUnnamedRootAndNoSchema() async throws {
        try await withRunningServer { client, _ in
            let answer = try await client.send("POST", "/v1/sessions")
            #expect(answer.status == 201)
            let json = try #require(answer.json)
            #expect(json["schema"] == ["values": [:], "preferences": [:], "strict": false])
            let root = try #require(json["screens"]?.arrayValue?.first)
            #expect(root["name"] == "" && root["values"] == [:] && root["resolved"] == [:])
        }
    }

    @Test func gettingASessionAnswersWhatCreateAnsweredWithItsETag() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "Home"], "schema": Self.schema])
            let answer = try await session.send("GET")
            #expect(answer.status == 200)
            #expect(answer.header("ETag") == "\"1\"")
            var created = session.created
            if case .object(var members) = created {
                members["token"] = nil
                created = .object(members)
            }
            #expect(answer.json == created)
            // The admin token reads every session.
            let asAdmin = try await client.send("GET", "/v1/sessions/\(session.id)", token: client.adminToken)
            #expect(asAdmin.json == created)
        }
    }

    @Test func listingSessionsIsForTheAdminAndPages() async throws {
        try await withRunningServer { client, _ in
            var ids: [String] = []
            for _ in 0..<3 { ids.append(try await TestSession.create(client).id) }
            let session = try await TestSession.create(client)
            try await session.push("Detail")
            ids.append(session.id)
            ids.sort()

            let first = try await client.send("GET", "/v1/sessions?limit=3", token: client.adminToken)
            #expect(first.status == 200)
            let page = try #require(first.json?["sessions"]?.arrayValue)
            #expect(page.compactMap { $0["id"]?.stringValue } == Array(ids.prefix(3)))
            #expect(first.json?["nextCursor"] == .string(ids[2]))
            let second = try await client.send("GET", "/v1/sessions?limit=3&cursor=\(ids[2])", token: client.adminToken)
            let rest = try #require(second.json?["sessions"]?.arrayValue)
            #expect(second.json?["nextCursor"] == .null)
            #expect(rest.count == 1)
            let item = try #require(rest.first)
            #expect(item["id"] == .string(ids[3]))
            #expect(Set(item.objectValue?.keys.map { $0 } ?? []) == ["id", "version", "state", "depth", "updatedAt"])
            let pushed = page + rest
            let line = try #require(pushed.first { $0["id"] == .string(session.id) })
            #expect(line["version"] == 2 && line["depth"] == 2 && line["state"] == "active")
            #expect(Self.isTimestamp(line["updatedAt"]))
        }
    }

    @Test func deletingEndsTheSessionWhichStillReadsAsEnded() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            try await session.push("Detail")
            let deleted = try await session.send("DELETE")
            #expect(deleted.status == 204)
            #expect(deleted.body.isEmpty)
            #expect(deleted.header("ETag") == "\"3\"")
            let read = try await session.get()
            #expect(read["state"] == "ended")
            #expect(read["version"] == 3)
            #expect(read.screenIDs.count == 2)
            let top = try await session.send("GET", "/screens/top")
            #expect(top.status == 200)
        }
    }

    @Test func purgingDeletesTheSessionEvenAfterItEnded() async throws {
        try await withRunningServer { client, server in
            let purged = try await TestSession.create(client)
            #expect(try await purged.send("DELETE", "?purge=true").status == 204)
            expectProblem(try await purged.send("GET"), 404, type: "not-found")
            #expect(try await server.store.events(of: SessionID(purged.id), after: 0, limit: 10).isEmpty)

            let ended = try await TestSession.create(client)
            #expect(try await ended.send("DELETE").status == 204)
            #expect(try await ended.send("DELETE", "?purge=true").status == 204)
            expectProblem(try await ended.send("GET"), 404, type: "not-found")
            expectProblem(try await ended.send("POST", "/push", json: [:]), 404, type: "not-found")
        }
    }

    // MARK: - The stack

    @Test func pushingAnswersTheNewScreenLinkedToThePreviousOne() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(
                client, ["root": ["name": "Home", "values": ["title": "x"]], "schema": Self.schema])
            let rootID = try #require(session.created.screenIDs.first)
            let answer = try await session.send("POST", "/push", json: ["name": "Detail", "values": ["counter": 2]])
            #expect(answer.status == 201)
            #expect(answer.header("ETag") == "\"2\"")
            let json = try #require(answer.json)
            let screenID = try #require(json["screen"]?["id"]?.stringValue)
            let expected: JSONValue = [
                "version": 2,
                "screen": [
                    "id": .string(screenID), "index": 1, "name": "Detail", "role": "screen",
                    "previous": .string(rootID), "next": .null, "values": ["counter": 2],
                    "resolved": ["title": "x", "counter": 2, "draft": ""], "preferences": [:], "handlers": [:],
                ],
            ]
            #expect(json == expected)
            let root = try await session.screen("root")
            #expect(root["next"] == .string(screenID))
            #expect(try await session.screen("top") == expected["screen"])
            #expect(try await session.screen(screenID) == expected["screen"])
        }
    }

    @Test func poppingByCountOrToAnswersThePoppedIdsTopmostFirst() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let rootID = try #require(session.created.screenIDs.first)
            let a = try await session.push("A")
            let b = try await session.push("B")
            let c = try await session.push("C")
            let d = try await session.push("D")

            let byCount = try await session.send("POST", "/pop", json: ["count": 2])
            #expect(byCount.status == 200)
            #expect(byCount.header("ETag") == "\"6\"")
            #expect(byCount.json == ["popped": [.string(d), .string(c)], "version": 6])

            let back = try await session.send("POST", "/pop")
            #expect(back.json == ["popped": [.string(b)], "version": 7])

            try await session.push("E")
            let toRoot = try await session.send("POST", "/pop", json: ["to": "root"])
            #expect(toRoot.json?["popped"]?.arrayValue?.count == 2)
            #expect(toRoot.json?["popped"]?.arrayValue?.last == .string(a))
            #expect(try await session.get().screenIDs == [rootID])
            for popped in [a, b, c, d] {
                expectProblem(try await session.send("GET", "/screens/\(popped)"), 404, type: "not-found")
            }

            let kept = try await session.push("F")
            try await session.push("G")
            let toScreen = try await session.send("POST", "/pop", json: ["to": .string(kept)])
            #expect(toScreen.status == 200)
            #expect(try await session.get().screenIDs == [rootID, kept])
            #expect(try await session.screen("top")["next"] == .null)
        }
    }

    @Test func replacingThePathPopsAndPushesInOneStep() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["root": ["values": ["title": "x"]]])
            let rootID = try #require(session.created.screenIDs.first)
            let old1 = try await session.push("Old1")
            let old2 = try await session.push("Old2")
            let answer = try await session.send(
                "PUT", "/path", json: ["screens": [["name": "List"], ["name": "Item", "values": ["title": "y"]]]])
            #expect(answer.status == 200)
            #expect(answer.header("ETag") == "\"4\"")
            let json = try #require(answer.json)
            #expect(json["version"] == 4)
            #expect(json["popped"] == [.string(old2), .string(old1)])
            let pushed = try #require(json["pushed"]?.arrayValue)
            #expect(pushed.map { $0["name"] } == ["List", "Item"])
            #expect(pushed.map { $0["index"] } == [1, 2])
            #expect(pushed[0]["previous"] == .string(rootID))
            #expect(pushed[0]["resolved"] == ["title": "x"])
            #expect(pushed[1]["resolved"] == ["title": "y"])
            #expect(pushed[1]["previous"] == pushed[0]["id"])
            let session2 = try await session.get()
            #expect(session2.screenIDs == [rootID] + pushed.compactMap { $0["id"]?.stringValue })
            // The pushed screens as answered are what reads show (links included).
            #expect(session2["screens"]?.arrayValue?.last == pushed.last)

            let empty = try await session.send("PUT", "/path", json: ["screens": []])
            #expect(empty.json?["pushed"] == [])
            #expect(empty.json?["popped"]?.arrayValue?.count == 2)
            #expect(try await session.get().screenIDs == [rootID])
        }
    }

    // MARK: - Values

    @Test func patchingValuesAnswersTheScreenVersionAndAffected() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["schema": Self.schema])
            let rootID = try #require(session.created.screenIDs.first)
            let top = try await session.push("Detail")
            let answer = try await session.send(
                "PATCH", "/screens/root/values", json: ["title": "x", "counter": 3, "draft": "d"])
            #expect(answer.status == 200)
            #expect(answer.header("ETag") == "\"3\"")
            let json = try #require(answer.json)
            #expect(json["version"] == 3)
            #expect(json["screen"]?["values"] == ["title": "x", "counter": 3, "draft": "d"])
            #expect(json["screen"]?["resolved"] == ["title": "x", "counter": 3, "draft": "d"])
            // Observation-ignored `draft` never appears; order: keys sorted, then nearest screen first.
            #expect(
                json["affected"] == [
                    ["screen": .string(rootID), "key": "counter", "value": 3],
                    ["screen": .string(top), "key": "counter", "value": 3],
                    ["screen": .string(rootID), "key": "title", "value": "x"],
                    ["screen": .string(top), "key": "title", "value": "x"],
                ])

            // null removes an override; the screen falls back to the default.
            let removed = try await session.patch("root", ["counter": .null, "draft": .null])
            #expect(removed["screen"]?["values"] == ["title": "x"])
            #expect(removed["screen"]?["resolved"] == ["title": "x", "counter": 0, "draft": ""])
            #expect(
                removed["affected"] == [
                    ["screen": .string(rootID), "key": "counter", "value": 0],
                    ["screen": .string(top), "key": "counter", "value": 0],
                ])

            // An equal write changes no resolved value, but still creates the override.
            let equal = try await session.patch("top", ["title": "x"])
            #expect(equal["affected"] == [])
            #expect(equal["screen"]?["values"] == ["title": "x"])
            #expect(equal["version"] == 5)
        }
    }

    // MARK: - Handlers and preferences

    @Test func settingAndRemovingHandlersAnswersTheirState() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let set = try await session.send("PUT", "/screens/root/handlers/selection", json: ["passBack": false])
            #expect(set.status == 200)
            #expect(set.header("ETag") == "\"2\"")
            #expect(set.json?["version"] == 2)
            #expect(set.json?["screen"]?["handlers"] == ["selection": ["passBack": false]])
            let replaced = try await session.send("PUT", "/screens/root/handlers/selection", json: ["passBack": true])
            #expect(replaced.json?["screen"]?["handlers"] == ["selection": ["passBack": true]])
            let removed = try await session.send("DELETE", "/screens/root/handlers/selection")
            #expect(removed.status == 200)
            #expect(removed.header("ETag") == "\"4\"")
            #expect(removed.json == ["version": 4])
            #expect(try await session.screen("root")["handlers"] == [:])
            expectProblem(try await session.send("DELETE", "/screens/root/handlers/selection"), 404, type: "not-found")
        }
    }

    @Test func publishingAnswersDeliveriesAndWhereTheWalkStopped() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["schema": Self.schema])
            let rootID = try #require(session.created.screenIDs.first)
            let middle = try await session.push("Middle")
            let top = try await session.push("Top")
            try await session.handle("root", "selectedItem", passBack: true)
            try await session.handle(middle, "selectedItem", passBack: false)

            let answer = try await session.send(
                "POST", "/screens/top/preferences/selectedItem", json: ["value": "chosen"])
            #expect(answer.status == 200)
            #expect(answer.header("ETag") == "\"6\"")
            #expect(
                answer.json == [
                    "deliveries": [["screen": .string(middle), "value": "chosen"]], "stoppedAt": .string(middle),
                    "version": 6,
                ])
            #expect(try await session.screen(middle)["preferences"] == ["selectedItem": "chosen"])
            #expect(try await session.screen(top)["preferences"] == [:])
            #expect(try await session.screen(rootID)["preferences"] == [:])

            // Removing the blocking handler keeps its last received value readable.
            try #require(try await session.send("DELETE", "/screens/\(middle)/handlers/selectedItem").status == 200)
            let through = try await session.publish("top", "selectedItem", "other")
            #expect(
                through == [
                    "deliveries": [["screen": .string(rootID), "value": "other"]], "stoppedAt": .null, "version": 8,
                ])
            #expect(try await session.screen(middle)["preferences"] == ["selectedItem": "chosen"])
            #expect(try await session.screen(middle)["handlers"] == [:])

            // A publish that reaches no handler is still a mutation.
            let plain = try await TestSession.create(client)
            let nobody = try await plain.publish("root", "unrelated", 1)
            #expect(nobody == ["deliveries": [], "stoppedAt": .null, "version": 2])
            #expect(try await plain.get()["version"] == 2)
        }
    }

    @Test func anInMemoryDatabaseServesTheSameAPI() async throws {
        try await withRunningServer(configure: { $0.databasePath = ":memory:" }) { client, _ in
            let session = try await TestSession.create(client, ["root": ["values": ["title": "x"]]])
            let key = ["Idempotency-Key": "once"]
            let pushed = try await session.send("POST", "/push", json: ["name": "A"], headers: key)
            let retried = try await session.send("POST", "/push", json: ["name": "A"], headers: key)
            #expect(pushed.status == 201)
            #expect(retried.json == pushed.json)
            let list = try await client.send("GET", "/v1/sessions", token: client.adminToken)
            #expect(list.json?["sessions"]?.arrayValue?.first?["depth"] == 2)
            #expect(try await session.screen("top")["resolved"] == ["title": "x"])
        }
    }

    // MARK: - Health

    @Test func healthAndReadinessAnswerOK() async throws {
        try await withRunningServer { client, _ in
            let health = try await client.send("GET", "/healthz")
            #expect(health.status == 200)
            #expect(health.json == ["status": "ok"])
            let ready = try await client.send("GET", "/readyz")
            #expect(ready.status == 200)
        }
    }
}
