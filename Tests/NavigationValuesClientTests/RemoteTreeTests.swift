import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesWire
import Observation
import TestSupport
import Testing

@testable import NavigationValuesClient

/// The whole-tree mirror, step by step: every event type, what each step notifies, and the stack
/// objects a view keeps.
@MainActor
@Suite struct RemoteTreeTests {
    /// Every event type of docs/API.md and docs/Stacks.md, each applied by the mirror as the server
    /// applied it (compared with `GET /v1/sessions/{id}` after each step), without a snapshot.
    @Test(arguments: ServerKind.allCases) func everyEventTypeIsAppliedAsTheServerAppliedIt(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, server in
            let http = server.rawHTTP()
            let session = try await client.createSession(root: ScreenSeed("Home"), schema: RemoteStackTests.schema)
            let tree = try await RemoteTree.connect(to: session)
            let start = tree.version
            @MainActor func step(
                _ method: String, _ suffix: String, _ body: JSONValue? = nil,
                sourceLocation: SourceLocation = #_sourceLocation
            ) async throws -> JSONValue {
                let answer = try await sendRaw(http, session, method, suffix, body, sourceLocation: sourceLocation)
                let server = try await session.get()
                try await tree.sync(to: server.version)
                #expect(tree.resource == server, "after \(method) \(suffix)", sourceLocation: sourceLocation)
                return answer
            }
            // The main stack: docs/API.md's types.
            _ = try await step("POST", "/push", ["name": "Inbox", "values": ["title": "in"]])
            _ = try await step("PUT", "/screens/root/handlers/selection", ["passBack": true])
            _ = try await step("PUT", "/screens/top/handlers/selection", ["passBack": true])
            _ = try await step("DELETE", "/screens/top/handlers/selection")
            _ = try await step("PUT", "/path", ["screens": [["name": "A"], ["name": "B"]]])
            _ = try await step("POST", "/pop", ["count": 1])
            // Tabs: created, selected, moved; a tab's own pushes, pops and path.
            _ = try await step("POST", "/stacks", ["id": "search", "root": ["name": "Search"]])
            _ = try await step("POST", "/stacks", ["id": "profile"])
            _ = try await step("POST", "/stacks/profile/move", ["position": 0])
            _ = try await step("POST", "/select", ["stack": "search"])
            _ = try await step("POST", "/stacks/search/push", ["name": "Results"])
            _ = try await step("PUT", "/stacks/search/path", ["screens": [["name": "R1"], ["name": "R2"]]])
            _ = try await step("POST", "/stacks/search/pop", ["count": 1])
            // Presentations, nested: a sheet from the tab's top, a cover from the sheet's top.
            let sheet = try await step("POST", "/present", ["root": ["name": "Filter"]])
            let sheetID = try #require(sheet["stack"]?["id"]?.stringValue)
            _ = try await step("POST", "/stacks/\(sheetID)/push", ["name": "Options"])
            let cover = try await step(
                "POST", "/present", ["from": "top", "style": "fullScreenCover", "root": ["name": "Camera"]])
            let coverID = try #require(cover["stack"]?["id"]?.stringValue)
            // A value written on the tab's root reaches the sheet and the cover.
            _ = try await step("PATCH", "/screens/search:root/values", ["title": "searching"])
            #expect(tree.visibleScreen?.resolved(Title.self) == "searching")
            #expect(tree.visibleScreen?.id == tree.stack(StackID(coverID))?.top?.id)
            // A publish from the cover walks back through the sheet to the tab.
            _ = try await step("PUT", "/screens/search:root/handlers/selection", ["passBack": false])
            _ = try await step("POST", "/screens/top/preferences/selection", ["value": "shot"])
            #expect(tree.stack(StackID("search"))?.root?.preference(Selection.self) == "shot")
            // The cover's root returns: it is dismissed.
            _ = try await step("POST", "/screens/\(coverID):root/return", ["key": "selection", "value": "kept"])
            #expect(tree.stack(StackID(coverID)) == nil)
            // Replace above the sheet's root, then pop the tab's presenter: the sheet is dismissed.
            _ = try await step("PUT", "/screens/\(sheetID):root/above", ["screens": [["name": "P"], ["name": "Q"]]])
            _ = try await step("POST", "/stacks/search/pop", ["to": "search:root"])
            #expect(tree.presentations.isEmpty)
            // A pop of the main stack that dismisses; an explicit dismissal with a nested one inside.
            _ = try await step("POST", "/select", ["stack": "main"])
            _ = try await step("POST", "/present", ["root": ["name": "Compose"]])
            _ = try await step("POST", "/pop", ["count": 1])
            let outer = try await step("POST", "/present", ["root": ["name": "Outer"]])
            let outerID = try #require(outer["stack"]?["id"]?.stringValue)
            _ = try await step("POST", "/present", ["root": ["name": "Inner"]])
            _ = try await step("POST", "/dismiss", ["stack": .string(outerID)])
            // A tab removed while selected, with what it presented: the main stack is selected again.
            _ = try await step("POST", "/select", ["stack": "profile"])
            _ = try await step("POST", "/present", ["root": ["name": "Edit"]])
            _ = try await step("DELETE", "/stacks/profile")
            #expect(tree.selectedStackID == .main)
            // A batch of several, and a path replace on the main stack that dismisses.
            _ = try await step(
                "POST", "/batch",
                [
                    "operations": [
                        ["op": "push", "name": "C"],
                        ["op": "present", "style": "fullScreenCover", "root": ["name": "X"]],
                        ["op": "push", "stack": "top", "name": "Y"],
                        ["op": "setValues", "screen": "top", "values": ["counter": 2]],
                        ["op": "moveStack", "stack": "search", "position": 0],
                    ]
                ])
            _ = try await step("PUT", "/stacks/main/path", ["screens": [["name": "D"]]])
            _ = try await step("POST", "/screens/top/return", ["key": "selection", "value": "done"])
            try await tree.sync(to: try await session.end())
            #expect(tree.resource == (try await session.get()))
            #expect(tree.status == .ended)

            #expect(tree.snapshotCount == 1, "never started again")
            #expect(tree.appliedEventCount == Int(tree.version - start))
            var kinds: Set<SessionEvent.Kind> = []
            func collect(_ event: SessionEvent) {
                kinds.insert(event.kind)
                if case .batchApplied(let events) = event { events.forEach(collect) }
            }
            for case .event(let recorded) in try await session.history(after: start, limit: 1_000).events {
                collect(recorded.event)
            }
            #expect(kinds == Set(SessionEvent.Kind.allCases).subtracting([.sessionCreated]))
        }
    }

    /// A view of one stack is told when that stack changes, not when another one does; a stack
    /// object stays the same while the session has it.
    @Test(arguments: ServerKind.allCases) func eachStackIsObservedOnItsOwn(server: ServerKind) async throws {
        try await withServer(server) { client, server in
            let http = server.rawHTTP()
            let (session, tree, search) = try await treeWithATab(client, root: "Search")

            let searchChanged = Flag()
            let mainChanged = Flag()
            let selectionChanged = Flag()
            let presentationsChanged = Flag()
            withObservationTracking {
                _ = search.screens
            } onChange: {
                searchChanged.raise()
            }
            withObservationTracking {
                _ = tree.main.screens
            } onChange: {
                mainChanged.raise()
            }
            withObservationTracking {
                _ = tree.selectedStackID
            } onChange: {
                selectionChanged.raise()
            }
            withObservationTracking {
                _ = tree.presentations
            } onChange: {
                presentationsChanged.raise()
            }

            try await tree.sync(to: try await session.push("Detail").version)
            #expect(mainChanged.isRaised && !searchChanged.isRaised && !selectionChanged.isRaised)
            try await sendRaw(http, session, "POST", "/stacks/search/push", ["name": "Results"])
            try await tree.sync(to: try await session.get().version)
            #expect(searchChanged.isRaised && !selectionChanged.isRaised && !presentationsChanged.isRaised)
            try await sendRaw(http, session, "POST", "/select", ["stack": "search"])
            try await sendRaw(http, session, "POST", "/present", ["root": ["name": "Sheet"]])
            try await tree.sync(to: try await session.get().version)
            #expect(selectionChanged.isRaised && presentationsChanged.isRaised)
            #expect(tree.stack(StackID("search")) === search, "the same object while the tab is there")
            #expect(tree.visibleScreen?.name == "Sheet")
            #expect(tree.presentation(presentedBy: try #require(search.top?.id))?.root.name == "Sheet")
            #expect(search.presentation()?.style == .sheet)
        }
    }
}

/// A session (the tests' schema, root "Home") with a tab "search" whose root is named `root`, its
/// mirror, and the tab's stack in it.
@MainActor
func treeWithATab(_ client: NavigationValuesClient, root: String) async throws -> (
    RemoteSession, RemoteTree, RemoteTree.Stack
) {
    let session = try await client.createSession(root: ScreenSeed("Home"), schema: RemoteStackTests.schema)
    try await session.createStack(StackID("search"), root: ScreenSeed(root))
    let tree = try await RemoteTree.connect(to: session)
    return (session, tree, try #require(tree.stack(StackID("search"))))
}
