import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesClient
import NavigationValuesTesting
import TestSupport
import Testing

/// The in-memory server is the server, not a second implementation: the same requests, sent to
/// the real server over a socket (on SQLite) and to the in-memory one through its transport,
/// with the same ids, tokens and clock, get the same answers, byte for byte: statuses, bodies
/// (sessions, events, problem documents) and the headers a client reads.
@Suite struct SameAnswersTests {
    /// One request of the script, and the answer it got.
    struct Exchange: Sendable, Equatable, CustomStringConvertible {
        var request: String
        var status: Int
        /// The headers a client reads (others, such as `Date`, are the socket's).
        var headers: [String: String]
        var body: String

        var description: String { "\(request) → \(status) \(headers) \(body.prefix(300))" }
    }

    /// Sends one request (method, target, headers, body) and returns its status, headers and body.
    typealias Send =
        @Sendable (String, String, [String: String], [UInt8]?) async throws -> (Int, [String: String], [UInt8])

    static let compared = [
        "content-type", "etag", "location", "retry-after", "allow", "x-request-id", "www-authenticate",
    ]
    static let admin = "same-answers-admin"
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A script of requests of every kind, each built from the answers before it: successes,
    /// replays, refusals of every status, stacks, a batch, history and replay, a body over the
    /// limit, the admin list, an end and a purge.
    static func script(_ send: Send) async throws -> [Exchange] {
        var exchanges: [Exchange] = []
        var step = 0
        @discardableResult
        func call(
            _ method: String, _ target: String, token: String? = nil, headers: [String: String] = [:],
            json: String? = nil, body: [UInt8]? = nil
        ) async throws -> JSONValue? {
            step += 1
            var headers = headers
            headers["X-Request-Id"] = "r_step\(step)"
            if let token { headers["Authorization"] = "Bearer \(token)" }
            var bytes = body
            if let json {
                headers["Content-Type"] = "application/json"
                bytes = Array(json.utf8)
            }
            let (status, answerHeaders, answer) = try await send(method, target, headers, bytes)
            var kept: [String: String] = [:]
            for name in compared { kept[name] = answerHeaders[name] }
            exchanges.append(
                Exchange(
                    request: "\(step) \(method) \(target)", status: status, headers: kept,
                    body: String(decoding: answer, as: UTF8.self)))
            return try? JSONValue(parsing: answer)
        }

        try await call("GET", "/healthz")
        try await call("HEAD", "/healthz")
        try await call("GET", "/readyz")
        let schema =
            #"{"values":{"title":{"type":"string","default":""},"counter":{"type":"integer","default":0}},"strict":true}"#
        let creation = #"{"root":{"name":"Home","values":{"title":"Inbox"}},"schema":\#(schema)}"#
        let created = try await call("POST", "/v1/sessions", headers: ["Idempotency-Key": "k_create"], json: creation)
        try await call("POST", "/v1/sessions", headers: ["Idempotency-Key": "k_create"], json: creation)
        let id = created?["id"]?.stringValue ?? "s_missing"
        let token = created?["token"]?.stringValue ?? "t_missing"
        let session = "/v1/sessions/\(id)"
        try await call("POST", "\(session)/push", token: token, json: #"{"name":"Detail","values":{"counter":1}}"#)
        try await call(
            "POST", "\(session)/push", token: token, headers: ["If-Match": #""1""#], json: #"{"name":"Late"}"#)
        try await call("PATCH", "\(session)/screens/top/values", token: token, json: #"{"title":3}"#)
        try await call("PATCH", "\(session)/screens/top/values", token: token, json: #"{"undeclared":1}"#)
        try await call(
            "PATCH", "\(session)/screens/root/values", token: token, headers: ["Idempotency-Key": "k_title"],
            json: #"{"title":"Mail"}"#)
        try await call(
            "PATCH", "\(session)/screens/root/values", token: token, headers: ["Idempotency-Key": "k_title"],
            json: #"{"title":"Mail"}"#)
        try await call("PUT", "\(session)/screens/root/handlers/title", token: token, json: #"{"passBack":true}"#)
        try await call("POST", "\(session)/screens/top/preferences/title", token: token, json: #"{"value":"picked"}"#)
        try await call("POST", "\(session)/push", token: token, json: "{")
        try await call("POST", "\(session)/push", token: token, headers: ["Content-Type": "text/plain"], body: [0x7B])
        try await call("POST", "\(session)/push", json: #"{"name":"Anonymous"}"#)
        try await call("POST", "\(session)/push", token: "t_wrong", json: #"{"name":"Stranger"}"#)
        try await call("POST", "\(session)/pop", token: token, json: #"{"count":5}"#)
        try await call("GET", session, token: token)
        try await call("GET", "\(session)/screens/top", token: token)
        try await call("GET", "\(session)/screens/c_nowhere", token: token)
        try await call("POST", "\(session)/present", token: token, json: #"{"root":{"name":"Sheet"}}"#)
        try await call("POST", "\(session)/stacks", token: token, json: #"{"id":"search","root":{"name":"Search"}}"#)
        try await call(
            "POST", "\(session)/batch", token: token,
            json:
                #"{"operations":[{"op":"push","stack":"search","name":"Results"},{"op":"selectStack","stack":"search"}]}"#
        )
        try await call(
            "POST", "\(session)/batch", token: token,
            json: #"{"operations":[{"op":"push","name":"Fine"},{"op":"pop","stack":"nowhere"}]}"#)
        try await call("GET", "\(session)/stacks", token: token)
        try await call("GET", "\(session)/history?after=0&limit=3", token: token)
        try await call("GET", "\(session)/history?after=abc", token: token)
        try await call("GET", "\(session)/events?after=2&wait=0", token: token)
        try await call("GET", "\(session)/replay?at=2", token: token)
        try await call("GET", "\(session)/replay?at=999", token: token)
        try await call(
            "POST", "\(session)/pop", token: token, json: "[" + String(repeating: " ", count: 1_100_000) + "]")
        try await call("GET", "/v1/sessions", token: admin)
        try await call("GET", "/v1/sessions", token: token)
        try await call("GET", "/v1/nowhere")
        try await call("DELETE", "/healthz")
        try await call("DELETE", session, token: token)
        try await call("POST", "\(session)/push", token: token, json: #"{"name":"Ended"}"#)
        try await call("DELETE", "\(session)?purge=true", token: token)
        try await call("GET", session, token: admin)
        try await call("GET", "/openapi.json")
        return exchanges
    }

    @Test func theScriptGetsTheSameAnswersFromBothServers() async throws {
        let clock = ManualClock(Self.start)
        var real = NavigationValuesServer.Configuration()
        real.port = 0
        real.eventLoopCount = 1
        real.databasePath = ":memory:"
        real.adminToken = Self.admin
        real.identifiers = .seeded(7)
        real.now = { clock.now }
        let server = try await NavigationValuesServer.start(real)
        let http = HTTPClient(port: server.port)
        let overSocket: [Exchange]
        do {
            overSocket = try await Self.script { method, target, headers, body in
                let answer = try await http.send(method, target, headers: headers, body: body)
                var headers: [String: String] = [:]
                for (name, value) in answer.headers { headers[name.lowercased()] = value }
                return (answer.status, headers, answer.body)
            }
            await server.shutdown()
        } catch {
            await server.shutdown()
            throw error
        }

        var configuration = InMemoryServer.Configuration()
        configuration.adminToken = Self.admin
        configuration.identifiers = .seeded(7)
        configuration.now = { clock.now }
        let inMemory = try await InMemoryServer(configuration: configuration)
        let transport = inMemory.transport
        let inProcess = try await Self.script { method, target, headers, body in
            let answer = try await transport.send(
                TransportRequest(
                    method: method, path: target, headers: headers, body: body.map { Data($0) },
                    url: InMemoryServer.baseURL))
            return (answer.status, answer.headers, [UInt8](answer.body))
        }

        #expect(overSocket.count == inProcess.count)
        for (socket, memory) in zip(overSocket, inProcess) {
            #expect(socket == memory)
        }
        // The script meets what it means to: each status below at least once.
        let statuses = Set(overSocket.map(\.status))
        #expect(
            statuses.isSuperset(of: [200, 201, 204, 400, 401, 403, 404, 405, 409, 410, 412, 413, 415, 422]),
            "\(statuses)")
    }
}
