import Foundation
import NavigationValues
import NavigationValuesWire

/// A handle on one session of the server, with its token: reads, stack changes, history, replay and
/// event streams (docs/API.md, Endpoints). A value: copy it freely, share it across tasks.
///
/// ```swift
/// let pushed = try await session.push("Detail", values: ["counter": 1])
/// try await session.pop(to: .root)
/// for try await item in session.events(after: 0) { print(item.seq) }
/// ```
///
/// Every mutation takes an optional `ifMatch` version (applied only if the session is still at it,
/// else `RemoteError.versionMismatch` with the server's version) and an optional `idempotencyKey`
/// (by default one is made per call; pass your own to make a call safe across process restarts).
public struct RemoteSession: Sendable {
    /// The session's id.
    public let id: SessionID
    /// The bearer token the calls send: the session's own, or the admin token (as refreshed by
    /// `Configuration.tokenProvider`, when it gave another after a 401).
    public var token: String { credential.token ?? "" }
    /// The token, shared by this handle's copies.
    let credential: Credential
    let transport: HTTPTransport

    init(id: SessionID, token: String, transport: HTTPTransport) {
        self.id = id
        credential = Credential(session: id, token: token)
        self.transport = transport
    }

    /// The screen `reference` names (nothing is sent until it is used).
    public func screen(_ reference: ScreenReference) -> RemoteScreen {
        RemoteScreen(session: self, reference: reference)
    }

    /// The screen with this id.
    public func screen(id: ScreenID) -> RemoteScreen { screen(.id(id)) }

    /// The root screen (the stack's head).
    public var root: RemoteScreen { screen(.root) }

    /// The topmost screen (the stack's tail), whichever it is when a call is sent.
    public var top: RemoteScreen { screen(.top) }

    // MARK: - Reading

    /// The session as it is now (`GET /v1/sessions/{id}`).
    public func get() async throws -> SessionResource {
        let request = APIRequest(method: "GET", path: path(), credential: credential)
        let answer = try await transport.perform(request)
        return try transport.decode(answer, for: request) { json throws(WireDecodingError) in
            try SessionResource(json: json)
        }
    }

    /// The session as it was right after event `at` (`GET …/replay?at=N`; nil: the latest).
    public func replay(at seq: Int64? = nil) async throws -> SessionResource {
        let request = APIRequest(
            method: "GET", path: path("replay"), query: seq.map { [("at", String($0))] } ?? [], credential: credential)
        let answer = try await transport.perform(request)
        return try transport.decode(answer, for: request) { json throws(WireDecodingError) in
            try SessionResource(json: json)
        }
    }

    /// One page of the session's history (`GET …/history?after=N&limit=L`): the events after
    /// `after`, at most `limit` (1-1,000), and the `after` of the next page.
    public func history(after: Int64 = 0, limit: Int = 100) async throws -> HistoryPage {
        let request = APIRequest(
            method: "GET", path: path("history"), query: [("after", String(after)), ("limit", String(limit))],
            credential: credential)
        let answer = try await transport.perform(request)
        return try transport.decode(answer, for: request) { json throws(WireDecodingError) in
            try HistoryPage(json: json)
        }
    }

    /// The events after `after` (`GET …/events?after=N&wait=S`, the JSON long poll), waiting up to
    /// `wait` (at most 60 s) for the first one when there is none yet.
    public func poll(after: Int64, wait: Duration = .zero) async throws -> EventPage {
        let seconds = max(0, min(60, Int(wait.components.seconds)))
        var request = APIRequest(
            method: "GET", path: path("events"), query: [("after", String(after)), ("wait", String(seconds))],
            credential: credential)
        request.timeout = transport.configuration.requestTimeout + .seconds(seconds)
        let answer = try await transport.perform(request)
        return try transport.decode(answer, for: request) { json throws(WireDecodingError) in
            try EventPage(json: json)
        }
    }

