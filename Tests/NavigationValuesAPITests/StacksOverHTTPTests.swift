import Foundation
import NavigationValues
import NavigationValuesAPI
import TestSupport
import Testing

extension JSONValue {
    /// The element at `index` of an array, nil for anything else or out of range.
    func item(_ index: Int) -> JSONValue? {
        guard let items = arrayValue, items.indices.contains(index) else { return nil }
        return items[index]
    }
}

extension TestSession {
    /// Sends a request that must answer `status`; returns its JSON body (null when it has none).
    @discardableResult
    func expect(
        _ status: Int, _ method: String, _ suffix: String, json body: JSONValue? = nil, headers: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> JSONValue {
        let answer = try await send(method, suffix, json: body, headers: headers)
        try #require(
            answer.status == status,
            "\(method) \(suffix) answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))",
            sourceLocation: sourceLocation)
        return answer.json ?? .null
    }

    /// Presents a stack from `from`; returns the presentation's id and its root's id.
    func present(from: String, style: String = "sheet", root: String) async throws -> (stack: String, root: String) {
        let answer = try await expect(
            201, "POST", "/present",
            json: ["from": .string(from), "style": .string(style), "root": ["name": .string(root)]])
        return (
            try #require(answer["stack"]?["id"]?.stringValue),
            try #require(answer["stack"]?["screens"]?.item(0)?["id"]?.stringValue)
        )
    }

    /// Pushes onto a named stack; returns the new screen's id.
    func push(_ name: String, onto stack: String) async throws -> String {
        let answer = try await expect(201, "POST", "/stacks/\(stack)/push", json: ["name": .string(name)])
        return try #require(answer["screen"]?["id"]?.stringValue)
    }

    /// Adds a tab with its root; returns the root's id.
    func addTab(_ id: String, root: String) async throws -> String {
        let answer = try await expect(
            201, "POST", "/stacks", json: ["id": .string(id), "root": ["name": .string(root)]])
        return try #require(answer["stack"]?["screens"]?.item(0)?["id"]?.stringValue)
    }

    /// Every event of the session, oldest first.
    func history() async throws -> [JSONValue] {
        try await expect(200, "GET", "/history?limit=1000")["events"]?.arrayValue ?? []
    }
}

/// docs/Stacks.md's worked examples over HTTP, one test each (the same examples run in the core in
/// Tests/NavigationValuesTests/StacksWorkedExampleTests.swift), and a tab app.
@Suite struct StacksOverHTTPTests {
    static let schema: JSONValue = [
        "values": ["title": ["type": "string", "default": ""]],
        "preferences": ["selection": ["type": "string", "default": ""]],
    ]

    /// Main stack A → B; B presents a sheet holding S1 → S2.
    struct Sheet {
        let session: TestSession
        let a: String
        let b: String
        let sheet: String
        let s1: String
        let s2: String

        init(_ client: TestClient) async throws {
            session = try await TestSession.create(
                client, ["root": ["name": "A"], "schema": StacksOverHTTPTests.schema])
            a = try #require(session.created.screenIDs.first)
            b = try await session.push("B")
            (sheet, s1) = try await session.present(from: b, root: "S1")
            s2 = try await session.push("S2", onto: sheet)
        }
    }

    // MARK: - §1 The tree

    @Test func theTreeWorkedExample() async throws {
        try await withRunningServer { client, _ in
            let example = try await Sheet(client)
            let session = example.session
            let (cover, c1) = try await session.present(from: example.s2, style: "fullScreenCover", root: "C1")

            // What a user sees: C1. `top` is that screen, `root` the main stack's root.
            let shown = try await session.get()
            #expect(shown["visibleScreen"] == .string(c1))
            #expect(shown["selectedStack"] == "main")
            #expect(try await session.screen("top")["id"] == .string(c1))
            #expect(try await session.screen("root")["id"] == .string(example.a))
            #expect(shown.screenIDs == [example.a, example.b])
            // previous/next cross each presentation, as the core's links do.
            #expect(shown["screens"]?.item(1)?["next"] == .string(example.s1))
            let stacks = try #require(shown["stacks"]?.arrayValue)
            #expect(stacks.map { $0["id"] } == [.string(example.sheet), .string(cover)])
            #expect(stacks.map { $0["kind"] } == ["sheet", "fullScreenCover"])
            #expect(stacks.map { $0["presenter"] } == [.string(example.b), .string(example.s2)])
            #expect(stacks[0]["screens"]?.item(0)?["previous"] == .string(example.b))
            #expect(stacks[0]["screens"]?.item(1)?["next"] == .string(c1))
            #expect(stacks[1]["screens"]?.item(0)?["previous"] == .string(example.s2))
            #expect(stacks[1]["screens"]?.item(0)?["index"] == 0)
            #expect(try await session.expect(200, "GET", "/stacks/top")["id"] == .string(cover))
            let list = try await session.expect(200, "GET", "/stacks")
            #expect(list["stacks"]?.arrayValue?.map { $0["kind"] } == ["main", "sheet", "fullScreenCover"])

            // B presents: nothing is pushed above it.
            let refused = try await session.send("POST", "/push", json: ["name": "D"])
            expectProblem(refused, 409, type: "conflict")

            // Pop B: the cover, then the sheet are dismissed, with all their screens.
            let popped = try await session.expect(200, "POST", "/pop")
            #expect(popped["popped"] == [.string(example.b)])
            #expect(popped["dismissed"] == [.string(cover), .string(example.sheet)])
            #expect(popped["stack"] == "main")
            let last = try #require(try await session.history().last)
            #expect(last["type"] == "stack.screens.popped")
            #expect(last["dismissed"] == [.string(cover), .string(example.sheet)])
            let after = try await session.get()
            #expect(after["stacks"] == [] && after["visibleScreen"] == .string(example.a))
            expectProblem(try await session.send("GET", "/screens/\(example.s1)"), 404, type: "not-found")
            expectProblem(try await session.send("GET", "/stacks/\(example.sheet)"), 404, type: "not-found")
        }
    }

