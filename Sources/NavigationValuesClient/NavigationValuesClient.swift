import Foundation
import NavigationValues
import NavigationValuesWire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A client of a NavigationValues server (docs/API.md): creates sessions and opens handles on them.
///
/// ```swift
/// let client = NavigationValuesClient(baseURL: URL(string: "http://127.0.0.1:8080")!)
/// let session = try await client.createSession(root: ScreenSeed("Home"))
/// try await session.push("Detail")
/// try await session.top.set(Title.self, "Inbox")
/// ```
///
/// Every call is `async` and throws `RemoteError`. Every mutation carries an `Idempotency-Key`
/// made once per call, so the client retries it after a lost connection or a 503 (honouring
/// `Retry-After`) and the server applies it once. A client is `Sendable`; share one per server.
public final class NavigationValuesClient: Sendable {
    /// How a client talks to its server.
    public struct Configuration: Sendable {
        /// When and how often requests are sent again.
        public var retry = RetryPolicy()
        /// How long an answer may take (longer for a long poll: its wait is added).
        public var requestTimeout: Duration = .seconds(30)
        /// The admin token, for the admin routes (`sessions`, `allEvents`) and for opening any
        /// session with `session(id:)`.
        public var adminToken: String?
        /// Makes each call's `Idempotency-Key`.
        public var idempotencyKeys = IdempotencyKeyGenerator.random
        /// Told before each retry (for logs and metrics); runs on the calling task.
        public var onRetry: (@Sendable (RetryNotice) -> Void)?
        /// How event streams reconnect and how much they buffer.
        public var streams = StreamOptions()
        /// Connections kept open to the server at most.
        public var maxConnectionsPerHost = 8
        /// Sent as `User-Agent`: `NavigationValuesClient/` and the package's version.
        public var userAgent = "NavigationValuesClient/\(NavigationValuesVersion.current)"

        /// The defaults, with a retry policy and an admin token.
        public init(retry: RetryPolicy = RetryPolicy(), adminToken: String? = nil) {
            self.retry = retry
            self.adminToken = adminToken
        }
    }

    /// The server's address (`http://127.0.0.1:8080`); paths are appended to it, so a server
    /// behind a prefix (`https://example.com/navigation`) works too.
    public let baseURL: URL
    /// How this client talks to the server.
    public var configuration: Configuration { transport.configuration }
    let transport: HTTPTransport

    /// A client of the server at `baseURL`.
    public init(baseURL: URL, configuration: Configuration = Configuration()) {
        self.baseURL = baseURL
        transport = HTTPTransport(baseURL: baseURL, configuration: configuration)
    }

    // MARK: - Sessions

    /// Creates a session (`POST /v1/sessions`) with a root screen and a schema, and returns a handle
    /// holding its token, which the server shows only this once: keep `session.token` to open it
    /// again later.
    ///
    /// - Throws: `RemoteError` (`.invalid` with pointers for a schema or value the server refuses).
    public func createSession(
        root: ScreenSeed? = nil, schema: SchemaResource? = nil, idempotencyKey: String? = nil
    ) async throws -> RemoteSession {
        try await createSessionReturningResource(root: root, schema: schema, idempotencyKey: idempotencyKey).session
    }

    /// Creates a session as `createSession(root:schema:)` does, and also returns the created
    /// resource (version 1, the root screen, the schema).
    public func createSessionReturningResource(
        root: ScreenSeed? = nil, schema: SchemaResource? = nil, idempotencyKey: String? = nil
    ) async throws -> (session: RemoteSession, resource: SessionResource) {
        var body: [String: JSONValue] = [:]
        if let root { body["root"] = root.json }
        if let schema { body["schema"] = schema.json }
        let request = APIRequest(
            method: "POST", path: "/v1/sessions", body: .object(body),
            idempotencyKey: idempotencyKey ?? configuration.idempotencyKeys.next())
        let answer = try await transport.perform(request)
        let created = try transport.decode(answer, for: request) { json throws(WireDecodingError) in
            try CreatedSession(json: json)
        }
        return (RemoteSession(id: created.session.id, token: created.token, transport: transport), created.session)
    }

    /// A handle on an existing session, with its token (or the admin token when `token` is nil).
    /// Nothing is sent until it is used.
    public func session(id: SessionID, token: String? = nil) -> RemoteSession {
        RemoteSession(id: id, token: token ?? configuration.adminToken ?? "", transport: transport)
    }

    // MARK: - Admin

    /// A page of every session (`GET /v1/sessions`, admin token), ordered by id; pass the page's
    /// `nextCursor` for the next one.
    public func sessions(limit: Int = 100, cursor: SessionID? = nil) async throws -> SessionList {
        var query: [(name: String, value: String)] = [("limit", String(limit))]
        if let cursor { query.append(("cursor", cursor.rawValue)) }
        let request = APIRequest(
            method: "GET", path: "/v1/sessions", query: query, token: configuration.adminToken)
        let answer = try await transport.perform(request)
        return try transport.decode(answer, for: request) { json throws(WireDecodingError) in
            try SessionList(json: json)
        }
    }

