import Foundation
import HTTPCore
import NavigationValues
import NavigationValuesCrypto
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire

/// The HTTP face of the session API (docs/API.md, Endpoints): parses requests into queries and
/// commands for the `SessionService`, and its answers into responses.
///
/// ```swift
/// let routes = SessionRoutes(service: service, adminToken: token, hub: hub)
/// let router = Router()
/// routes.register(on: router)
/// ```
public struct SessionRoutes: Sendable {
    let service: SessionService
    let adminToken: String
    let hub: EventHub
    /// When set, creating a session needs this token (or the admin token) as a bearer token.
    let createToken: String?
    /// Bytes of events one page of history, a long poll or a stream's catch-up holds at most.
    let maxPageBytes: Int

    /// Routes answering with `service`; `createToken`, when set, is needed to create a session.
    public init(
        service: SessionService, adminToken: String, hub: EventHub, createToken: String? = nil,
        maxPageBytes: Int = 1024 * 1024
    ) {
        self.service = service
        self.adminToken = adminToken
        self.hub = hub
        self.createToken = createToken
        self.maxPageBytes = max(1, maxPageBytes)
    }

    var store: any SessionStore { service.store }
    var limits: SessionLimits { service.configuration.limits }

    /// Adds every route to `router`.
    public func register(on router: Router) {
        let healthy = Array((["status": "ok"] as JSONValue).serialized().utf8)  // the same bytes every time
        router.get("/healthz") { _ in .json(text: healthy) }
        router.get("/readyz") { _ in
            do {
                try await store.checkWritable()
                return .json(["status": "ready"])
            } catch {
                return ProblemMapping.response(
                    for: APIError(.unavailable, "the database is not writable", headers: ["Retry-After": "1"]),
                    request: nil)
            }
        }
        router.post("/v1/sessions") { request in try await create(request) }
        router.get("/v1/sessions") { request in try await list(request) }
        sessionRead(router)
        query("/v1/sessions/{id}/screens/{screen}", router) { request in
            let screen = request.parameters["screen"] ?? ""
            return try booleanQuery(request, "explain") ? .explainedScreen(screen) : .screen(screen)
        }
        command(.delete, "/v1/sessions/{id}", router) { request in .end(purge: try booleanQuery(request, "purge")) }
        command(.post, "/v1/sessions/{id}/push", router) { request in
            .push(stack: StackID.main.rawValue, body: try jsonBody(request) ?? [:])
        }
        command(.post, "/v1/sessions/{id}/pop", router) { request in
            .pop(stack: StackID.main.rawValue, body: try jsonBody(request) ?? [:])
        }
        command(.put, "/v1/sessions/{id}/path", router) { request in
            .replacePath(stack: StackID.main.rawValue, body: try jsonBody(request) ?? [:])
        }
        command(.patch, "/v1/sessions/{id}/screens/{screen}/values", router) { request in
            .patchValues(screen: request.parameters["screen"] ?? "", body: try jsonBody(request) ?? [:])
        }
        command(.put, "/v1/sessions/{id}/screens/{screen}/handlers/{key}", router) { request in
            .setHandler(
                screen: request.parameters["screen"] ?? "", key: request.parameters["key"] ?? "",
                body: try jsonBody(request) ?? [:])
        }
        command(.delete, "/v1/sessions/{id}/screens/{screen}/handlers/{key}", router) { request in
            .removeHandler(screen: request.parameters["screen"] ?? "", key: request.parameters["key"] ?? "")
        }
        command(.post, "/v1/sessions/{id}/screens/{screen}/preferences/{key}", router) { request in
            .publish(
                screen: request.parameters["screen"] ?? "", key: request.parameters["key"] ?? "",
                body: try jsonBody(request) ?? [:])
        }
        registerStacks(on: router)
        EventRoutes(routes: self, hub: hub).register(on: router)
        AccessRoutes(routes: self).register(on: router)
        HandoffRoutes(routes: self).register(on: router)
        RevisionRoutes(routes: self).register(on: router)
    }

    // MARK: - Sessions

    private func create(_ request: Request) async throws -> Response {
        try authorizeCreation(request)
        // Creation needs no token, so its idempotency scope also covers the body: a client that
        // reuses someone else's key with another body does not get their session (and token)
        // back. Keys should still be random (a UUID).
        let idempotency = try idempotencyKey(request).map { key in
            Idempotency<CreatedSession>(
                key: key, scope: "\(request.method.rawValue) \(request.path) \(SHA256.hexDigest(of: request.body))",
                record: StoredAnswer.init)
        }
        let body = try jsonBody(request) ?? [:]
        return try await service.sessions.create(body: body, idempotency: idempotency).response
    }

