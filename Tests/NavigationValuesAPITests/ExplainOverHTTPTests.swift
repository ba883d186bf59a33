import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import TestSupport
import Testing

/// `?explain=1` on a session, a screen and a replay: the core's explanation over HTTP, against
/// docs/Stacks.md's worked examples, and additive (without it every answer is as before).
@Suite struct ExplainOverHTTPTests {
    /// The `explanation` of the screen `id` in a session answer (any stack).
    static func explanation(of id: String, in session: JSONValue) -> JSONValue? {
        let screens = (session["screens"]?.arrayValue ?? [])
            + (session["stacks"]?.arrayValue ?? []).flatMap { $0["screens"]?.arrayValue ?? [] }
        return screens.first { $0["id"] == .string(id) }?["explanation"]
    }

    /// Where `key` comes from on each screen: its id, or "default".
    static func sources(_ key: String, of ids: [String], in session: JSONValue) -> [String] {
        ids.map { id in
            guard let origin = explanation(of: id, in: session)?["values"]?[key] else { return "missing" }
            return origin["screen"]?.stringValue ?? origin["source"]?.stringValue ?? "?"
        }
    }

    /// docs/Stacks.md §2, worked example: each screen's `title` comes from the screen whose own
    /// value it reads, across the sheet; a tab's root reads the default.
    @Test func forwardValuesWorkedExample() async throws {
        try await withRunningServer { client, _ in
            let example = try await StacksOverHTTPTests.Sheet(client)
            let session = example.session
            let ids = [example.a, example.b, example.s1, example.s2]
            func explained() async throws -> JSONValue { try await session.expect(200, "GET", "?explain=1") }

            #expect(Self.sources("title", of: ids, in: try await explained()) == Array(repeating: "default", count: 4))
            try await session.patch(example.a, ["title": "x"])
            #expect(Self.sources("title", of: ids, in: try await explained()) == Array(repeating: example.a, count: 4))
            try await session.patch(example.s1, ["title": "s"])
            #expect(
                Self.sources("title", of: ids, in: try await explained())
                    == [example.a, example.a, example.s1, example.s1])
            try await session.patch(example.b, ["title": "b"])
            let shown = try await explained()
            #expect(Self.sources("title", of: ids, in: shown) == [example.a, example.b, example.s1, example.s1])
            #expect(Self.explanation(of: example.s2, in: shown)?["values"]?["title"]?["stack"] == .string(example.sheet))
            #expect(Self.explanation(of: example.s2, in: shown)?["preferences"] == [:])
            try await session.patch(example.s1, ["title": .null])
            #expect(Self.sources("title", of: ids, in: try await explained()) == [example.a, example.b, example.b, example.b])
            // One screen: the same explanation, on its own.
            let s2 = try await session.expect(200, "GET", "/screens/\(example.s2)?explain=1")
            #expect(s2["explanation"]?["values"]?["title"] == ["source": "screen", "screen": .string(example.b), "stack": "main"])

            let r = try await session.addTab("search", root: "R")
            #expect(Self.sources("title", of: [r], in: try await explained()) == ["default"])
        }
    }

    /// docs/Stacks.md §3, worked example: every received value with the walk that brought it,
    /// across the sheet to its presenter; a returned result names the popped publisher.
    @Test func preferencesWorkedExample() async throws {
        try await withRunningServer { client, _ in
            let example = try await StacksOverHTTPTests.Sheet(client)
            let session = example.session
            for screen in [example.a, example.b, example.s1, example.s2] {
                try await session.handle(screen, "selection", passBack: true)
            }
            func arrival(_ screen: String) async throws -> JSONValue? {
                try await session.expect(200, "GET", "/screens/\(screen)?explain=1")["explanation"]?["preferences"]?[
                    "selection"]
            }
            func hops(_ arrival: JSONValue?) -> [String] {
                (arrival?["hops"]?.arrayValue ?? []).map { hop in
                    let screen = hop["screen"]?.stringValue ?? "?"
                    return "\(screen) \(hop["handling"]?.stringValue ?? "?") \(hop["decision"]?.stringValue ?? "?")"
                }
            }
            let (a, b, s1, s2) = (example.a, example.b, example.s1, example.s2)

            // S2 publishes "p", every handler passing: A's value came through all four.
            _ = try await session.publish(s2, "selection", "p")
            let first = try await arrival(a)
            #expect(first?["publisher"] == .string(s2) && first?["index"] == 3)
            #expect(hops(first) == ["\(s2) called passed", "\(s1) called passed", "\(b) called passed", "\(a) called passed"])
            #expect(first?["hops"]?.item(2)?["received"] == "p" && first?["hops"]?.item(2)?["passed"] == "p")

            // B (the presenter) stops, S2 publishes "q": B's walk stops at B; A keeps the walk of "p".
            try await session.handle(b, "selection", passBack: false)
            _ = try await session.publish(s2, "selection", "q")
            #expect(hops(try await arrival(b)) == ["\(s2) called passed", "\(s1) called passed", "\(b) called stopped"])
            #expect(hops(try await arrival(a)) == hops(first))

            // S1 has no handler, S2 publishes "r": S1 is transparent.
            try await session.expect(200, "DELETE", "/screens/\(s1)/handlers/selection")
            _ = try await session.publish(s2, "selection", "r")
            #expect(hops(try await arrival(b)) == ["\(s2) called passed", "\(s1) transparent passed", "\(b) called stopped"])

            // The sheet returns a result: B's value came from S1, which is gone.
            try await session.expect(200, "POST", "/screens/\(s1)/return", json: ["key": "selection", "value": "done"])
            let returned = try await arrival(b)
            #expect(returned?["publisher"] == .string(s1) && returned?["index"] == 1)
            #expect(hops(returned) == ["\(s1) transparent passed", "\(b) called stopped"])
            #expect(returned?["hops"]?.item(1)?["received"] == "done")

            // Replay shows the walks it ran; without a snapshot before them, all of them.
            let history = try await session.history()
            let publishedAt = try #require(history.first { $0["type"] == "preference.published" }?["seq"]?.integerValue)
            let replayed = try await session.expect(200, "GET", "/replay?at=\(publishedAt)&explain=1")
            #expect(hops(Self.explanation(of: a, in: replayed)?["preferences"]?["selection"]) == hops(first))
        }
    }

    /// Without `explain` (or with `explain=0`), every answer is byte for byte what it was; with it,
    /// the same answer plus each screen's `explanation` and nothing else.
    @Test func explainOnlyAddsTheExplanation() async throws {
        try await withRunningServer { client, _ in
            let example = try await StacksOverHTTPTests.Sheet(client)
            let session = example.session
            try await session.patch(example.a, ["title": "x"])
            try await session.handle(example.a, "selection", passBack: true)
            _ = try await session.publish(example.s2, "selection", "p")

            for suffix in ["", "/screens/\(example.s2)", "/replay", "/replay?at=3"] {
                let plain = try await session.send("GET", suffix)
                let off = try await session.send("GET", suffix + (suffix.contains("?") ? "&" : "?") + "explain=0")
                let on = try await session.send("GET", suffix + (suffix.contains("?") ? "&" : "?") + "explain=1")
                #expect(plain.status == 200 && off.status == 200 && on.status == 200)
                #expect(Array(off.body) == Array(plain.body), "explain=0 changed \(suffix)")
                #expect(on.header("ETag") == plain.header("ETag"))
                let stripped = Self.withoutExplanations(try #require(on.json))
                #expect(Array(stripped.serialized().utf8) == Array(plain.body), "explain=1 changed more than it added on \(suffix)")
                #expect(Array(on.body) != Array(plain.body))
            }
            // The admin token's read, answered from the read cache, is the same bytes too.
            let admin = try await client.send("GET", "/v1/sessions/\(session.id)", token: "admin-secret")
            let plain = try await session.send("GET")
            #expect(Array(admin.body) == Array(plain.body))
            let explained = try await client.send("GET", "/v1/sessions/\(session.id)?explain=1", token: "admin-secret")
            #expect(Self.explanation(of: example.s2, in: try #require(explained.json)) != nil)

            let refused = try await session.send("GET", "?explain=maybe")
            expectProblem(refused, 422, type: "unprocessable-content")
        }
    }

    /// An explanation is bounded by `--max-session-bytes`: past it, 422 naming the limit, while
    /// the plain read still answers.
    @Test func explanationIsBoundedByTheSessionLimit() async throws {
        try await withRunningServer(configure: { $0.service.limits.maxSessionBytes = 20_000 }) { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "A"]])
            var screens = [try #require(session.created.screenIDs.first)]
            for index in 1..<20 { screens.append(try await session.push("S\(index)")) }
            for screen in screens { try await session.handle(screen, "selection", passBack: true) }
            _ = try await session.publish(try #require(screens.last), "selection", .string(String(repeating: "v", count: 300)))
            #expect(try await session.send("GET").status == 200)
            let refused = try await session.send("GET", "?explain=1")
            expectProblem(refused, 422, type: "limit-exceeded")
            #expect(refused.json?["limit"] == "max-session-bytes")
            let replay = try await session.send("GET", "/replay?explain=1")
            expectProblem(replay, 422, type: "limit-exceeded")
            // One screen's explanation fits.
            #expect(try await session.send("GET", "/screens/\(screens[1])?explain=1").status == 200)
        }
    }

    static func withoutExplanations(_ json: JSONValue) -> JSONValue {
        switch json {
        case .object(var members):
            members["explanation"] = nil
            return .object(members.mapValues(withoutExplanations))
        case .array(let items): return .array(items.map(withoutExplanations))
        default: return json
        }
    }
}
