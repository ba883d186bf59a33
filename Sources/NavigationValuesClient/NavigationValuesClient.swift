import Foundation
import Logging
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
        /// What carries requests and event streams (see `ClientTransport`); nil: a
        /// ``URLSessionTransport`` made from this configuration (`maxConnectionsPerHost`,
        /// `requestTimeout`, `streams.idleTimeout`).
        public var transport: (any ClientTransport)?
        /// Supplies each request's bearer token, and another after a 401 (see `TokenProvider`);
        /// nil: the session's token or the admin token as given.
        public var tokenProvider: TokenProvider?
        /// Sees every attempt of every request and its answer, the first outermost (see
        /// `ClientMiddleware`).
        public var middleware: [any ClientMiddleware] = []
        /// Where the client logs (swift-log): each answer at `debug` (request, status, attempt,
        /// duration), each retry and stream reconnection at `notice`, a request left without an
        /// answer at `warning`, offline mutations queued and sent at `info`. Never a token or a
        /// body. Nil: no logging.
        public var logger: Logger?
        /// Keeps mutations made while the server cannot be reached and sends them, in order, when
        /// it can be reached again (see `OfflineQueue`); nil: such a mutation fails with
        /// `RemoteError.connectionFailed` after the retry policy's attempts.
        public var offline: OfflineOptions?

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

    /// The mutations kept while the server could not be reached (`Configuration.offline`); nil
    /// when the configuration keeps none.
    public var offlineQueue: OfflineQueue? { transport.offlineQueue }

    /// A client of the server at `baseURL`.
    public init(baseURL: URL, configuration: Configuration = Configuration()) {
        self.baseURL = baseURL
        transport = HTTPTransport(baseURL: baseURL, configuration: configuration)
    }

    /// A client whose requests and event streams go through `transport` (one answering from
    /// memory, say) instead of the configuration's; `baseURL` still makes each request's `url`.
    public convenience init(
        baseURL: URL = URL(string: "http://localhost") ?? URL(fileURLWithPath: "/"), transport: any ClientTransport,
        configuration: Configuration = Configuration()
    ) {
        var configuration = configuration
        configuration.transport = transport
        self.init(baseURL: baseURL, configuration: configuration)
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
        return try await transport.createdSession(
            APIRequest(
                method: "POST", path: "/v1/sessions", body: .object(body),
                idempotencyKey: idempotencyKey ?? configuration.idempotencyKeys.next()))
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
            method: "GET", path: "/v1/sessions", query: query, credential: transport.admin)
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
        AllSessionsEventStream(transport: transport)
    }

    // MARK: - Copies and read-only access

    /// An export (`RemoteSession.export()`) as a new session with its own ids and token
    /// (`POST /v1/sessions/import`, as creation: no token needed unless the server has a create
    /// token, then pass it or the admin token as `token`).
    public func importSession(_ export: Data, token: String? = nil, idempotencyKey: String? = nil) async throws
        -> RemoteSession
    {
        try await transport.createdSession(
            APIRequest(
                method: "POST", path: "/v1/sessions/import", rawBody: (export, "application/x-ndjson"),
                credential: token.map { Credential(session: nil, token: $0) },
                idempotencyKey: idempotencyKey ?? configuration.idempotencyKeys.next())
        ).session
    }

    /// A new session that starts as `session` was at revision `at` (nil: the latest), with the
    /// admin token (`POST /v1/sessions/fork`); `RemoteSession.fork(at:)` uses a session's own.
    public func fork(_ session: SessionID, at: Int64? = nil, idempotencyKey: String? = nil) async throws
        -> RemoteSession
    {
        try await self.session(id: session).fork(at: at, idempotencyKey: idempotencyKey)
    }

    /// Redeems a hand-off code made on another device (``RemoteSession/handoff(fork:)``), in the
    /// body of `POST /v1/handoffs/redeem` (never in a URL): the session it continues, with a
    /// token of this device's own (the other device's keeps working), or the fork it makes. A
    /// code works once: a redeem whose answer was lost needs a new code.
    ///
    /// - Throws: `RemoteError` with `.handoffInvalid`, `.handoffUnknown`, `.handoffUsed`,
    ///   `.handoffExpired`, `.handoffSessionEnded`, `.handoffSessionPurged`, `.tooManyDevices`,
    ///   or `.rateLimited`.
    public func redeem(_ code: String) async throws -> RemoteSession {
        try await transport.createdSession(
            APIRequest(method: "POST", path: "/v1/handoffs/redeem", body: ["code": .string(code)])
        ).session
    }

    /// A stream ticket for the stream of every session (`POST /v1/tickets {"all": true}`, admin
    /// token); `RemoteSession.streamTicket()` gets one for a session.
    public func allEventsTicket() async throws -> StreamTicket {
        try await transport.streamTicket(["all": true], credential: transport.admin)
    }

    /// A read-only token (`POST /v1/observers`, admin token) for `session`, or for every session
    /// when nil, expiring after `expiresIn` (whole seconds; nil: until revoked). Its token is shown
    /// only here.
    public func createObserver(
        for session: SessionID?, label: String = "", expiresIn: Duration? = nil, idempotencyKey: String? = nil
    ) async throws -> CreatedObserver {
        try await transport.createObserver(
            for: session, label: label, expiresIn: expiresIn, credential: transport.admin,
            idempotencyKey: idempotencyKey)
    }

    /// A page of observer tokens (`GET /v1/observers`, admin token), of one session or of all.
    public func observers(of session: SessionID? = nil, limit: Int = 100, cursor: ObserverID? = nil) async throws
        -> ObserverList
    {
        try await transport.observers(of: session, limit: limit, cursor: cursor, credential: transport.admin)
    }

    /// One observer token (`GET /v1/observers/{observer}`, admin token), never its token.
    public func observer(_ id: ObserverID) async throws -> ObserverResource {
        let request = APIRequest(
            method: "GET", path: HTTPTransport.path(["v1", "observers", id.rawValue]), credential: transport.admin)
        let answer = try await transport.perform(request)
        return try transport.decode(answer, for: request) { json throws(WireDecodingError) in
            try ObserverResource(json: json)
        }
    }

    /// Revokes an observer token (`DELETE /v1/observers/{observer}`, admin token): it stops working
    /// at once, with the stream tickets issued to it.
    public func revokeObserver(_ id: ObserverID) async throws {
        let request = APIRequest(
            method: "DELETE", path: HTTPTransport.path(["v1", "observers", id.rawValue]),
            credential: transport.admin)
        do {
            _ = try await transport.perform(request)
        } catch let error as RemoteError where error.earlierAttemptWasUnanswered && error.code == .notFound {
            // An earlier attempt revoked it and its answer was lost: that is the outcome asked for.
        }
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
    ///
    /// A server started with `--metrics-port` serves them on that listener only (404 on the API's
    /// port): ask them through a client made with the metrics address as its base URL.
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

/// A screen named in a path: by id, or the root (the main stack's head) or the top (the screen a
/// user sees), or the root or top of one stack (docs/Stacks.md, Screen and stack references).
public enum ScreenReference: Sendable, Hashable, CustomStringConvertible {
    case root
    case top
    case id(ScreenID)
    /// The root of `stack` (`search:root`, `selected:root`).
    case rootOf(StackID)
    /// The topmost screen of `stack` (`search:top`, `p_…:top`).
    case topOf(StackID)

    /// The path segment: `root`, `top`, the id, `STACK:root` or `STACK:top`.
    public var description: String {
        switch self {
        case .root: "root"
        case .top: "top"
        case .id(let id): id.rawValue
        case .rootOf(let stack): "\(stack.rawValue):root"
        case .topOf(let stack): "\(stack.rawValue):top"
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
