import Foundation
import HTTPCore
import NavigationValues
import NavigationValuesCrypto
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire

/// A session's revisions as documents: the change between two of them (an RFC 6902 JSON Patch),
/// the whole history as a file (NDJSON), a file imported as a new session, and a fork of a
/// session at a revision.
struct RevisionRoutes: Sendable {
    let routes: SessionRoutes

    var service: SessionService { routes.service }
    var store: any SessionStore { routes.store }
    private var events: EventRoutes { EventRoutes(routes: routes, hub: routes.hub) }

    func register(on router: Router) {
        router.get("/v1/sessions/{id}/diff") { request in try await diff(request) }
        router.get("/v1/sessions/{id}/export") { request in try await export(request) }
        router.post("/v1/sessions/import") { request in try await importSession(request) }
        router.post("/v1/sessions/fork") { request in try await fork(request) }
    }

    // MARK: - Diff

    /// `?from=A&to=B` (defaults: `to` the latest, `from` the one before `to`): the patch from the
    /// session as replayed at A to the session as replayed at B, either way round. It starts with
    /// `{"op": "test", "path": "/version", "value": A}`, so that applied to another revision it
    /// fails rather than producing a wrong document.
    private func diff(_ request: Request) async throws -> Response {
        let id = routes.sessionID(request)
        let credential = try await routes.requireCredential(request)
        let head = try await events.readerHead(of: id, credential: credential, snapshot: false)
        let to = try revision(request, "to", default: head.version, latest: head.version, of: id)
        let from = try revision(request, "from", default: max(1, to - 1), latest: head.version, of: id)
        try await events.checkAvailable(id, after: from)
        try await events.checkAvailable(id, after: to)
        var source = try await SessionReplay.resource(of: id, at: from, in: store)
        source.origin = head.origin
        var target = source
        if to != from {
            target = try await SessionReplay.resource(of: id, at: to, in: store)
            target.origin = head.origin
        }
        var patch = JSONPatch.difference(from: source.json, to: target.json)
        patch.operations.insert(.test(path: "/version", value: .integer(from)), at: 0)
        return Response(
            status: .ok, headers: ["Content-Type": "application/json-patch+json"],
            body: Array(patch.json.serialized().utf8))
    }

    /// A revision named in the query: 1 to `latest` (422 below 1, 404 above, as replay answers).
    private func revision(
        _ request: Request, _ name: String, default value: Int64, latest: Int64, of id: SessionID
    ) throws -> Int64 {
        guard let text = request.query[name] else { return value }
        return try revision(text, name, latest: latest, of: id)
    }

    /// An event seq given as `text` in the query parameter `name`: 1 to `latest`.
    private func revision(_ text: String, _ name: String, latest: Int64, of id: SessionID) throws -> Int64 {
        guard let number = Int64(text), number >= 1 else {
            throw APIError(.unprocessable, "\(name) must be an event seq of at least 1")
        }
        guard number <= latest else {
            throw APIError(.notFound, "session \(id.rawValue) has events 1 to \(latest), not \(number)")
        }
        return number
    }

    // MARK: - Export

    /// Every event of the session up to its version when asked, one JSON object per line, as
    /// history shows them: what `POST /v1/sessions/import` takes. Streamed, so a long history is
    /// never held in memory whole.
    private func export(_ request: Request) async throws -> Response {
        let id = routes.sessionID(request)
        let format = request.query["format"]
        guard format == nil || format == "ndjson" || format == "swift-testing" else {
            throw APIError(.unprocessable, "format must be ndjson or swift-testing")
        }
        let credential = try await routes.requireCredential(request)
        let head = try await events.readerHead(of: id, credential: credential, snapshot: false)
        try await events.checkAvailable(id, after: 1)
        let versions = try checkedVersions(request, latest: head.version, of: id)
        if format == "swift-testing" { return try await exportTest(id: id, version: head.version, checking: versions) }
        // Pages bounded by bytes as well as by count (--max-page-bytes), as history's are.
        let pages = service.copies.pages(of: id, through: head.version, maxBytes: events.pageBytes)
        return Response(
            status: .ok, headers: Self.download("application/x-ndjson", "\(id.rawValue).ndjson", version: head.version)
        ) { writer in
            for try await page in pages {
                var chunk: [UInt8] = []
                for event in page {
                    chunk += event.json.utf8
                    chunk.append(UInt8(ascii: "\n"))
                }
                try await writer.write(chunk)
            }
        }
    }

