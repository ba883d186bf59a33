import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire
import Synchronization

/// How the session service is set up.
public struct ServiceConfiguration: Sendable {
    public var limits = SessionLimits()
    /// Used when a create request carries no schema (`--schema FILE`).
    public var defaultSchema: SessionSchema = .empty
    /// A snapshot of the whole session is stored every this many events (0: never), so replay
    /// never applies more than this many events.
    public var snapshotInterval = 64

    public init() {}
}

/// Makes ids and tokens. The live generator reads the system's random source; tests may pass their own.
public struct IdentifierGenerator: Sendable {
    public var randomBytes: @Sendable (Int) -> [UInt8]

    public init(randomBytes: @escaping @Sendable (Int) -> [UInt8]) {
        self.randomBytes = randomBytes
    }

    /// 128-bit ids and 256-bit tokens from `SystemRandomNumberGenerator` (getrandom(2)).
    public static let live = IdentifierGenerator { count in
        // Eight bytes per draw: each draw from the system generator is a getrandom(2) call.
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next()) { bytes.append(contentsOf: $0) }
        }
        return Array(bytes.prefix(count))
    }

    /// Ids carry 72 random bits in 14 characters, which Swift keeps inline (no heap string per
    /// id). They only need to be unique (the store refuses a duplicate); tokens are what must be
    /// unguessable, and carry 256 bits.
    package func sessionID() -> SessionID { SessionID("s_" + Base64URL.encode(randomBytes(9))) }
    package func screenID() -> ScreenID { ScreenID("c_" + Base64URL.encode(randomBytes(9))) }
    package func token() -> String { "t_" + Base64URL.encode(randomBytes(32)) }

    /// Whether `token` has the shape `token()` gives: `t_` and 43 base64url characters.
    package static func isWellFormedToken(_ token: String) -> Bool {
        let bytes = token.utf8
        guard bytes.count == 45, token.hasPrefix("t_") else { return false }
        return bytes.dropFirst(2).allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F
        }
    }
}

package enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Base64 with the URL-safe alphabet and no padding (RFC 4648 §5).
    package static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let first = bytes[index]
            let second = index + 1 < bytes.count ? bytes[index + 1] : 0
            let third = index + 2 < bytes.count ? bytes[index + 2] : 0
            output.append(alphabet[Int(first >> 2)])
            output.append(alphabet[Int((first & 0x03) << 4 | second >> 4)])
            if index + 1 < bytes.count { output.append(alphabet[Int((second & 0x0F) << 2 | third >> 6)]) }
            if index + 2 < bytes.count { output.append(alphabet[Int(third & 0x3F)]) }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}

/// Session tokens are stored as their SHA-256, never in clear.
enum TokenHasher {
    static func hash(_ token: String) -> String { SHA256.hexDigest(of: Array(token.utf8)) }
}

/// What every session actor shares: the store, the configuration, the clock and the id generator.
/// One instance per service, shared by every session actor (a class, so that 100,000 actors hold
/// a pointer each rather than a copy).
package final class ServiceEnvironment: Sendable {
    let store: any SessionStore
    package let configuration: ServiceConfiguration
    let now: @Sendable () -> Date
    let identifiers: IdentifierGenerator
    let eventCommitted: @Sendable (StoredEvent) -> Void

    init(
        store: any SessionStore, configuration: ServiceConfiguration, now: @escaping @Sendable () -> Date,
        identifiers: IdentifierGenerator, eventCommitted: @escaping @Sendable (StoredEvent) -> Void
    ) {
        self.store = store
        self.configuration = configuration
        self.now = now
        self.identifiers = identifiers
        self.eventCommitted = eventCommitted
    }

    var newScreenID: () -> ScreenID { { [identifiers] in identifiers.screenID() } }

    /// Calls the store, turning its failures into what a client should see.
    func storeCall<T: Sendable>(_ body: @Sendable (any SessionStore) async throws -> T) async throws -> T {
        do {
            return try await body(store)
        } catch let error as StoreError where error.code == .unavailable || error.code == .closed {
            throw APIError(.unavailable, "the database cannot take requests right now", headers: ["Retry-After": "1"])
        }
    }
}

