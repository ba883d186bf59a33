import Foundation
import NavigationValues
import NavigationValuesClient
import NavigationValuesRoutes
import NavigationValuesSessions
import NavigationValuesTesting
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

/// What a test or a preview gets from the in-memory server: seeded sessions made through the API,
/// reproducible ids, a clock it sets, streams that end with it, and nothing left once unused.
@Suite struct InMemoryServerTests {
    static let schema = SchemaResource(
        values: ["title": .init(type: .string, defaultValue: "")], isStrict: true)

    @Test func seededSessionsAreMadeThroughTheAPIWithTheirPathAndTree() async throws {
        let seed = SessionSeed(
            root: ScreenSeed("Inbox", values: ["title": "Mail"]), schema: Self.schema,
            path: [ScreenSeed("Message"), ScreenSeed("Reply")],
            operations: [.createStack(StackID("search"), root: ScreenSeed("Search")), .present(ScreenSeed("Compose"))])
        let server = try await InMemoryServer(sessions: [seed, SessionSeed()])
        #expect(server.sessions.count == 2)
        let session = server.sessions[0]
        let resource = try await session.get()
        #expect(resource.screens.map(\.name) == ["Inbox", "Message", "Reply"])
        #expect(resource.screens[2].resolved["title"] == "Mail")
        #expect(try SchemaResource(json: resource.schema) == Self.schema)
        #expect(resource.version == 3, "created, the path, the batch: one event each")
        let stacks = try await session.stacks()
        #expect(stacks.stacks.map(\.kind) == [.main, .tab, .sheet])
        #expect(stacks.stacks[2].screens.map(\.name) == ["Compose"])
        // The other session has the server's default root, and the same API refuses a bad seed.
        #expect(try await server.sessions[1].get().screens.count == 1)
        let refused = SessionSeed(root: ScreenSeed("Inbox", values: ["title": 3]), schema: Self.schema)
        await #expect(throws: RemoteError.self) { try await server.createSession(refused) }
        await #expect(throws: RemoteError.self) { try await InMemoryServer(sessions: [refused]) }
    }

    @Test func idsAndTokensAreTheSameOnEveryRunUnlessLive() async throws {
        func firstSession(_ configure: (inout InMemoryServer.Configuration) -> Void = { _ in }) async throws
            -> (id: SessionID, token: String, screen: ScreenID)
        {
            var configuration = InMemoryServer.Configuration(sessions: [SessionSeed(path: [ScreenSeed("Detail")])])
            configure(&configuration)
            let session = try await InMemoryServer(configuration: configuration).sessions[0]
            return (session.id, session.token, try await session.get().screens[1].id)
        }
        let first = try await firstSession()
        let second = try await firstSession()
        #expect(first == second)
        #expect(first.id.rawValue.hasPrefix("s_") && first.token.hasPrefix("t_"))
        let otherSeed = try await firstSession { $0.identifiers = .seeded(1) }
        #expect(otherSeed.id != first.id && otherSeed.token != first.token)
        let live = try await firstSession { $0.identifiers = .live }
        #expect(live.id != first.id)
    }

