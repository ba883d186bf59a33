import Foundation
import NavigationValues
import NavigationValuesClient
import NavigationValuesWire
import TestSupport
import Testing

/// Every endpoint of docs/API.md through the client, against a real server on a real SQLite file.
@Suite struct EndpointTests {
    @Test(arguments: ServerKind.allCases) func createReturnsTheSessionAndItsTokenAndGetShowsIt(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            var root = ScreenSeed("Home", values: ["text": "hello"])
            try root.set(Counter.self, 3)
            let (session, created) = try await client.createSessionReturningResource(root: root, schema: demoSchema)
            #expect(session.token.hasPrefix("t_"))
            #expect(created.version == 1)
            #expect(created.screens.map(\.name) == ["Home"])
            #expect(created.screens[0].values == ["text": "hello", "counter": 3])
            #expect(try SchemaResource(json: created.schema) == demoSchema)
            let fetched = try await session.get()
            #expect(fetched == created)
            // Opened again by id with its token, or with the admin token.
            #expect(try await client.session(id: session.id, token: session.token).get() == created)
            #expect(try await client.session(id: session.id).get() == created)
        }
    }

    @Test(arguments: ServerKind.allCases) func pushPopAndPathReplaceChangeTheStackAsAnswered(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let a = try await session.push("A", values: ["title": "a"])
            #expect(a.version == 2)
            #expect(a.screen.name == "A")
            #expect(a.screen.index == 1)
            #expect(a.screen.resolved["title"] == "a")
            let b = try await session.push(ScreenSeed("B"))
            let c = try await session.push("C")
            #expect(c.version == 4)

            let popped = try await session.pop()
            #expect(popped == PopResult(popped: [c.screen.id], version: 5))
            let poppedTo = try await session.pop(to: .id(a.screen.id))
            #expect(poppedTo.popped == [b.screen.id])
            try await session.push("B2")
            let twoPopped = try await session.pop(count: 2)
            #expect(twoPopped.popped.count == 2)
            #expect(twoPopped.popped.last == a.screen.id)

            let path = try await session.replacePath([ScreenSeed("X"), ScreenSeed("Y", values: ["title": "y"])])
            #expect(path.popped == [])
            #expect(path.pushed.map(\.name) == ["X", "Y"])
            let again = try await session.replacePath([ScreenSeed("Z")])
            #expect(again.popped == path.pushed.map(\.id).reversed())
            #expect(try await session.get().screens.map(\.name) == ["Home", "Z"])
            let toRoot = try await session.pop(to: .root)
            #expect(toRoot.popped == [again.pushed[0].id])
        }
    }

    @Test(arguments: ServerKind.allCases) func typedAndNamedValuesAreWrittenAndReadWithWhatTheyAffected(
        server: ServerKind
    ) async throws {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"), schema: demoSchema)
            let detail = try await session.push("Detail")
            let set = try await session.root.set(Title.self, "Inbox")
            #expect(set.screen.values == ["title": "Inbox"])
            #expect(
                set.affected == [
                    AffectedValue(screen: set.screen.id, key: "title", value: "Inbox"),
                    AffectedValue(screen: detail.screen.id, key: "title", value: "Inbox"),
                ])
            #expect(try await session.top.resolved(Title.self) == "Inbox")
            #expect(try await session.top.resolved(Counter.self) == 0)  // undeclared, unset: the key's default
            try await session.top.set(Counter.self, 7)
            #expect(try await session.screen(id: detail.screen.id).resolved(Counter.self) == 7)

            // Named keys: set and remove in one change; the schema's default shows through.
            let named = try await session.top.setValues(["text": "typed", "title": "Local"])
            #expect(named.screen.resolved["text"] == "typed")
            #expect(try await session.top.resolvedValue(named: "text") == "typed")
            let removed = try await session.top.setValues(["text": nil])
            #expect(removed.screen.resolved["text"] == "initial value")
            try await session.top.removeValue(Title.self)
            #expect(try await session.top.resolved(Title.self) == "Inbox")
            #expect(try await session.root.resolvedValue(named: "unset") == nil)

            let screen = try await session.top.get()
            #expect(screen.id == detail.screen.id)
            #expect(screen.values == ["counter": 7])
        }
    }

    @Test(arguments: ServerKind.allCases) func handlersAndPublishWalkBackAsSemanticsSays(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("A"), schema: demoSchema)
            let rootID = try await session.get().screens[0].id
            let b = try await session.push("B")
            let c = try await session.push("C")
            let handler = try await session.root.setPreferenceHandler(Selection.self, passBack: true)
            #expect(handler.screen.handlers["selection"] == HandlerResource(passBack: true))
            try await session.screen(id: b.screen.id).setPreferenceHandler(named: "selection", passBack: false)
            try await session.top.setPreferenceHandler(Selection.self, passBack: true)

            let walk = try await session.top.updatePreference(Selection.self, value: "p")
            #expect(
                walk.deliveries == [.init(screen: c.screen.id, value: "p"), .init(screen: b.screen.id, value: "p")])
            #expect(walk.stoppedAt == b.screen.id)
            #expect(try await session.root.preference(Selection.self) == "")
            #expect(try await session.screen(id: b.screen.id).preference(Selection.self) == "p")

            let removed = try await session.screen(id: b.screen.id).removePreferenceHandler(named: "selection")
            #expect(removed == walk.version + 1)
            let through = try await session.top.updatePreference(named: "selection", value: "q")
            #expect(through.stoppedAt == nil)
            #expect(through.deliveries.map(\.screen) == [c.screen.id, rootID])
            #expect(try await session.root.receivedPreference(named: "selection") == "q")
            try await session.root.removePreferenceHandler(Selection.self)
            #expect(try await session.root.get().handlers == [:])
        }
    }

    @Test(arguments: ServerKind.allCases) func historyReplayAndTheLongPollReadTheLog(server: ServerKind) async throws {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            for index in 0..<5 { try await session.push("S\(index)") }
            let first = try await session.history(after: 0, limit: 4)
            #expect(first.events.map(\.seq) == [1, 2, 3, 4])
            #expect(first.next == 4)
            let last = try await session.history(after: 4)
            #expect(last.events.map(\.seq) == [5, 6])
            #expect(last.next == nil)
            guard case .event(let created) = first.events[0], case .sessionCreated = created.event else {
                Issue.record("the first event is \(first.events[0])")
                return
            }

            let atThree = try await session.replay(at: 3)
            #expect(atThree.version == 3)
            #expect(atThree.screens.map(\.name) == ["Home", "S0", "S1"])
            #expect(try await session.replay() == session.get())

            let page = try await session.poll(after: 4)
            #expect(page.events.map(\.seq) == [5, 6])
            #expect(page.last == 6)
            let empty = try await session.poll(after: 6)
            #expect(empty == EventPage(events: [], last: 6))

            // A long poll waits for the next event.
            async let waited = session.poll(after: 6, wait: .seconds(30))
            try await waitUntil("the long poll to subscribe", timeout: .seconds(30)) {
                (try await client.metrics()).contains("navigation_values_subscribers 1")
            }
            try await session.push("Late")
            let late = try await waited
            #expect(late.events.map(\.seq) == [7])
        }
    }

    @Test(arguments: ServerKind.allCases) func theEventStreamDeliversEveryEventAndEndsWithTheSession(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            try await session.push("A")
            let fromStart = Task { try await collect(5, of: session.events(after: 0)) }
            try await session.root.set(Title.self, "t")
            try await session.pop()
            try await session.end()
            let items = try await fromStart.value
            #expect(items.map(\.seq) == [1, 2, 3, 4, 5])
            guard case .event(let ended) = items[4], case .sessionEnded = ended.event else {
                Issue.record("the last item is \(items[4])")
                return
            }
            // After `session.ended` the sequence finishes.
            var count = 0
            for try await _ in session.events(after: 3) { count += 1 }
            #expect(count == 2)
        }
    }

    @Test(arguments: ServerKind.allCases) func aSnapshotStartsTheStreamAtTheCurrentVersion(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            try await session.push("A")
            let stream = session.events(snapshot: true)
            var iterator = stream.makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first == .snapshot(try await session.get()))
            let pushed = try await session.push("B")
            let next = try await iterator.next()
            #expect(next?.seq == pushed.version)
            guard case .event(let event) = next, case .screenPushed(let screen) = event.event else {
                Issue.record("expected the push, got \(String(describing: next))")
                return
            }
            #expect(screen == pushed.screen)
        }
    }

    @Test(arguments: ServerKind.allCases) func aLiveStreamStartsWithWhatHappensNext(server: ServerKind) async throws {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            try await session.push("Before")
            let items = Task { try await collect(1, of: session.events()) }
            // The stream reads the version before it subscribes: wait for its subscription.
            try await waitUntil("the stream to subscribe", timeout: .seconds(30)) {
                (try await client.metrics()).contains("navigation_values_subscribers 1")
            }
            let after = try await session.push("After")
            #expect(try await items.value.map(\.seq) == [after.version])
        }
    }

    @Test(arguments: ServerKind.allCases) func endAndPurgeAnswerAsAPIMarkdownSays(server: ServerKind) async throws {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let ended = try await session.end()
            #expect(ended == 2)
            #expect(try await session.get().state == .ended)
            await expectRemoteError(.gone, status: 410) { try await session.push("Late") }
            #expect(try await session.history().events.count == 2)
            try await session.purge()
            await expectRemoteError(.notFound, status: 404) { try await session.get() }
            let gone = await expectRemoteError(.gone, status: 410) { try await session.history() }
            #expect(gone?.problem?.type == "/problems/gone")
            let stream = await expectRemoteError(.gone, status: 410) {
                try await collect(1, of: session.events(after: 0), timeout: .seconds(30))
            }
            #expect(stream?.detail.contains("purged") == true)
        }
    }

    @Test(arguments: ServerKind.allCases) func adminRoutesListSessionsAndStreamEverySession(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let all = Task {
                try await withTimeout(.seconds(60), "two tagged events") {
                    var events: [TaggedEvent] = []
                    for try await event in client.allEvents() {
                        events.append(event)
                        if events.count == 2 { break }
                    }
                    return events
                }
            }
            try await waitUntil("the admin stream to subscribe", timeout: .seconds(30)) {
                (try await client.metrics()).contains("navigation_values_subscribers 1")
            }
            let first = try await client.createSession()
            let second = try await client.createSession()
            let tagged = try await all.value
            #expect(Set(tagged.map(\.session)) == [first.id, second.id])
            #expect(tagged.allSatisfy { $0.event.seq == 1 })

            let page = try await client.sessions(limit: 1)
            #expect(page.sessions.count == 1)
            let cursor = try #require(page.nextCursor)
            let rest = try await client.sessions(limit: 10, cursor: cursor)
            #expect(Set((page.sessions + rest.sessions).map(\.id)) == [first.id, second.id])

            // A session token on an admin route is 403; none at all is 401.
            let withoutAdmin = makeClient(sameServerAs: client) { $0.adminToken = first.token }
            await expectRemoteError(.forbidden, status: 403) { try await withoutAdmin.sessions() }
            let anonymous = makeClient(sameServerAs: client) { $0.adminToken = nil }
            await expectRemoteError(.unauthorized, status: 401) { try await anonymous.sessions() }
        }
    }

    @Test(arguments: ServerKind.allCases) func operationalEndpointsAnswer(server: ServerKind) async throws {
        try await withServer(server) { client, _ in
            #expect(await client.isHealthy())
            #expect(await client.isReady())
            let metrics = try await client.metrics()
            #expect(metrics.contains("navigation_values_http_requests_total"))
            let document = try await client.openAPIDocument()
            #expect(document["openapi"] == "3.1.0")
            let nowhere = makeClient(loopbackURL(port: 1))
            #expect(await nowhere.isHealthy() == false)
        }
    }
}
