import Foundation
import NavigationValues
import NavigationValuesWire

/// The storage contract the session API is written against.
///
/// SQLite (`SQLiteSessionStore`) is the embedded default, its file served by one process;
/// PostgreSQL (`PostgresSessionStore`) is shared by any number of server instances. Every method
/// is safe to call from any task.
///
/// JSON travels through the store as text: the store never interprets a value, it keeps it so
/// that an operator can read it with the `sqlite3` shell and the API can decode it again.
public protocol SessionStore: Sendable {
    /// Commits one mutation (its event, its state changes, its idempotency record and snapshot)
    /// atomically. Returns only once that commit is durable under the configured sync mode.
    /// Concurrent calls may share one transaction (group commit); a failing mutation fails only
    /// its own call and leaves nothing behind.
    ///
    /// The changes apply in order, then the event and snapshot are appended, then the
    /// idempotency record is kept. A mutation that purges its own session stores no event and
    /// no snapshot, and deletes the session's idempotency records; its own record is kept,
    /// attached to no session, until it expires.
    ///
    /// A mutation of an existing session (one whose changes do not insert it) is conditional on
    /// the version it was made from: the session must still be at `event.seq - 1` when it
    /// commits, whoever else writes the database.
    ///
    /// - Throws: `StoreError`: `.conflict` when the session is no longer at `event.seq - 1`
    ///   (another writer moved it on: reload and retry), when `event.seq` already exists for the
    ///   session, when a session or screen id is taken, or when an unexpired idempotency record
    ///   exists under the same scope and key; `.invalidData` when a change targets a row that does not exist
    ///   (updating an unknown session, remembering a delivery without a handler, a screen of an
    ///   unknown session) or a JSON text is not valid JSON; `.unavailable` when the database
    ///   cannot write now; `.closed` after the store was closed.
    func commit(_ mutation: StoredMutation) async throws

    /// Commits several mutations in one transaction: all of them or none (an imported or forked
    /// session and its whole copied history). They apply in order, as `commit(_:)` applies one.
    ///
    /// - Throws: `StoreError`, as `commit(_:)`; nothing is kept when any of them fails.
    func commitAll(_ mutations: [StoredMutation]) async throws

    /// The whole current state of a session, or nil when it does not exist (or was purged).
    func loadSession(_ id: SessionID) async throws -> StoredSession?

    /// Events of a session with `seq > after`, oldest first, at most `limit`.
    func events(of id: SessionID, after: Int64, limit: Int) async throws -> [StoredEvent]

    /// Events of a session with `seq > after`, oldest first: at most `limit`, and no more JSON
    /// than `maxBytes` together, except that the first event is always included, whatever its
    /// size. The page is cut from the events' stored sizes before their JSON is read, so a read
    /// holds about one page of bytes, however large the events after it.
    func eventPage(of id: SessionID, after: Int64, limit: Int, maxBytes: Int) async throws -> EventPage

    /// The session's token hash, state, version and compacted seq; nil when it does not exist.
    /// One small read of the session's row: a request with another session's token loads nothing.
    func access(to id: SessionID) async throws -> SessionAccess?

    /// The newest snapshot of a session taken at or before `seq`, if any.
    func snapshot(of id: SessionID, atOrBefore seq: Int64) async throws -> StoredSnapshot?

    /// Sessions ordered by id, starting after `cursor`, at most `limit`.
    func sessions(after cursor: SessionID?, limit: Int) async throws -> [SessionSummary]

    /// The first answer recorded under an idempotency key in a scope, if still kept
    /// (records older than 24 h count as absent).
    func idempotencyRecord(scope: String, key: String) async throws -> IdempotencyRecord?

    /// Whether a session of this id was purged (its history deleted), as opposed to never existing.
    func wasPurged(_ id: SessionID) async throws -> Bool

    /// Waits for this writer's turn on a session, in the database, until `deadline`: the
    /// session as stored once every writer before it is done, and a turn to commit one mutation
    /// made from it, which no other writer can move on meanwhile (a writer on a shared database
    /// waits for the session's row, which the turn holds until it ends). For a writer whose
    /// commit met a conflict: it reloads in its turn and never meets one again.
    ///
    /// - Throws: `StoreError`: `.conflict` when the turn did not come by `deadline` (other
    ///   writers kept the session); `.unavailable` when the database cannot be reached.
    func beginTurn(on id: SessionID, until deadline: ContinuousClock.Instant) async throws -> any SessionTurn

    /// Fails when the database cannot take a write right now (for `/readyz`).
    func checkWritable() async throws

    /// The session's version as stored now, or nil when it does not exist: one cheap read, for
    /// an instance to check that its loaded copy is not stale.
    func version(of id: SessionID) async throws -> Int64?

    /// Whether other processes may write the same database (several server instances): then a
    /// loaded session may be stale, and ``commitNotices()`` tells of their commits.
    var isShared: Bool { get }

