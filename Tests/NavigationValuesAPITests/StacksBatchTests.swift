import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import TestSupport
import Testing

/// `POST /v1/sessions/{id}/batch` (docs/Stacks.md, Batches): several operations, all or nothing,
/// one event, one version step.
@Suite struct StacksBatchTests {
    static let schema: JSONValue = [
        "values": ["title": ["type": "string", "default": ""]],
        "preferences": ["selection": ["type": "string", "default": ""]],
        "strict": true,
    ]

    /// What a session shows everywhere a client can look: the session, its stacks, its history.
    func everything(_ session: TestSession) async throws -> [JSONValue] {
        [
            try await session.get(), try await session.expect(200, "GET", "/stacks"),
            .array(try await session.history()),
        ]
    }

    @Test func aBatchAppliesInOrderAsOneEventAndOneVersionStep() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "Home"], "schema": Self.schema])
            let stream = try SSEClient(
                port: client.http.port, path: "/v1/sessions/\(session.id)/events",
                headers: ["Authorization": "Bearer \(session.token)"])
            defer { stream.close() }
            #expect(await stream.status() == 200)
            let answer = try await session.expect(
                200, "POST", "/batch",
                json: [
                    "operations": [
                        ["op": "push", "name": "Detail"],
                        ["op": "setValues", "screen": "top", "values": ["title": "d"]],
                        ["op": "present", "style": "sheet", "root": ["name": "Picker"]],
                        ["op": "push", "stack": "top", "name": "Page"],
                        ["op": "setHandler", "screen": "root", "key": "selection", "passBack": true],
                        ["op": "return", "screen": "top", "key": "selection", "value": "p"],
                    ]
                ])
            #expect(answer["version"] == 2)
            let results = try #require(answer["results"]?.arrayValue)
            #expect(results.count == 6)
            #expect(results.allSatisfy { $0["version"] == nil })
            #expect(results[0]["screen"]?["name"] == "Detail")
            #expect(results[1]["affected"]?.arrayValue?.count == 1)
            #expect(results[2]["stack"]?["kind"] == "sheet")
            #expect(results[3]["screen"]?["resolved"]?["title"] == "d")
            // The page published from the sheet reaches the root through the sheet and Detail.
            #expect(results[5]["deliveries"]?.arrayValue?.count == 1)
            let shown = try await session.get()
            #expect(shown["version"] == 2)
            #expect(shown["stacks"]?.item(0)?["screens"]?.arrayValue?.map { $0["name"] } == ["Picker"])
            #expect(shown["screens"]?.item(0)?["preferences"] == ["selection": "p"])

            // One event, one SSE frame, with every step in order.
            let history = try await session.history()
            #expect(history.count == 2)
            let event = try #require(history.last)
            #expect(event["type"] == "batch.applied" && event["seq"] == 2)
            #expect(
                event["events"]?.arrayValue?.map { $0["type"] }
                    == [
                        "screen.pushed", "values.updated", "stack.presented", "stack.screen.pushed", "handler.set",
                        "screen.returned",
                    ])
            let frames = await stream.frames.events(1)
            #expect(frames.map(\.id) == ["2"] && frames.map(\.event) == ["batch.applied"])
            let data = try #require(frames.first?.data)
            #expect(try JSONValue(parsing: data) == event)
        }
    }

    @Test func popAndPushAsOneStep() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let old = try await session.push("Old")
            let answer = try await session.expect(
                200, "POST", "/batch", json: ["operations": [["op": "pop"], ["op": "push", "name": "New"]]])
            #expect(answer["results"]?.item(0)?["popped"] == [.string(old)])
            #expect(try await session.get()["screens"]?.arrayValue?.map { $0["name"] } == ["", "New"])
            #expect(try await session.get()["version"] == 3)
        }
    }

    /// A batch that fails half-way changes nothing, in memory, in the store, on the
    /// stream, and after a restart; the answer points at the failing operation.
    @Test func aBatchThatFailsHalfWayChangesNothing() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-batch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("batch.sqlite").path
        let (session, before) = try await withRunningServer(databasePath: path) { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "Home"], "schema": Self.schema])
            _ = try await session.push("Detail")
            _ = try await session.addTab("search", root: "Search")
            let before = try await everything(session)
            let stream = try SSEClient(
                port: client.http.port, path: "/v1/sessions/\(session.id)/events",
                headers: ["Authorization": "Bearer \(session.token)"])
            defer { stream.close() }
            #expect(await stream.status() == 200)

            // A conflict at operation 4, after four operations that applied in memory.
            let conflict = try await session.send(
                "POST", "/batch",
                json: [
                    "operations": [
                        ["op": "push", "name": "A"],
                        ["op": "setValues", "screen": "top", "values": ["title": "a"]],
                        ["op": "present", "root": ["name": "Sheet"]],
                        ["op": "selectStack", "stack": "search"],
                        ["op": "pop", "count": 5],
                        ["op": "push", "name": "Never"],
                    ]
                ])
            expectProblem(conflict, 409, type: "conflict", pointers: ["/operations/4"])
            #expect(conflict.json?["detail"]?.stringValue?.hasPrefix("operation 4 (pop): ") == true)
            #expect(try await everything(session) == before)

            // A wrong type at operation 2 points at the value inside the operation.
            let invalid = try await session.send(
                "POST", "/batch",
                json: [
                    "operations": [
                        ["op": "createStack", "id": "more"], ["op": "push", "stack": "more", "name": "M"],
                        ["op": "setValues", "screen": "more:top", "values": ["title": 5]],
                    ]
                ])
            expectProblem(invalid, 422, type: "unprocessable-content", pointers: ["/operations/2/values/title"])
            #expect(try await everything(session) == before)

            // An unknown operation, an unknown member, a missing screen, a stack that is not there.
            let shapes: [(JSONValue, String, Int)] = [
                (["op": "teleport"], "/operations/1/op", 422),
                (["op": "push", "colour": "red"], "/operations/1/colour", 422),
                (["op": "setValues", "values": [:]], "/operations/1/screen", 422),
                (["op": "push", "stack": "nowhere"], "/operations/1", 404),
                ([1, 2], "/operations/1", 422),
            ]
            for (operation, pointer, status) in shapes {
                let answer = try await session.send(
                    "POST", "/batch", json: ["operations": [["op": "push", "name": "First"], operation]])
                #expect(answer.status == status, "\(operation)")
                #expect(answer.json?["errors"]?.item(0)?["pointer"] == .string(pointer), "\(operation)")
            }
            #expect(try await everything(session) == before)

            // The next change goes on from where the session was, and is the stream's next event.
            let version = try #require(before[0]["version"]?.integerValue)
            let pushed = try await session.expect(201, "POST", "/push", json: ["name": "After"])
            #expect(pushed["version"] == .integer(version + 1))
            let frames = await stream.frames.events(1)
            #expect(frames.map(\.id) == [String(version + 1)] && frames.map(\.event) == ["screen.pushed"])
            try await session.expect(200, "POST", "/pop")
            return (session, try await everything(session))
        }
        try await withRunningServer(databasePath: path) { client, _ in
            let restarted = TestSession(client: client, id: session.id, token: session.token, created: session.created)
            let after = try await everything(restarted)
            #expect(after == before)
        }
    }

    @Test func aBatchIsRetriedSafelyAndHonoursIfMatch() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let body: JSONValue = ["operations": [["op": "push", "name": "A"], ["op": "push", "name": "B"]]]
            let first = try await session.send("POST", "/batch", json: body, headers: ["Idempotency-Key": "k-1"])
            let again = try await session.send("POST", "/batch", json: body, headers: ["Idempotency-Key": "k-1"])
            #expect(first.status == 200 && again.status == 200)
            #expect(again.body == first.body)
            #expect(again.header("Idempotent-Replayed") == "true")
            #expect(try await session.get()["version"] == 2)
            #expect(try await session.get().screenIDs.count == 3)

            let stale = try await session.send("POST", "/batch", json: body, headers: ["If-Match": "\"1\""])
            expectProblem(stale, 412, type: "precondition-failed")
            let current = try await session.send("POST", "/batch", json: body, headers: ["If-Match": "\"2\""])
            #expect(current.status == 200 && current.header("ETag") == "\"3\"")
        }
    }

    @Test func aBatchHoldsOneToMaxOperations() async throws {
        try await withRunningServer(configure: { $0.service.limits.maxBatchOperations = 3 }) { client, _ in
            let session = try await TestSession.create(client)
            let push: JSONValue = ["op": "push"]
            let tooMany = try await session.send("POST", "/batch", json: ["operations": [push, push, push, push]])
            expectProblem(tooMany, 422, type: "unprocessable-content", pointers: ["/operations"])
            let empty = try await session.send("POST", "/batch", json: ["operations": []])
            expectProblem(empty, 422, type: "unprocessable-content", pointers: ["/operations"])
            let missing = try await session.send("POST", "/batch", json: [:])
            expectProblem(missing, 422, type: "unprocessable-content", pointers: ["/operations"])
            let enough = try await session.send("POST", "/batch", json: ["operations": [push, push, push]])
            #expect(enough.status == 200)
            #expect(try await session.get()["version"] == 2)
        }
    }
}
