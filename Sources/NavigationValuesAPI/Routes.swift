import Foundation
import HTTPServer
import NavigationValues
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire

/// The HTTP face of the session API (API.md, Endpoints).
///
/// ```swift
/// let routes = SessionRoutes(service: service, store: store, adminToken: token)
/// let router = Router()
/// routes.register(on: router)
/// ```
public struct SessionRoutes: Sendable {
    let service: SessionService
    let store: any SessionStore
    let adminToken: String
    let limits: SessionLimits
    let hub: EventHub

    public init(service: SessionService, store: any SessionStore, adminToken: String, hub: EventHub) {
        self.service = service
        self.store = store
        self.adminToken = adminToken
        self.limits = service.environment.configuration.limits
        self.hub = hub
    }

    /// Adds every route to `router`.
    public func register(on router: Router) {
        router.get("/healthz") { _ in json(200, ["status": "ok"]) }
        router.get("/readyz") { _ in
            do {
                try await store.checkWritable()
                return json(200, ["status": "ready"])
            } catch {
                return ProblemMapping.response(
                    for: APIError(.unavailable, "the database is not writable", headers: ["Retry-After": "1"]),
                    request: nil)
            }
        }
        router.post("/v1/sessions") { request in
            var context = try commandContext(request)
            // Creation needs no token, so its idempotency scope also covers the body: a client
            // that reuses someone else's key with another body does not get their session (and
            // token) back. Keys should still be random (a UUID).
            context.scope += " " + SHA256.hexDigest(of: request.body)
            let body = try jsonBody(request) ?? [:]
            return respond(try await service.create(body: body, context: context))
        }
        router.get("/v1/sessions") { request in
            let credential = credential(request)
            guard case .admin = credential else {
                throw credential.isWellFormedToken
                    ? APIError(.forbidden, "listing sessions needs the admin token")
                    : APIError(.unauthorized, "send Authorization: Bearer <admin token>",
                               headers: ["WWW-Authenticate": "Bearer"])
            }
            let limit = try integerQuery(request, "limit", default: 100, range: 1...1_000)
            return respond(try await service.list(limit: Int(limit), cursor: request.query["cursor"]))
        }
        session("GET", "/v1/sessions/{id}", router) { _ in .get }
        session("DELETE", "/v1/sessions/{id}", router) { request in
            .end(purge: try booleanQuery(request, "purge"))
        }
        session("POST", "/v1/sessions/{id}/push", router) { request in .push(try jsonBody(request) ?? [:]) }
        session("POST", "/v1/sessions/{id}/pop", router) { request in .pop(try jsonBody(request) ?? [:]) }
        session("PUT", "/v1/sessions/{id}/path", router) { request in .replacePath(try jsonBody(request) ?? [:]) }
        session("GET", "/v1/sessions/{id}/screens/{screen}", router) { request in
            .getScreen(request.parameters["screen"] ?? "")
        }
        session("PATCH", "/v1/sessions/{id}/screens/{screen}/values", router) { request in
            .patchValues(screen: request.parameters["screen"] ?? "", body: try jsonBody(request) ?? [:])
        }
        session("PUT", "/v1/sessions/{id}/screens/{screen}/handlers/{key}", router) { request in
            .setHandler(
                screen: request.parameters["screen"] ?? "", key: request.parameters["key"] ?? "",
                body: try jsonBody(request) ?? [:])
        }
        session("DELETE", "/v1/sessions/{id}/screens/{screen}/handlers/{key}", router) { request in
            .removeHandler(screen: request.parameters["screen"] ?? "", key: request.parameters["key"] ?? "")
        }
        session("POST", "/v1/sessions/{id}/screens/{screen}/preferences/{key}", router) { request in
            .publish(
                screen: request.parameters["screen"] ?? "", key: request.parameters["key"] ?? "",
                body: try jsonBody(request) ?? [:])
        }
        EventRoutes(routes: self, hub: hub).register(on: router)
    }

    /// The caller's credential; 401 when there is none.
    func requireCredential(_ request: Request) throws -> Credential {
        try requirePresent(credential(request))
    }

    /// `credential` itself; 401 when it is `.none`.
    private func requirePresent(_ credential: Credential) throws -> Credential {
        if case .none = credential {
            throw APIError(.unauthorized, "send Authorization: Bearer <token>", headers: ["WWW-Authenticate": "Bearer"])
        }
        return credential
    }

    /// Registers a route that runs a command on the session named by `{id}`.
    private func session(
        _ method: String, _ path: String, _ router: Router,
        command: @escaping @Sendable (Request) throws -> SessionCommand
    ) {
        router.on(HTTPMethod(rawValue: method), path) { request in
            let context = try commandContext(request)
            _ = try requirePresent(context.credential)
            return try await run(command(request), request: request, context: context)
        }
    }

