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
    /// How long a stream ticket (`POST /v1/tickets`) can open a stream after it is issued.
    public var ticketLifetime: Duration = .seconds(60)
    /// The secret stream tickets are signed with (the admin token, so that every server sharing
    /// it accepts the others' tickets); nil for a random one, good for this process only.
    public var ticketSecret: String?
    /// Observer tokens one session may have, and tokens for every session there may be.
    public var maxObserversPerScope = 100
    /// The most events an import or a fork copies into its new session.
    public var maxCopiedEvents = 100_000

    public init() {}
}

/// What every session actor shares: the store, the configuration, the clock and the id generator.
/// One instance per service, shared by every session actor (a class, so that 100,000 actors hold
/// a pointer each rather than a copy).
final class ServiceEnvironment: Sendable {
    let store: any SessionStore
    let configuration: ServiceConfiguration
    let now: @Sendable () -> Date
    let identifiers: IdentifierGenerator
    /// Called once each event is committed, with its stored row and its typed form.
    let eventCommitted: @Sendable (StoredEvent, RecordedEvent) -> Void
    let tickets: StreamTicketSigner

    init(
        store: any SessionStore, configuration: ServiceConfiguration, now: @escaping @Sendable () -> Date,
        identifiers: IdentifierGenerator, eventCommitted: @escaping @Sendable (StoredEvent, RecordedEvent) -> Void
    ) {
        self.store = store
        self.configuration = configuration
        self.now = now
        self.identifiers = identifiers
        self.eventCommitted = eventCommitted
        tickets = StreamTicketSigner(
            secret: configuration.ticketSecret ?? Base64URL.encode(identifiers.randomBytes(32)))
    }

    var newScreenID: () -> ScreenID { { [identifiers] in identifiers.screenID() } }

    /// A session about to be created: its first event and the rows it writes.
    struct NewSession {
        var session: LiveSession
        var event: RecordedEvent
        var mutation: StoredMutation
        var created: CreatedSession
    }

    /// A new session with a fresh id and token, `schema`, and a root validated exactly as a push
    /// body is (`{"name", "values"}`), created at `at`.
    func newSession(
        schema: SessionSchema, root body: JSONValue, at: Date, origin: SessionOrigin? = nil
    ) throws -> sending NewSession {
        let id = identifiers.sessionID()
        let token = identifiers.token()
        let record = SessionRecord(
            id: id, version: 1, state: .active, schemaJSON: schema.json.serialized(),
            tokenHash: TokenHasher.hash(token), createdAt: at, updatedAt: at, origin: origin)
        let session = LiveSession(record: record, schema: schema)
        let validator = CommandValidator(session: session, limits: configuration.limits, newScreenID: newScreenID)
        let seed = try validator.root(body)
        let root = try session.pushScreen(seed)
        var changes: [StateChange] = [
            .insertSession(record),
            .insertScreen(
                ScreenRecord(
                    id: root.id, session: id, index: 0, name: root.element, role: root.context.role.rawValue,
                    previous: nil)),
        ]
        for name in seed.values.keys.sorted() {
            if let value = seed.values[name] { changes.append(.setValue(root.id, key: name, json: value.serialized())) }
        }
        let event = RecordedEvent(
            seq: 1, at: at, event: .sessionCreated(root: session.resource(of: root), schema: schema.json))
        return NewSession(
            session: session, event: event,
            mutation: StoredMutation(session: id, event: StoredEvent(event, session: id), changes: changes),
            created: CreatedSession(session: session.resource(), token: token))
    }
}

/// What creating a session answers: the session and its token, or the first answer again for a
/// retried idempotency key.
package enum CreateOutcome: Sendable {
    case created(CreatedSession)
    case replayed(StoredAnswer)
}

/// The sessions of one server: creates them, finds their actors (loading lazily), lists them.
///
/// ```swift
/// let service = SessionService(store: store)
/// let outcome = try await service.create(body: ["root": ["name": "Home"]], idempotency: nil)
/// ```
///
/// Its errors are `SessionError` (what the client asked for does not fit), `StoreError` (the
/// database cannot take it now) and `CorruptSessionError` (stored data does not load).
public final class SessionService: Sendable {
    let environment: ServiceEnvironment
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

    /// Creates the service. `eventCommitted` is called once each event is committed (the event
    /// hub's `publish`).
    public init(
        store: any SessionStore,
        configuration: ServiceConfiguration = ServiceConfiguration(),
        now: @escaping @Sendable () -> Date = { Date() },
        identifiers: IdentifierGenerator = .live,
        eventCommitted: @escaping @Sendable (StoredEvent, RecordedEvent) -> Void = { _, _ in }
    ) {
        environment = ServiceEnvironment(
            store: store, configuration: configuration, now: now, identifiers: identifiers,
            eventCommitted: eventCommitted)
    }