    /// Other processes' commits, as they become visible (PostgreSQL's `LISTEN/NOTIFY`); a
    /// finished stream when the store is not shared. One consumer; call it once.
    func commitNotices() -> AsyncStream<CommitNotice>

    /// The write figures so far (commit latency, batch sizes), for `/metrics`.
    var metrics: StoreMetrics { get }

    /// Finishes every queued commit, then closes the connections. Later calls fail with `.closed`.
    func close() async

    /// Gives a store that writes state behind its log (``WriteBehind``) the way to bring a
    /// session's state up to its log: the session layer's replay of its events. Call it once,
    /// before serving.
    func replayStates(using replayer: @escaping StateReplayer)

    // MARK: Observer tokens

    /// Keeps a new observer token (and the idempotency record of the request that issued it, in
    /// the same transaction), unless its scope (its session, or every session when it has none)
    /// already holds `limit` tokens unexpired at `now`: then it returns false and keeps nothing.
    /// The scope's expired tokens are deleted on the way.
    ///
    /// - Throws: `StoreError`: `.conflict` when the id or token hash is taken, or an unexpired
    ///   idempotency record exists under the same scope and key; `.invalidData` when its session
    ///   does not exist.
    func insertObserver(
        _ observer: ObserverRecord, limit: Int, now: Date, idempotency: IdempotencyRecord?
    ) async throws -> Bool

    /// The observer token with this hash, if any (expired or not: the caller decides).
    func observer(tokenHash: String) async throws -> ObserverRecord?

    /// The observer token with this id, if any (expired or not).
    func observer(id: ObserverID) async throws -> ObserverRecord?

    /// Observer tokens ordered by id, after `cursor`, at most `limit` (expired ones included):
    /// those of one session, or with `session` nil every one.
    func observers(of session: SessionID?, after cursor: ObserverID?, limit: Int) async throws -> [ObserverRecord]

    /// Deletes (revokes) an observer token; false when there was none.
    func deleteObserver(_ id: ObserverID) async throws -> Bool

    // MARK: Hand-offs

    /// Keeps a new hand-off unless its session already has `limit` unused ones unexpired at
    /// `now`: then it returns false and keeps nothing. The session's expired hand-offs are
    /// deleted on the way.
    ///
    /// - Throws: `StoreError`: `.conflict` when the id is taken; `.invalidData` when its session
    ///   does not exist.
    func insertHandoff(_ handoff: HandoffRecord, limit: Int, now: Date) async throws -> Bool

    /// The hand-off with this id, used or not, expired or not; nil when there is none.
    func handoff(id: String) async throws -> HandoffRecord?

    /// Uses the hand-off `id` at `at`, atomically: of several calls (on any instance sharing the
    /// database) at most one gets `.consumed`. With `device`, the device token is kept in the
    /// same transaction, unless the session already has `maxDevices` (then nothing changes).
    func consumeHandoff(_ id: String, at: Date, device: DeviceTokenRecord?, maxDevices: Int) async throws
        -> HandoffConsumption

    /// The session a device token (by its hash) may use; nil when there is none.
    func deviceTokenSession(tokenHash: String) async throws -> SessionID?
}

/// The state changes that `events` (the session's log after its stored state, in order) make to
/// `session` (as stored), as a live request applying each of them would have written them.
public typealias StateReplayer = @Sendable (_ session: StoredSession, _ events: [StoredEvent]) throws -> [StateChange]

extension SessionStore {
    /// A store that writes every state change in its mutation's transaction replays nothing.
    public func replayStates(using replayer: @escaping StateReplayer) {}
}

/// One writer's turn on a session (``SessionStore/beginTurn(on:until:)``). End it (``end()``)
/// on every path: while it lasts, the session's other writers wait.
public protocol SessionTurn: Sendable {
    /// The session as stored when the turn began; nil when it does not exist (or was purged).
    var session: StoredSession? { get }
    /// Commits `mutation` (made from ``session``) as ``SessionStore/commit(_:)`` does, and ends
    /// the turn.
    func commit(_ mutation: StoredMutation) async throws
    /// Ends the turn without writing (nothing once it committed), letting the next writer in.
    func end() async
}

/// A commit made by another process on a shared database.
public enum CommitNotice: Sendable, Equatable {
    /// Event `seq` of `session` was committed (read it from ``SessionStore/events(of:after:limit:)``).
    /// A purge stores no event, so its `session.ended` event comes along in `purge`.
    case committed(session: SessionID, seq: Int64, purge: StoredEvent?)
    /// Notices may have been lost (the listening connection was down): re-read what you follow.
    case mayHaveMissed
}

