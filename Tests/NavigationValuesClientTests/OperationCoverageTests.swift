import Foundation
import NavigationValues
import NavigationValuesClient
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

/// What the calls of the operation table share: the client, the session they work on, and what
/// one call leaves for a later one.
final class OperationFixture: @unchecked Sendable {
    // Used by one test task at a time, one call after another.
    let client: NavigationValuesClient
    var session: RemoteSession!
    var tab = StackID("search")
    var sheet = StackID.main
    var results: ScreenID?
    var export: SessionExport?
    var observer: CreatedObserver?
    var handoffCode: String?

    init(client: NavigationValuesClient) {
        self.client = client
    }
}

/// Every operation of the served OpenAPI document has a typed call: a table from each
/// `operationId` to a call, checked both ways against the document the server serves, and each
/// call run against the real server, where it must send its operation's method and path and get
/// the answer the operation promises. A new endpoint without a client call fails here.
@Suite struct OperationCoverageTests {
    typealias Call = @Sendable (OperationFixture) async throws -> Void

    static func op(_ operationId: String, _ call: @escaping Call) -> (operationId: String, call: Call) {
        (operationId, call)
    }

    /// Each operation and a call of it, in an order where each finds what it needs.
    static let calls: [(operationId: String, call: Call)] = [
        op("healthz", { f throws in #expect(await f.client.isHealthy()) }),
        op("readyz", { f throws in #expect(await f.client.isReady()) }),
        op("metrics", { f throws in #expect(try await f.client.metrics().contains("navigation_values_")) }),
        op(
            "openapi",
            { f throws in
                #expect(try await f.client.openAPIDocument()["openapi"]?.stringValue?.hasPrefix("3.1") == true)
            }),
        op(
            "createSession",
            { fixture throws in
                let (session, resource) = try await fixture.client.createSessionReturningResource(
                    root: ScreenSeed("Home"), schema: demoSchema)
                #expect(resource.version == 1)
                fixture.session = session
            }
        ),
        op(
            "listSessions",
            { f throws in #expect(try await f.client.sessions().sessions.map(\.id).contains(f.session.id)) }),
        op("getSession", { f throws in #expect(try await f.session.get().screens.map(\.name) == ["Home"]) }),
        op("pushScreen", { f throws in #expect(try await f.session.push("Detail").version == 2) }),
        op("getScreen", { f throws in #expect(try await f.session.top.get().name == "Detail") }),
        op(
            "updateValues",
            { f throws in
                #expect(try await f.session.root.set(Title.self, "Inbox").affected.map(\.value) == ["Inbox", "Inbox"])
            }
        ),
        op(
            "setHandler",
            { f throws in
                #expect(try await f.session.root.setPreferenceHandler(Selection.self, passBack: true).version == 4)
            }
        ),
        op(
            "publishPreference",
            { f throws in
                let walk = try await f.session.top.updatePreference(Selection.self, value: "x")
                #expect(walk.deliveries.map(\.value) == ["x"])
            }
        ),
        op(
            "removeHandler",
            { f throws in #expect(try await f.session.root.removePreferenceHandler(Selection.self) == 6) }),
        op(
            "replacePath",
            { f throws in
                let path = try await f.session.replacePath([ScreenSeed("A"), ScreenSeed("B")])
                #expect(path.pushed.map(\.name) == ["A", "B"])
            }
        ),
        op("popScreens", { f throws in #expect(try await f.session.pop().popped.count == 1) }),
        op(
            "createStack",
            { f throws in
                let created = try await f.session.createStack(f.tab, root: ScreenSeed("Search"))
                #expect(created.stack.kind == .tab && created.stack.screens.map(\.name) == ["Search"])
            }
        ),
        op("listStacks", { f throws in #expect(try await f.session.stacks().stacks.map(\.id) == [.main, f.tab]) }),
        op("getStack", { f throws in #expect(try await f.session.stack(f.tab).screens.map(\.name) == ["Search"]) }),
        op(
            "pushOntoStack",
            { f throws in
                let pushed = try await f.session.push(ScreenSeed("Results"), onto: f.tab)
                #expect(pushed.screen.name == "Results")
                f.results = pushed.screen.id
            }
        ),
        op(
            "popFromStack",
            { f throws in
                let popped = try await f.session.pop(count: 1, from: f.tab)
                let results = try #require(f.results)
                #expect(popped.stack == f.tab && popped.popped == [results])
            }
        ),
        op(
            "replaceStackPath",
            { f throws in
                let path = try await f.session.replacePath([ScreenSeed("R1")], of: f.tab)
                #expect(path.stack == f.tab && path.pushed.map(\.name) == ["R1"])
                f.results = path.pushed.first?.id
            }
        ),
        op("moveStack", { f throws in #expect(try await f.session.moveStack(f.tab, to: 0).position == 0) }),
        op(
            "selectStack",
            { f throws in
                let selected = try await f.session.selectStack(f.tab)
                #expect(selected.selectedStack == f.tab && selected.visibleScreen == f.results)
            }
        ),
        op(
            "presentStack",
            { f throws in
                let presented = try await f.session.present(ScreenSeed("Sheet"), style: .fullScreenCover)
                #expect(presented.stack.kind == .fullScreenCover && presented.stack.presenter == f.results)
                f.sheet = presented.stack.id
            }
        ),
        op(
            "replaceAbove",
            { f throws in
                let replaced = try await f.session.replaceScreens(above: .rootOf(f.sheet), with: [ScreenSeed("Page")])
                #expect(replaced.screen.name == "Sheet" && replaced.pushed.map(\.name) == ["Page"])
            }
        ),
        op(
            "returnResult",
            { f throws in
                let returned = try await f.session.screen(.topOf(f.sheet)).returnResult(Selection.self, value: "y")
                #expect(returned.stack == f.sheet && returned.popped.count == 1)
            }
        ),
        op(
            "dismissStack",
            { f throws in
                let dismissed = try await f.session.dismiss()
                #expect(dismissed.stack == f.sheet && dismissed.selectedStack == nil)
            }
        ),
        op(
            "removeStack",
            { f throws in
                let removed = try await f.session.removeStack(f.tab)
                #expect(removed.stack == f.tab && removed.selectedStack == .main)
            }
        ),
        op(
            "applyBatch",
            { f throws in
                let before = try await f.session.get().version
                let batch = try await f.session.batch([
                    .push(ScreenSeed("C")), .setValues(["counter": 7], on: .top), .pop(from: .main),
                ])
                #expect(batch.version == before + 1)
                #expect(batch.results.map(\.kind) == [.pushed, .valuesUpdated, .popped])
            }
        ),
        op(
            "watchSessionEvents",
            { f throws in
                #expect(try await collect(3, of: f.session.events(after: 0)).map(\.seq) == [1, 2, 3])
                #expect(try await f.session.poll(after: 0).events.first?.seq == 1)
            }
        ),
        op("getHistory", { f throws in #expect(try await f.session.history(after: 0, limit: 5).events.count == 5) }),
        op(
            "replaySession",
            { f throws in #expect(try await f.session.replay(at: 2).screens.map(\.name) == ["Home", "Detail"]) }),
        op(
            "diffSession",
            { f throws in
                let patch = try await f.session.diff(from: 1, to: 2)
                #expect(patch.operations.first == .test(path: "/version", value: 1))
                #expect(patch.operations.contains { if case .add = $0 { true } else { false } })
            }
        ),
        op(
            "exportSession",
            { f throws in
                let export = try await f.session.export()
                #expect(export.events.map(\.seq) == Array(1...(export.version ?? 0)))
                f.export = export
                // The same operation, as a Swift Testing test: checking every event, or only some.
                let test = try await f.session.exportAsTest()
                let suite = "RecordedSession_" + f.session.id.rawValue.replacingOccurrences(of: "-", with: "_")
                #expect(test.filename == "\(suite).swift")
                #expect(test.version == export.version)
                #expect(test.source.contains("@Suite struct \(suite) {"))
                #expect(test.source.components(separatedBy: "replay.expect(\n").count - 1 == export.events.count)
                let some = try await f.session.exportAsTest(checkingAfter: [1, 2])
                #expect(some.source.components(separatedBy: "replay.expect(\n").count - 1 == 2)
            }
        ),
        op(
            "importSession",
            { f throws in
                let export = try #require(f.export)
                let imported = try await f.client.importSession(export.ndjson)
                #expect(try await imported.get().version == export.version)
            }
        ),
        op(
            "forkSession",
            { f throws in
                let fork = try await f.session.fork(at: 2)
                let resource = try await fork.get()
                #expect(resource.origin == SessionOrigin(session: f.session.id, version: 2))
                #expect(resource.screens.map(\.name) == ["Home", "Detail"])
            }
        ),
        op(
            "createStreamTicket",
            { f throws in
                #expect(try await f.session.streamTicket().session == f.session.id)
                #expect(try await f.client.allEventsTicket().session == nil)
            }
        ),
        op(
            "createHandoff",
            { f throws in
                let made = try await f.session.handoff()
                #expect(made.session == f.session.id && made.code.hasPrefix("h_"))
                f.handoffCode = made.code
            }
        ),
        op(
            "redeemHandoff",
            { f throws in
                let joined = try await f.client.redeem(try #require(f.handoffCode))
                #expect(joined.id == f.session.id && joined.token.hasPrefix("td_"))
            }
        ),
        op(
            "createObserver",
            { f throws in
                let observer = try await f.session.createObserver(label: "support", expiresIn: .seconds(600))
                #expect(observer.token.hasPrefix("ro_") && observer.observer.session == f.session.id)
                f.observer = observer
            }
        ),
        op(
            "listObservers",
            { f throws in
                let id = try #require(f.observer).observer.id
                #expect(try await f.client.observers(of: f.session.id).observers.map(\.id) == [id])
                #expect(try await f.session.observers().observers.map(\.id) == [id])
            }
        ),
        op(
            "getObserver",
            { f throws in #expect(try await f.client.observer(try #require(f.observer).observer.id).label == "support")
            }
        ),
        op(
            "revokeObserver",
            { f throws in
                let observer = try #require(f.observer)
                let reader = f.client.session(id: f.session.id, token: observer.token)
                #expect(try await reader.get().id == f.session.id)
                try await f.client.revokeObserver(observer.observer.id)
                await expectRemoteError(.unauthorized, status: 401) { try await reader.get() }
            }
        ),
        op(
            "watchAllEvents",
            { f throws in
                // Live only: push until the stream, once connected, delivers one.
                let seen = Mutex<TaggedEvent?>(nil)
                let reader = Task {
                    for try await tagged in f.client.allEvents() {
                        seen.withLock { $0 = tagged }
                        return
                    }
                }
                defer { reader.cancel() }
                try await waitFor("an event of every session's stream") {
                    try await f.session.push("Live")
                    try await Task.sleep(for: .milliseconds(50))
                    return seen.withLock { $0 != nil }
                }
                let pushed = try #require(seen.withLock { $0 })
                #expect(pushed.session == f.session.id)
            }
        ),
        op(
            "endSession",
            { f throws in
                let ended = try await f.session.end()
                #expect(try await f.session.get().state == .ended && ended > 1)
            }
        ),
    ]

    @Test(arguments: ServerKind.allCases)
    func everyServedOperationHasATypedCallAndEveryCallAServedOperation(server: ServerKind) async throws {
        let transport = RecordingTransport()
        try await withServer(server, client: { transport.record(&$0) }) { client, _ in
            let document = try await client.openAPIDocument()
            let served = Self.operations(of: document)
            let tabled = Self.calls.map(\.operationId)
            #expect(Set(tabled).count == tabled.count, "each operation once in the table")
            #expect(Set(served.keys).subtracting(tabled).sorted() == [], "served operations without a client call")
            #expect(
                Set(tabled).subtracting(served.keys).sorted() == [], "calls of operations the server does not serve")
            #expect(served.count >= 42)

            let fixture = OperationFixture(client: client)
            for (operationId, call) in Self.calls {
                guard let (method, template) = served[operationId] else { continue }
                let before = transport.sent.count
                try await call(fixture)
                let sent = transport.sent[before...]
                #expect(
                    sent.contains { $0.method == method && Self.matches($0.path, template) },
                    "\(operationId) sent \(sent.map { "\($0.method) \($0.path)" }), not \(method) \(template)")
            }
        }
    }

    /// `operationId` → method and path template of every operation of an OpenAPI document.
    static func operations(of document: JSONValue) -> [String: (method: String, path: String)] {
        var operations: [String: (method: String, path: String)] = [:]
        guard case .object(let paths) = document["paths"] ?? .null else { return [:] }
        for (path, item) in paths {
            guard case .object(let methods) = item else { continue }
            for (method, operation) in methods {
                if let id = operation["operationId"]?.stringValue { operations[id] = (method.uppercased(), path) }
            }
        }
        return operations
    }

    /// Whether `path` is an instance of `template` (`/v1/sessions/{id}/push`): each `{…}` one
    /// non-empty segment.
    static func matches(_ path: String, _ template: String) -> Bool {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        let patterns = template.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count == patterns.count else { return false }
        return zip(segments, patterns).allSatisfy { segment, pattern in
            pattern.hasPrefix("{") && pattern.hasSuffix("}") ? !segment.isEmpty : segment == pattern
        }
    }
}
