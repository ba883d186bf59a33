import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesClient

/// The mirror of a session with several stacks (docs/Stacks.md): it follows the main stack through
/// every event type of tabs, presentations, compounds and batches without starting again from a
/// snapshot, and equals the server's main stack after the last one.
@MainActor
@Suite struct RemoteStackStacksTests {
    @Test func theMirrorFollowsTheMainStackThroughTabsSheetsCompoundsAndBatches() async throws {
        try await withServer { client, server in
            let http = HTTPClient(port: server.port)
            let session = try await client.createSession(root: ScreenSeed("Home"), schema: RemoteStackTests.schema)
            let detail = try await session.push("Detail").screen.id.rawValue
            let mirror = try await RemoteStack.connect(to: session)

            // A tab with two screens, selected; a write and a handler there change nothing here.
            try await sendRaw(http, session, "POST", "/stacks", ["id": "search", "root": ["name": "Search"]])
            try await sendRaw(http, session, "POST", "/stacks/search/push", ["name": "Results"])
            try await sendRaw(http, session, "POST", "/select", ["stack": "search"])
            try await sendRaw(http, session, "PATCH", "/screens/search:top/values", ["title": "in a tab"])
            try await sendRaw(http, session, "PUT", "/screens/search:root/handlers/selection", ["passBack": false])
            try await sendRaw(http, session, "POST", "/select", ["stack": "main"])
            // A second tab moved before the first: the order of the tabs is not the mirror's.
            try await sendRaw(http, session, "POST", "/stacks", ["id": "profile"])
            let moved = try await session.moveStack(StackID("profile"), to: 0)
            #expect(moved.stack == StackID("profile") && moved.position == 0)
            await expectRemoteError(.conflict, status: 409) { try await session.moveStack(.main, to: 0) }
            await expectRemoteError(.conflict, status: 409) { try await session.moveStack(StackID("profile"), to: 2) }
            await expectRemoteError(.invalid, status: 422) { try await session.moveStack(StackID("profile"), to: -1) }

            // Detail presents a sheet that inherits the main stack's values and returns a result.
            try await sendRaw(http, session, "PUT", "/screens/\(detail)/handlers/selection", ["passBack": false])
            let sheet = try await sendRaw(
                http, session, "POST", "/present", ["from": .string(detail), "root": ["name": "Picker"]])
            let sheetID = try #require(sheet["stack"]?["id"]?.stringValue)
            try await sendRaw(http, session, "POST", "/stacks/\(sheetID)/push", ["name": "Page"])
            // A write on the root notifies the sheet's screens too; the mirror checks the main ones.
            try await sendRaw(http, session, "PATCH", "/screens/root/values", ["title": "Inbox"])
            try await sendRaw(http, session, "PATCH", "/screens/\(sheetID):top/values", ["counter": 3])
            try await sendRaw(http, session, "POST", "/stacks/\(sheetID)/pop", ["count": 1])
            try await sendRaw(
                http, session, "POST", "/screens/\(sheetID):root/return", ["key": "selection", "value": "b"])

            // Compounds and a batch on the main stack; a pop that dismisses a presentation.
            try await sendRaw(http, session, "PUT", "/screens/root/above", ["screens": [["name": "A"], ["name": "B"]]])
            try await sendRaw(
                http, session, "POST", "/batch",
                [
                    "operations": [
                        ["op": "push", "name": "C"], ["op": "present", "root": ["name": "Cover"]],
                        ["op": "push", "stack": "top", "name": "Inside"],
                        ["op": "setValues", "screen": "main:top", "values": ["counter": 7]],
                    ]
                ])
            try await sendRaw(http, session, "POST", "/pop", ["count": 1])
            try await sendRaw(http, session, "PUT", "/stacks/main/path", ["screens": [["name": "D"]]])
            try await sendRaw(http, session, "DELETE", "/stacks/search")

            let server = try await session.get()
            try await mirror.sync(to: server.version)
            #expect(mirror.resource.screens == server.screens)
            #expect(mirror.screens.map(\.id) == server.screens.map(\.id))
            #expect(mirror.top?.resolved(Title.self) == "Inbox")
            #expect(mirror.version == server.version)
            #expect(mirror.snapshotCount == 1, "never fell out of step")
            #expect(mirror.appliedEventCount == Int(server.version) - 2, "every event after its snapshot (version 2)")
            #expect(mirror[id: ScreenID(detail)] == nil, "Detail was replaced by A and B")
            mirror.stop()
        }
    }

    @Test func theMirrorStartsFromASnapshotThatHasOtherStacks() async throws {
        try await withServer { client, server in
            let http = HTTPClient(port: server.port)
            let session = try await client.createSession(root: ScreenSeed("Home"), schema: RemoteStackTests.schema)
            let sheet = try await sendRaw(http, session, "POST", "/present", ["root": ["name": "Sheet"]])
            let sheetID = try #require(sheet["stack"]?["id"]?.stringValue)
            let mirror = try await RemoteStack.connect(to: session)
            // The snapshot named the sheet's root, so writes there are known not to concern the mirror.
            try await sendRaw(http, session, "PATCH", "/screens/\(sheetID):root/values", ["title": "sheet"])
            try await sendRaw(http, session, "POST", "/dismiss", ["stack": .string(sheetID)])
            let version = try await session.push("Detail").version
            try await mirror.sync(to: version)
            #expect(mirror.snapshotCount == 1)
            #expect(mirror.screens.map(\.name) == ["Home", "Detail"])
            #expect(mirror.root?.resolved(Title.self) == "")
            mirror.stop()
        }
    }
}
