import Foundation
import Logging
import NavigationValues
import NavigationValuesClient
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

/// What a token provider was asked, in order.
final class TokenLog: Sendable {
    private let asked = Mutex<[TokenProvider.Request]>([])
    func record(_ request: TokenProvider.Request) { asked.withLock { $0.append(request) } }
    var requests: [TokenProvider.Request] { asked.withLock { $0 } }
}

/// A swift-log handler that keeps every record, for the test to read.
struct CapturingLogHandler: LogHandler {
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    final class Store: Sendable {
        private let records = Mutex<[Record]>([])
        func append(_ record: Record) { records.withLock { $0.append(record) } }
        var all: [Record] { records.withLock { $0 } }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        store.append(
            Record(
                level: event.level, message: "\(event.message)",
                metadata: (event.metadata ?? [:]).mapValues { "\($0)" }))
    }
}

/// Counts the attempts it sees and adds a header; loses the answer of the first attempt it sees
/// of a request whose path ends with `losing`, as a dropped connection would.
struct CountingMiddleware: ClientMiddleware {
    final class Log: Sendable {
        private let state = Mutex<(names: [String], statuses: [Int], lost: Set<String>)>(([], [], []))
        func saw(_ name: String) { state.withLock { $0.names.append(name) } }
        func answered(_ status: Int) { state.withLock { $0.statuses.append(status) } }
        /// Whether this is the first time `path` is seen (then its answer is lost).
        func losesFirst(_ path: String) -> Bool { state.withLock { $0.lost.insert(path).inserted } }
        var names: [String] { state.withLock { $0.names } }
        var statuses: [Int] { state.withLock { $0.statuses } }
    }

    let name: String
    let log: Log
    var losing: String?

    func intercept(
        _ request: TransportRequest, next: (TransportRequest) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        log.saw(name)
        var request = request
        request.headers["X-Seen-By-\(name)"] = "yes"
        let response = try await next(request)
        log.answered(response.status)
        if let losing, request.path.hasSuffix(losing), log.losesFirst(request.path) {
            throw URLError(.networkConnectionLost)
        }
        return response
    }

    func intercept(stream request: TransportRequest) async throws -> TransportRequest {
        log.saw("\(name) stream")
        var request = request
        request.headers["X-Seen-By-\(name)"] = "stream"
        return request
    }
}

