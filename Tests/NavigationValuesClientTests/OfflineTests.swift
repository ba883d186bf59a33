import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesClient
import NavigationValuesWire
import TestSupport
import Testing

/// Mutations made while the server cannot be reached wait in the client's offline queue, in
/// order, with their idempotency keys, and reach the server once each when it is back: through a
/// relay that takes the server away and brings it back, in memory and in a file a new client reads.
@MainActor
@Suite struct OfflineTests {
    /// A client of `url` that keeps what it cannot send, trying the server again every 20-100 ms.
    func offlineClient(_ url: URL, file: URL? = nil, limit: Int = 100) -> NavigationValuesClient {
        makeClient(url) { configuration in
            configuration.retry = RetryPolicy(
                maxAttempts: 2, initialDelay: .milliseconds(5), maxDelay: .milliseconds(10))
            configuration.offline = OfflineOptions(
                limit: limit, file: file, retryInterval: .milliseconds(20), maxRetryInterval: .milliseconds(100))
        }
    }

    /// What a test works with: a session on the server, a relay in front of it, and a handle on the
    /// session through the relay from a client with an offline queue.
    struct Setup {
        var proxy: DroppingProxy
        var client: NavigationValuesClient
        var queue: OfflineQueue
        /// The session, through a client straight to the server.
        var direct: RemoteSession
        /// The session, through the relay and the offline client.
        var session: RemoteSession
    }

    /// Runs `body` with a server, a relay, an offline client (with `limit`) and a session.
    func withOfflineSession(
        limit: Int = 100, _ body: (Setup) async throws -> Void
    ) async throws {
        try await withServer { direct, server in
            let proxy = try DroppingProxy(upstreamPort: server.port)
            defer { proxy.close() }
            let client = offlineClient(loopbackURL(port: proxy.port), limit: limit)
            let setup = try await direct.createSession(root: ScreenSeed("Home"))
            try await body(
                Setup(
                    proxy: proxy, client: client, queue: try #require(client.offlineQueue), direct: setup,
                    session: client.session(id: setup.id, token: setup.token)))
        }
    }

