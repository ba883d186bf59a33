import Foundation
import Synchronization

/// A loopback HTTP/1.1 client for requests and whole responses, on ``RawClient`` connections:
/// each request takes an idle kept-alive connection or opens one, so concurrent requests each
/// have their own and sequential ones reuse it. Blocking socket work runs on threads of its own,
/// never on the cooperative pool.
///
/// ```swift
/// let client = HTTPClient(port: server.port)
/// let answer = try await client.send("POST", "/v1/sessions", headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
/// #expect(answer.status == 201)
/// ```
public final class HTTPClient: Sendable {
    /// The server's port on 127.0.0.1.
    public let port: Int
    /// How long a response may take to arrive (a long poll waits up to 60 s).
    public let timeout: Duration
    /// HTTPS, when set.
    public let tls: TLSClientOptions?
    private let idle = Mutex<[RawClient]>([])

    /// How long a response may take unless a test says otherwise: 90 s (a long poll waits up to
    /// 60 s), times `NAVIGATION_VALUES_TEST_TIMEOUT_SCALE` when that is set (1 to 20). `.ci/run` sets
    /// it for its ThreadSanitizer runs, whose instrumented code runs many times slower: there a
    /// request of a test on a session of 1,000 screens once waited over 90 s on 2 shared cores.
    public static let defaultTimeout: Duration = {
        let scale = ProcessInfo.processInfo.environment["NAVIGATION_VALUES_TEST_TIMEOUT_SCALE"].flatMap(Double.init) ?? 1
        return .seconds(90 * min(max(scale, 1), 20))
    }()

    /// A client for the server on 127.0.0.1:`port`, over HTTPS with `tls`.
    public init(port: Int, timeout: Duration = HTTPClient.defaultTimeout, tls: TLSClientOptions? = nil) {
        self.port = port
        self.timeout = timeout
        self.tls = tls
    }

    /// A client for `baseURL`, such as a `listening on http://127.0.0.1:PORT` line's address.
    public convenience init(baseURL: URL, timeout: Duration = HTTPClient.defaultTimeout, tls: TLSClientOptions? = nil) throws {
        guard let port = baseURL.port, ["127.0.0.1", "localhost"].contains(baseURL.host ?? "") else {
            throw ClientError("\(baseURL) is not a loopback address with a port")
        }
        self.init(port: port, timeout: timeout, tls: tls)
    }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: URL {
        var components = URLComponents()
        components.scheme = tls == nil ? "http" : "https"
        components.host = "127.0.0.1"
        components.port = port
        return components.url ?? URL(fileURLWithPath: "/")
    }

    /// Sends one request and reads its whole response. A `Content-Length` is added for a body;
    /// `Host` unless given. A kept-alive connection that the server closed meanwhile is replaced
    /// once, when not a byte of the answer had arrived.
    public func send(
        _ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil
    ) async throws -> HTTPResponse {
        var head = "\(method) \(path) HTTP/1.1\r\n"
        let names = Set(headers.keys.map { $0.lowercased() })
        if !names.contains("host") { head += "Host: 127.0.0.1:\(port)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body, !names.contains("content-length") { head += "Content-Length: \(body.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + (body ?? [])
        let isHead = method == "HEAD"
        let closes = names.contains("connection") && headers.contains { $0.value.lowercased() == "close" }
        return try await offload { [self] in
            var reused = idle.withLock { $0.popLast() }
            while true {
                let connection = try reused ?? RawClient(port: port, timeout: timeout, noDelay: true, tls: tls)
                do {
                    let response = try exchange(request, isHead: isHead, on: connection)
                    if !closes, response.header("connection")?.lowercased() != "close" {
                        idle.withLock { $0.append(connection) }
                    }
                    return response
                } catch let error as ClientError where reused != nil && error.isClosedBeforeAnswer {
                    reused = nil
                }
            }
        }
    }

    /// `GET path`.
    public func get(_ path: String, headers: [String: String] = [:]) async throws -> HTTPResponse {
        try await send("GET", path, headers: headers)
    }

    /// Closes the kept-alive connections.
    public func closeIdleConnections() {
        idle.withLock { $0.removeAll() }
    }

    /// Sends `request` and reads the answer. When the server answers early and closes (a body
    /// too large, say), the send fails; the answer it sent is still read and returned.
    private func exchange(_ request: [UInt8], isHead: Bool, on connection: RawClient) throws -> HTTPResponse {
        do {
            try connection.send(request)
        } catch let sendError as ClientError {
            guard let early = try? connection.readResponse(isHead: isHead) else { throw sendError }
            return early
        }
        return try connection.readResponse(isHead: isHead)
    }
}
