import Foundation
import NavigationValues
import NavigationValuesWire

/// A session's history as a file (`GET …/export`): one event per line, as history shows them, up
/// to the session's version when it was asked; what `NavigationValuesClient.importSession(_:)`
/// takes.
public struct SessionExport: Sendable, Equatable {
    /// The file as the server sent it (`application/x-ndjson`).
    public var ndjson: Data
    /// Its events, in order.
    public var events: [ReceivedEvent]
    /// The session's version when it was exported (the answer's `ETag`).
    public var version: Int64?

    /// An export with these members.
    public init(ndjson: Data, events: [ReceivedEvent], version: Int64?) {
        self.ndjson = ndjson
        self.events = events
        self.version = version
    }

    /// The events of an export's lines (blank lines skipped).
    ///
    /// - Throws: `WireDecodingError` naming the line (`/<line index>…`) that is not an event.
    public static func events(in ndjson: Data) throws(WireDecodingError) -> [ReceivedEvent] {
        var events: [ReceivedEvent] = []
        for (index, line) in ndjson.split(separator: UInt8(ascii: "\n")).enumerated()
        where !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) {
            let json: JSONValue
            do {
                json = try JSONValue(parsing: Array(line))
            } catch {
                throw WireDecodingError(pointer: "/\(index)", reason: "not JSON: \(error)")
            }
            do {
                events.append(try ReceivedEvent(json: json))
            } catch {
                throw WireDecodingError(pointer: "/\(index)" + error.pointer, reason: error.reason)
            }
        }
        return events
    }
}

/// A session's history as a Swift Testing test (`GET …/export?format=swift-testing`): a test
/// that rebuilds the history step by step on the core library alone and checks the state the
/// server recorded after each event asked for. Save `source` into a test target that depends on
/// the `NavigationValues` library, under `filename`.
public struct SessionTestExport: Sendable, Equatable {
    /// The test's Swift source, as the server wrote it.
    public var source: String
    /// The file name the server suggests (`RecordedSession_s_….swift`), from `Content-Disposition`.
    public var filename: String?
    /// The session's version when it was exported (the answer's `ETag`).
    public var version: Int64?

    /// An exported test with these members.
    public init(source: String, filename: String?, version: Int64?) {
        self.source = source
        self.filename = filename
        self.version = version
    }
}

extension RemoteSession {
    /// The change from the session at revision `from` to the session at `to` (`GET …/diff`), an RFC
    /// 6902 patch that starts with a `test` of `/version`; either way round. Defaults: `to` the
    /// latest, `from` the one before `to`.
    public func diff(from: Int64? = nil, to: Int64? = nil) async throws -> JSONPatch {
        var query: [(name: String, value: String)] = []
        if let from { query.append(("from", String(from))) }
        if let to { query.append(("to", String(to))) }
        return try await read(path("diff"), query: query) { json throws(WireDecodingError) in
            try JSONPatch(json: json)
        }
    }

    /// The session's history as a file (`GET …/export`).
    public func export() async throws -> SessionExport {
        let request = APIRequest(
            method: "GET", path: path("export"), credential: credential, accept: "application/x-ndjson")
        let answer = try await transport.perform(request)
        do {
            return SessionExport(
                ndjson: answer.body, events: try SessionExport.events(in: answer.body), version: answer.etagVersion)
        } catch {
            throw RemoteError(
                .invalidResponse, request: request.label, detail: "unexpected export: \(error)", status: answer.status,
                attempts: answer.attempts)
        }
    }

