/// A response: status, headers and either a complete body or a stream.
///
/// The server adds `Content-Length` (or chunked framing for streams), `Date` and, when the
/// connection closes, `Connection: close`; fields of those names set here are replaced.
///
/// ```swift
/// Response(status: .ok, headers: ["Content-Type": "text/plain"], body: Array("hello".utf8))
/// try Response(status: .created, json: screen)
/// Response(headers: ["Content-Type": "text/event-stream"]) { writer in
///     for await event in events { try await writer.write(event.encoded) }
/// }
/// ```
public struct Response: Sendable {
    /// What is sent after the head.
    public enum Body: Sendable {
        /// A complete body, sent with `Content-Length`.
        case bytes([UInt8])
        /// A body produced over time, sent chunked. The closure runs in its own task; the
        /// response ends when it returns. Its writes throw once the client has gone away.
        case stream(@Sendable (ResponseWriter) async throws -> Void)
    }

    /// The status.
    public var status: HTTPStatus
    /// The header fields to send.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Body

    /// Creates a response with a complete body.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    /// Creates a streaming response (for server-sent events): the head is sent at once, then
    /// whatever `stream` writes, as chunks, until it returns.
    public init(
        status: HTTPStatus = .ok,
        headers: HTTPHeaders = [:],
        stream: @escaping @Sendable (ResponseWriter) async throws -> Void
    ) {
        self.status = status
        self.headers = headers
        self.body = .stream(stream)
    }
}
