import Foundation
import NavigationValues
import TestSupport
import Testing

/// Moving a tab among the tabs (docs/Stacks.md, `POST …/stacks/{stack}/move`): its answer, its
/// `stack.moved` event, what it refuses, in a batch, and across restarts on both stores.
@Suite struct StacksMoveTests {
    /// The tabs' ids in the order `GET …/stacks` lists them (the main stack first).
    static func order(_ session: TestSession) async throws -> [String] {
        let stacks = try await session.expect(200, "GET", "/stacks")["stacks"]?.arrayValue ?? []
        return stacks.compactMap { $0["id"]?.stringValue }
    }

    @Test func aTabMovesAmongTheTabsWithItsOwnAnswerAndEvent() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "Home"]])
            for tab in ["a", "b", "c"] { _ = try await session.addTab(tab, root: tab.uppercased()) }
            try await session.expect(200, "POST", "/select", json: ["stack": "b"])
            let before = try await session.get()

            let answer = try await session.send("POST", "/stacks/c/move", json: ["position": 0])
            #expect(answer.status == 200)
            #expect(answer.header("ETag") == "\"6\"")
            #expect(answer.json == ["stack": "c", "position": 0, "version": 6])
            #expect(try await Self.order(session) == ["main", "c", "a", "b"])
            let after = try await session.get()
            #expect(after["stacks"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["c", "a", "b"])
            // Nothing else changed: the selection, what a user sees, every stack's screens.
            #expect(after["selectedStack"] == "b" && after["visibleScreen"] == before["visibleScreen"])
            #expect(after["screens"] == before["screens"])
            let last = try #require(try await session.history().last)
            #expect(last["type"] == "stack.moved" && last["stack"] == "c" && last["position"] == 0)

            // `selected` names the tab; a move to where it is is still a change with its event.
            try await session.expect(200, "POST", "/stacks/selected/move", json: ["position": 2])
            #expect(try await Self.order(session) == ["main", "c", "a", "b"])
            #expect(try await session.get()["version"] == 7)
            try await session.expect(200, "POST", "/stacks/selected/move", json: ["position": 0])
            #expect(try await Self.order(session) == ["main", "b", "c", "a"])
            // Replay rebuilds the order from the events.
            #expect(try await session.expect(200, "GET", "/replay") == (try await session.get()))
        }
    }

    @Test func whatCannotMoveIsAClearProblemAndChangesNothing() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "Home"]])
            _ = try await session.addTab("a", root: "A")
            _ = try await session.addTab("b", root: "B")
            let (sheet, _) = try await session.present(from: "root", root: "Sheet")
            let before = try await session.get()
            func move(_ stack: String, _ body: JSONValue) async throws -> HTTPResponse {
                try await session.send("POST", "/stacks/\(stack)/move", json: body)
            }
            expectProblem(try await move("nope", ["position": 0]), 404, type: "not-found")
            expectProblem(try await move("main", ["position": 0]), 409, type: "conflict")
            expectProblem(try await move(sheet, ["position": 0]), 409, type: "conflict")
            expectProblem(try await move("top", ["position": 0]), 409, type: "conflict")
            // Past the last tab depends on the session (409, as a pop past the root); what is not a
            // position at all is 422.
            for position: JSONValue in [2, 9_223_372_036_854_775_807] {
                expectProblem(try await move("a", ["position": position]), 409, type: "conflict")
            }
            for position: JSONValue in [-1, 1.5, "1", .null] {
                expectProblem(
                    try await move("a", ["position": position]), 422, type: "unprocessable-content",
                    pointers: ["/position"])
            }
            expectProblem(try await move("a", [:]), 422, type: "unprocessable-content", pointers: ["/position"])
            expectProblem(
                try await move("a", ["position": 1, "to": 0]), 422, type: "unprocessable-content", pointers: ["/to"])
            let stale = try await session.send(
                "POST", "/stacks/a/move", json: ["position": 1], headers: ["If-Match": "\"1\""])
            expectProblem(stale, 412, type: "precondition-failed")
            #expect(try await session.get() == before)
        }
    }

    @Test func aBatchMovesTabsInOrderAndPointsIntoItWhenItCannot() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "Home"]])
            let answer = try await session.expect(
                200, "POST", "/batch",
                json: [
                    "operations": [
                        ["op": "createStack", "id": "a"], ["op": "createStack", "id": "b"],
                        ["op": "moveStack", "stack": "b", "position": 0],
                    ]
                ])
            #expect(answer["results"]?.item(2) == ["stack": "b", "position": 0])
            #expect(try await Self.order(session) == ["main", "b", "a"])
            let batch = try #require(try await session.history().last)
            #expect(batch["events"]?.item(2) == ["type": "stack.moved", "stack": "b", "position": 0])

            let before = try await session.get()
            let refused = try await session.send(
                "POST", "/batch",
                json: [
                    "operations": [
                        ["op": "moveStack", "stack": "a", "position": 0],
                        ["op": "moveStack", "stack": "b", "position": 5],
                    ]
                ])
            expectProblem(refused, 409, type: "conflict", pointers: ["/operations/1"])
            let invalid = try await session.send(
                "POST", "/batch",
                json: [
                    "operations": [
                        ["op": "moveStack", "stack": "a", "position": 0],
                        ["op": "moveStack", "stack": "b", "position": -5],
                    ]
                ])
            expectProblem(invalid, 422, type: "unprocessable-content", pointers: ["/operations/1/position"])
            expectProblem(
                try await session.send(
                    "POST", "/batch", json: ["operations": [["op": "moveStack", "position": 0]]]),
                422, type: "unprocessable-content", pointers: ["/operations/0/stack"])
            #expect(try await session.get() == before)
        }
    }

    /// The order is stored: a tab moved after the sheet one of its screens presents is loaded
    /// before that sheet, and moves after a restart keep the order the next restart reads.
    @Test(arguments: Backend.available)
    func movedTabsKeepTheirOrderAcrossRestarts(backend: Backend) async throws {
        switch backend {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-move-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            try await restarting(on: folder.appendingPathComponent("move.sqlite").path)
        case .postgres:
            try await PostgresTestServer.withDatabase { url in try await restarting(on: url) }
        }
    }

    private func restarting(on database: String) async throws {
        let (session, shown) = try await withRunningServer(databasePath: database) { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "Home"]])
            for tab in ["a", "b"] { _ = try await session.addTab(tab, root: tab.uppercased()) }
            let (sheet, _) = try await session.present(from: "b:top", root: "Sheet")
            _ = try await session.push("Page", onto: sheet)
            for tab in ["c", "d"] { _ = try await session.addTab(tab, root: tab.uppercased()) }
            try await session.expect(200, "POST", "/select", json: ["stack": "b"])
            try await session.expect(200, "POST", "/stacks/b/move", json: ["position": 3])
            try await session.expect(200, "POST", "/stacks/a/move", json: ["position": 1])
            #expect(try await Self.order(session) == ["main", "c", "a", "d", "b", sheet])
            return (session, try await session.get())
        }
        let moved = try await withRunningServer(databasePath: database) { client, _ in
            let restarted = TestSession(client: client, id: session.id, token: session.token, created: session.created)
            #expect(try await restarted.get() == shown)
            try await restarted.expect(201, "POST", "/stacks", json: ["id": "e"])
            try await restarted.expect(200, "POST", "/stacks/e/move", json: ["position": 0])
            try await restarted.expect(200, "POST", "/stacks/b/move", json: ["position": 1])
            #expect(try await Self.order(restarted).prefix(6) == ["main", "e", "b", "c", "a", "d"])
            return try await restarted.get()
        }
        let (read, replayed) = try await withRunningServer(databasePath: database) { client, _ in
            let restarted = TestSession(client: client, id: session.id, token: session.token, created: session.created)
            return (try await restarted.get(), try await restarted.expect(200, "GET", "/replay"))
        }
        #expect(read == moved && replayed == moved)
    }

    /// Two instances on one PostgreSQL database: a move through one is the order the other
    /// reads, from the stored positions, whichever instance moves.
    @Test(.needsPostgres) func aMoveThroughOneInstanceIsTheOrderTheOtherReads() async throws {
        try await PostgresTestServer.withDatabase { url in
            let instances = try await TwoInstances.start(url)
            do {
                let created = try await TestSession.create(instances.clients[0], ["root": ["name": "Home"]])
                let through = [instances.session(created, on: 0), instances.session(created, on: 1)]
                for tab in ["a", "b"] { _ = try await through[0].addTab(tab, root: tab.uppercased()) }
                let (sheet, _) = try await through[1].present(from: "b:top", root: "Sheet")
                for tab in ["c", "d"] { _ = try await through[0].addTab(tab, root: tab.uppercased()) }
                #expect(try await Self.order(through[1]) == ["main", "a", "b", "c", "d", sheet])
                try await through[0].expect(200, "POST", "/stacks/b/move", json: ["position": 3])
                #expect(try await Self.order(through[1]) == ["main", "a", "c", "d", "b", sheet])
                try await through[1].expect(200, "POST", "/stacks/d/move", json: ["position": 0])
                #expect(try await Self.order(through[0]) == ["main", "d", "a", "c", "b", sheet])
                #expect(try await through[0].get() == (try await through[1].get()))
            } catch {
                try? await instances.stop()
                throw error
            }
            try await instances.stop()
        }
    }
}