    /// With `--create-token`, creation needs that token or the admin token (401 without one,
    /// 403 with another).
    func authorizeCreation(_ request: Request) throws {
        guard let createToken else { return }
        switch credential(request) {
        case .admin: return
        case .none:
            throw APIError(
                .unauthorized, "creating a session needs Authorization: Bearer <create token>",
                headers: ["WWW-Authenticate": "Bearer"])
        case .token(let token):
            guard constantTimeEquals(token, createToken) else {
                throw APIError(.forbidden, "this token may not create sessions")
            }
        case .reader, .device:
            throw APIError(.forbidden, "a read-only credential may not create sessions")
        }
    }

    private func list(_ request: Request) async throws -> Response {
        let credential = try await service.access.resolve(credential(request))
        guard credential.canReadEverySession else {
            throw credential.isWellFormedToken || credential.isReader
                ? APIError(
                    .forbidden, "listing sessions needs the admin token (or an observer token for every session)")
                : APIError(
                    .unauthorized, "send Authorization: Bearer <admin token>", headers: ["WWW-Authenticate": "Bearer"])
        }
        let limit = try integerQuery(request, "limit", default: 100, range: 1...1_000)
        let page = try await service.sessions.list(
            limit: Int(limit), cursor: request.query["cursor"].map { SessionID($0) })
        return .json(page.json)
    }

    /// Registers a route that reads the session named by `{id}`.
    func query(
        _ path: String, _ router: Router, _ query: @escaping @Sendable (Request) throws -> SessionQuery
    ) {
        router.get(path) { request in
            _ = try idempotencyKey(request)  // checked on every method, as for commands
            let credential = try await requireCredential(request)
            return try await service.sessions.read(try query(request), of: sessionID(request), credential: credential)
                .response
        }
    }

    /// `GET /v1/sessions/{id}`: answered at once, on the connection's thread, from the session's
    /// JSON as its actor last rendered it when that is current and the credential is the admin
    /// token or the session token the actor verified (`SessionRegistry.cachedSession`); otherwise,
    /// and for every other credential or error, as any other query. Both answer the same bytes.
    func sessionRead(_ router: Router) {
        router.on(
            .get, "/v1/sessions/{id}",
            future: { request in
                if request.query["explain"] == nil, let cached = cachedSession(request) {
                    return .ready(.success(cached))
                }
                return .async {
                    _ = try idempotencyKey(request)
                    let query: SessionQuery = try booleanQuery(request, "explain") ? .explainedSession : .session
                    let credential = try await requireCredential(request)
                    return try await service.sessions.read(query, of: sessionID(request), credential: credential)
                        .response
                }
            })
    }

    /// The cached answer to a session read, when one may be given without the actor.
    func cachedSession(_ request: Request) -> Response? {
        guard request.headers["idempotency-key"] == nil else { return nil }  // checked on the usual path
        let credential = credential(request)
        switch credential {
        case .admin: break
        case .token(let token) where !IdentifierGenerator.isWellFormedObserverToken(token): break
        default: return nil
        }
        guard let rendered = service.sessions.cachedSession(sessionID(request), credential: credential) else {
            return nil
        }
        return SessionQuery.Result.session(rendered).response
    }

    /// Registers a route that runs a command on the session named by `{id}`.
    func command(
        _ method: HTTPMethod, _ path: String, _ router: Router,
        _ command: @escaping @Sendable (Request) throws -> SessionCommand
    ) {
        router.on(method, path) { request in
            var context = try commandContext(request)
            context.credential = try await requireCredential(request, parsed: context.credential)
            return try await service.sessions.perform(try command(request), on: sessionID(request), context: context)
                .response
        }
    }

    // MARK: - Request pieces

    func sessionID(_ request: Request) -> SessionID { SessionID(request.parameters["id"] ?? "") }

    func credential(_ request: Request) -> Credential {
        guard let header = request.headers["authorization"] else { return .none }
        let token = Self.bearerToken(header)
        return constantTimeEquals(token, adminToken) ? .admin : .token(token)
    }