    /// The configuration the service was created with.
    public var configuration: ServiceConfiguration { environment.configuration }

    /// The store the service reads and writes.
    public var store: any SessionStore { environment.store }

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

    private func notFound(_ id: SessionID) -> SessionError {
        SessionError(.notFound, "no session \(id.rawValue)")
    }

    // MARK: - One session

    /// Answers a read of a session. `.notFound` when it does not exist.
    package func read(_ query: SessionQuery, of id: SessionID, credential: Credential) async throws
        -> SessionQuery.Result
    {
        let actor = actor(for: id)
        guard let result = try await actor.read(query, credential: credential) else {
            forget(id, actor)
            throw notFound(id)
        }
        return result
    }

    /// A reader's view of a session (version, ended, optional snapshot). `.notFound` when it does
    /// not exist.
    package func readerHead(of id: SessionID, credential: Credential, snapshot: Bool) async throws -> ReaderHead {
        let actor = actor(for: id)
        guard let head = try await actor.readerHead(credential: credential, snapshot: snapshot) else {
            forget(id, actor)
            throw notFound(id)
        }
        return head
    }

    /// Runs a command on a session. `.notFound` when it does not exist.
    package func perform(_ command: SessionCommand, on id: SessionID, context: CommandContext) async throws
        -> CommandOutcome
    {
        let actor = actor(for: id)
        guard let outcome = try await actor.perform(command, context: context) else {
            forget(id, actor)
            throw notFound(id)
        }
        if command.isPurge { forget(id, actor) }
        return outcome
    }

    /// Another instance committed event `seq` of session `id` (a shared store's notice): a loaded
    /// copy behind it is dropped, so the next request reloads it.
    package func sessionMovedOn(_ id: SessionID, to seq: Int64) async {
        let loaded = shard(id).actors.withLock { $0[id] }
        await loaded?.movedOn(to: seq)
    }

    // MARK: - Creating

    /// Creates a session from `{"root": {"name", "values"}, "schema": {}}` (all optional).
    package func create(body: JSONValue, idempotency: Idempotency<CreatedSession>?) async throws -> CreateOutcome {
        if let idempotency,
            let record = try await environment.store.idempotencyRecord(scope: idempotency.scope, key: idempotency.key)
        {
            return .replayed(StoredAnswer(record))
        }
        guard case .object(let fields) = body else {
            throw SessionError(.invalid, "expected a JSON object", pointer: "")
        }
        let unknown = fields.keys.filter { $0 != "root" && $0 != "schema" }.sorted()
        guard unknown.isEmpty else {
            throw SessionError(
                .invalid, "unknown member(s): \(unknown.joined(separator: ", "))",
                fieldErrors: unknown.map { .init(pointer: "/\(JSONPointer.escaped($0))", detail: "unknown member") })
        }
        let schema =
            try fields["schema"].map { json throws(SessionError) in try SessionSchema(json: json) }
            ?? environment.configuration.defaultSchema
        let new = try environment.newSession(
            schema: schema, root: fields["root"] ?? [:], at: Timestamp.truncated(environment.now()))
        let (session, event, created) = (new.session, new.event, new.created)
        var mutation = new.mutation
        if let idempotency {
            mutation.idempotency = idempotency.record(created).record(
                scope: idempotency.scope, key: idempotency.key, at: event.at)
        }
        do {
            try await environment.store.commit(mutation)
        } catch let error as StoreError where error.code == .conflict {
            // A concurrent create with the same idempotency key won: answer what it answered.
            if let idempotency,
                let record = try await environment.store.idempotencyRecord(
                    scope: idempotency.scope, key: idempotency.key)
            {
                return .replayed(StoredAnswer(record))
            }
            throw error
        }
        await actor(for: session.id).install(session)
        environment.eventCommitted(mutation.event, event)
        return .created(created)
    }

    /// Installs a session just committed (created, imported or forked) in its actor.
    func install(_ session: sending LiveSession) async {
        await actor(for: session.id).install(session)
    }

    // MARK: - Listing

    /// The admin list, ordered by id, `limit` at a time from after `cursor`.
    package func list(limit: Int, cursor: SessionID?) async throws -> SessionList {
        let summaries = try await environment.store.sessions(after: cursor, limit: limit + 1)
        let page = Array(summaries.prefix(limit))
        return SessionList(sessions: page, nextCursor: summaries.count > limit ? page.last?.id : nil)
    }
}
