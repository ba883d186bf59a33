import Foundation
import NavigationValues
import NavigationValuesClient
import NavigationValuesWire
import TestSupport
import Testing

/// The calls of docs/Stacks.md honour `If-Match` and `Idempotency-Key` as docs/API.md's do, and a
/// batch's refusal points at its operation.
@Suite struct StackEndpointTests {
    /// Each mutation added with several stacks, on a session with a tab and a sheet.
    enum Mutation: String, CaseIterable, Sendable {
        case createStack, selectStack, removeStack, moveStack, pushOnto, popFrom, stackPath, present, dismiss
        case above, returnResult, batch

        func send(_ session: RemoteSession, sheetTop: ScreenID, ifMatch: Int64?, key: String? = nil) async throws
            -> Int64
        {
            let tab = StackID("tab")
            switch self {
            case .createStack:
                return try await session.createStack(StackID("new"), ifMatch: ifMatch, idempotencyKey: key).version
            case .selectStack: return try await session.selectStack(tab, ifMatch: ifMatch, idempotencyKey: key).version
            case .removeStack: return try await session.removeStack(tab, ifMatch: ifMatch, idempotencyKey: key).version
            case .moveStack:
                return try await session.moveStack(StackID("other"), to: 0, ifMatch: ifMatch, idempotencyKey: key)
                    .version
            case .pushOnto:
                return try await session.push(ScreenSeed("T2"), onto: tab, ifMatch: ifMatch, idempotencyKey: key)
                    .version
            case .popFrom:
                return try await session.pop(to: .root, from: StackID.top, ifMatch: ifMatch, idempotencyKey: key)
                    .version
            case .stackPath:
                return try await session.replacePath([ScreenSeed("X")], of: tab, ifMatch: ifMatch, idempotencyKey: key)
                    .version
            case .present:
                return try await session.present(
                    ScreenSeed("Inner"), from: .id(sheetTop), ifMatch: ifMatch, idempotencyKey: key
                ).version
            case .dismiss: return try await session.dismiss(ifMatch: ifMatch, idempotencyKey: key).version
            case .above:
                return try await session.replaceScreens(
                    above: .root, with: [ScreenSeed("Y")], ifMatch: ifMatch, idempotencyKey: key
                ).version
            case .returnResult:
                return try await session.screen(id: sheetTop).returnResult(
                    named: "selection", value: "r", ifMatch: ifMatch, idempotencyKey: key
                ).version
            case .batch:
                return try await session.batch(
                    [.push(ScreenSeed("B1"), onto: tab), .selectStack(tab)], ifMatch: ifMatch, idempotencyKey: key
                ).version
            }
        }
    }

    /// A session with a tab (`tab`, root T), another (`other`, root O) presenting a sheet (S, S2)
    /// that a user sees; returns its handle and the sheet's top.
    func makeSession(_ client: NavigationValuesClient) async throws -> (RemoteSession, ScreenID) {
        let session = try await client.createSession(root: ScreenSeed("Home"))
        try await session.createStack(StackID("tab"), root: ScreenSeed("T"))
        try await session.createStack(StackID("other"), root: ScreenSeed("O"))
        try await session.selectStack(StackID("other"))
        let sheet = try await session.present(ScreenSeed("S")).stack.id
        let top = try await session.push(ScreenSeed("S2"), onto: sheet).screen.id
        return (session, top)
    }

    @Test(arguments: ServerKind.allCases, Mutation.allCases)
    func ifMatchAppliesOnlyAtTheNamedVersion(server: ServerKind, _ mutation: Mutation) async throws {
        try await withServer(server) { client, _ in
            let (session, sheetTop) = try await makeSession(client)
            let version = try await session.get().version
            let stale = await expectRemoteError(.versionMismatch, status: 412) {
                try await mutation.send(session, sheetTop: sheetTop, ifMatch: version - 1)
            }
            #expect(stale?.currentVersion == version)
            #expect(try await session.get().version == version, "nothing applied")
            #expect(try await mutation.send(session, sheetTop: sheetTop, ifMatch: version) == version + 1)
        }
    }

    @Test(arguments: ServerKind.allCases, Mutation.allCases)
    func aRepeatedKeyIsAnsweredAsTheFirstAndAppliedOnce(server: ServerKind, _ mutation: Mutation) async throws {
        try await withServer(server) { client, _ in
            let (session, sheetTop) = try await makeSession(client)
            let version = try await session.get().version
            let first = try await mutation.send(session, sheetTop: sheetTop, ifMatch: nil, key: "k-\(mutation)")
            let again = try await mutation.send(session, sheetTop: sheetTop, ifMatch: nil, key: "k-\(mutation)")
            #expect(first == version + 1 && again == first)
            #expect(try await session.history(after: version).events.count == 1)
        }
    }

    @Test(arguments: ServerKind.allCases) func aBatchRefusalPointsAtItsOperationAndAppliesNothing(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let error = await expectRemoteError(.conflict, status: 409) {
                try await session.batch([.push(ScreenSeed("A")), .pop(count: 5)])
            }
            #expect(error?.detail.contains("operation 1") == true, "\(String(describing: error))")
            #expect(try await session.get().version == 1)
            let invalid = await expectRemoteError(.invalid, status: 422) {
                try await session.batch([.push(ScreenSeed("A")), .createStack(StackID("main"))])
            }
            #expect(invalid?.pointers.first?.hasPrefix("/operations/1") == true, "\(String(describing: invalid))")
        }
    }

    @Test(arguments: ServerKind.allCases) func stacksAreReadAsTheServerHoldsThem(server: ServerKind) async throws {
        try await withServer(server) { client, _ in
            let (session, sheetTop) = try await makeSession(client)
            let list = try await session.stacks()
            #expect(list.stacks.map(\.kind) == [.main, .tab, .tab, .sheet])
            #expect(list.selectedStack == StackID("other"))
            #expect(list.visibleScreen == sheetTop)
            #expect(try await session.stack(.top).screens.map(\.name) == ["S", "S2"])
            #expect(try await session.stack(.selected).screens.map(\.name) == ["O"])
            await expectRemoteError(.notFound, status: 404) { try await session.stack(StackID("nope")) }
            let resource = try await session.get()
            #expect(resource.stacks == Array(list.stacks.dropFirst()) && resource.visibleScreen == sheetTop)
        }
    }
}