    /// Every session's events as they happen (`GET /v1/events`, admin token), each with its
    /// session. Live only: the server keeps no cursor across sessions, so events committed while
    /// the stream reconnects are not delivered here (follow one session with `events(after:)` to
    /// miss none).
    public func allEvents() -> AllSessionsEventStream {
        AllSessionsEventStream(transport: transport, token: configuration.adminToken ?? "")
    }

    // MARK: - Operations

    /// Whether the server process answers (`GET /healthz`); false when it does not.
    public func isHealthy() async -> Bool {
        await isOK(APIRequest(method: "GET", path: "/healthz"))
    }

    /// Whether the server can take writes (`GET /readyz`); false when it answers 503 or not at all.
    public func isReady() async -> Bool {
        await isOK(APIRequest(method: "GET", path: "/readyz"))
    }

    /// The server's metrics in the Prometheus text format (`GET /metrics`).
    public func metrics() async throws -> String {
        let request = APIRequest(method: "GET", path: "/metrics", accept: "text/plain")
        return String(decoding: try await transport.perform(request).body, as: UTF8.self)
    }

    /// The server's OpenAPI 3.1 document (`GET /openapi.json`).
    public func openAPIDocument() async throws -> JSONValue {
        let request = APIRequest(method: "GET", path: "/openapi.json")
        return try transport.json(of: try await transport.perform(request), for: request)
    }

    private func isOK(_ request: APIRequest) async -> Bool {
        // One attempt: a health probe reports what it finds now.
        guard let answer = try? await transport.send(request, retry: .never) else { return false }
        return answer.status == 200
    }
}

/// Makes `Idempotency-Key`s: one per logical call, reused on its retries.
public struct IdempotencyKeyGenerator: Sendable {
    private let make: @Sendable () -> String

    /// A generator that calls `make` for each key (1-255 characters).
    public init(_ make: @escaping @Sendable () -> String) {
        self.make = make
    }

    /// The next key.
    public func next() -> String { make() }

    /// 128 random bits, base64url (`k_` and 22 characters): unguessable, so another client
    /// cannot collide with ours.
    public static let random = IdempotencyKeyGenerator {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var key: [UInt8] = Array("k_".utf8)
        key.reserveCapacity(24)
        // 22 characters of 6 bits: 132 bits, of which 128 come from two draws.
        for var bits in [generator.next() as UInt64, generator.next() as UInt64] {
            for _ in 0..<11 {
                key.append(alphabet[Int(bits & 63)])
                bits >>= 6
            }
        }
        return String(decoding: key, as: UTF8.self)
    }
}

/// A screen to push: its name and its own values (`{"name": "Detail", "values": {}}`).
///
/// ```swift
/// var seed = ScreenSeed("Detail", values: ["counter": 1])
/// try seed.set(Title.self, "Inbox")
/// ```
public struct ScreenSeed: Sendable, Equatable {
    /// The screen's name (its route).
    public var name: String
    /// The screen's own overrides; `null` means no override.
    public var values: [String: JSONValue]

    /// A screen named `name` with its own `values`.
    public init(_ name: String, values: [String: JSONValue] = [:]) {
        self.name = name
        self.values = values
    }

    /// Sets the screen's own value of a typed key.
    ///
    /// - Throws: `RemoteError` `.invalidValue` when the value cannot be encoded as JSON.
    public mutating func set<K: ValueKey>(_ key: K.Type, _ value: K.Value) throws where K.Value: Encodable {
        values[K.remoteName] = try encodedValue(value, for: K.remoteName, request: "ScreenSeed \(name)")
    }

    /// `{"name", "values"}`.
    public var json: JSONValue { ["name": .string(name), "values": .object(values)] }
}

/// A screen named in a path: by id, or the root (the stack's head) or the top (its tail).
public enum ScreenReference: Sendable, Hashable, CustomStringConvertible {
    case root
    case top
    case id(ScreenID)

    /// The path segment: `root`, `top` or the id.
    public var description: String {
        switch self {
        case .root: "root"
        case .top: "top"
        case .id(let id): id.rawValue
        }
    }
}

/// A value as JSON, or `RemoteError.invalidValue` naming the key.
func encodedValue(_ value: some Encodable, for key: String, request: String) throws -> JSONValue {
    do {
        return try JSONValue(encoding: value)
    } catch {
        throw RemoteError(
            .invalidValue, request: request, detail: "the value of '\(key)' does not encode as JSON: \(error)")
    }
}

/// `json` as the key's value type, or `RemoteError.invalidValue` naming the key.
func decodedValue<T: Decodable>(_ json: JSONValue, as type: T.Type, for key: String, request: String) throws -> T {
    do {
        return try json.decoded(as: type)
    } catch {
        throw RemoteError(
            .invalidValue, request: request,
            detail: "the server's '\(key)' (\(json.serialized())) is not a \(T.self): \(error)")
    }
}
