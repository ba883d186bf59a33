import Foundation
import NavigationValues
import NavigationValuesAPI
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response as a test sees it.
struct HTTPResult {
    var status: Int
    var headers: [String: String]
    var body: Data
    var json: JSONValue? { try? JSONValue(parsing: [UInt8](body)) }

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

/// A real HTTP client (URLSession) pointed at a running server.
struct TestClient: Sendable {
    let baseURL: URL
    let adminToken: String
    let session: URLSession

    @discardableResult
    func send(
        _ method: String, _ path: String, json body: JSONValue? = nil, raw: Data? = nil, token: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> HTTPResult {
        var request = URLRequest(url: URL(string: path, relativeTo: baseURL)!)
        request.httpMethod = method
        if let body {
            request.httpBody = Data(body.serialized().utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let raw {
            request.httpBody = raw
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        return HTTPResult(status: http.statusCode, headers: fields, body: data)
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
    let client = TestClient(
        baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, adminToken: server.adminToken,
        session: URLSession(configuration: .ephemeral))
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
        try #require(answer.status == 201, "create answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
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
    ) async throws -> HTTPResult {
        try await client.send(method, "/v1/sessions/\(id)\(suffix)", json: body, raw: raw, token: token, headers: headers)
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
        try #require(answer.status == 201, "push answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
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
        try #require(answer.status == 200, "patch answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
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

/// Checks a problem+json answer: status, content type, `type`, and the pointers of `errors`.
func expectProblem(
    _ answer: HTTPResult, _ status: Int, type: String, pointers: [String]? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(answer.status == status, "body: \(String(decoding: answer.body, as: UTF8.self))", sourceLocation: sourceLocation)
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
