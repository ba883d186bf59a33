import Foundation
import NavigationValues
import NavigationValuesWire
import Observation
import Synchronization
import TestSupport
import Testing

@testable import NavigationValuesClient

/// The mirror follows the server's events and equals the server's session after the last one.
@MainActor
@Suite struct RemoteStackTests {
    static let schema = SchemaResource(
        values: [
            "title": .init(type: .string, defaultValue: ""),
            "counter": .init(type: .integer, defaultValue: 0),
            "draft": .init(type: .string, defaultValue: "", isObservationIgnored: true),
        ],
        preferences: ["selection": .init(type: .string, defaultValue: "")])

    // MARK: - The property

    /// Random operations from several clients at once; after the last event the mirror equals
    /// `GET /v1/sessions/{id}` exactly, without ever starting again from a snapshot.
    @Test(arguments: ServerKind.allCases, [UInt64(1), 2, 3, 4])
    func afterRandomOperationsFromSeveralClientsTheMirrorEqualsTheServer(server: ServerKind, seed: UInt64) async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"), schema: Self.schema)
            let mirror = try await RemoteStack.connect(to: session)
            let writers = 3
            let operations = 30
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    let own = makeClient(sameServerAs: client).session(id: session.id, token: session.token)
                    group.addTask {
                        var random = SplitMix64(state: seed &* 1_000 &+ UInt64(writer))
                        for step in 0..<operations { try await RandomOperation.apply(to: own, step: step, &random) }
                    }
                }
                try await group.waitForAll()
            }
            if seed.isMultiple(of: 2) { try await session.end() }
            let server = try await session.get()
            try await mirror.sync(to: server.version)
            #expect(mirror.resource == server)
            #expect(mirror.version == server.version)
            #expect(mirror.snapshotCount == 1, "never fell out of step")
            #expect(mirror.appliedEventCount == Int(server.version) - 1)
            #expect(mirror.status == (seed.isMultiple(of: 2) ? .ended : .live))
            mirror.stop()
        }
    }

    // MARK: - Observation

    @Test(arguments: ServerKind.allCases) func readsAreObservedAndOnlyResolvedChangesNotify(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"), schema: Self.schema)
            try await session.push("Detail")
            let mirror = try await RemoteStack.connect(to: session)
            let top = try #require(mirror.top)
            #expect(top.resolved(Title.self) == "")

            let titleChanged = Flag()
            withObservationTracking {
                _ = top.resolved(Title.self)
            } onChange: {
                titleChanged.raise()
            }
            // Another key, and an observation-ignored one, notify no reader of `title`.
            try await mirror.sync(to: try await session.root.set(Counter.self, 5).version)
            try await mirror.sync(to: try await session.root.setValues(["draft": "typing"]).version)
            #expect(!titleChanged.isRaised)
            #expect(top.resolved(Counter.self) == 5)
            #expect(top.resolvedValue(named: "draft") == "typing")

            try await mirror.sync(to: try await session.root.set(Title.self, "Inbox").version)
            #expect(titleChanged.isRaised, "the root's write reaches the screen that inherits it")
            #expect(top.resolved(Title.self) == "Inbox")
            #expect(mirror.root?.value(named: "title") == "Inbox")
            #expect(top.value(named: "title") == nil)

            // Received preferences, from the deliveries the server made.
            try await session.root.setPreferenceHandler(Selection.self, passBack: true)
            let root = try #require(mirror.root)
            let received = Flag()
            withObservationTracking {
                _ = root.preference(Selection.self)
            } onChange: {
                received.raise()
            }
            try await mirror.sync(to: try await session.top.updatePreference(Selection.self, value: "chosen").version)
            #expect(received.isRaised)
            #expect(root.preference(Selection.self) == "chosen")
            #expect(root.handlerPassesBack(named: "selection") == true)
            #expect(top.preference(Selection.self) == "")

            // Pushes and pops change `screens`, which is observed too.
            let screensChanged = Flag()
            withObservationTracking {
                _ = mirror.screens
            } onChange: {
                screensChanged.raise()
            }
            try await mirror.sync(to: try await session.pop().version)
            #expect(screensChanged.isRaised)
            #expect(mirror.screens.map(\.name) == ["Home"])
        }
    }

    @Test(arguments: ServerKind.allCases) func aMirrorThatDriftedStartsAgainFromASnapshot(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"), schema: Self.schema)
            let pushed = try await session.push("Detail")
            let mirror = try await RemoteStack.connect(to: session)
            mirror.stack.pop()  // a change no event made
            let written = try await session.screen(id: pushed.screen.id).set(Title.self, "x")
            try await mirror.sync(to: written.version)
            try await waitFor("the mirror to start again", timeout: .seconds(30)) { mirror.snapshotCount == 2 }
            try await mirror.sync(to: written.version)
            #expect(mirror.resource == (try await session.get()))
        }
    }

    @Test(arguments: ServerKind.allCases) func anEndedSessionEndsTheMirrorAndAPurgedOneFailsIt(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let mirror = try await RemoteStack.connect(to: session)
            let ended = try await session.end()
            try await mirror.sync(to: ended)
            #expect(mirror.status == .ended)
            #expect(mirror.state == .ended)
            await expectRemoteError(.gone) { try await mirror.sync(to: ended + 1) }

            try await session.purge()
            let purged = RemoteStack(session: session)
            purged.start()
            // A purged session's events are gone (410), as its reads are not found.
            await expectRemoteError(.gone, status: 410) { try await purged.sync(to: 0) }
            #expect(purged.status == .failed(.gone))
        }
    }

    // MARK: - The path

    @Test(arguments: ServerKind.allCases) func settingThePathSendsOneRequestAndKeepsMatchingScreens(
        server: ServerKind
    ) async throws {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let mirror = try await RemoteStack.connect(to: session)
            @MainActor func change(_ names: [String], sends kinds: [String]) async throws {
                let before = mirror.version
                let kept = mirror.screens.dropFirst().prefix { _ in true }.map(\.id)
                let operations = try await mirror.setPath(names.map { ScreenSeed($0) })
                #expect(mirror.path == names)
                #expect(try await session.get().screens.dropFirst().map(\.name) == names)
                #expect(try await eventKinds(of: session, after: before) == kinds, "to \(names)")
                #expect(operations.count == kinds.count)
                // Screens that stay keep their ids (and so their values and handlers).
                let now = mirror.screens.dropFirst().map(\.id)
                let common = zip(kept, now).prefix { $0 == $1 }.count
                #expect(common == zip(kept, names).prefix { pair in mirror[id: pair.0]?.name == pair.1 }.count)
            }
            try await change(["A", "B"], sends: ["path.replaced"])
            try await change(["A", "B", "C"], sends: ["screen.pushed"])
            try await change(["A"], sends: ["screens.popped"])
            try await change(["A", "C", "D"], sends: ["screens.replaced"])
            try await change(["X", "Y"], sends: ["path.replaced"])
            try await change(["X", "Z", "W"], sends: ["screens.replaced"])
            try await change(["X", "Z", "W"], sends: [])
            try await change([], sends: ["screens.popped"])
            try await change(["A"], sends: ["screen.pushed"])
            try await change(["B"], sends: ["path.replaced"])
        }
    }

    @Test(arguments: ServerKind.allCases) func assigningThePathReadsAsAssignedUntilTheServerMatches(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let mirror = try await RemoteStack.connect(to: session)
            mirror.path = ["Inbox", "Message"]
            #expect(mirror.path == ["Inbox", "Message"], "no snapping back while the requests fly")
            try await waitFor("the server's stack to match", timeout: .seconds(30)) {
                mirror.pendingPath == nil
            }
            #expect(mirror.screens.map(\.name) == ["Home", "Inbox", "Message"])
            #expect(mirror.pathError == nil)

            // A path the server refuses: the error is kept and the path reads the server's again.
            try await session.end()
            mirror.path = ["Inbox"]
            try await waitFor("the refusal", timeout: .seconds(30)) { mirror.pathError != nil }
            #expect(mirror.pathError?.code == .gone)
            #expect(mirror.path == ["Inbox", "Message"])
        }
    }

    @Test func thePlanKeepsThePrefixInOneRequest() {
        let a = ScreenID("a")
        let b = ScreenID("b")
        let current = [(id: a, key: "A"), (id: b, key: "B")]
        func plan(_ from: [(id: ScreenID, key: String)], _ to: [String], root: ScreenReference = .root)
            -> PathOperation?
        {
            PathPlan.operation(root: root, from: from, to: to.map { (key: $0, seed: ScreenSeed($0)) })
        }
        #expect(plan(current, ["A", "B"]) == nil)
        #expect(plan(current, ["A"]) == .pop(to: .id(a)))
        #expect(plan(current, []) == .pop(to: .root))
        #expect(plan(current, [], root: .id(ScreenID("r"))) == .pop(to: .id(ScreenID("r"))))
        #expect(plan(current, ["A", "C"]) == .replaceAbove(.id(a), [ScreenSeed("C")]))
        #expect(plan(current, ["A", "B", "C"]) == .push(ScreenSeed("C")))
        #expect(plan(current, ["A", "B", "C", "D"]) == .replaceAbove(.id(b), [ScreenSeed("C"), ScreenSeed("D")]))
        #expect(plan(current, ["C"]) == .replacePath([ScreenSeed("C")]))
        #expect(plan(current, ["B", "A"]) == .replacePath([ScreenSeed("B"), ScreenSeed("A")]))
        #expect(plan([], ["A"]) == .push(ScreenSeed("A")))
        #expect(plan([], ["A", "B"]) == .replacePath([ScreenSeed("A"), ScreenSeed("B")]))
        #expect(plan([], []) == nil)
    }
}