    /// The token of an `Authorization` value, `Bearer <token>`: the scheme up to the first space
    /// (any case), then the rest trimmed; `""` when it is not of that shape.
    static func bearerToken(_ header: String) -> String {
        asciiBearerToken(header) ?? characterBearerToken(header)
    }

    /// `bearerToken(_:)` read as characters, for any value.
    static func characterBearerToken(_ header: String) -> String {
        // Read in place: only the token becomes a string of its own.
        let value = Substring(header).drop { $0 == " " }
        guard let space = value.firstIndex(of: " "), value[..<space].lowercased() == "bearer" else { return "" }
        return HeaderValue.trimmed(value[space...])
    }

    /// `bearerToken(_:)` of an all-ASCII value (the usual one), read on its bytes, where every
    /// character is one byte (without breaking the value into characters, for every request);
    /// nil for a value with other characters, which `characterBearerToken(_:)` reads.
    static func asciiBearerToken(_ header: String) -> String? {
        let token: String?? = header.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            var start = 0
            while start < bytes.count, bytes[start] == UInt8(ascii: " ") { start += 1 }
            guard let space = bytes[start...].firstIndex(of: UInt8(ascii: " ")), space - start == 6 else { return "" }
            // The scheme, lowercased as `lowercased()` lowercases ASCII, is `bearer`.
            for (offset, expected) in "bearer".utf8.enumerated() {
                let byte = bytes[start + offset]
                let lowered = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                guard lowered == expected else { return "" }
            }
            func isTrimmed(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            var first = space
            while first < bytes.count, isTrimmed(bytes[first]) { first += 1 }
            var end = bytes.count
            while end > first, isTrimmed(bytes[end - 1]) { end -= 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[first..<end]), as: UTF8.self)
        }
        return token ?? nil
    }

    /// The caller's credential, an observer token resolved to its read-only grant; 401 when
    /// there is none. A stream ticket is not a credential here: only event streams take one.
    func requireCredential(_ request: Request) async throws -> Credential {
        try await requireCredential(request, parsed: credential(request))
    }

    /// ``requireCredential(_:)`` of the credential `credential(request)` already read.
    private func requireCredential(_ request: Request, parsed credential: Credential) async throws -> Credential {
        if case .none = credential {
            if request.query["ticket"] != nil {
                throw SessionError(
                    .unauthorized,
                    "a stream ticket opens only the event streams (GET …/events); send Authorization: Bearer <token>")
            }
            throw SessionError(.unauthorized, "send Authorization: Bearer <token>")
        }
        return try await service.access.resolve(credential)
    }

    /// The credential of an event stream: a stream ticket in `?ticket=` (for `EventSource`,
    /// which cannot send headers), or the `Authorization` header; not both.
    func streamCredential(_ request: Request) async throws -> Credential {
        guard let ticket = request.query["ticket"] else { return try await requireCredential(request) }
        guard request.headers["authorization"] == nil else {
            throw APIError(.badRequest, "send either a ticket or an Authorization header, not both")
        }
        return try await service.access.credential(forTicket: ticket)
    }

    private func commandContext(_ request: Request) throws -> CommandContext {
        let ifMatch = try request.headers["if-match"].flatMap(HeaderValue.version(ifMatch:))
        let idempotency = try idempotencyKey(request).map { key in
            Idempotency<MutationResult>(key: key, scope: idempotencyScope(request), record: StoredAnswer.init)
        }
        return CommandContext(
            credential: credential(request), ifMatch: ifMatch, idempotency: idempotency, answer: StoredAnswer.init)
    }

    /// The `Idempotency-Key` of a mutation, checked on every method. docs/API.md promises it on any POST;
    /// it is honoured on PUT, PATCH and DELETE too, so that a client can retry every mutation after a
    /// lost answer without applying it twice.
    func idempotencyKey(_ request: Request) throws -> String? {
        guard let key = request.headers["idempotency-key"] else { return nil }
        guard !key.isEmpty, key.utf8.count <= 255 else {
            throw APIError(.badRequest, "Idempotency-Key must be 1-255 characters")
        }
        switch request.method {
        case .post, .put, .patch, .delete: return key
        default: return nil
        }
    }

    /// What a mutation's key is scoped to: the method and path, as for every POST. On PUT, PATCH and
    /// DELETE (where the key used to be ignored) also the query and body, so that a client that
    /// sends one key with different requests gets each applied, as it did before.
    private func idempotencyScope(_ request: Request) -> String {
        let scope = "\(request.method.rawValue) \(request.path)"
        guard request.method != .post else { return scope }
        return "\(scope) \(SHA256.hexDigest(of: Array(request.target.utf8) + [0] + request.body))"
    }

    /// The body as a JSON object with only `allowed` members (an empty body is `{}`).
    func objectBody(_ request: Request, allowed: Set<String>) throws -> [String: JSONValue] {
        guard let body = try jsonBody(request) else { return [:] }
        guard case .object(let fields) = body else {
            throw APIError(.unprocessable, "expected a JSON object", pointer: "")
        }
        let unknown = fields.keys.filter { !allowed.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw APIError(
                .unprocessable, "unknown member(s): \(unknown.joined(separator: ", "))",
                fieldErrors: unknown.map { .init(pointer: "/\(JSONPointer.escaped($0))", detail: "unknown member") })
        }
        return fields
    }

    func jsonBody(_ request: Request) throws -> JSONValue? {
        guard !request.body.isEmpty else { return nil }
        if let type = request.headers["content-type"], !HeaderValue.isJSONMediaType(type) {
            let mediaType = type.lowercased().split(separator: ";").first.map { HeaderValue.trimmed($0) } ?? ""
            throw APIError(.unsupportedMediaType, "send the body as application/json, not \(mediaType)")
        }
        // The envelope around a value nests a few levels (`{"screens": [{"values": {"k": …}}]}`), so
        // each value's depth is checked where it is validated; a body nested beyond any envelope
        // is valid JSON of the wrong shape (422), not malformed (400).
        let envelopeDepth = 8
        do {
            return try JSONValue(parsing: request.body, maxDepth: limits.maxNesting + envelopeDepth)
        } catch  where error.reason.hasPrefix("nesting deeper") {
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

/// Header values are ASCII: trimming them needs no Foundation (whose `trimmingCharacters` costs a
/// bridged string on every request).
enum HeaderValue {
    /// The version an `If-Match` header names, or nil for `*` (any version). The header is `*` or
    /// one version as `ETag` gives it (`"7"`), also weak (`W/"7"`) or unquoted (`7`), with at most 18
    /// digits, between optional spaces and tabs (docs/API.md, "If-Match"). Anything else is 400: a
    /// precondition the server cannot read is not one it can judge, so it is neither applied nor
    /// refused as a version mismatch.
    static func version(ifMatch header: String) throws -> Int64? {
        let text = trimmed(header)
        if text == "*" { return nil }
        var digits = Substring(text)
        if digits.hasPrefix("W/") { digits = digits.dropFirst(2) }
        if digits.count >= 2, digits.first == "\"", digits.last == "\"" { digits = digits.dropFirst().dropLast() }
        guard (1...18).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let version = Int64(digits)
        else {
            throw APIError(.badRequest, "If-Match must be * or a version as ETag gives it (\"7\")")
        }
        return version
    }


    /// Whether a `Content-Type` names JSON: its media type (before any `;`, between spaces and
    /// tabs, in any case) is `application/json` or ends in `+json`. Read on the header's bytes, so
    /// that the usual request allocates nothing here.
    static func isJSONMediaType(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            // Empty parts before the first that is not are skipped (";x" names x).
            var start = 0
            while start < bytes.count, bytes[start] == UInt8(ascii: ";") { start += 1 }
            var end = bytes[start...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
            func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            while start < end, isSpace(bytes[start]) { start += 1 }
            while end > start, isSpace(bytes[end - 1]) { end -= 1 }
            func endsWith(_ suffix: StaticString) -> Bool {
                let count = suffix.utf8CodeUnitCount
                guard end - start >= count else { return false }
                return suffix.withUTF8Buffer { suffix in
                    (0..<count).allSatisfy { offset in
                        var byte = bytes[end - count + offset]
                        if byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z") { byte += 0x20 }
                        return byte == suffix[offset]
                    }
                }
            }
            return endsWith("+json") || (end - start == 16 && endsWith("application/json"))
        }
    }

    /// `text` without leading and trailing spaces and tabs (and `extra`).
    static func trimmed(_ text: some StringProtocol, also extra: Character? = nil) -> String {
        func isTrimmed(_ character: Character) -> Bool { character == " " || character == "\t" || character == extra }
        guard let first = text.firstIndex(where: { !isTrimmed($0) }),
            let last = text.lastIndex(where: { !isTrimmed($0) })
        else { return "" }
        return String(text[first...last])
    }
}
