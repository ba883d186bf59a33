import Foundation
import NavigationValues
import NavigationValuesClient
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

/// A transport of the app's own, selected in the configuration, in front of the one the client
/// would use (URLSession's, or the in-memory server's): it sees every request and every stream the
/// client makes.
final class RecordingTransport: ClientTransport {
    private struct State {
        var inner: any ClientTransport = URLSessionTransport()
        var sent: [(request: TransportRequest, isStream: Bool)] = []
        var cancelled = 0
    }

    private let state = Mutex(State())

    /// Every request and stream opened, in order.
    var sent: [TransportRequest] { state.withLock { $0.sent.map(\.request) } }
    var requests: [TransportRequest] { state.withLock { $0.sent.filter { !$0.isStream }.map(\.request) } }
    var streams: [TransportRequest] { state.withLock { $0.sent.filter(\.isStream).map(\.request) } }
    var cancelledStreams: Int { state.withLock { $0.cancelled } }

    /// Becomes `configuration`'s transport, in front of the one it had (URLSession's when none).
    func record(_ configuration: inout NavigationValuesClient.Configuration) {
        if let inner = configuration.transport { state.withLock { $0.inner = inner } }
        configuration.transport = self
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let inner = state.withLock { state in
            state.sent.append((request, false))
            return state.inner
        }
        return try await inner.send(request)
    }

    func openStream(_ request: TransportRequest, into stream: TransportStream) {
        let inner = state.withLock { state in
            state.sent.append((request, true))
            return state.inner
        }
        stream.onCancel { [self] in state.withLock { $0.cancelled += 1 } }
        inner.openStream(request, into: stream)
    }
}

/// Every request and every event stream goes through the configuration's `ClientTransport`, which
/// sees them as sent (headers and body set above it) and can stop a stream it serves.
@Suite struct TransportSeamTests {
    @Test(arguments: ServerKind.allCases)
    func requestsAndStreamsGoThroughTheConfiguredTransport(server: ServerKind) async throws {
        let transport = RecordingTransport()
        try await withServer(server, client: { transport.record(&$0) }) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let pushed = try await session.push("Detail", values: ["counter": 1], ifMatch: 1)
            #expect(pushed.version == 2)

            let requests = transport.requests
            #expect(
                requests.map { "\($0.method) \($0.path)" } == ["POST /v1/sessions", "POST \(session.route("push"))"])
            let push = try #require(requests.last)
            #expect(push.header("authorization") == "Bearer \(session.token)")
            #expect(push.header("If-Match") == "\"1\"")
            #expect(push.header("Idempotency-Key")?.hasPrefix("k_") == true)
            #expect(
                push.body.map { String(decoding: $0, as: UTF8.self) } == #"{"name":"Detail","values":{"counter":1}}"#)
            #expect(push.url.absoluteString == client.baseURL.absoluteString + session.route("push"))

            // The stream: its request through the transport, its events from it, and cancelling
            // the reader stops the transport's side.
            let reader = Task { try await collect(2, of: session.events(after: 0)) }
            let items = try await reader.value
            #expect(items.map(\.seq) == [1, 2])
            let stream = try #require(transport.streams.first)
            #expect(stream.path == session.route("events"))
            #expect(stream.header("Accept") == "text/event-stream")
            #expect(stream.header("Last-Event-ID") == "0")
            try await waitFor("the stream to be cancelled") { transport.cancelledStreams == 1 }
        }
    }
}

extension RemoteSession {
    /// `/v1/sessions/{id}` and `suffix`, as the client sends it.
    func route(_ suffix: String) -> String { "/v1/sessions/\(id.rawValue)/\(suffix)" }
}