    /// The session's history as a Swift Testing test (`GET …/export?format=swift-testing`), checking
    /// the state after each event, or after those `versions` lists (each 1 to the version). A test
    /// past the server's `--max-test-export-bytes` is refused (422, `limit-exceeded`): ask for fewer
    /// versions.
    public func exportAsTest(checkingAfter versions: [Int64]? = nil) async throws -> SessionTestExport {
        var query: [(name: String, value: String)] = [("format", "swift-testing")]
        if let versions { query.append(("versions", versions.map(String.init).joined(separator: ","))) }
        let request = APIRequest(
            method: "GET", path: path("export"), query: query, credential: credential, accept: "text/x-swift")
        let answer = try await transport.perform(request)
        var filename: String?
        if let disposition = answer.header("content-disposition"), let start = disposition.range(of: "filename=") {
            filename = disposition[start.upperBound...].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return SessionTestExport(
            source: String(decoding: answer.body, as: UTF8.self), filename: filename, version: answer.etagVersion)
    }

    /// A new session that starts as this one was at revision `at` (nil: the latest), with its own
    /// token, and `origin` pointing back here (`POST /v1/sessions/fork`, with this session's token).
    public func fork(at: Int64? = nil, idempotencyKey: String? = nil) async throws -> RemoteSession {
        try await transport.createdSession(
            APIRequest(
                method: "POST", path: "/v1/sessions/fork",
                body: ["session": .string(id.rawValue), "at": at.map { .integer($0) } ?? .null], credential: credential,
                idempotencyKey: idempotencyKey ?? transport.configuration.idempotencyKeys.next())
        ).session
    }

    /// A single-use code another device redeems (``NavigationValuesClient/redeem(_:)``) to
    /// continue this session with a token of its own (`POST /v1/sessions/{id}/handoff`), or, with
    /// `fork`, to get a new session that starts as this one is now. It expires at `expiresAt` (a
    /// few minutes, the server's `--handoff-lifetime`); show it as text, a QR code or a link.
    ///
    /// - Throws: `RemoteError`: `.tooManyHandoffs` when the session has as many unused codes as
    ///   the server allows; `.gone` for an ended session; `.forbidden` for a read-only token.
    public func handoff(fork: Bool = false) async throws -> CreatedHandoff {
        let request = APIRequest(
            method: "POST", path: "/v1/sessions/\(id.rawValue)/handoff", body: ["fork": .bool(fork)],
            credential: credential)
        let answer = try await transport.perform(request)
        return try transport.decode(answer, for: request) { json throws(WireDecodingError) in
            try CreatedHandoff(json: json)
        }
    }

    /// A stream ticket for this session's event streams (`POST /v1/tickets {"session"}`): for an
    /// `EventSource` URL (`…/events?ticket=`), where no `Authorization` header can be sent.
    public func streamTicket() async throws -> StreamTicket {
        try await transport.streamTicket(["session": .string(id.rawValue)], credential: credential)
    }

    /// A read-only token for this session (`POST /v1/observers {"session"}`, with this session's
    /// token), expiring after `expiresIn` (whole seconds; nil: until revoked).
    public func createObserver(label: String = "", expiresIn: Duration? = nil, idempotencyKey: String? = nil)
        async throws -> CreatedObserver
    {
        try await transport.createObserver(
            for: id, label: label, expiresIn: expiresIn, credential: credential, idempotencyKey: idempotencyKey)
    }

    /// A page of this session's observer tokens (never the tokens themselves).
    public func observers(limit: Int = 100, cursor: ObserverID? = nil) async throws -> ObserverList {
        try await transport.observers(of: id, limit: limit, cursor: cursor, credential: credential)
    }
}

extension HTTPTransport {
    /// Sends a request that creates a session (creation, import, fork) and returns its handle.
    func createdSession(_ request: APIRequest) async throws -> (session: RemoteSession, resource: SessionResource) {
        let answer = try await perform(request)
        let created = try decode(answer, for: request) { json throws(WireDecodingError) in
            try CreatedSession(json: json)
        }
        return (RemoteSession(id: created.session.id, token: created.token, transport: self), created.session)
    }

    func streamTicket(_ body: JSONValue, credential: Credential?) async throws -> StreamTicket {
        let request = APIRequest(
            method: "POST", path: "/v1/tickets", body: body, credential: credential,
            idempotencyKey: configuration.idempotencyKeys.next())
        let answer = try await perform(request)
        return try decode(answer, for: request) { json throws(WireDecodingError) in try StreamTicket(json: json) }
    }

    func createObserver(
        for session: SessionID?, label: String, expiresIn: Duration?, credential: Credential?, idempotencyKey: String?
    ) async throws -> CreatedObserver {
        var body: [String: JSONValue] = ["session": session.map { .string($0.rawValue) } ?? .null]
        if !label.isEmpty { body["label"] = .string(label) }
        if let expiresIn { body["expiresIn"] = .integer(max(1, expiresIn.components.seconds)) }
        let request = APIRequest(
            method: "POST", path: "/v1/observers", body: .object(body), credential: credential,
            idempotencyKey: idempotencyKey ?? configuration.idempotencyKeys.next())
        let answer = try await perform(request)
        return try decode(answer, for: request) { json throws(WireDecodingError) in try CreatedObserver(json: json) }
    }

    func observers(of session: SessionID?, limit: Int, cursor: ObserverID?, credential: Credential?) async throws
        -> ObserverList
    {
        var query: [(name: String, value: String)] = [("limit", String(limit))]
        if let session { query.append(("session", session.rawValue)) }
        if let cursor { query.append(("cursor", cursor.rawValue)) }
        let request = APIRequest(method: "GET", path: "/v1/observers", query: query, credential: credential)
        let answer = try await perform(request)
        return try decode(answer, for: request) { json throws(WireDecodingError) in try ObserverList(json: json) }
    }
}