    // MARK: - §2 Forward values

    @Test func forwardValuesWorkedExample() async throws {
        try await withRunningServer { client, _ in
            let example = try await Sheet(client)
            let session = example.session
            let (a, b, s1, s2) = (example.a, example.b, example.s1, example.s2)
            func affected(_ pairs: [(String, String)]) -> JSONValue {
                .array(pairs.map { ["screen": .string($0.0), "key": "title", "value": .string($0.1)] })
            }
            func titles() async throws -> [JSONValue?] {
                var result: [JSONValue?] = []
                for screen in [a, b, s1, s2] { result.append(try await session.screen(screen)["resolved"]?["title"]) }
                return result
            }

            // A sets title = "x": all four read "x"; all four are affected.
            #expect(
                try await session.patch(a, ["title": "x"])["affected"]
                    == affected([(a, "x"), (b, "x"), (s1, "x"), (s2, "x")]))
            #expect(try await titles() == ["x", "x", "x", "x"])
            // S1 sets title = "s": only S1 and S2.
            #expect(try await session.patch(s1, ["title": "s"])["affected"] == affected([(s1, "s"), (s2, "s")]))
            #expect(try await titles() == ["x", "x", "s", "s"])
            // B sets title = "b": the sheet keeps "s"; only B.
            #expect(try await session.patch(b, ["title": "b"])["affected"] == affected([(b, "b")]))
            #expect(try await titles() == ["x", "b", "s", "s"])
            // S1 removes its override: S1 and S2 read what B resolves to.
            #expect(try await session.patch(s1, ["title": .null])["affected"] == affected([(s1, "b"), (s2, "b")]))
            #expect(try await titles() == ["x", "b", "b", "b"])

            // Dismiss the sheet, present another from B: its root reads "b".
            let dismissed = try await session.expect(200, "POST", "/dismiss")
            #expect(dismissed["stack"] == .string(example.sheet) && dismissed["screens"] == [.string(s2), .string(s1)])
            let (_, t1) = try await session.present(from: "top", style: "fullScreenCover", root: "T1")
            #expect(try await session.screen(t1)["resolved"]?["title"] == "b")
        }
    }

    @Test func tabsShareNothing() async throws {
        try await withRunningServer { client, _ in
            let example = try await Sheet(client)
            let session = example.session
            let r = try await session.addTab("search", root: "R")
            let written = try await session.patch(example.a, ["title": "x"])
            #expect(!(written["affected"]?.arrayValue ?? []).contains { $0["screen"] == .string(r) })
            #expect(try await session.screen(r)["resolved"] == ["title": ""])
            #expect(
                try await session.patch(r, ["title": "r"])["affected"] == [
                    ["screen": .string(r), "key": "title", "value": "r"]
                ])
            #expect(try await session.screen(example.s2)["resolved"]?["title"] == "x")
            #expect(try await session.screen(r)["previous"] == .null)
        }
    }

    // MARK: - §3 Preferences

    @Test func preferencesWorkedExample() async throws {
        try await withRunningServer { client, _ in
            let example = try await Sheet(client)
            let session = example.session
            let (a, b, s1, s2) = (example.a, example.b, example.s1, example.s2)
            for screen in [a, b, s1, s2] { try await session.handle(screen, "selection", passBack: true) }
            func receivers(_ answer: JSONValue) -> [JSONValue] {
                answer["deliveries"]?.arrayValue?.compactMap { $0["screen"] } ?? []
            }
            func received() async throws -> [JSONValue?] {
                var result: [JSONValue?] = []
                for screen in [a, b, s1, s2] {
                    result.append(try await session.screen(screen)["preferences"]?["selection"])
                }
                return result
            }

            // S2 publishes "p": S2, S1, B, A receive it.
            var answer = try await session.publish(s2, "selection", "p")
            #expect(receivers(answer) == [.string(s2), .string(s1), .string(b), .string(a)])
            #expect(answer["stoppedAt"] == .null)
            // B stops, S2 publishes "q": S2, S1, B; A keeps "p".
            try await session.handle(b, "selection", passBack: false)
            answer = try await session.publish(s2, "selection", "q")
            #expect(receivers(answer) == [.string(s2), .string(s1), .string(b)])
            #expect(answer["stoppedAt"] == .string(b))
            #expect(try await received() == ["p", "q", "q", "q"])
            // S1 has no handler, S2 publishes "r": S2, then B, which stops.
            try await session.send("DELETE", "/screens/\(s1)/handlers/selection")
            answer = try await session.publish(s2, "selection", "r")
            #expect(receivers(answer) == [.string(s2), .string(b)])
            #expect(try await received() == ["p", "r", "q", "r"])

            // The sheet returns a result from its root and is dismissed: B keeps it.
            answer = try await session.expect(
                200, "POST", "/screens/\(s1)/return", json: ["key": "selection", "value": "done"])
            #expect(receivers(answer) == [.string(b)])
            #expect(answer["stoppedAt"] == .string(b))
            #expect(answer["stack"] == .string(example.sheet))
            #expect(answer["popped"] == [.string(s2), .string(s1)])
            #expect(answer["dismissed"] == [.string(example.sheet)])
            #expect(try await session.screen(b)["preferences"] == ["selection": "done"])
            #expect(try await session.get()["visibleScreen"] == .string(b))
            #expect(try await session.history().last?["type"] == "screen.returned")
        }
    }

    /// A sheet returns a result to the screen that presented it and is dismissed, in one
    /// step either way: the sheet's root returns it, or a screen pushed in the sheet publishes it
    /// in a batch that dismisses the sheet.
    @Test func aSheetReturnsAResultToItsPresenterAndIsDismissed() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(
                client, ["root": ["name": "Inbox"], "schema": Self.schema])
            let compose = try await session.push("Compose", values: ["title": "New message"])
            try await session.handle(compose, "selection", passBack: false)  // Compose consumes the result

            // The sheet's root returns the result.
            let (contacts, contactsRoot) = try await session.present(from: compose, root: "Contacts")
            #expect(try await session.screen(contactsRoot)["resolved"]?["title"] == "New message")
            let returned = try await session.expect(
                200, "POST", "/screens/\(contactsRoot)/return", json: ["key": "selection", "value": "ada@example.com"])
            #expect(returned["deliveries"] == [["screen": .string(compose), "value": "ada@example.com"]])
            #expect(returned["stoppedAt"] == .string(compose))
            #expect(returned["dismissed"] == [.string(contacts)])
            expectProblem(try await session.send("GET", "/screens/\(contactsRoot)"), 404, type: "not-found")

            // A screen pushed in the sheet publishes; the same batch dismisses the sheet.
            let (picker, _) = try await session.present(from: compose, root: "Contacts")
            let detail = try await session.push("Contact", onto: picker)
            let stream = try SSEClient(
                port: client.http.port, path: "/v1/sessions/\(session.id)/events",
                headers: ["Authorization": "Bearer \(session.token)"])
            defer { stream.close() }
            #expect(await stream.status() == 200)
            let batch = try await session.expect(
                200, "POST", "/batch",
                json: [
                    "operations": [
                        ["op": "publish", "screen": .string(detail), "key": "selection", "value": "bob@example.com"],
                        ["op": "dismiss"],
                    ]
                ])
            #expect(
                batch["results"]?.item(0)?["deliveries"] == [["screen": .string(compose), "value": "bob@example.com"]])
            #expect(batch["results"]?.item(1)?["stack"] == .string(picker))
            let frames = await stream.frames.events(1)
            #expect(frames.map(\.event) == ["batch.applied"])
            let shown = try await session.get()
            #expect(shown["stacks"] == [] && shown["visibleScreen"] == .string(compose))
            #expect(try await session.screen(compose)["preferences"] == ["selection": "bob@example.com"])
        }
    }

    // MARK: - §4 Tabs

    /// A tab app: three tabs; switching keeps each stack and what it presents.
    @Test func tabsWorkedExampleAThreeTabApp() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["root": ["name": "Home"], "schema": Self.schema])
            let detail = try await session.push("Detail")
            let searchRoot = try await session.addTab("search", root: "Search")
            let results = try await session.push("Results", onto: "search")
            let profileRoot = try await session.addTab("profile", root: "Profile")
            #expect(try await session.get()["visibleScreen"] == .string(detail))

            var answer = try await session.expect(200, "POST", "/select", json: ["stack": "search"])
            #expect(answer["selectedStack"] == "search" && answer["visibleScreen"] == .string(results))
            #expect(try await session.screen("top")["id"] == .string(results))
            #expect(try await session.get()["screens"]?.arrayValue?.map { $0["name"] } == ["Home", "Detail"])

            try await session.expect(200, "POST", "/select", json: ["stack": "profile"])
            let (edit, editRoot) = try await session.present(from: "top", root: "Edit")
            #expect(try await session.get()["visibleScreen"] == .string(editRoot))
            answer = try await session.expect(200, "POST", "/select", json: ["stack": "main"])
            #expect(answer["visibleScreen"] == .string(detail))
            try await session.expect(200, "POST", "/select", json: ["stack": "profile"])
            #expect(try await session.screen("top")["id"] == .string(editRoot))
            try await session.expect(200, "POST", "/select", json: ["stack": "search"])
            let search = try await session.expect(200, "GET", "/stacks/search")
            #expect(search["screens"]?.arrayValue?.map { $0["id"] } == [.string(searchRoot), .string(results)])
            #expect(search["kind"] == "tab" && search["presenter"] == .null)
            // Old endpoints keep addressing the main stack while a tab is selected.
            let pushed = try await session.push("More")
            #expect(try await session.get().screenIDs.last == .some(pushed))
            #expect(try await session.screen("root")["name"] == "Home")
            try await session.pop()

            // Removing a tab dismisses what it presents; the selection stays.
            answer = try await session.expect(200, "DELETE", "/stacks/profile")
            #expect(answer["screens"] == [.string(profileRoot)] && answer["dismissed"] == [.string(edit)])
            #expect(answer["selectedStack"] == "search")
            // Removing the selected tab selects the main stack.
            answer = try await session.expect(200, "DELETE", "/stacks/search")
            #expect(answer["selectedStack"] == "main")
            let final = try await session.get()
            #expect(final["stacks"] == [] && final["visibleScreen"] == .string(detail))
            let types = try await session.history().compactMap { $0["type"]?.stringValue }
            #expect(
                types == [
                    "session.created", "screen.pushed", "stack.created", "stack.screen.pushed", "stack.created",
                    "stack.selected", "stack.selected", "stack.presented", "stack.selected", "stack.selected",
                    "stack.selected", "screen.pushed", "screens.popped", "stack.removed", "stack.removed",
                ])
        }
    }

    // MARK: - §5 Compound changes

    @Test func compoundChangesWorkedExample() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(
                client, ["root": ["name": "X", "values": ["title": "x"]], "schema": Self.schema])
            let x = try #require(session.created.screenIDs.first)
            try await session.handle(x, "selection", passBack: false)
            try await session.publish(x, "selection", "seen")
            let y = try await session.push("Y")
            let z = try await session.push("Z")
            let version = try #require(try await session.get()["version"]?.integerValue)

            // Replace the screens above X: one step, X keeps its id, values and handler memory.
            let replaced = try await session.expect(
                200, "PUT", "/screens/\(x)/above", json: ["screens": [["name": "P"], ["name": "Q"]]])
            #expect(replaced["popped"] == [.string(z), .string(y)])
            #expect(replaced["pushed"]?.arrayValue?.map { $0["resolved"]?["title"] } == ["x", "x"])
            #expect(replaced["screen"]?["id"] == .string(x))
            #expect(replaced["version"] == .integer(version + 1))
            let shown = try await session.get()
            #expect(shown["screens"]?.arrayValue?.map { $0["name"] } == ["X", "P", "Q"])
            #expect(try await session.publish(x, "selection", "seen")["deliveries"] == [])

            // Publish, then pop: Q returns "picked" to X and is popped.
            let q = try #require(shown.screenIDs.last)
            let returned = try await session.expect(
                200, "POST", "/screens/top/return", json: ["key": "selection", "value": "picked"])
            #expect(returned["deliveries"] == [["screen": .string(x), "value": "picked"]])
            #expect(returned["popped"] == [.string(q)] && returned["dismissed"] == [])
            #expect(try await session.get()["screens"]?.arrayValue?.map { $0["name"] } == ["X", "P"])
            #expect(try await session.screen(x)["preferences"] == ["selection": "picked"])
            // The root of the main stack never pops: nothing is published either.
            let refused = try await session.send(
                "POST", "/screens/root/return", json: ["key": "selection", "value": "lost"])
            expectProblem(refused, 409, type: "conflict")
            #expect(try await session.screen(x)["preferences"] == ["selection": "picked"])
            let types = try await session.history().suffix(3).compactMap { $0["type"]?.stringValue }
            #expect(types == ["screens.replaced", "preference.published", "screen.returned"])
        }
    }
}