/// The sessions of one server: creates them, finds their actors (loading lazily), lists them.
///
/// ```swift
/// let service = SessionService(store: store)
/// let created = try await service.create(body: ["root": ["name": "Home"]], context: …)
/// ```
public final class SessionService: Sendable {
    package let environment: ServiceEnvironment
    /// The actors of loaded sessions, in shards so that requests to different sessions seldom
    /// meet on one lock (each shard is held only for a dictionary lookup).
    private let shards: [Shard] = (0..<64).map { _ in Shard() }

    private final class Shard: Sendable {
        let actors = Mutex<[SessionID: SessionActor]>([:])
    }

    private func shard(_ id: SessionID) -> Shard {
        var hasher = Hasher()
        hasher.combine(id)
        return shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
    }

    public init(
        store: any SessionStore,
        configuration: ServiceConfiguration = ServiceConfiguration(),
        now: @escaping @Sendable () -> Date = { Date() },
        identifiers: IdentifierGenerator = .live,
        eventCommitted: @escaping @Sendable (StoredEvent) -> Void = { _ in }
    ) {
        environment = ServiceEnvironment(
            store: store, configuration: configuration, now: now, identifiers: identifiers,
            eventCommitted: eventCommitted)
    }

    /// Sessions whose state is held in memory right now.
    public var loadedSessionCount: Int { shards.reduce(0) { $0 + $1.actors.withLock { $0.count } } }

    private func actor(for id: SessionID) -> SessionActor {
        shard(id).actors.withLock { actors in
            if let actor = actors[id] { return actor }
            let actor = SessionActor(id: id, environment: environment)
            actors[id] = actor
            return actor
        }
    }

    private func forget(_ id: SessionID, _ actor: SessionActor) {
        shard(id).actors.withLock { actors in
            if actors[id] === actor { actors[id] = nil }
        }
    }

    /// A reader's view of a session (version, ended, optional snapshot). 404 when it does not exist.
    package func readerHead(of id: SessionID, credential: Credential, snapshot: Bool) async throws -> ReaderHead {
        let actor = actor(for: id)
        guard let head = try await actor.readerHead(credential: credential, snapshot: snapshot) else {
            forget(id, actor)
            throw APIError(.notFound, "no session \(id.rawValue)")
        }
        return head
    }

    /// Runs a command on a session. 404 when it does not exist.
    package func perform(_ command: SessionCommand, on id: SessionID, context: CommandContext) async throws -> APIResponse {
        let actor = actor(for: id)
        guard let response = try await actor.perform(command, context: context) else {
            forget(id, actor)
            throw APIError(.notFound, "no session \(id.rawValue)")
        }
        if case .end(purge: true) = command { forget(id, actor) }
        return response
    }

    // MARK: - Creating