    private func run(_ command: SessionCommand, request: Request, context: CommandContext) async throws -> Response {
        let id = SessionID(request.parameters["id"] ?? "")
        return respond(try await service.perform(command, on: id, context: context))
    }

    // MARK: - Request pieces

    func credential(_ request: Request) -> Credential {
        guard let header = request.headers["authorization"] else { return .none }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return .token("") }
        let token = trimmed(parts[1])
        return constantTimeEquals(token, adminToken) ? .admin : .token(token)
    }

    private func commandContext(_ request: Request) throws -> CommandContext {
        var ifMatch: Int64?
        if let header = request.headers["if-match"], trimmed(header) != "*" {
            var text = trimmed(header)
            if text.hasPrefix("W/") { text.removeFirst(2) }
            // An If-Match that names no version we could be at never matches (RFC 9110 §13.1.1).
            ifMatch = Int64(trimmed(text, also: "\"")) ?? -1
        }
        var key = request.headers["idempotency-key"]
        if let given = key {
            guard !given.isEmpty, given.utf8.count <= 255 else {
                throw APIError(.badRequest, "Idempotency-Key must be 1-255 characters")
            }
            if request.method != .post { key = nil }
        }
        return CommandContext(
            credential: credential(request), ifMatch: ifMatch, idempotencyKey: key,
            scope: "\(request.method.rawValue) \(request.path)")
    }

    private func jsonBody(_ request: Request) throws -> JSONValue? {
        guard !request.body.isEmpty else { return nil }
        if let type = request.headers["content-type"]?.lowercased() {
            let mediaType = type.split(separator: ";").first.map { trimmed($0) } ?? ""
            guard mediaType == "application/json" || mediaType.hasSuffix("+json") else {
                throw APIError(.unsupportedMediaType, "send the body as application/json, not \(mediaType)")
            }
        }
        // The envelope around a value nests a few levels (`{"screens": [{"values": {"k": …}}]}`), so
        // each value's depth is checked where it is validated; a body nested beyond any envelope
        // is valid JSON of the wrong shape (422), not malformed (400).
        let envelopeDepth = 8
        do {
            return try JSONValue(parsing: request.body, maxDepth: limits.maxNesting + envelopeDepth)
        } catch where error.reason.hasPrefix("nesting deeper") {
            throw APIError(.unprocessable, "JSON nested deeper than \(limits.maxNesting)", pointer: "")
        } catch {
            throw APIError(.badRequest, "malformed JSON: \(error)")
        }
    }

    func integerQuery(_ request: Request, _ name: String, default value: Int64, range: ClosedRange<Int64>)
        throws -> Int64
    {
        guard let text = request.query[name] else { return value }
        guard let number = Int64(text), range.contains(number) else {
            throw APIError(
                .unprocessable, "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    func booleanQuery(_ request: Request, _ name: String) throws -> Bool {
        guard let text = request.query[name] else { return false }
        switch text.lowercased() {
        case "true", "1", "": return true
        case "false", "0": return false
        default: throw APIError(.unprocessable, "\(name) must be true or false")
        }
    }
}

extension Credential {
    /// A token that could have been issued (an admin token matched earlier and is `.admin`).
    var isWellFormedToken: Bool {
        if case .token(let token) = self { IdentifierGenerator.isWellFormedToken(token) } else { false }
    }
}

/// A JSON answer.
func json(_ status: Int, _ body: JSONValue, headers: [String: String] = [:]) -> Response {
    var fields = HTTPHeaders()
    fields["Content-Type"] = "application/json; charset=utf-8"
    for (name, value) in headers { fields[name] = value }
    return Response(status: HTTPStatus(code: status), headers: fields, body: Array(body.serialized().utf8))
}

func respond(_ response: APIResponse) -> Response {
    guard let body = response.body else {
        var fields = HTTPHeaders()
        for (name, value) in response.headers { fields[name] = value }
        return Response(status: HTTPStatus(code: response.status), headers: fields)
    }
    return json(response.status, body, headers: response.headers)
}

/// `text` without leading and trailing spaces and tabs (and `also`): header values are ASCII, and
/// Foundation's `trimmingCharacters` costs a bridged string on every request.
func trimmed(_ text: some StringProtocol, also extra: Character? = nil) -> String {
    func isTrimmed(_ character: Character) -> Bool { character == " " || character == "\t" || character == extra }
    guard let first = text.firstIndex(where: { !isTrimmed($0) }), let last = text.lastIndex(where: { !isTrimmed($0) })
    else { return "" }
    return String(text[first...last])
}
