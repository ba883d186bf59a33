import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// What the API answers, before it becomes HTTP.
public struct APIResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: JSONValue?

    public init(status: Int, headers: [String: String] = [:], body: JSONValue?) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// A reader's view of a session at one instant.
package struct ReaderHead: Sendable {
    package var version: Int64
    package var isEnded: Bool
    package var snapshot: JSONValue?
}

/// Who is calling.
package enum Credential: Sendable {
    case admin
    case token(String)
    case none
}

/// Everything a command carries besides its body.
package struct CommandContext: Sendable {
    package var credential: Credential
    package var ifMatch: Int64?
    package var idempotencyKey: String?
    /// `METHOD path`, the idempotency scope.
    package var scope: String

    package init(credential: Credential, ifMatch: Int64?, idempotencyKey: String?, scope: String) {
        self.credential = credential
        self.ifMatch = ifMatch
        self.idempotencyKey = idempotencyKey
        self.scope = scope
    }
}

/// Owns one session's live state and applies its commands one at a time, in arrival order.
///
/// The actor's own isolation is not enough: it is re-entered while a commit is awaited, so a FIFO
/// turnstile keeps a second command out until the first is committed and answered. A failed commit
/// drops the live state, which the next command reloads from the store.
actor SessionActor {
    let id: SessionID
    private let environment: ServiceEnvironment
    private var live: LiveSession?
    private var isBusy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(id: SessionID, environment: ServiceEnvironment, live: LiveSession? = nil) {
        self.id = id
        self.environment = environment
        self.live = live
    }

    // MARK: - Turnstile

    private func enter() async {
        if isBusy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            isBusy = true
        }
    }

    private func leave() {
        if waiting.isEmpty {
            isBusy = false
        } else {
            waiting.removeFirst().resume()
        }
    }

    // MARK: - Commands

    /// Runs a command; nil when the session does not exist (the caller forgets this actor).
    func perform(_ command: SessionCommand, context: CommandContext) async throws -> APIResponse? {
        await enter()
        defer { leave() }
        guard let session = try await loadedSession() else { return nil }
        try authorize(context.credential, for: session)
        guard command.isMutation else { return try read(command, session: session) }
        // A retry gets its first answer even if the session has moved on or ended since.
        if let key = context.idempotencyKey,
            let record = try await environment.storeCall({ try await $0.idempotencyRecord(scope: context.scope, key: key) })
        {
            return APIResponse(replaying: record)
        }
        // An ended session still accepts a purge (deleting its history); every other mutation is 410.
        if session.record.state == .ended, !command.isPurge {
            throw APIError(.gone, "session \(id.rawValue) has ended")
        }
        if let expected = context.ifMatch, expected != session.record.version {
            throw APIError(
                .preconditionFailed,
                "session \(id.rawValue) is at version \(session.record.version), not \(expected)",
                headers: ["ETag": "\"\(session.record.version)\""])
        }
        let validator = CommandValidator(
            session: session, limits: environment.configuration.limits, newScreenID: environment.newScreenID)
        let operation = try validator.operation(for: command)
        return try await commit(operation, session: session, context: context)
    }

    private func read(_ command: SessionCommand, session: LiveSession) throws -> APIResponse {
        let etag = ["ETag": "\"\(session.record.version)\""]
        switch command {
        case .get:
            return APIResponse(status: 200, headers: etag, body: session.renderSession())
        case .getScreen(let reference):
            guard let entry = session.screen(reference: reference) else {
                throw APIError(.notFound, "no screen '\(reference)' in session \(id.rawValue)")
            }
            return APIResponse(status: 200, headers: etag, body: session.render(entry))
        default:
            preconditionFailure("not a read")
        }
    }

    private func commit(_ operation: Operation, session: LiveSession, context: CommandContext) async throws
        -> APIResponse
    {
        let seq = session.record.version + 1
        let at = Timestamp.truncated(environment.now())
        let applied = session.apply(operation, seq: seq, at: at)
        let response = Self.response(to: operation, applied: applied, session: session)
        var eventFields = applied.eventFields
        eventFields["seq"] = .integer(seq)
        eventFields["type"] = .string(applied.eventType)
        eventFields["at"] = .string(Timestamp.string(from: at))
        let event = StoredEvent(
            session: id, seq: seq, type: applied.eventType, json: JSONValue.object(eventFields).serialized(), at: at)
        var mutation = StoredMutation(session: id, event: event, changes: applied.changes)
        if let key = context.idempotencyKey {
            mutation.idempotency = IdempotencyRecord(response, scope: context.scope, key: key, at: at)
        }
        let interval = Int64(environment.configuration.snapshotInterval)
        if interval > 0, seq % interval == 0, !operation.isPurge {
            mutation.snapshot = StoredSnapshot(
                session: id, seq: seq, json: session.renderSession(includeMemory: true).serialized())
        }
        do {
            try await environment.storeCall { [mutation] in try await $0.commit(mutation) }
        } catch {
            // The live state ran ahead of the database: forget it; the next command reloads.
            live = nil
            throw error
        }
        if operation.isPurge { live = nil }
        environment.eventCommitted(event)
        return response
    }

    private static func response(to operation: Operation, applied: Applied, session: LiveSession) -> APIResponse {
        let version = JSONValue.integer(session.record.version)
        let etag = ["ETag": "\"\(session.record.version)\""]
        var body: [String: JSONValue] = ["version": version]
        var status = 200
        switch operation {
        case .push:
            status = 201
            body["screen"] = applied.eventFields["screen"]
        case .pop:
            body["popped"] = applied.eventFields["screens"]
        case .replacePath:
            body["popped"] = applied.eventFields["popped"]
            body["pushed"] = applied.eventFields["pushed"]
        case .updateValues(let screen, _, _):
            body["screen"] = session.screen(screen).map { session.render($0) }
            body["affected"] = applied.eventFields["affected"]
        case .setHandler(let screen, _, _):
            body["screen"] = session.screen(screen).map { session.render($0) }
        case .removeHandler:
            break
        case .publish:
            body["deliveries"] = applied.eventFields["deliveries"]
            body["stoppedAt"] = applied.eventFields["stoppedAt"]
        case .end:
            return APIResponse(status: 204, headers: etag, body: nil)
        }
        return APIResponse(status: status, headers: etag, body: .object(body))
    }

    // MARK: - Loading and auth

    private func loadedSession() async throws -> LiveSession? {
        if let live { return live }
        let id = self.id
        guard let stored = try await environment.storeCall({ try await $0.loadSession(id) }) else { return nil }
        let session = try LiveSession.load(stored)
        live = session
        return session
    }

    private func authorize(_ credential: Credential, for session: LiveSession) throws {
        switch credential {
        case .admin:
            return
        case .token(let token):
            // A token that could not have been issued is invalid (401); a well-formed token that
            // is not this session's belongs to another session, or to none (403, API.md Auth).
            guard IdentifierGenerator.isWellFormedToken(token) else {
                throw APIError(.unauthorized, "invalid token", headers: ["WWW-Authenticate": "Bearer"])
            }
            guard constantTimeEquals(TokenHasher.hash(token), session.record.tokenHash) else {
                throw APIError(.forbidden, "this token does not belong to session \(id.rawValue)")
            }
        case .none:
            throw APIError(
                .unauthorized, "send Authorization: Bearer <token>", errors: [],
                headers: ["WWW-Authenticate": "Bearer"])
        }
    }

    /// Where a reader stands: checks the credential and reports the session's version (and, when
    /// asked, the whole session at that version). Runs in the turnstile, so no mutation is half
    /// applied; a subscription taken before this call sees every event after `version`.
    func readerHead(credential: Credential, snapshot: Bool) async throws -> ReaderHead? {
        await enter()
        defer { leave() }
        guard let session = try await loadedSession() else { return nil }
        try authorize(credential, for: session)
        return ReaderHead(
            version: session.record.version, isEnded: session.record.state == .ended,
            snapshot: snapshot ? session.renderSession() : nil)
    }

    /// Installs a freshly created session.
    func install(_ session: LiveSession) {
        live = session
    }
}

extension APIResponse {
    /// The first answer again, from its idempotency record.
    init(replaying record: IdempotencyRecord) {
        let body = try? JSONValue(parsing: [UInt8](record.body))
        var headers = record.headers
        headers["Idempotent-Replayed"] = "true"
        self.init(status: record.status, headers: headers, body: record.body.isEmpty ? nil : body)
    }
}

extension IdempotencyRecord {
    init(_ response: APIResponse, scope: String, key: String, at: Date) {
        let body = response.body.map { Data($0.serialized().utf8) } ?? Data()
        self.init(scope: scope, key: key, status: response.status, headers: response.headers, body: body, createdAt: at)
    }
}

/// Compares two strings in time that depends only on their lengths, not on where they differ.
package func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
    let left = Array(lhs.utf8)
    let right = Array(rhs.utf8)
    guard left.count == right.count else { return false }
    var difference: UInt8 = 0
    for index in left.indices { difference |= left[index] ^ right[index] }
    return difference == 0
}