    /// `?versions=1,5,9`: event seqs 1 to `latest` (422 for anything else, 404 past `latest`, however
    /// many digits); nil when absent. Checked whatever the format, as the document states it; only
    /// a test uses it.
    private func checkedVersions(_ request: Request, latest: Int64, of id: SessionID) throws -> Set<Int64>? {
        guard let text = request.query["versions"] else { return nil }
        var chosen: Set<Int64> = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard !item.isEmpty, item.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw APIError(.unprocessable, "versions must be event seqs of at least 1, separated by commas")
            }
            if item.contains(where: { $0 != "0" }), Int64(item) == nil {
                throw APIError(.notFound, "session \(id.rawValue) has events 1 to \(latest), not \(item)")
            }
            chosen.insert(try revision(String(item), "versions", latest: latest, of: id))
        }
        return chosen
    }

    /// The history as a Swift Testing test that replays it on the core library and checks the
    /// state after each version (or those of `?versions=1,5,9`): `SessionReplay.swiftTest`.
    private func exportTest(id: SessionID, version: Int64, checking versions: Set<Int64>?) async throws -> Response {
        let source = try await SessionReplay.swiftTest(
            of: id, through: version, checking: versions, in: store,
            maxBytes: service.configuration.maxTestExportBytes, pageBytes: events.pageBytes)
        let suite = "RecordedSession_" + SwiftLiteral.identifier(id.rawValue)
        return Response(
            status: .ok, headers: Self.download("text/x-swift; charset=utf-8", "\(suite).swift", version: version),
            body: Array(source.utf8))
    }

    /// The headers of an export: a file to save under `filename`, of the session at `version`.
    private static func download(_ type: String, _ filename: String, version: Int64) -> HTTPHeaders {
        [
            "Content-Type": type, "Content-Disposition": "attachment; filename=\"\(filename)\"",
            "ETag": "\"\(version)\"", "Cache-Control": "no-store",
        ]
    }

    // MARK: - Import and fork

    /// The media types an export may be sent as (an absent `Content-Type` is taken too).
    private static let lineMediaTypes: Set<String> = [
        "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines",
    ]

    /// An export's lines as a new session: 201 with the session, its token and `Location`, as
    /// creation answers.
    private func importSession(_ request: Request) async throws -> Response {
        if let type = request.headers["content-type"]?.lowercased() {
            let mediaType = type.split(separator: ";").first.map { HeaderValue.trimmed($0) } ?? ""
            guard Self.lineMediaTypes.contains(mediaType) else {
                throw APIError(.unsupportedMediaType, "send the export as application/x-ndjson, not \(mediaType)")
            }
        }
        // Like creation, import needs no token (but the create token when the server has one);
        // its key's scope covers the body.
        try routes.authorizeCreation(request)
        let idempotency = try routes.idempotencyKey(request).map { key in
            Idempotency<CreatedSession>(
                key: key, scope: "POST /v1/sessions/import \(SHA256.hexDigest(of: request.body))",
                record: StoredAnswer.init)
        }
        return try await service.copies.importSession(ndjson: request.body, idempotency: idempotency).response
    }

    /// `{"session": "s_…", "at": N}` (`at` defaults to the latest): a new session that starts as
    /// that one was at revision N, with `"origin"` pointing back at it.
    private func fork(_ request: Request) async throws -> Response {
        let credential = try await routes.requireCredential(request)
        let fields = try routes.objectBody(request, allowed: ["session", "at"])
        guard let id = fields["session"]?.stringValue, !id.isEmpty else {
            throw APIError(.unprocessable, "expected the id of the session to fork", pointer: "/session")
        }
        var at: Int64?
        if let value = fields["at"], value != .null {
            guard let number = value.integerValue, number >= 1 else {
                throw APIError(.unprocessable, "expected an event seq of at least 1", pointer: "/at")
            }
            at = number
        }
        let authorization = SHA256.hexDigest(of: Array((request.headers["authorization"] ?? "").utf8))
        let idempotency = try routes.idempotencyKey(request).map { key in
            Idempotency<CreatedSession>(
                key: key, scope: "POST /v1/sessions/fork \(SHA256.hexDigest(of: request.body)) \(authorization)",
                record: StoredAnswer.init)
        }
        return try await service.copies.fork(SessionID(id), at: at, credential: credential, idempotency: idempotency)
            .response
    }
}
