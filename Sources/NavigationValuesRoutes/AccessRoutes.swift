import HTTPCore
import NavigationValues
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire

/// Read-only credentials over HTTP: stream tickets for `EventSource` URLs (`POST /v1/tickets`)
/// and observer tokens for tools that watch but never write (`/v1/observers`). They live outside
/// `/v1/sessions/{id}/…`, where every POST is a mutation that appends an event (docs/API.md, Details).
struct AccessRoutes: Sendable {
    let routes: SessionRoutes

    var service: SessionService { routes.service }

    func register(on router: Router) {
        router.post("/v1/tickets") { request in try await ticket(request) }
        router.post("/v1/observers") { request in try await createObserver(request) }
        router.get("/v1/observers") { request in try await listObservers(request) }
        router.get("/v1/observers/{observer}") { request in
            let credential = try await routes.requireCredential(request)
            let observer = try await service.access.observer(observerID(request), credential: credential)
            return .json(observer.json, headers: ["Cache-Control": "no-store"])
        }
        router.delete("/v1/observers/{observer}") { request in
            let credential = try await routes.requireCredential(request)
            try await service.access.revokeObserver(observerID(request), credential: credential)
            return Response(status: .noContent)
        }
    }

    private func observerID(_ request: Request) -> ObserverID { ObserverID(request.parameters["observer"] ?? "") }

    // MARK: - Stream tickets

    /// `{"session": "s_…"}` for one session's streams, or `{"all": true}` for the stream of every
    /// session. A ticket has no effect to repeat, so a retry with the same `Idempotency-Key` gets a
    /// new one.
    private func ticket(_ request: Request) async throws -> Response {
        _ = try routes.idempotencyKey(request)
        let credential = try await routes.requireCredential(request)
        let fields = try routes.objectBody(request, allowed: ["session", "all"])
        let session: SessionID?
        switch (fields["session"], fields["all"]) {
        case (.some(let value), nil):
            guard let id = value.stringValue, !id.isEmpty else {
                throw APIError(.unprocessable, "expected a session id", pointer: "/session")
            }
            session = SessionID(id)
        case (nil, .some(.bool(true))):
            session = nil
        case (nil, .some):
            throw APIError(.unprocessable, "expected true (a ticket for the stream of every session)", pointer: "/all")
        case (.some, .some):
            throw APIError(.unprocessable, "give either session or all, not both", pointer: "/all")
        case (nil, nil):
            throw APIError(
                .unprocessable, "name the stream: {\"session\": \"s_…\"} or {\"all\": true}", pointer: "/session")
        }
        let ticket = try await service.access.issueTicket(for: session, credential: credential)
        return .json(ticket.json, headers: ["Cache-Control": "no-store"])
    }

    // MARK: - Observer tokens

    /// `{"session": "s_…", "label": "support", "expiresIn": 3600}` (all optional; no session: a
    /// token for every session, which needs the admin token).
    private func createObserver(_ request: Request) async throws -> Response {
        let credential = try await routes.requireCredential(request)
        let fields = try routes.objectBody(request, allowed: ["session", "label", "expiresIn"])
        var session: SessionID?
        if let value = fields["session"], value != .null {
            guard let id = value.stringValue, !id.isEmpty else {
                throw APIError(.unprocessable, "expected a session id or null", pointer: "/session")
            }
            session = SessionID(id)
        }
        var label = ""
        if let value = fields["label"] {
            guard let text = value.stringValue, text.count <= 128 else {
                throw APIError(.unprocessable, "expected a string of at most 128 characters", pointer: "/label")
            }
            label = text
        }
        var lifetime: Duration?
        if let value = fields["expiresIn"], value != .null {
            let year: Int64 = 366 * 24 * 60 * 60
            guard let seconds = value.integerValue, seconds >= 1, seconds <= year else {
                throw APIError(
                    .unprocessable, "expected a whole number of seconds from 1 to \(year)", pointer: "/expiresIn")
            }
            lifetime = .seconds(seconds)
        }
        // Issuing a token needs a token, so the key's scope is the credential's too (a retry by
        // someone else never gets this answer, which carries the new token).
        let idempotency = try routes.idempotencyKey(request).map { key in
            Idempotency<CreatedObserver>(
                key: key,
                scope: "POST /v1/observers \(SHA256.hexDigest(of: request.body)) \(credentialScope(request))",
                record: StoredAnswer.init)
        }
        let outcome = try await service.access.createObserver(
            for: session, label: label, lifetime: lifetime, credential: credential, idempotency: idempotency)
        switch outcome {
        case .created(let created): return StoredAnswer(created).response
        case .replayed(let answer): return answer.replayedResponse
        }
    }

    private func listObservers(_ request: Request) async throws -> Response {
        let credential = try await routes.requireCredential(request)
        let limit = try routes.integerQuery(request, "limit", default: 100, range: 1...1_000)
        let session = request.query["session"].map { SessionID($0) }
        let page = try await service.access.observers(
            of: session, after: request.query["cursor"].map { ObserverID($0) }, limit: Int(limit),
            credential: credential)
        return .json(page.json, headers: ["Cache-Control": "no-store"])
    }

    /// A hash of the request's bearer token, never the token itself.
    private func credentialScope(_ request: Request) -> String {
        SHA256.hexDigest(of: Array((request.headers["authorization"] ?? "").utf8))
    }
}

extension StoredAnswer {
    /// An observer's creation: 201, `Location` and `Cache-Control: no-store` (it carries a token).
    init(_ created: CreatedObserver) {
        self.init(
            status: 201,
            headers: ["Location": "/v1/observers/\(created.observer.id.rawValue)", "Cache-Control": "no-store"],
            body: Array(created.json.serialized().utf8))
    }
}
