import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesClient
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

/// A lost answer on a kept-alive connection is retried as documented: after the policy's backoff
/// (100 ms, doubling to 5 s), never after the request timeout (FoundationNetworking's own re-send
/// stalled for it, a thread spinning meanwhile), applied once, and `onRetry` is told of the retry,
/// for a request with a body and for one without.
/// Through a relay that drops the connection after forwarding the request (and after the server
/// started answering, so the server has applied it), on a connection an earlier request used.
@Suite struct LostAnswerTests {
    enum Request: String, CaseIterable, Sendable {
        /// `POST …/push`, with a JSON body.
        case push
        /// `DELETE /v1/sessions/{id}`, no body.
        case end
        /// `GET /v1/sessions/{id}`, no body.
        case get
    }

    /// The request timeout the client runs with: a retry that waited for it would take this long.
    static let requestTimeout = Duration.seconds(20)

    @Test(arguments: Request.allCases)
    func aLostAnswerOnAReusedConnectionIsRetriedAfterTheBackoff(_ request: Request) async throws {
        try await withServer { direct, server in
            let proxy = try DroppingProxy(upstreamPort: server.port)
            defer { proxy.close() }
            let retries = RetryNoticeLog()
            var configuration = NavigationValuesClient.Configuration(adminToken: adminToken)
            configuration.requestTimeout = Self.requestTimeout
            configuration.onRetry = { retries.record($0) }
            configuration.maxConnectionsPerHost = 1
            let client = NavigationValuesClient(baseURL: loopbackURL(port: proxy.port), configuration: configuration)
            let setup = try await direct.createSession(root: ScreenSeed("Home"))
            let session = client.session(id: setup.id, token: setup.token)
            let path = "/v1/sessions/\(setup.id.rawValue)"

            // Two requests open and reuse the one connection the client keeps.
            _ = try await session.get()
            let before = try await session.get()
            let line: String
            switch request {
            case .push: line = "POST \(path)/push "
            case .end: line = "DELETE \(path) "
            case .get: line = "GET \(path) "
            }
            let earlier = proxy.requests.count
            proxy.dropAnswer(to: line)
            let started = ContinuousClock.now
            let version: Int64
            switch request {
            case .push: version = try await session.push("Detail").version
            case .end: version = try await session.end()
            case .get: version = try await session.get().version
            }
            let waited = ContinuousClock.now - started

            let relayed = proxy.requests.dropFirst(earlier).filter { $0.line.hasPrefix(line) }
            #expect(proxy.droppedCount == 1)
            let lost = try #require(relayed.first)
            #expect(lost.dropped && lost.index >= 1, "the answer lost was on a reused connection: \(proxy.requests)")
            #expect(relayed.count == 2, "the request and one retry: \(proxy.requests)")
            // Told of the retry, whatever made it, with the policy's first backoff (50-100 ms).
            #expect(retries.notices.count == 1, "\(retries.notices)")
            let notice = try #require(retries.notices.first)
            #expect(notice.attempt == 1)
            #expect(notice.delay >= .milliseconds(50) && notice.delay <= .milliseconds(100))
            let isConnectionFailure = if case .connection = notice.reason { true } else { false }
            #expect(isConnectionFailure, "\(notice.reason)")
            // Retried after the backoff, not after the request timeout (about 0.1 s on an idle
            // machine; the bound leaves room for a loaded one).
            #expect(waited >= notice.delay)
            #expect(waited < Self.requestTimeout / 2, "waited \(waited), the request timeout is \(Self.requestTimeout)")
            // Applied once.
            let after = try await setup.get()
            switch request {
            case .push, .end:
                #expect(version == before.version + 1)
                #expect(after.version == before.version + 1, "applied once")
                #expect(try await setup.history(after: before.version).events.count == 1)
            case .get:
                #expect(version == before.version && after.version == before.version)
            }
        }
    }
}