/// One row of `observer_tokens`: a read-only token of one session or of every session.
public struct ObserverRecord: Sendable, Equatable {
    public var id: ObserverID
    /// The session it may read; nil for every session.
    public var session: SessionID?
    /// SHA-256 of the token, hex; the token itself is never stored.
    public var tokenHash: String
    public var label: String
    public var createdAt: Date
    /// When it stops working; nil for never.
    public var expiresAt: Date?

    public init(
        id: ObserverID, session: SessionID?, tokenHash: String, label: String, createdAt: Date, expiresAt: Date?
    ) {
        self.id = id
        self.session = session
        self.tokenHash = tokenHash
        self.label = label
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

// MARK: - Rows

/// One row of `sessions`.
public struct SessionRecord: Sendable, Equatable {
    public var id: SessionID
    public var version: Int64
    public var state: SessionState
    /// The session's schema as JSON text (`{}` when none).
    public var schemaJSON: String
    /// SHA-256 of the session token, hex; the token itself is never stored.
    public var tokenHash: String
    public var createdAt: Date
    public var updatedAt: Date
    /// For a fork, the session and version it was forked from.
    public var origin: SessionOrigin?
    /// Events up to and including this seq were compacted away (0: none); written by history
    /// compaction only, never by a mutation.
    public var compactedSeq: Int64

    public init(
        id: SessionID, version: Int64, state: SessionState, schemaJSON: String, tokenHash: String,
        createdAt: Date, updatedAt: Date, origin: SessionOrigin? = nil, compactedSeq: Int64 = 0
    ) {
        self.id = id
        self.version = version
        self.state = state
        self.schemaJSON = schemaJSON
        self.tokenHash = tokenHash
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.origin = origin
        self.compactedSeq = compactedSeq
    }
}

/// One row of `screen_contexts`: a screen of one of a session's stacks, with its links.
public struct ScreenRecord: Sendable, Equatable {
    public var id: ScreenID
    public var session: SessionID
    /// Position in its stack, 0 for the stack's root.
    public var index: Int
    public var name: String
    /// `screen` or `navigationStack`.
    public var role: String
    /// The screen below it; for the root of a presentation, its presenter.
    public var previous: ScreenID?
    /// The stack it is on: `main`, a tab or a presentation (docs/Stacks.md).
    public var stack: StackID

    public init(
        id: ScreenID, session: SessionID, index: Int, name: String, role: String, previous: ScreenID?,
        stack: StackID = .main
    ) {
        self.id = id
        self.session = session
        self.index = index
        self.name = name
        self.role = role
        self.previous = previous
        self.stack = stack
    }
}

/// One row of `screen_stacks`: a stack of a session besides its main one (a tab or a presentation).
public struct StackRecord: Sendable, Equatable {
    public var id: StackID
    public var session: SessionID
    /// From 1, unique within the session: the tabs' order among the tabs (a tab added comes last,
    /// `setStackPosition` reorders them), and among the presentations the order they came in (a
    /// presentation's presenter's stack comes first).
    public var position: Int
    /// `tab`, `sheet` or `fullScreenCover` (never `main`, which has no row).
    public var kind: StackKind
    /// The screen presenting it; nil for a tab.
    public var presenter: ScreenID?

    public init(id: StackID, session: SessionID, position: Int, kind: StackKind, presenter: ScreenID?) {
        self.id = id
        self.session = session
        self.position = position
        self.kind = kind
        self.presenter = presenter
    }
}

/// One row of `preference_handlers`, with the handler's memory (docs/SEMANTICS.md §3).
public struct HandlerRecord: Sendable, Equatable {
    public var passBack: Bool
    /// The last value this handler received since it was set, JSON text; nil when none yet.
    public var lastValueJSON: String?
    /// The value it passed on last time (JSON text), nil when it stopped or saw nothing.
    public var lastPassedJSON: String?

    public init(passBack: Bool, lastValueJSON: String? = nil, lastPassedJSON: String? = nil) {
        self.passBack = passBack
        self.lastValueJSON = lastValueJSON
        self.lastPassedJSON = lastPassedJSON
    }
}

/// A screen with everything stored on it.
public struct StoredScreen: Sendable, Equatable {
    public var record: ScreenRecord
    /// Local value overrides: key → JSON text.
    public var values: [String: String]
    public var handlers: [String: HandlerRecord]
    /// Last received preference per key: key → JSON text.
    public var preferences: [String: String]

    public init(
        record: ScreenRecord, values: [String: String] = [:], handlers: [String: HandlerRecord] = [:],
        preferences: [String: String] = [:]
    ) {
        self.record = record
        self.values = values
        self.handlers = handlers
        self.preferences = preferences
    }
}

/// A whole session as stored: its row, its screens (the main stack's first, each stack's root
/// first), its other stacks by position, and the selected stack.
public struct StoredSession: Sendable, Equatable {
    public var record: SessionRecord
    public var screens: [StoredScreen]
    /// Tabs and presentations, by `position`.
    public var stacks: [StackRecord]
    /// `main` or a tab.
    public var selectedStack: StackID

    public init(
        record: SessionRecord, screens: [StoredScreen], stacks: [StackRecord] = [], selectedStack: StackID = .main
    ) {
        self.record = record
        self.screens = screens
        self.stacks = stacks
        self.selectedStack = selectedStack
    }
}

/// A row of the append-only event log.
public struct StoredEvent: Sendable, Equatable {
    public var session: SessionID
    /// Per-session sequence number; 1 is `session.created`; equals the version after it.
    public var seq: Int64
    /// `screen.pushed`, `values.updated`, … (docs/API.md, Events).
    public var type: String
    /// The whole event as one line of JSON text.
    public var json: String
    public var at: Date

    public init(session: SessionID, seq: Int64, type: String, json: String, at: Date) {
        self.session = session
        self.seq = seq
        self.type = type
        self.json = json
        self.at = at
    }
}

/// The whole session as JSON text right after event `seq`, to make replay fast.
public struct StoredSnapshot: Sendable, Equatable {
    public var session: SessionID
    public var seq: Int64
    public var json: String

    public init(session: SessionID, seq: Int64, json: String) {
        self.session = session
        self.seq = seq
        self.json = json
    }
}

/// The first answer given under an `Idempotency-Key`, replayed on retries for 24 h.
///
/// The store keeps what it is given: the session service passes a hash of the client's key as
/// `key` and the answer sealed under the client's key as `body`, so the file never holds a
/// usable token (a create's answer carries one).
public struct IdempotencyRecord: Sendable, Equatable {
    /// e.g. `POST /v1/sessions/s_1/push`, or `POST /v1/sessions` for creation.
    public var scope: String
    public var key: String
    public var status: Int
    /// Response headers worth replaying (`Location`, `ETag`), name → value.
    public var headers: [String: String]
    public var body: Data
    public var createdAt: Date
    /// The session the answer belongs to: the record is deleted with it (nil: none).
    public var session: SessionID?

    public init(
        scope: String, key: String, status: Int, headers: [String: String], body: Data, createdAt: Date,
        session: SessionID? = nil
    ) {
        self.scope = scope
        self.key = key
        self.status = status
        self.headers = headers
        self.body = body
        self.createdAt = createdAt
        self.session = session
    }
}

// MARK: - Mutations

/// One change to the stored state of a session, applied in order inside the mutation's transaction.
public enum StateChange: Sendable, Equatable {
    case insertSession(SessionRecord)
    case updateSession(SessionID, version: Int64, state: SessionState, updatedAt: Date)
    case insertScreen(ScreenRecord)
    /// Deletes screens with their values, handlers and received preferences. A screen whose
    /// `previous` links to a deleted one must be deleted in the same change (`.invalidData`).
    case deleteScreens([ScreenID])
    case setValue(ScreenID, key: String, json: String)
    case removeValue(ScreenID, key: String)
    /// Sets (or replaces, forgetting its memory) a handler.
    case setHandler(ScreenID, key: String, passBack: Bool)
    case removeHandler(ScreenID, key: String)
    /// Records what a handler received and what it passed on (nil: stopped).
    case rememberDelivery(ScreenID, key: String, valueJSON: String, passedJSON: String?)
    /// The screen's last received value for a key (kept after its handler goes).
    case setReceivedPreference(ScreenID, key: String, json: String)
    /// Deletes every event, snapshot, state row and idempotency record of the session, keeping
    /// nothing (not even the purging mutation's own event) but a tombstone of its id.
    case purgeSession(SessionID)
    /// Adds a tab or a presentation; a presentation's presenter must be stored already.
    case insertStack(StackRecord)
    /// Deletes stack rows (not their screens: delete those with `deleteScreens` after this, since a
    /// stack row links to its presenter).
    case deleteStacks(SessionID, [StackID])
    /// Records the selected stack (`main` or a tab).
    case selectStack(SessionID, StackID)
    /// Gives a tab another `position` (`StackRecord.position`), when the tabs change order.
    case setStackPosition(SessionID, StackID, position: Int)
}

/// Everything one API mutation writes, committed in one transaction.
public struct StoredMutation: Sendable, Equatable {
    public var session: SessionID
    /// The event this mutation appends; its `seq` must be the next of the session.
    public var event: StoredEvent
    public var changes: [StateChange]
    public var idempotency: IdempotencyRecord?
    public var snapshot: StoredSnapshot?

    public init(
        session: SessionID, event: StoredEvent, changes: [StateChange], idempotency: IdempotencyRecord? = nil,
        snapshot: StoredSnapshot? = nil
    ) {
        self.session = session
        self.event = event
        self.changes = changes
        self.idempotency = idempotency
        self.snapshot = snapshot
    }
}
