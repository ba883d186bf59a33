import HTTPCore
import NavigationValues
import NavigationValuesSessions
import NavigationValuesWire

/// Hand-offs over HTTP ("continue on my other device"): `POST /v1/sessions/{id}/handoff` makes a
/// single-use code (with the session's token); `POST /v1/handoffs/redeem` takes it in its body
/// (never in a URL, which proxies log) and answers the session with a new device token, or the
/// fork it makes. Making a hand-off appends no event to the session.
struct HandoffRoutes: Sendable {
    let routes: SessionRoutes

    var service: SessionService { routes.service }

    func register(on router: Router) {
        router.post("/v1/sessions/{id}/handoff") { request in try await create(request) }
        router.post("/v1/handoffs/redeem") { request in try await redeem(request) }
    }

    /// `{"fork": true}` for a code that makes a fork at the session's current version (optional;
    /// default false: the redeeming device joins the session itself). A hand-off has no effect
    /// to repeat but its code, so a retry with the same `Idempotency-Key` gets a new one.
    private func create(_ request: Request) async throws -> Response {
        _ = try routes.idempotencyKey(request)
        let credential = try await routes.requireCredential(request)
        let fields = try routes.objectBody(request, allowed: ["fork"])
        var fork = false
        if let value = fields["fork"], value != .null {
            guard case .bool(let flag) = value else {
                throw APIError(.unprocessable, "expected true or false", pointer: "/fork")
            }
            fork = flag
        }
        let made = try await service.handoffs.create(for: routes.sessionID(request), fork: fork, credential: credential)
        return .json(made.json, status: .created, headers: ["Cache-Control": "no-store"])
    }

    /// `{"code": "h_…"}`: the session joined (200, with a new `td_…` device token) or the fork
    /// made (201 with `Location`, as creation answers). Needs no Authorization: the code is the
    /// credential.
    private func redeem(_ request: Request) async throws -> Response {
        _ = try routes.idempotencyKey(request)
        let fields = try routes.objectBody(request, allowed: ["code"])
        guard let code = fields["code"]?.stringValue, !code.isEmpty else {
            throw APIError(.unprocessable, "expected the hand-off code", pointer: "/code")
        }
        switch try await service.handoffs.redeem(code) {
        case .joined(let joined):
            return .json(
                joined.json, headers: ["ETag": "\"\(joined.session.version)\"", "Cache-Control": "no-store"])
        case .forked(let outcome):
            var response = outcome.response
            response.headers["Cache-Control"] = "no-store"
            return response
        }
    }
}
