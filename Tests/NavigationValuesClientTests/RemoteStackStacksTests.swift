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
    @Test(arguments: ServerKind.allCases) func theMirrorFollowsTheMainStackThroughTabsSheetsCompoundsAndBatches(
        server: ServerKind
    ) async throws {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"), schema: RemoteStackTests.schema)
            let detail = try await session.push("Detail").screen.id
            let mirror = try await RemoteStack.connect(to: session)

            // A tab with two screens, selected; a write and a handler there change nothing here.
            let search = StackID("search")
            try await session.createStack(search, root: ScreenSeed("Search"))
            try await session.push(ScreenSeed("Results"), onto: search)
            try await session.selectStack(search)
            try await session.screen(.topOf(search)).set(Title.self, "in a tab")
            try await session.screen(.rootOf(search)).setPreferenceHandler(Selection.self, passBack: false)
            try await session.selectStack(.main)
            // A second tab moved before the first: the order of the tabs is not the mirror's.
            try await session.createStack(StackID("profile"))
            let moved = try await session.moveStack(StackID("profile"), to: 0)
            #expect(moved.stack == StackID("profile") && moved.position == 0)
            await expectRemoteError(.conflict, status: 409) { try await session.moveStack(.main, to: 0) }
            await expectRemoteError(.conflict, status: 409) { try await session.moveStack(StackID("profile"), to: 2) }
            await expectRemoteError(.invalid, status: 422) { try await session.moveStack(StackID("profile"), to: -1) }

            // Detail presents a sheet that inherits the main stack's values and returns a result.
            try await session.screen(id: detail).setPreferenceHandler(Selection.self, passBack: false)
            let sheet = try await session.present(ScreenSeed("Picker"), from: .id(detail)).stack.id
            try await session.push(ScreenSeed("Page"), onto: sheet)
            // A write on the root notifies the sheet's screens too; the mirror checks the main ones.
            try await session.root.set(Title.self, "Inbox")
            try await session.screen(.topOf(sheet)).set(Counter.self, 3)
            try await session.pop(count: 1, from: sheet)
            try await session.screen(.rootOf(sheet)).returnResult(Selection.self, value: "b")

            // Compounds and a batch on the main stack; a pop that dismisses a presentation.
            try await session.replaceScreens(above: .root, with: [ScreenSeed("A"), ScreenSeed("B")])
            try await session.batch([
                .push(ScreenSeed("C")), .present(ScreenSeed("Cover")), .push(ScreenSeed("Inside"), onto: .top),
                .setValues(["counter": 7], on: .topOf(.main)),
            ])
            try await session.pop(count: 1)
            try await session.replacePath([ScreenSeed("D")], of: .main)
            try await session.removeStack(search)

            let server = try await session.get()
            try await mirror.sync(to: server.version)
            #expect(mirror.resource.screens == server.screens)
            #expect(mirror.screens.map(\.id) == server.screens.map(\.id))
            #expect(mirror.top?.resolved(Title.self) == "Inbox")
            #expect(mirror.version == server.version)
            #expect(mirror.snapshotCount == 1, "never fell out of step")
            #expect(mirror.appliedEventCount == Int(server.version) - 2, "every event after its snapshot (version 2)")
            #expect(mirror[id: detail] == nil, "Detail was replaced by A and B")
            mirror.stop()
        }
    }

    @Test(arguments: ServerKind.allCases) func theMirrorStartsFromASnapshotThatHasOtherStacks(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"), schema: RemoteStackTests.schema)
            let sheet = try await session.present(ScreenSeed("Sheet")).stack.id
            let mirror = try await RemoteStack.connect(to: session)
            // The snapshot named the sheet's root, so writes there are known not to concern the mirror.
            try await session.screen(.rootOf(sheet)).set(Title.self, "sheet")
            try await session.dismiss(sheet)
            let version = try await session.push("Detail").version
            try await mirror.sync(to: version)
            #expect(mirror.snapshotCount == 1)
            #expect(mirror.screens.map(\.name) == ["Home", "Detail"])
            #expect(mirror.root?.resolved(Title.self) == "")
            mirror.stop()
        }
    }
}
