import Foundation
import NavigationValues
import NavigationValuesAPI
import TestSupport
import Testing

/// docs/SEMANTICS.md §2 and §3 worked examples and the §4 Demo scenarios, over HTTP.
@Suite struct SemanticsOverHTTPTests {
    static let titleSchema: JSONValue = ["values": ["title": ["type": "string", "default": ""]]]
    static let demoSchema: JSONValue = [
        "values": ["value": ["type": "string", "default": "initial value"]],
        "preferences": ["preference": ["type": "string", "default": ""]],
    ]

    func resolvedTitles(_ session: TestSession) async throws -> [JSONValue?] {
        try await session.get()["screens"]?.arrayValue?.map { $0["resolved"]?["title"] } ?? []
    }

    // MARK: - §2 worked example

    @Test func forwardValuesWorkedExample() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "A"], "schema": Self.titleSchema])
            let a = try #require(session.created.screenIDs.first)
            let b = try await session.push("B")
            let c = try await session.push("C")
            func affected(_ pairs: [(String, String)]) -> JSONValue {
                .array(pairs.map { ["screen": .string($0.0), "key": "title", "value": .string($0.1)] })
            }

            // A sets title = "x": A, B, C read "x"; all three are notified.
            var answer = try await session.patch(a, ["title": "x"])
            #expect(answer["affected"] == affected([(a, "x"), (b, "x"), (c, "x")]))
            #expect(try await resolvedTitles(session) == ["x", "x", "x"])

            // B sets title = "y": A reads "x", B and C "y"; B and C are notified.
            answer = try await session.patch(b, ["title": "y"])
            #expect(answer["affected"] == affected([(b, "y"), (c, "y")]))
            #expect(try await resolvedTitles(session) == ["x", "y", "y"])

            // A sets title = "z": B and C keep "y"; only A is notified.
            answer = try await session.patch(a, ["title": "z"])
            #expect(answer["affected"] == affected([(a, "z")]))
            #expect(try await resolvedTitles(session) == ["z", "y", "y"])

            // B removes its override: B and C read "z"; B and C are notified.
            answer = try await session.patch(b, ["title": .null])
            #expect(answer["affected"] == affected([(b, "z"), (c, "z")]))
            #expect(try await resolvedTitles(session) == ["z", "z", "z"])

            // Pop C, push D: D reads what B resolves to.
            try await session.pop()
            let d = try await session.push("D")
            #expect(try await session.screen(d)["resolved"] == ["title": "z"])
            #expect(try await session.screen(b)["resolved"] == ["title": "z"])
        }
    }

    @Test func observationIgnoredKeysAreStoredButNeverAffected() async throws {
        try await withRunningServer { client, _ in
            let schema: JSONValue = [
                "values": ["draft": ["type": "string", "default": "", "observationIgnored": true]]
            ]
            let session = try await TestSession.create(client, ["schema": schema])
            let top = try await session.push("B")
            let written = try await session.patch("root", ["draft": "hello"])
            #expect(written["affected"] == [])
            #expect(try await session.screen(top)["resolved"] == ["draft": "hello"])
            let removed = try await session.patch("root", ["draft": .null])
            #expect(removed["affected"] == [])
            #expect(try await session.screen(top)["resolved"] == ["draft": ""])
        }
    }

    @Test func removingAnOverrideEqualToTheFallbackAffectsNoOne() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["schema": Self.titleSchema])
            let b = try await session.push("B")
            try await session.patch("root", ["title": "x"])
            try await session.patch(b, ["title": "x"])
            let removed = try await session.patch(b, ["title": .null])
            #expect(removed["affected"] == [])
            #expect(removed["screen"]?["values"] == [:])
        }
    }

    // MARK: - §3 worked example

    @Test func preferencesWorkedExample() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "A"]])
            let a = try #require(session.created.screenIDs.first)
            let b = try await session.push("B")
            let c = try await session.push("C")
            for screen in [a, b, c] { try await session.handle(screen, "selection", passBack: true) }
            func received() async throws -> [JSONValue?] {
                try await session.get()["screens"]?.arrayValue?.map { $0["preferences"]?["selection"] } ?? []
            }

            // C publishes "p" with all handlers passing: C, B, A receive "p".
            var answer = try await session.publish(c, "selection", "p")
            #expect(
                answer["deliveries"] == [
                    ["screen": .string(c), "value": "p"], ["screen": .string(b), "value": "p"],
                    ["screen": .string(a), "value": "p"],
                ])
            #expect(answer["stoppedAt"] == .null)
            #expect(try await received() == ["p", "p", "p"])

            // B switches to stop, C publishes "q": C and B receive "q", A keeps "p".
            try await session.handle(b, "selection", passBack: false)
            answer = try await session.publish(c, "selection", "q")
            #expect(
                answer["deliveries"] == [["screen": .string(c), "value": "q"], ["screen": .string(b), "value": "q"]])
            #expect(answer["stoppedAt"] == .string(b))
            #expect(try await received() == ["p", "q", "q"])

            // C publishes "q" again: nothing is delivered; B's remembered decision stops it.
            answer = try await session.publish(c, "selection", "q")
            #expect(answer["deliveries"] == [])
            #expect(answer["stoppedAt"] == .string(b))

            // B has no handler at all and C publishes "r": C receives, B is skipped, A receives.
            try #require(try await session.send("DELETE", "/screens/\(b)/handlers/selection").status == 200)
            answer = try await session.publish(c, "selection", "r")
            #expect(
                answer["deliveries"] == [["screen": .string(c), "value": "r"], ["screen": .string(a), "value": "r"]])
            #expect(answer["stoppedAt"] == .null)
            #expect(try await received() == ["r", "q", "r"])
        }
    }

    // MARK: - §4 the seed's Demo

    /// A Demo session: root "Root" with handlers passing, as the seed's screens have.
    func demo(_ client: TestClient) async throws -> (TestSession, root: String) {
        let session = try await TestSession.create(client, ["root": ["name": "Root"], "schema": Self.demoSchema])
        let root = try #require(session.created.screenIDs.first)
        try await session.handle(root, "preference", passBack: true)
        return (session, root)
    }

    @Test func demo1TheRootReadsTheDefault() async throws {
        try await withRunningServer { client, _ in
            let (session, _) = try await demo(client)
            #expect(try await session.screen("root")["resolved"]?["value"] == "initial value")
        }
    }

    @Test func demo2AValueTypedOnTheRootIsReadByAPushedScreen() async throws {
        try await withRunningServer { client, _ in
            let (session, root) = try await demo(client)
            try await session.patch(root, ["value": "typed"])
            let pushed = try await session.push("Next")
            #expect(try await session.screen(pushed)["resolved"]?["value"] == "typed")
        }
    }

    @Test func demo3AValueTypedOnAPushedScreenLeavesTheRootAfterPop() async throws {
        try await withRunningServer { client, _ in
            let (session, _) = try await demo(client)
            let pushed = try await session.push("Next")
            let answer = try await session.patch(pushed, ["value": "changed"])
            #expect(answer["affected"] == [["screen": .string(pushed), "key": "value", "value": "changed"]])
            try await session.pop()
            #expect(try await session.screen("root")["resolved"]?["value"] == "initial value")
        }
    }

    @Test func demo4AValueChangingOverTimeOnTheRootIsObserved() async throws {
        try await withRunningServer { client, _ in
            let (session, root) = try await demo(client)
            let pushed = try await session.push("Next")
            for tick in 1...3 {
                let answer = try await session.patch(root, ["value": .string("tick \(tick)")])
                #expect(
                    answer["affected"] == [
                        ["screen": .string(root), "key": "value", "value": .string("tick \(tick)")],
                        ["screen": .string(pushed), "key": "value", "value": .string("tick \(tick)")],
                    ])
            }
            #expect(try await session.screen(pushed)["resolved"]?["value"] == "tick 3")
        }
    }

    @Test func demo5APreferencePublishedOnAPushedScreenReachesTheRootAfterPop() async throws {
        try await withRunningServer { client, _ in
            let (session, root) = try await demo(client)
            let pushed = try await session.push("Next")
            try await session.handle(pushed, "preference", passBack: true)
            let answer = try await session.publish(pushed, "preference", "hello")
            #expect(
                answer["deliveries"] == [
                    ["screen": .string(pushed), "value": "hello"],
                    ["screen": .string(root), "value": "hello"],
                ])
            try await session.pop()
            #expect(try await session.screen("root")["preferences"] == ["preference": "hello"])
        }
    }

    @Test func demo6AScreenThatBlocksKeepsItsValueAndTheRootDoesNotGetIt() async throws {
        try await withRunningServer { client, _ in
            let (session, root) = try await demo(client)
            let pushed = try await session.push("Next")
            try await session.handle(pushed, "preference", passBack: false)
            let answer = try await session.publish(pushed, "preference", "blocked")
            #expect(answer["stoppedAt"] == .string(pushed))
            #expect(try await session.screen(pushed)["preferences"] == ["preference": "blocked"])
            #expect(try await session.screen(root)["preferences"] == [:])
        }
    }

    @Test func demo7AScreenThatDoesNotBlockLetsItThrough() async throws {
        try await withRunningServer { client, _ in
            let (session, root) = try await demo(client)
            let pushed = try await session.push("Next")
            try await session.handle(pushed, "preference", passBack: true)
            let answer = try await session.publish(pushed, "preference", "through")
            #expect(answer["stoppedAt"] == .null)
            #expect(try await session.screen(pushed)["preferences"] == ["preference": "through"])
            #expect(try await session.screen(root)["preferences"] == ["preference": "through"])
        }
    }

    @Test func demo8AValueSetOnTheRootIsReadTwoPushesDeep() async throws {
        try await withRunningServer { client, _ in
            let (session, root) = try await demo(client)
            try await session.push("One")
            let two = try await session.push("Two")
            let answer = try await session.patch(root, ["value": "deep"])
            #expect(answer["affected"]?.arrayValue?.count == 3)
            #expect(try await session.screen(two)["resolved"]?["value"] == "deep")
        }
    }

    @Test func demo9APreferencePublishedTwoPushesDeepReachesTheRoot() async throws {
        try await withRunningServer { client, _ in
            let (session, root) = try await demo(client)
            let one = try await session.push("One")
            let two = try await session.push("Two")
            try await session.handle(one, "preference", passBack: true)
            try await session.handle(two, "preference", passBack: true)
            let answer = try await session.publish(two, "preference", "from two")
            #expect(answer["deliveries"]?.arrayValue?.compactMap { $0["screen"]?.stringValue } == [two, one, root])
            try await session.pop()
            try await session.pop()
            #expect(try await session.screen("root")["preferences"] == ["preference": "from two"])
        }
    }

    @Test func demo10AnIntermediateScreenThatBlocksStopsAPreferenceFromAbove() async throws {
        try await withRunningServer { client, _ in
            let (session, root) = try await demo(client)
            let one = try await session.push("One")
            let two = try await session.push("Two")
            try await session.handle(one, "preference", passBack: false)
            try await session.handle(two, "preference", passBack: true)
            let answer = try await session.publish(two, "preference", "stopped above the root")
            #expect(answer["deliveries"]?.arrayValue?.compactMap { $0["screen"]?.stringValue } == [two, one])
            #expect(answer["stoppedAt"] == .string(one))
            #expect(try await session.screen(one)["preferences"] == ["preference": "stopped above the root"])
            #expect(try await session.screen(root)["preferences"] == [:])
        }
    }
}