    /// Creates a session from `{"root": {"name", "values"}, "schema": {}}` (all optional).
    package func create(body: JSONValue, context: CommandContext) async throws -> APIResponse {
        if let key = context.idempotencyKey,
            let record = try await environment.storeCall({ try await $0.idempotencyRecord(scope: context.scope, key: key) })
        {
            return APIResponse(replaying: record)
        }
        guard case .object(let fields) = body else {
            throw APIError(.unprocessable, "expected a JSON object", pointer: "")
        }
        let unknown = fields.keys.filter { $0 != "root" && $0 != "schema" }.sorted()
        guard unknown.isEmpty else {
            throw APIError(
                .unprocessable, "unknown member(s): \(unknown.joined(separator: ", "))",
                errors: unknown.map { .init(pointer: "/\(pointerEscaped($0))", detail: "unknown member") })
        }
        let schema = try fields["schema"].map { json throws(APIError) in try SessionSchema(json: json) }
            ?? environment.configuration.defaultSchema
        let id = environment.identifiers.sessionID()
        let token = environment.identifiers.token()
        let at = Timestamp.truncated(environment.now())
        let record = SessionRecord(
            id: id, version: 1, state: .active, schemaJSON: schema.json.serialized(),
            tokenHash: TokenHasher.hash(token), createdAt: at, updatedAt: at)
        let session = LiveSession(record: record, schema: schema)
        let validator = CommandValidator(
            session: session, limits: environment.configuration.limits, newScreenID: environment.newScreenID)
        // The root is validated exactly as a push is.
        let operation: Operation
        do {
            operation = try validator.operation(for: .push(fields["root"] ?? [:]))
        } catch {
            // The root is checked as a push body; its pointers are inside `/root`.
            var error = error
            error.errors = error.errors.map { .init(pointer: "/root" + $0.pointer, detail: $0.detail) }
            throw error
        }
        guard case .push(let seed) = operation else { preconditionFailure("a push validates to a push") }
        let root = session.pushScreen(seed)
        let renderedRoot = session.render(root)
        let event: JSONValue = [
            "seq": 1, "type": "session.created", "at": .string(Timestamp.string(from: at)),
            "root": renderedRoot, "schema": schema.json,
        ]
        var changes: [StateChange] = [
            .insertSession(record),
            .insertScreen(
                ScreenRecord(id: root.id, session: id, index: 0, name: root.name, role: root.context.role.rawValue,
                             previous: nil)),
        ]
        for name in seed.values.keys.sorted() {
            if let value = seed.values[name] { changes.append(.setValue(root.id, key: name, json: value.serialized())) }
        }
        var body = session.renderSession()
        if case .object(var members) = body {
            members["token"] = .string(token)
            body = .object(members)
        }
        let response = APIResponse(
            status: 201, headers: ["ETag": "\"1\"", "Location": "/v1/sessions/\(id.rawValue)"], body: body)
        let stored = StoredEvent(session: id, seq: 1, type: "session.created", json: event.serialized(), at: at)
        var mutation = StoredMutation(session: id, event: stored, changes: changes)
        if let key = context.idempotencyKey {
            mutation.idempotency = IdempotencyRecord(response, scope: context.scope, key: key, at: at)
        }
        do {
            try await environment.storeCall { [mutation] in try await $0.commit(mutation) }
        } catch let error as StoreError where error.code == .conflict {
            // A concurrent create with the same idempotency key won: answer what it answered.
            if let key = context.idempotencyKey,
                let record = try await environment.storeCall({
                    try await $0.idempotencyRecord(scope: context.scope, key: key)
                })
            {
                return APIResponse(replaying: record)
            }
            throw error
        }
        await actor(for: id).install(session)
        environment.eventCommitted(stored)
        return response
    }

    // MARK: - Listing

    /// The admin list: `{"sessions": [...], "nextCursor"}`.
    package func list(limit: Int, cursor: String?) async throws -> APIResponse {
        let summaries = try await environment.storeCall {
            try await $0.sessions(after: cursor.map { SessionID($0) }, limit: limit + 1)
        }
        let page = summaries.prefix(limit)
        let items: [JSONValue] = page.map { (summary: SessionSummary) -> JSONValue in
            [
                "id": .string(summary.id.rawValue), "version": .integer(summary.version),
                "state": .string(summary.state.rawValue), "depth": .integer(Int64(summary.depth)),
                "updatedAt": .string(Timestamp.string(from: summary.updatedAt)),
            ]
        }
        let next: JSONValue = summaries.count > limit ? page.last.map { .string($0.id.rawValue) } ?? .null : .null
        return APIResponse(status: 200, body: ["sessions": .array(items), "nextCursor": next])
    }
}