    @Test func mutationsMadeOfflineAreSentInOrderOnceEachWhenTheServerIsBack() async throws {
        try await withOfflineSession { context in
            let (proxy, queue, setup, session) = (context.proxy, context.queue, context.direct, context.session)
            let mirror = try await RemoteStack.connect(to: session)
            defer { mirror.stop() }

            proxy.setReachable(false)
            let first = Task { try await session.push("A") }
            try await waitFor("the first push queued") { queue.count == 1 }
            // Later ones queue at once, behind it; one is conditional on a version it will not be at.
            let second = Task { try await session.push("B") }
            try await waitFor("the second queued") { queue.count == 2 }
            let third = Task { try await session.root.set(Title.self, "offline") }
            try await waitFor("the third queued") { queue.count == 3 }
            let stale = Task { try await session.push("Stale", ifMatch: 1) }
            try await waitFor("the fourth queued") { queue.count == 4 }
            let path = "/v1/sessions/\(setup.id.rawValue)"
            #expect(
                queue.mutations.map(\.label) == [
                    "POST \(path)/push", "POST \(path)/push", "PATCH \(path)/screens/root/values", "POST \(path)/push",
                ])
            #expect(Set(queue.mutations.map(\.idempotencyKey)).count == 4)
            try await waitFor("the mirror shows them pending") { mirror.pendingMutations.count == 4 }
            #expect(queue.model.count == 4)
            #expect(try await setup.get().version == 1, "nothing reached the server")

            proxy.setReachable(true)
            #expect(try await first.value.version == 2)
            #expect(try await second.value.version == 3)
            #expect(try await third.value.version == 4)
            await expectRemoteError(.versionMismatch, status: 412) { try await stale.value }
            #expect(queue.count == 0)
            #expect(
                try await eventKinds(of: setup, after: 1) == ["screen.pushed", "screen.pushed", "values.updated"],
                "each once, in order")
            #expect(try await setup.get().screens.map(\.name) == ["Home", "A", "B"])
            try await mirror.sync(to: 4)
            try await waitFor("the mirror shows none pending") { mirror.pendingMutations.isEmpty }
            #expect(mirror.top?.resolved(Title.self) == "offline")
        }
    }

    @Test func aQueuedMutationWhoseAnswerIsLostIsAppliedOnce() async throws {
        try await withOfflineSession { context in
            let (proxy, queue, setup, session) = (context.proxy, context.queue, context.direct, context.session)

            proxy.setReachable(false)
            let pushed = Task { try await session.push("A") }
            try await waitFor("the push queued") { queue.count == 1 }
            // Back, but the first answer the queue gets is lost after the server applied it.
            proxy.dropAnswer(to: "POST /v1/sessions/\(setup.id.rawValue)/push")
            proxy.setReachable(true)
            #expect(try await pushed.value.version == 2)
            #expect(proxy.droppedCount == 1)
            #expect(try await setup.history(after: 1).events.count == 1, "applied once")
        }
    }

    @Test func aFileKeepsTheQueueForTheNextClientWhichSendsEachOnce() async throws {
        try await withServer { direct, server in
            try await withTemporaryFolder { folder in
                let proxy = try DroppingProxy(upstreamPort: server.port)
                defer { proxy.close() }
                let file = folder.appendingPathComponent("pending.json")
                let setup = try await direct.createSession(root: ScreenSeed("Home"))
                proxy.setReachable(false)

                // The app's first run: three mutations made offline, then the app goes away.
                weak var firstQueue: OfflineQueue?
                do {
                    let client = offlineClient(loopbackURL(port: proxy.port), file: file)
                    let queue = try #require(client.offlineQueue)
                    firstQueue = queue
                    let session = client.session(id: setup.id, token: setup.token)
                    var calls: [Task<Void, any Error>] = []
                    for (index, name) in ["A", "B", "C"].enumerated() {
                        calls.append(Task { try await session.push(name) })
                        try await waitFor("\(name) queued") { queue.count == index + 1 }
                    }
                    var entries: [JSONValue] = []
                    try await waitFor("the file to hold the three") {
                        let stored = try JSONValue(parsing: Array(Data(contentsOf: file)))
                        if case .array(let stored) = stored["entries"] ?? .null { entries = stored }
                        return entries.count == 3
                    }
                    #expect(
                        entries.map { $0["mutation"]?["path"]?.stringValue?.hasSuffix("/push") } == [true, true, true])
                    let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions]
                    #expect((permissions as? NSNumber)?.intValue == 0o600, "it holds tokens")
                    for call in calls { call.cancel() }
                    for call in calls { await #expect(throws: CancellationError.self) { try await call.value } }
                    #expect(queue.count == 3, "cancelled callers leave their mutations queued")
                }
                try await waitFor("the first client gone") { firstQueue == nil }
                #expect(try await setup.get().version == 1)

                // The next run, with the server back: a new client reads the file and sends them.
                proxy.setReachable(true)
                let client = offlineClient(loopbackURL(port: proxy.port), file: file)
                let queue = try #require(client.offlineQueue)
                #expect(queue.mutations.count <= 3)
                try await withTimeout(.seconds(30), "the queue sent") { try await queue.waitUntilEmpty() }
                #expect(try await setup.get().screens.map(\.name) == ["Home", "A", "B", "C"], "each once, in order")
                #expect(try await setup.history(after: 1).events.count == 3)
                let left = try JSONValue(parsing: Array(Data(contentsOf: file)))
                #expect(left["entries"] == .array([]))
            }
        }
    }

    @Test func theQueueIsBoundedAndWhatWaitsCanBeDiscarded() async throws {
        try await withOfflineSession(limit: 2) { context in
            let (proxy, queue, setup, session) = (context.proxy, context.queue, context.direct, context.session)

            proxy.setReachable(false)
            let first = Task { try await session.push("A") }
            try await waitFor("A queued") { queue.count == 1 }
            let second = Task { try await session.push("B") }
            try await waitFor("B queued") { queue.count == 2 }
            let full = await expectRemoteError(.offlineQueueFull) { try await session.push("C") }
            #expect(full?.detail.contains("2 mutations already wait") == true, "\(String(describing: full))")

            let firstID = try #require(queue.mutations.first?.id)
            #expect(try queue.discard(firstID))
            await #expect(throws: CancellationError.self) { try await first.value }
            #expect(try !queue.discard(firstID))
            try queue.discardAll()
            await #expect(throws: CancellationError.self) { try await second.value }
            #expect(queue.count == 0)

            // Nothing discarded is ever sent: the next push, with the server back, is version 2.
            proxy.setReachable(true)
            #expect(try await session.push("D").version == 2)
            #expect(try await setup.get().screens.map(\.name) == ["Home", "D"])
        }
    }
}
