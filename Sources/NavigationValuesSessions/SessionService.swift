import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// How the session service is set up.
public struct ServiceConfiguration: Sendable {
    public var limits = SessionLimits()
    /// Used when a create request carries no schema (`--schema FILE`).
    public var defaultSchema: SessionSchema = .empty
    /// A snapshot of the whole session is stored every this many events (0: never), so replay
    /// never applies more than this many events.
    public var snapshotInterval = 64
    /// The most sessions held in memory. Past it, the least recently used sessions that no
    /// request holds are unloaded; they load again from the store on their next request, exactly
    /// as after a restart.
    public var maxLoadedSessions = 10_000
    /// The most loaded sessions kept in their full form (the hot set). Past it, the least
    /// recently used that no request holds are kept as one compact buffer of what their stored
    /// rows hold (about a sixth of the memory), and rebuilt from it, without the store, on their
    /// next request. A session holding state its rows do not (a preference's walk, for
    /// `?explain`) stays full. The default keeps the sessions of a busy server's working set at
    /// full speed (a rebuild costs about 30 µs for five screens) for about 37 MB of full trees.
    public var maxHotSessions = 10_000
    /// How long a stream ticket (`POST /v1/tickets`) can open a stream after it is issued.
    public var ticketLifetime: Duration = .seconds(60)
    /// The secret stream tickets are signed with (the admin token, so that every server sharing
    /// it accepts the others' tickets); nil for a random one, good for this process only.
    public var ticketSecret: String?
    /// Observer tokens one session may have, and tokens for every session there may be.
    public var maxObserversPerScope = 100
    /// The most events an import or a fork copies into its new session.
    public var maxCopiedEvents = 100_000
    /// The most bytes of Swift source an export as a test (`?format=swift-testing`) may write.
    public var maxTestExportBytes = 2 * 1024 * 1024
    /// How long a command whose commit met a conflict (other instances writing the same session)
    /// waits for its turn in the database before it is refused (503). PostgreSQL's statement
    /// timeout (`PostgresDriver.Configuration.statementTimeout`, 10 s) ends a longer wait.
    public var maxWriteWait: Duration = .seconds(10)
    /// How long a hand-off code (`POST /v1/sessions/{id}/handoff`) can be redeemed after it is made.
    public var handoffLifetime: Duration = .seconds(300)
    /// Unused, unexpired hand-offs one session may have at once.
    public var maxHandoffsPerSession = 5
    /// Device tokens (redeemed hand-offs) one session may have.
    public var maxDevicesPerSession = 16

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
    let handoffCodes: HandoffCodeSigner
    /// Loaded sessions' rendered JSON for reads that need no actor; none on a shared store.
    let readCache: SessionReadCache?

    init(
        store: any SessionStore, configuration: ServiceConfiguration, now: @escaping @Sendable () -> Date,
        identifiers: IdentifierGenerator, eventCommitted: @escaping @Sendable (StoredEvent, RecordedEvent) -> Void
    ) {
        self.store = store
        self.configuration = configuration
        self.now = now
        self.identifiers = identifiers
        self.eventCommitted = eventCommitted
        readCache = store.isShared ? nil : SessionReadCache()
        // A store that writes state behind its log brings a state left behind up to it with the
        // same `apply` as live requests.
        store.replayStates(using: LiveSession.replayedChanges)
        let secret = configuration.ticketSecret ?? Base64URL.encode(identifiers.randomBytes(32))
        tickets = StreamTicketSigner(secret: secret)
        handoffCodes = HandoffCodeSigner(secret: secret)
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

/// The sessions of one server, by concern: `sessions` (the loaded sessions, admission, every read
/// and change of one session, creation and the list), `access` (observer tokens and stream
/// tickets), `copies` (import, fork, and the history an export writes) and `retention` (idle
/// sessions ended, old ones purged, history compacted). They share one `ServiceEnvironment`.
///
/// ```swift
/// let service = SessionService(store: store)
/// let outcome = try await service.sessions.create(body: ["root": ["name": "Home"]], idempotency: nil)
/// ```
public final class SessionService: Sendable {
    let environment: ServiceEnvironment
    /// The loaded sessions and who may reach them; every read and change of one session.
    package let sessions: SessionRegistry
    /// Read-only credentials: observer tokens and stream tickets.
    package let access: SessionAccess
    /// New sessions made of recorded histories (import, fork), and the pages an export writes.
    package let copies: SessionCopies
    /// What old data goes away, and when.
    public let retention: SessionRetention
    /// Hand-offs: codes that let another device continue a session (or a fork of it).
    package let handoffs: SessionHandoffs

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
        sessions = SessionRegistry(environment: environment)
        access = SessionAccess(environment: environment, sessions: sessions)
        copies = SessionCopies(environment: environment, sessions: sessions)
        retention = SessionRetention(environment: environment, sessions: sessions)
        handoffs = SessionHandoffs(environment: environment, sessions: sessions, copies: copies)
    }

    /// The configuration the service was created with.
    public var configuration: ServiceConfiguration { environment.configuration }

    /// The store the service reads and writes.
    public var store: any SessionStore { environment.store }

    /// Sessions whose state is held in memory right now (with those being loaded).
    public var loadedSessionCount: Int { sessions.loadedCount }
    /// Loaded sessions in their full form (at most about `maxHotSessions` of them).
    public var hotSessionCount: Int { sessions.hotCount }
}