    /// The session's events as an `AsyncSequence` (server-sent events) that reconnects by itself
    /// and resumes with `Last-Event-ID`: every event after `after`, in order, none twice, none
    /// missing. `after: nil` starts with what happens next; `snapshot: true` (with `after: nil`)
    /// starts with the whole session (`.snapshot`) and continues with every event after it. The
    /// sequence ends after `session.ended`.
    ///
    /// ```swift
    /// for try await item in session.events(snapshot: true) {
    ///     switch item {
    ///     case .snapshot(let session): print("at version", session.version)
    ///     case .event(let event): print(event.seq, event.event.kind)
    ///     case .unrecognized(let event): print("newer server:", event.type)
    ///     }
    /// }
    /// ```
    ///
    /// - Throws (from the iterator): `RemoteError` `.gone` (410: the events asked for were purged),
    ///   `.notFound`, `.unauthorized`, `.forbidden`, or `.invalidResponse`; connection failures and
    ///   503s are retried as `Configuration.streams` says.
    public func events(after: Int64? = nil, snapshot: Bool = false) -> SessionEventStream {
        SessionEventStream(session: self, after: after, snapshot: snapshot && after == nil)
    }

    // MARK: - The stack

    /// Pushes a screen (`POST …/push`) with its own values.
    @discardableResult
    public func push(
        _ name: String, values: [String: JSONValue] = [:], ifMatch: Int64? = nil, idempotencyKey: String? = nil
    ) async throws -> PushResult {
        try await push(ScreenSeed(name, values: values), ifMatch: ifMatch, idempotencyKey: idempotencyKey)
    }

    /// Pushes a screen (`POST …/push`).
    @discardableResult
    public func push(_ seed: ScreenSeed, ifMatch: Int64? = nil, idempotencyKey: String? = nil) async throws
        -> PushResult
    {
        try await mutate("POST", path("push"), seed.json, .pushed, ifMatch, idempotencyKey) { $0.pushResult }
    }

    /// Pops `count` screens from the top (`POST …/pop {"count"}`), never the root: popping more than
    /// there are above it is `RemoteError.conflict`.
    @discardableResult
    public func pop(count: Int = 1, ifMatch: Int64? = nil, idempotencyKey: String? = nil) async throws -> PopResult {
        try await mutate("POST", path("pop"), ["count": .integer(Int64(count))], .popped, ifMatch, idempotencyKey) {
            $0.popResult
        }
    }

    /// Pops every screen above `screen`, keeping it (`POST …/pop {"to"}`).
    @discardableResult
    public func pop(to screen: ScreenReference, ifMatch: Int64? = nil, idempotencyKey: String? = nil) async throws
        -> PopResult
    {
        try await mutate("POST", path("pop"), ["to": .string(screen.description)], .popped, ifMatch, idempotencyKey) {
            $0.popResult
        }
    }

    /// Replaces every screen above the root in one step (`PUT …/path`, a deep link).
    @discardableResult
    public func replacePath(_ screens: [ScreenSeed], ifMatch: Int64? = nil, idempotencyKey: String? = nil)
        async throws -> PathResult
    {
        let body: JSONValue = ["screens": .array(screens.map(\.json))]
        return try await mutate("PUT", path("path"), body, .pathReplaced, ifMatch, idempotencyKey) { $0.pathResult }
    }

    // MARK: - Tabs (docs/Stacks.md)

    /// Moves a tab to `position` among the tabs (`POST …/stacks/{stack}/move`): 0 is the first tab
    /// after the main stack, which stays first. The main stack, a presentation or a position past
    /// the last tab is `RemoteError.conflict`; a negative position, `RemoteError.invalid`.
    @discardableResult
    public func moveStack(
        _ stack: StackID, to position: Int, ifMatch: Int64? = nil, idempotencyKey: String? = nil
    ) async throws -> StackMoveResult {
        try await mutate(
            "POST", path("stacks", stack.rawValue, "move"), ["position": .integer(Int64(position))], .stackMoved,
            ifMatch, idempotencyKey
        ) { $0.stackMoveResult }
    }