/// The client's hooks: a token provider asked per request and once more after a 401, middleware
/// that sees every attempt, and a swift-log logger that never shows a token.
@Suite struct HookTests {
    @Test(arguments: ServerKind.allCases) func theTokenProviderIsAskedPerRequestAndOnceMoreAfterA401(
        server: ServerKind
    ) async throws {
        let log = TokenLog()
        let retries = RetryNoticeLog()
        let good = Mutex<String?>(nil)
        let provider = TokenProvider { request in
            log.record(request)
            if request.rejected != nil { return good.withLock { $0 } }
            return request.token
        }
        let configure: (inout NavigationValuesClient.Configuration) -> Void = {
            $0.tokenProvider = provider
            $0.onRetry = { retries.record($0) }
        }
        try await withServer(server, client: configure) { client, _ in
            let created = try await client.createSession(root: ScreenSeed("Home"))
            good.withLock { $0 = created.token }
            #expect(log.requests == [TokenProvider.Request(session: nil, token: nil)], "creation holds no token")
            // A handle with a token the server refuses: the provider's fresh one is used, once.
            let stale = client.session(id: created.id, token: "t_stale")
            let pushed = try await stale.push("A")
            #expect(pushed.version == 2)
            #expect(
                log.requests.suffix(2) == [
                    TokenProvider.Request(session: created.id, token: "t_stale"),
                    TokenProvider.Request(session: created.id, token: "t_stale", rejected: "t_stale"),
                ])
            #expect(retries.notices.map(\.reason) == [.status(401)])
            let token: String = stale.token  // read as before: now the refreshed token
            #expect(token == created.token)
            // The next request sends the kept token: no 401, no refresh.
            try await stale.push("B")
            #expect(log.requests.last == TokenProvider.Request(session: created.id, token: created.token))
            #expect(retries.notices.count == 1)

            // A provider with nothing better: the 401 stands, after one question.
            good.withLock { $0 = "t_also-wrong" }
            let before = log.requests.count
            let other = client.session(id: created.id, token: "t_wrong")
            await expectRemoteError(.unauthorized, status: 401) { try await other.get() }
            #expect(log.requests.count == before + 2, "asked for the request, then once after the 401")
            await expectRemoteError(.unauthorized, status: 401) { try await other.get() }
            #expect(other.token == "t_also-wrong")

            // An event stream asks too, and reconnects at once with the refreshed token.
            good.withLock { $0 = created.token }
            let streamed = client.session(id: created.id, token: "t_stale-again")
            let items = try await collect(2, of: streamed.events(after: 0))
            #expect(items.map(\.seq) == [1, 2])
            #expect(streamed.token == created.token)
        }
    }

    @Test(arguments: ServerKind.allCases) func anAdminTokenIsRefreshedTheSameWay(server: ServerKind) async throws {
        let provider = TokenProvider { request in
            request.rejected != nil ? adminToken : request.token
        }
        let configure: (inout NavigationValuesClient.Configuration) -> Void = {
            $0.adminToken = "wrong-admin-token"
            $0.tokenProvider = provider
        }
        try await withServer(server, client: configure) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            #expect(try await client.sessions().sessions.map(\.id) == [session.id])
            #expect(try await client.observers().observers.isEmpty)
        }
    }

    @Test(arguments: ServerKind.allCases) func middlewareSeesEveryAttemptOutermostFirstAndAddsHeaders(
        server: ServerKind
    ) async throws {
        let recording = RecordingTransport()
        let log = CountingMiddleware.Log()
        let retries = RetryNoticeLog()
        let configure: (inout NavigationValuesClient.Configuration) -> Void = {
            recording.record(&$0)
            $0.onRetry = { retries.record($0) }
            $0.middleware = [
                CountingMiddleware(name: "outer", log: log, losing: "/push"),
                CountingMiddleware(name: "inner", log: log),
            ]
        }
        try await withServer(server, client: configure) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            // The outer middleware loses the push's first answer: the client retries above it.
            let pushed = try await session.push("A")
            #expect(pushed.version == 2)
            #expect(try await session.history(after: 1).events.count == 1, "applied once")
            #expect(log.names == ["outer", "inner", "outer", "inner", "outer", "inner", "outer", "inner"])
            #expect(log.statuses == [201, 201, 201, 201, 201, 201, 200, 200])
            #expect(retries.notices.map(\.reason) == [.connection(.networkConnectionLost)])
            let push = recording.requests.filter { $0.path.hasSuffix("/push") }
            #expect(push.count == 2)
            #expect(push.allSatisfy { $0.header("X-Seen-By-outer") == "yes" && $0.header("X-Seen-By-inner") == "yes" })
            #expect(Set(push.compactMap { $0.header("Idempotency-Key") }).count == 1, "one key for both attempts")

            _ = try await collect(1, of: session.events(after: 0))
            #expect(log.names.suffix(2) == ["outer stream", "inner stream"])
            #expect(recording.streams.last?.header("X-Seen-By-inner") == "stream")
        }
    }

    @Test(arguments: ServerKind.allCases) func theLoggerIsASwiftLogLoggerThatNeverShowsAToken(
        server: ServerKind
    ) async throws {
        let store = CapturingLogHandler.Store()
        var logger = Logger(label: "app.navigation") { _ in CapturingLogHandler(store: store) }
        logger.logLevel = .trace
        let configure: (inout NavigationValuesClient.Configuration) -> Void = {
            $0.logger = logger
            $0.middleware = [CountingMiddleware(name: "loser", log: CountingMiddleware.Log(), losing: "/push")]
        }
        try await withServer(server, client: configure) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            try await session.push("A")
            let records = store.all
            let answered = records.filter { $0.message == "answered" }
            #expect(answered.allSatisfy { $0.level == .debug })
            #expect(answered.map { $0.metadata["status"] } == ["201", "201"], "the creation, then the push's retry")
            let retry = try #require(records.first { $0.message == "retrying" })
            #expect(retry.level == .notice)
            #expect(retry.metadata["request"] == "POST /v1/sessions/\(session.id.rawValue)/push")
            #expect(retry.metadata["attempt"] == "1")
            let everything = records.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
            #expect(!everything.contains(session.token) && !everything.contains(adminToken))
        }
    }
}