    @Test func theClockIsTheConfigurationsAndIdempotencyKeysExpireWithIt() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        var configuration = InMemoryServer.Configuration(sessions: [SessionSeed()])
        configuration.now = { clock.now }
        let server = try await InMemoryServer(configuration: configuration)
        let session = server.sessions[0]
        #expect(try await session.get().createdAt == clock.now)
        clock.advance(by: .seconds(90))
        let pushed = try await session.push("Detail", idempotencyKey: "k_same")
        #expect(try await session.get().updatedAt == clock.now)
        // Retried within 24 h: the first answer again; a day later the key is free, applied anew.
        #expect(try await session.push("Detail", idempotencyKey: "k_same") == pushed)
        clock.advance(by: .seconds(24 * 3_600 + 1))
        #expect(try await session.push("Detail", idempotencyKey: "k_same").version == pushed.version + 1)
    }

    @Test func aBodyOverTheLimitIsRefusedByTheServersParser() async throws {
        let server = try await InMemoryServer(sessions: [SessionSeed()])
        let session = server.sessions[0]
        let request = TransportRequest(
            method: "POST", path: "/v1/sessions/\(session.id.rawValue)/push",
            headers: ["Authorization": "Bearer \(session.token)", "Content-Type": "application/json"],
            body: Data(#"{"name":"Big","values":{"pad":"\#(String(repeating: "x", count: 1_048_577))"}}"#.utf8),
            url: InMemoryServer.baseURL)
        let answer = try await server.transport.send(request)
        #expect(answer.status == 413)
        #expect(answer.header("content-type") == "application/problem+json")
        #expect(String(decoding: answer.body, as: UTF8.self).contains("1048576"))
    }

    @Test func shuttingDownEndsStreamsAndRefusesRequestsAsAGoneServer() async throws {
        let server = try await InMemoryServer(sessions: [SessionSeed()])
        let session = server.sessions[0]
        let reader = Task { () -> Int in
            var count = 0
            for try await _ in session.events(after: 0) { count += 1 }
            return count
        }
        try await waitUntil("the stream to subscribe", timeout: .seconds(30)) { server.api.hub.subscriberCount == 1 }
        await server.shutdown()
        let retries = Mutex<[RetryNotice]>([])
        var configuration = NavigationValuesClient.Configuration(
            retry: RetryPolicy(maxAttempts: 2, initialDelay: .milliseconds(1)))
        configuration.onRetry = { notice in retries.withLock { $0.append(notice) } }
        let client = server.client(configuration: configuration)
        do {
            _ = try await client.session(id: session.id, token: session.token).push("Late")
            Issue.record("a push after the shutdown was answered")
        } catch let error as RemoteError {
            #expect(error.code == .connectionFailed)
            #expect(error.underlying?.code == .cannotConnectToHost)
        }
        #expect(retries.withLock { $0.map(\.reason) } == [.connection(.cannotConnectToHost)])
        // The stream ended with the server; the reader tries to reconnect, is refused, and stops
        // when cancelled.
        reader.cancel()
        _ = try? await reader.value
    }

    @Test func cancellingAReaderEndsItsStreamOnTheServer() async throws {
        let server = try await InMemoryServer(sessions: [SessionSeed()])
        let session = server.sessions[0]
        let reader = Task { for try await _ in session.events(after: 0) {} }
        try await waitUntil("the stream to subscribe", timeout: .seconds(30)) { server.api.hub.subscriberCount == 1 }
        reader.cancel()
        _ = try? await reader.value
        try await waitUntil("the server's stream to end", timeout: .seconds(30)) {
            server.api.hub.subscriberCount == 0
        }
    }

    /// As over a socket, a client that stops waiting (its timeout, its task cancelled) gets its
    /// error at once, whatever the server is doing.
    @Test func aClientThatGivesUpGetsItsErrorAtOnce() async throws {
        let server = try await InMemoryServer(sessions: [SessionSeed()])
        let session = server.sessions[0]
        let longPoll = { (timeout: Duration) in
            TransportRequest(
                method: "GET", path: "/v1/sessions/\(session.id.rawValue)/events",
                query: [.init(name: "after", value: "1"), .init(name: "wait", value: "30")],
                headers: ["Authorization": "Bearer \(session.token)", "Accept": "application/json"], timeout: timeout,
                url: InMemoryServer.baseURL)
        }
        func code(_ attempt: () async throws -> TransportResponse) async -> URLError.Code? {
            do {
                _ = try await attempt()
                return nil
            } catch {
                return (error as? URLError)?.code
            }
        }
        let started = ContinuousClock.now
        #expect(await code { try await server.transport.send(longPoll(.milliseconds(200))) } == .timedOut)
        let waiting = Task { await code { try await server.transport.send(longPoll(.seconds(60))) } }
        try await Task.sleep(for: .milliseconds(100))
        waiting.cancel()
        #expect(await waiting.value == .cancelled)
        #expect(ContinuousClock.now - started < .seconds(20), "neither waited for the 30 s long poll")
    }

    @Test func aServerNothingUsesGoesAway() async throws {
        weak var api: AnyObject?
        weak var transport: InMemoryTransport?
        do {
            let server = try await InMemoryServer(sessions: [SessionSeed(path: [ScreenSeed("Detail")])])
            api = server.api
            transport = server.transport
            let session = server.sessions[0]
            try await session.push("More")
            let reader = Task { try await session.events(after: 0).first { _ in true } }
            _ = try await reader.value
        }
        try await waitUntil("the server to go away", timeout: .seconds(30)) { api == nil && transport == nil }
    }
}
