import Foundation
import NavigationValues
import NavigationValuesAPI
import TestSupport
import Testing

/// A loopback client pointed at a running server, with the server's admin token at hand.
struct TestClient: Sendable {
    let http: HTTPClient
    let adminToken: String

    /// A client of the server on 127.0.0.1:`port`.
    init(port: Int, adminToken: String) {
        http = HTTPClient(port: port)
        self.adminToken = adminToken
    }

    /// A client of the server at `baseURL` (its `listening on` address).
    init(baseURL: URL, adminToken: String) throws {
        http = try HTTPClient(baseURL: baseURL)
        self.adminToken = adminToken
    }

    /// Sends `method path` with `body` as JSON (or `raw` bytes, labelled JSON), `token` as a
    /// bearer token, and `headers` on top (which win).
    @discardableResult
    func send(
        _ method: String, _ path: String, json body: JSONValue? = nil, raw: Data? = nil, token: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> HTTPResponse {
        var fields: [String: String] = [:]
        var bytes: [UInt8]?
        if let body { bytes = Array(body.serialized().utf8) }
        if let raw { bytes = Array(raw) }
        if bytes != nil { fields["Content-Type"] = "application/json" }
        if let token { fields["Authorization"] = "Bearer \(token)" }
        for (name, value) in headers {
            fields = fields.filter { $0.key.lowercased() != name.lowercased() }
            fields[name] = value
        }
        return try await http.send(method, path, headers: fields, body: bytes)
    }
}

/// Starts a server on 127.0.0.1, port 0, on a SQLite file in a fresh temp folder (or the given
/// one), runs `body`, and shuts the server down on success and on failure.
func withRunningServer<T>(
    databasePath: String? = nil,
    configure: (inout NavigationValuesServer.Configuration) -> Void = { _ in },
    _ body: (TestClient, NavigationValuesServer) async throws -> T
) async throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-api-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { if databasePath == nil { try? FileManager.default.removeItem(at: folder) } }
    var configuration = NavigationValuesServer.Configuration()
    configuration.port = 0
    configuration.eventLoopCount = 2
    configuration.adminToken = "admin-secret"
    configuration.databasePath = databasePath ?? folder.appendingPathComponent("test.sqlite").path
    configure(&configuration)
    let server = try await NavigationValuesServer.start(configuration)
    let client = TestClient(port: server.port, adminToken: server.adminToken)
    do {
        let result = try await body(client, server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}

/// A created session as a test drives it: its id and token, and requests relative to it.
struct TestSession: Sendable {
    let client: TestClient
    let id: String
    let token: String
    /// The create answer's body.
    let created: JSONValue

    /// Creates a session with `body` (201 expected).
    static func create(_ client: TestClient, _ body: JSONValue = [:]) async throws -> TestSession {
        let answer = try await client.send("POST", "/v1/sessions", json: body)
        try #require(
            answer.status == 201, "create answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
        let json = try #require(answer.json)
        return TestSession(
            client: client, id: try #require(json["id"]?.stringValue), token: try #require(json["token"]?.stringValue),
            created: json)
    }

    /// Sends a request to `/v1/sessions/{id}` + `suffix` with this session's token.
    @discardableResult
    func send(
        _ method: String, _ suffix: String = "", json body: JSONValue? = nil, raw: Data? = nil,
        headers: [String: String] = [:]
    ) async throws -> HTTPResponse {
        try await client.send(
            method, "/v1/sessions/\(id)\(suffix)", json: body, raw: raw, token: token, headers: headers)
    }

    /// The session as `GET` shows it.
    func get() async throws -> JSONValue {
        let answer = try await send("GET")
        try #require(answer.status == 200)
        return try #require(answer.json)
    }

    /// Pushes a screen and returns its id.
    @discardableResult
    func push(_ name: String, values: JSONValue = [:]) async throws -> String {
        let answer = try await send("POST", "/push", json: ["name": .string(name), "values": values])
        try #require(
            answer.status == 201, "push answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
        return try #require(answer.json?["screen"]?["id"]?.stringValue)
    }

    /// Pops the top screen.
    func pop() async throws {
        let answer = try await send("POST", "/pop", json: ["count": 1])
        try #require(answer.status == 200)
    }

    /// Writes values on a screen; returns the answer's body.
    @discardableResult
    func patch(_ screen: String, _ values: JSONValue) async throws -> JSONValue {
        let answer = try await send("PATCH", "/screens/\(screen)/values", json: values)
        try #require(
            answer.status == 200, "patch answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
        return try #require(answer.json)
    }

    /// Sets a handler on a screen.
    func handle(_ screen: String, _ key: String, passBack: Bool) async throws {
        let answer = try await send("PUT", "/screens/\(screen)/handlers/\(key)", json: ["passBack": .bool(passBack)])
        try #require(answer.status == 200)
    }

    /// Publishes a preference from a screen; returns the answer's body.
    @discardableResult
    func publish(_ screen: String, _ key: String, _ value: JSONValue) async throws -> JSONValue {
        let answer = try await send("POST", "/screens/\(screen)/preferences/\(key)", json: ["value": value])
        try #require(answer.status == 200)
        return try #require(answer.json)
    }

    /// A screen as `GET …/screens/{screen}` shows it.
    func screen(_ screen: String) async throws -> JSONValue {
        let answer = try await send("GET", "/screens/\(screen)")
        try #require(answer.status == 200)
        return try #require(answer.json)
    }
}

extension TestSession {
    /// The session's SSE stream on `server`, with this session's token; `query` (such as
    /// `"?after=1"`) is appended to the path.
    func eventStream(on server: NavigationValuesServer, _ query: String = "") throws -> SSEClient {
        try SSEClient(
            port: server.port, path: "/v1/sessions/\(id)/events\(query)", headers: ["Authorization": "Bearer \(token)"])
    }

    /// A subscriber that asks for the session's stream and never reads: its socket's small
    /// receive buffer fills, then the server's send buffer and its writer, then its budget.
    func stalledEventReader(on server: NavigationValuesServer) throws -> RawClient {
        let reader = try RawClient(port: server.port, receiveBufferSize: 4_096)
        try reader.send(
            "GET /v1/sessions/\(id)/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                + "Authorization: Bearer \(token)\r\n\r\n")
        return reader
    }
}

/// Checks a problem+json answer: status, content type, `type`, and the pointers of `errors`.
func expectProblem(
    _ answer: HTTPResponse, _ status: Int, type: String, pointers: [String]? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(
        answer.status == status, "body: \(String(decoding: answer.body, as: UTF8.self))", sourceLocation: sourceLocation
    )
    #expect(answer.header("Content-Type") == "application/problem+json", sourceLocation: sourceLocation)
    let json = answer.json
    #expect(json?["type"] == .string("/problems/\(type)"), sourceLocation: sourceLocation)
    #expect(json?["status"] == .integer(Int64(status)), sourceLocation: sourceLocation)
    #expect(json?["title"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
    #expect(json?["detail"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
    if let pointers {
        let given = json?["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } ?? []
        #expect(given == pointers, sourceLocation: sourceLocation)
    }
}

extension JSONValue {
    /// The ids of a session's screens, root first.
    var screenIDs: [String] { (self["screens"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue } }
}

/// The stores a server under test can run on: a SQLite file always, a fresh PostgreSQL database
/// when a server can be had (the PostgreSQL cases are left out otherwise, and
/// `PostgresAvailabilityTests` says why).
enum Backend: String, Sendable, CaseIterable {
    case sqlite
    case postgres

    /// Every backend available here.
    static let available: [Backend] = [.sqlite] + (PostgresTestServer.isAvailable ? [.postgres] : [])
}

/// `withRunningServer` on `backend`: a temporary SQLite file, or a new PostgreSQL database.
func withRunningServer<T>(
    on backend: Backend,
    configure: (inout NavigationValuesServer.Configuration) -> Void = { _ in },
    _ body: (TestClient, NavigationValuesServer) async throws -> T
) async throws -> T {
    switch backend {
    case .sqlite:
        return try await withRunningServer(configure: configure, body)
    case .postgres:
        return try await PostgresTestServer.withDatabase { url in
            try await withRunningServer(databasePath: url, configure: configure, body)
        }
    }
}
