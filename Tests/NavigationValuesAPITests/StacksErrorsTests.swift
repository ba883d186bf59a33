import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import TestSupport
import Testing

/// What the stack endpoints refuse (docs/Stacks.md): each refusal a problem+json that says what was
/// wrong, changing nothing; the limits on stacks, presentation depth and screens across stacks;
/// and today's endpoints unchanged for a client that knows only them.
@Suite struct StacksErrorsTests {
    static let strict: JSONValue = [
        "values": ["title": ["type": "string", "default": ""]],
        "preferences": ["pick": ["type": "string", "default": ""]], "strict": true,
    ]

    @Test func creatingAStackChecksItsNameItsRootAndItsUniqueness() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["schema": Self.strict])
            let cases: [(JSONValue, Int, String, [String])] = [
                ([:], 422, "unprocessable-content", ["/id"]),
                (["id": 7], 422, "unprocessable-content", ["/id"]),
                (["id": "two words"], 422, "unprocessable-content", ["/id"]),
                (["id": .string(String(repeating: "a", count: 65))], 422, "unprocessable-content", ["/id"]),
                (["id": "top"], 422, "unprocessable-content", ["/id"]),
                (["id": "main"], 422, "unprocessable-content", ["/id"]),
                (["id": "p_mine"], 422, "unprocessable-content", ["/id"]),
                (["id": "t", "colour": "red"], 422, "unprocessable-content", ["/colour"]),
                (["id": "t", "root": ["values": ["title": 5]]], 422, "unprocessable-content", ["/root/values/title"]),
                (
                    ["id": "t", "root": ["values": ["undeclared": 1]]], 422, "unprocessable-content",
                    ["/root/values/undeclared"]
                ),
                (["id": "t", "root": "Home"], 422, "unprocessable-content", ["/root"]),
            ]
            for (body, status, type, pointers) in cases {
                expectProblem(
                    try await session.send("POST", "/stacks", json: body), status, type: type, pointers: pointers)
            }
            #expect(try await session.get()["version"] == 1)
            try await session.expect(201, "POST", "/stacks", json: ["id": "t"])
            expectProblem(try await session.send("POST", "/stacks", json: ["id": "t"]), 409, type: "conflict")
            expectProblem(try await session.send("DELETE", "/stacks/main"), 409, type: "conflict")
            expectProblem(try await session.send("DELETE", "/stacks/nope"), 404, type: "not-found")
            expectProblem(try await session.send("GET", "/stacks/nope"), 404, type: "not-found")
            expectProblem(try await session.send("POST", "/stacks/nope/push"), 404, type: "not-found")
            expectProblem(
                try await session.send("POST", "/select", json: [:]), 422, type: "unprocessable-content",
                pointers: ["/stack"])
            expectProblem(try await session.send("POST", "/select", json: ["stack": "nope"]), 404, type: "not-found")
            let noToken = try await client.send("POST", "/v1/sessions/\(session.id)/stacks", json: ["id": "u"])
            expectProblem(noToken, 401, type: "unauthorized")
            #expect(try await session.get()["version"] == 2)
        }
    }

    @Test func presentingAndDismissingFollowTheTreesRules() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["schema": Self.strict])
            let root = try #require(session.created.screenIDs.first)
            let top = try await session.push("B")
            expectProblem(try await session.send("POST", "/dismiss"), 409, type: "conflict")
            // Only the topmost screen of a stack presents.
            expectProblem(
                try await session.send("POST", "/present", json: ["from": .string(root)]), 409, type: "conflict")
            expectProblem(try await session.send("POST", "/present", json: ["from": "nope"]), 404, type: "not-found")
            expectProblem(
                try await session.send("POST", "/present", json: ["style": "popover"]), 422,
                type: "unprocessable-content",
                pointers: ["/style"])
            expectProblem(
                try await session.send("POST", "/present", json: ["root": ["values": ["title": 1]]]), 422,
                type: "unprocessable-content", pointers: ["/root/values/title"])
            let (sheet, sheetRoot) = try await session.present(from: top, root: "Sheet")
            #expect(sheet.hasPrefix("p_"))
            // One presentation per screen; its presenter is covered.
            expectProblem(
                try await session.send("POST", "/present", json: ["from": .string(top)]), 409, type: "conflict")
            expectProblem(try await session.send("POST", "/push"), 409, type: "conflict")
            expectProblem(
                try await session.send("PUT", "/screens/\(top)/above", json: ["screens": [["name": "X"]]]), 409,
                type: "conflict")
            expectProblem(
                try await session.send("POST", "/select", json: ["stack": .string(sheet)]), 409, type: "conflict")
            expectProblem(try await session.send("POST", "/select", json: ["stack": "top"]), 409, type: "conflict")
            // A pop to a screen of another stack does not pop it.
            expectProblem(
                try await session.send("POST", "/stacks/\(sheet)/pop", json: ["to": .string(root)]), 404,
                type: "not-found")
            expectProblem(try await session.send("POST", "/stacks/\(sheet)/pop"), 409, type: "conflict")
            // The root of the main stack, or of a tab, does not return; a presentation's root does.
            expectProblem(
                try await session.send("POST", "/screens/\(root)/return", json: ["key": "pick", "value": "x"]), 409,
                type: "conflict")
            expectProblem(
                try await session.send("POST", "/screens/top/return", json: ["value": "x"]), 422,
                type: "unprocessable-content", pointers: ["/key"])
            expectProblem(
                try await session.send("POST", "/screens/top/return", json: ["key": "undeclared", "value": "x"]), 422,
                type: "unprocessable-content", pointers: ["/key"])
            expectProblem(
                try await session.send("POST", "/screens/top/return", json: ["key": "pick", "value": 3]), 422,
                type: "unprocessable-content", pointers: ["/value"])
            try await session.expect(201, "POST", "/stacks", json: ["id": "tab"])
            expectProblem(try await session.send("POST", "/dismiss", json: ["stack": "tab"]), 409, type: "conflict")
            let version = try #require(try await session.get()["version"]?.integerValue)

            // DELETE on a presentation dismisses it, as POST …/dismiss does.
            let dismissed = try await session.expect(200, "DELETE", "/stacks/\(sheet)")
            #expect(dismissed["stack"] == .string(sheet) && dismissed["screens"] == [.string(sheetRoot)])
            #expect(try await session.history().last?["type"] == "stack.dismissed")
            #expect(try await session.get()["version"] == .integer(version + 1))
        }
    }

    @Test func limitsCountStacksPresentationDepthAndScreensOfEveryStack() async throws {
        try await withRunningServer(configure: { configuration in
            configuration.service.limits.maxStacks = 4
            configuration.service.limits.maxPresentationDepth = 2
            configuration.service.limits.maxScreens = 6
        }) { client, _ in
            let session = try await TestSession.create(client)
            _ = try await session.present(from: "top", root: "P1")
            _ = try await session.present(from: "top", root: "P2")
            let deep = try await session.send("POST", "/present")
            expectProblem(deep, 422, type: "unprocessable-content", pointers: ["/from"])
            #expect(deep.json?["detail"] == "presentations nest at most 2 deep")
            try await session.expect(201, "POST", "/stacks", json: ["id": "t"])
            let many = try await session.send("POST", "/stacks", json: ["id": "u"])
            expectProblem(many, 422, type: "unprocessable-content")
            #expect(many.json?["detail"]?.stringValue?.contains("at most 4 stacks") == true)
            expectProblem(
                try await session.send("POST", "/present", json: ["from": "t:top"]), 422, type: "unprocessable-content")
            // Six screens in all: the main root, P1, P2, t's root, and two more anywhere.
            _ = try await session.push("A", onto: "t")
            _ = try await session.push("B", onto: "t")
            let full = try await session.send("POST", "/stacks/t/push")
            expectProblem(full, 422, type: "unprocessable-content")
            #expect(full.json?["detail"] == "a session holds at most 6 screens")
            expectProblem(
                try await session.send(
                    "PUT", "/stacks/t/path", json: ["screens": [["name": "1"], ["name": "2"], ["name": "3"]]]),
                422, type: "unprocessable-content", pointers: ["/screens"])
            try await session.expect(200, "PUT", "/stacks/t/path", json: ["screens": [["name": "1"], ["name": "2"]]])
        }
    }

    /// A client that knows only docs/API.md's endpoints sees exactly today's answers and event types.
    @Test func todaysEndpointsAnswerAsBeforeInASessionWithOneStack() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "Home"]])
            let pushed = try await session.send("POST", "/push", json: ["name": "B"])
            #expect(
                pushed.status == 201 && Set(pushed.json?.objectValue?.keys.map { $0 } ?? []) == ["screen", "version"])
            let path = try await session.expect(200, "PUT", "/path", json: ["screens": [["name": "P"]]])
            #expect(Set(path.objectValue?.keys.map { $0 } ?? []) == ["popped", "pushed", "version"])
            let popped = try await session.expect(200, "POST", "/pop", json: ["to": "root"])
            #expect(Set(popped.objectValue?.keys.map { $0 } ?? []) == ["popped", "version"])
            let types = try await session.history().compactMap { $0["type"]?.stringValue }
            #expect(types == ["session.created", "screen.pushed", "path.replaced", "screens.popped"])
            // The main stack through the new routes gives the same events.
            _ = try await session.push("Again", onto: "main")
            try await session.expect(200, "POST", "/stacks/main/pop")
            let later = try await session.history().suffix(2).compactMap { $0["type"]?.stringValue }
            #expect(later == ["screen.pushed", "screens.popped"])
        }
    }
}