    /// Ends the session (`DELETE /v1/sessions/{id}`): later mutations are `.gone`; history and
    /// replay stay. Returns the version of its `session.ended` event.
    @discardableResult
    public func end(ifMatch: Int64? = nil, idempotencyKey: String? = nil) async throws -> Int64 {
        let answer = try await transport.performMutation(deleteRequest(purge: false, ifMatch, idempotencyKey))
        guard let version = answer.etagVersion else {
            throw RemoteError(
                .invalidResponse, request: "DELETE \(path())", detail: "the answer has no ETag with the version",
                status: answer.status, attempts: answer.attempts)
        }
        return version
    }

    /// Ends the session and deletes its history (`DELETE /v1/sessions/{id}?purge=true`): later reads
    /// are `.notFound`, its events and history `.gone`. An ended session can still be purged.
    public func purge(ifMatch: Int64? = nil, idempotencyKey: String? = nil) async throws {
        do {
            _ = try await transport.perform(deleteRequest(purge: true, ifMatch, idempotencyKey))
        } catch let error as RemoteError
            where error.earlierAttemptWasUnanswered && [.notFound, .gone].contains(error.code)
        {
            // An earlier attempt purged it and its answer was lost: with the session, the purge took
            // its idempotency record too, so the retry is answered "not found". That is the outcome
            // asked for.
        }
    }

    private func deleteRequest(purge: Bool, _ ifMatch: Int64?, _ idempotencyKey: String?) -> APIRequest {
        APIRequest(
            method: "DELETE", path: path(), query: purge ? [("purge", "true")] : [], credential: credential,
            ifMatch: ifMatch,
            idempotencyKey: idempotencyKey ?? transport.configuration.idempotencyKeys.next())
    }

    // MARK: - Pieces

    /// `/v1/sessions/{id}` and `segments`.
    func path(_ segments: String...) -> String {
        HTTPTransport.path(["v1", "sessions", id.rawValue] + segments)
    }

    /// Sends a mutation with its `Idempotency-Key` and decodes its answer as `kind`.
    func mutate<Result>(
        _ method: String, _ path: String, _ body: JSONValue?, _ kind: MutationResult.Kind, _ ifMatch: Int64?,
        _ idempotencyKey: String?, _ typed: (MutationResult) -> Result?
    ) async throws -> Result {
        try await mutate(method, path, body, AnswerShape.fixed(kind), ifMatch, idempotencyKey, typed)
    }

    /// Sends a mutation with its `Idempotency-Key` and decodes its answer as `shape` tells.
    func mutate<Result>(
        _ method: String, _ path: String, _ body: JSONValue?, _ shape: AnswerShape, _ ifMatch: Int64?,
        _ idempotencyKey: String?, _ typed: (MutationResult) -> Result?
    ) async throws -> Result {
        let request = APIRequest(
            method: method, path: path, body: body, credential: credential, ifMatch: ifMatch,
            idempotencyKey: idempotencyKey ?? transport.configuration.idempotencyKeys.next())
        let answer = try await transport.performMutation(request)
        let result = try transport.decode(answer, for: request) { json throws(WireDecodingError) in
            let (kind, operations) = shape.kinds(of: json)
            return try MutationResult(json: json, kind: kind, version: answer.etagVersion, operations: operations)
        }
        guard let value = typed(result) else {
            throw RemoteError(
                .invalidResponse, request: request.label, detail: "unexpected answer: a \(result.kind) result",
                status: answer.status, attempts: answer.attempts)
        }
        return value
    }
}

extension HTTPTransport {
    /// `/` + the segments, each encoded.
    static func path(_ segments: [String]) -> String {
        "/" + segments.map(encoded).joined(separator: "/")
    }
}
