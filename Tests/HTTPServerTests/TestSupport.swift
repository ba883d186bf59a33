import Foundation
import HTTPServer
import TestSupport
import Testing

/// Starts a server on 127.0.0.1, port 0, runs `body`, and shuts the server down on success
/// and on failure (Hummingbird's `LiveTestFramework`).
///
/// The header and idle timeouts default to 10 minutes, far past any test's own pace: in a full
/// parallel run on a loaded machine, a test's task can wait more than 30 s between connecting
/// and sending its request, and a 30 s timeout then closed the connection under it ("closed
/// while reading a line": 17 connections closed 30.1 s after their accept in one traced run).
/// Tests of the timeouts pass their own.
func withRunningServer(
    _ router: Router,
    headerTimeout: Duration = .seconds(600),
    idleTimeout: Duration = .seconds(600),
    streamHighWaterMark: Int = 64 * 1024,
    sendBufferSize: Int? = nil,
    eventLoopCount: Int = 2,
    tls: TLSIdentity? = nil,
    tlsHandshakeFailed: (@Sendable (_ peer: String?, _ reason: String) -> Void)? = nil,
    _ body: (HTTPServer) async throws -> Void
) async throws {
    var configuration = HTTPServer.Configuration(
        host: "127.0.0.1",
        port: 0,
        eventLoopCount: eventLoopCount,
        headerTimeout: headerTimeout,
        idleTimeout: idleTimeout,
        shutdownGracePeriod: .seconds(5),
        streamHighWaterMark: streamHighWaterMark,
        sendBufferSize: sendBufferSize
    )
    configuration.tls = tls
    configuration.tlsHandshakeFailed = tlsHandshakeFailed
    let server = HTTPServer(configuration: configuration, responder: router.buildResponder())
    try await server.start()
    do {
        try await body(server)
    } catch {
        await server.shutdown()
        throw error
    }
    await server.shutdown()
}

extension HTTPResponse {
    /// The body as a Foundation JSON object, for checking a problem's fields.
    func jsonObject() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
    }
}

/// `GET path` with a Host header.
func get(_ path: String, _ extra: String = "") -> String {
    "GET \(path) HTTP/1.1\r\nHost: test\r\n\(extra)\r\n"
}