/// A flag raised from an observation callback.
final class Flag: Sendable {
    private let value = Mutex(false)
    func raise() { value.withLock { $0 = true } }
    var isRaised: Bool { value.withLock { $0 } }
}

/// One random request of a writer of the property test; refusals the request can meet with
/// others writing at once (a screen popped meanwhile: 404; nothing left to pop: 409) are fine.
enum RandomOperation {
    static let names = ["A", "B", "C"]
    static let values: [JSONValue] = ["x", "y", ""]

    static func apply(to session: RemoteSession, step: Int, _ random: inout SplitMix64) async throws {
        let screen = try await pickScreen(session, &random)
        do {
            switch Int.random(in: 0..<10, using: &random) {
            case 0, 1:
                var seeded: [String: JSONValue] = [:]
                if Bool.random(using: &random) { seeded["title"] = values.randomElement(using: &random) ?? "x" }
                if Bool.random(using: &random) { seeded["counter"] = .integer(Int64.random(in: 0...3, using: &random)) }
                try await session.push(names.randomElement(using: &random) ?? "A", values: seeded)
            case 2:
                try await session.pop(count: Int.random(in: 1...2, using: &random))
            case 3:
                try await session.pop(to: screen.reference)
            case 4:
                let count = Int.random(in: 0...2, using: &random)
                try await session.replacePath(
                    (0..<count).map { ScreenSeed(names[$0], values: ["title": .string("p\(step)")]) })
            case 5, 6:
                var changes: [String: JSONValue?] = [:]
                for key in ["title", "counter", "draft", "other"] where Bool.random(using: &random) {
                    if Bool.random(using: &random) {
                        changes[key] =
                            key == "counter"
                            ? .integer(Int64.random(in: 0...3, using: &random))
                            : values.randomElement(using: &random)
                    } else {
                        changes[key] = .some(nil)
                    }
                }
                try await screen.setValues(changes.isEmpty ? ["title": "t"] : changes)
            case 7:
                if Bool.random(using: &random) {
                    try await screen.setPreferenceHandler(named: "selection", passBack: Bool.random(using: &random))
                } else {
                    try await screen.removePreferenceHandler(named: "selection")
                }
            default:
                try await screen.updatePreference(
                    named: "selection", value: values.randomElement(using: &random) ?? "x")
            }
        } catch let error as RemoteError where error.code == .notFound || error.code == .conflict {
            // Another writer changed the stack between this one's read and its request.
        }
    }

    /// The root, the top, or a screen id read a moment ago.
    static func pickScreen(_ session: RemoteSession, _ random: inout SplitMix64) async throws -> RemoteScreen {
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return session.root
        case 1: return session.top
        default:
            let screens = try await session.get().screens
            return session.screen(id: (screens.randomElement(using: &random) ?? screens[0]).id)
        }
    }
}
