import Foundation
import NavigationValues
import NavigationValuesCrypto
import NavigationValuesStore
import NavigationValuesWire
import Synchronization

/// The sessions of one server held in memory, one `SessionActor` each, and who may reach them:
/// creates sessions, finds their actors (loading lazily, unloading the least recently used past
/// `maxLoadedSessions`), checks a credential as far as it can before loading anything, and runs
/// every read and change of one session through its actor; lists them.
///
/// ```swift
/// let outcome = try await service.sessions.create(body: ["root": ["name": "Home"]], idempotency: nil)
/// ```
///
/// Its errors are `SessionError` (what the client asked for does not fit), `StoreError` (the
/// database cannot take it now) and `CorruptSessionError` (stored data does not load).
package final class SessionRegistry: Sendable {
    let environment: ServiceEnvironment
    /// The actors of loaded sessions, in shards so that requests to different sessions seldom
    /// meet on one lock (each shard is held only for a dictionary lookup).
    private let shards: [Shard] = (0..<64).map { _ in Shard() }
    /// Actors in the shards.
    private let loaded = Atomic<Int>(0)
    /// Counts requests taking actors: the order of use, for unloading.
    private let tick = Atomic<UInt64>(0)
    private let isUnloading = Atomic<Bool>(false)
    /// Loaded sessions held in their full form (the hot set); the others are dormant.
    private let hotSessions = HotSessionCount()
    private let isCompacting = Atomic<Bool>(false)
    /// Full sessions the last compaction left hot because they hold state their stored form
    /// does not: the set may exceed its bound by them without every request starting a scan.
    private let keptHot = Atomic<Int>(0)

    private final class Shard: Sendable {
        let actors = Mutex<[SessionID: SessionActor]>([:])
    }

    private func shard(_ id: SessionID) -> Shard {
        var hasher = Hasher()
        hasher.combine(id)
        return shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
    }

    init(environment: ServiceEnvironment) {
        self.environment = environment
    }

    /// Sessions whose state is held in memory right now (with those being loaded).
    package var loadedCount: Int { loaded.load(ordering: .relaxed) }

    /// Loaded sessions in their full form; the rest of `loadedCount` are in their compact form.
    package var hotCount: Int { hotSessions.value }

    /// Whether the session is held in memory in its full form now (false when dormant or not loaded).
    func isHot(_ id: SessionID) -> Bool {
        shard(id).actors.withLock { $0[id]?.isHot.load(ordering: .relaxed) ?? false }
    }

    /// Whether the session is held in memory now.
    func isLoaded(_ id: SessionID) -> Bool {
        shard(id).actors.withLock { $0[id] != nil }
    }

    // MARK: - Taking and releasing actors

    /// The session's actor, held for one request: counted in `activeRequests` under the shard's
    /// lock, so that unloading (which checks it under the same lock) never takes an actor a
    /// request is about to use. Release it with `release(_:)`.
    private func take(_ id: SessionID) -> SessionActor {
        let now = environment.now().millisecondsSince1970
        let (actor, isNew) = shard(id).actors.withLock { actors -> (SessionActor, Bool) in
            var isNew = false
            let actor: SessionActor
            if let existing = actors[id] {
                actor = existing
            } else {
                actor = SessionActor(id: id, environment: environment, hotSessions: hotSessions)
                actors[id] = actor
                isNew = true
            }
            actor.activeRequests.add(1, ordering: .relaxed)
            actor.lastUsedTick.store(tick.add(1, ordering: .relaxed).newValue, ordering: .relaxed)
            actor.lastUsedMilliseconds.store(now, ordering: .relaxed)
            return (actor, isNew)
        }
        if isNew, loaded.add(1, ordering: .relaxed).newValue > environment.configuration.maxLoadedSessions {
            unloadLeastRecentlyUsed()
        }
        return actor
    }

    private func release(_ actor: SessionActor) {
        actor.activeRequests.subtract(1, ordering: .relaxed)
        if hotCount > environment.configuration.maxHotSessions + keptHot.load(ordering: .relaxed) {
            compactLeastRecentlyUsed()
        }
    }

    /// Runs `body` with the session's actor, after checking the credential as far as can be
    /// done without loading the session; nil from `body` means the session does not exist.
    private func withActor<T>(
        _ id: SessionID, credential: Credential, _ body: (SessionActor) async throws -> T?
    ) async throws -> T {
        try await admit(credential, to: id)
        let actor = take(id)
        defer { release(actor) }
        guard let result = try await body(actor) else {
            forget(id, actor)
            throw notFound(id)
        }
        return result
    }

    /// Authentication before existence, and the token before loading: a missing or malformed
    /// token is 401 whether or not the session exists; for a session not in memory, a token is
    /// checked against its stored hash (one small read) before the session is loaded, so a
    /// request with another session's token loads nothing. The actor checks again once loaded.
    private func admit(_ credential: Credential, to id: SessionID) async throws {
        switch credential {
        case .none:
            throw SessionError(.unauthorized, "send Authorization: Bearer <token>")
        case .admin:
            return
        case .reader(let grant):
            // Already verified (an observer token or a stream ticket): one for another session
            // loads nothing.
            guard grant.covers(id) else {
                throw SessionError(.forbidden, "this credential does not cover session \(id.rawValue)")
            }
        case .device(let session):
            guard session == id else {
                throw SessionError(.forbidden, "this token does not belong to session \(id.rawValue)")
            }
        case .token(let token):
            guard IdentifierGenerator.isWellFormedToken(token) else {
                throw SessionError(.unauthorized, "invalid token")
            }
            guard !isLoaded(id) else { return }
            guard let access = try await environment.store.access(to: id) else { throw notFound(id) }
            guard constantTimeEquals(TokenHasher.hash(token), access.tokenHash) else {
                throw SessionError(.forbidden, "this token does not belong to session \(id.rawValue)")
            }
        }
    }

    private func forget(_ id: SessionID, _ actor: SessionActor) {
        let removed = shard(id).actors.withLock { actors in
            guard actors[id] === actor else { return false }
            actors[id] = nil
            return true
        }
        if removed {
            loaded.subtract(1, ordering: .relaxed)
            environment.readCache?.remove(id)
        }
    }

    /// Unloads the least recently used sessions that no request holds, down to 1/16 under the
    /// limit, so that the scan runs once per many loads. Sessions held by requests stay (there
    /// are at most as many as requests in flight). One unloading at a time.
    private func unloadLeastRecentlyUsed() {
        guard isUnloading.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return
        }
        defer { isUnloading.store(false, ordering: .releasing) }
        let maximum = environment.configuration.maxLoadedSessions
        var excess = loaded.load(ordering: .relaxed) - (maximum - maximum / 16)
        guard excess > 0 else { return }
        var idle: [(tick: UInt64, id: SessionID, actor: SessionActor)] = []
        for shard in shards {
            shard.actors.withLock { actors in
                for (id, actor) in actors where actor.activeRequests.load(ordering: .relaxed) == 0 {
                    idle.append((actor.lastUsedTick.load(ordering: .relaxed), id, actor))
                }
            }
        }
        idle.sort { $0.tick < $1.tick }
        for candidate in idle where excess > 0 {
            let removed = shard(candidate.id).actors.withLock { actors in
                guard actors[candidate.id] === candidate.actor,
                    candidate.actor.activeRequests.load(ordering: .relaxed) == 0
                else { return false }
                actors[candidate.id] = nil
                return true
            }
            if removed {
                loaded.subtract(1, ordering: .relaxed)
                environment.readCache?.remove(candidate.id)
                excess -= 1
            }
        }
    }

    /// Puts the least recently used full sessions that no request holds in their compact form
    /// (`SessionActor.goDormant()`), down to 3/4 of `maxHotSessions`, so that the scan of every
    /// loaded session runs once per a quarter of the hot set's turnover. In a task of its own, one
    /// at a time: the request that found the set too large does not wait for it. A session that
    /// must stay hot (the actor's rule) is passed over.
    private func compactLeastRecentlyUsed() {
        guard isCompacting.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return
        }
        Task { [self] in
            let maximum = environment.configuration.maxHotSessions
            // Again while the set is past its bound and a round puts some away: sessions woken
            // while a round ran found it running, and started none. (Sessions in use are not
            // put away; a round that finds only those stops, and their release starts the next.)
            var round: (kept: Int, compacted: Int)
            repeat {
                round = await compactionRound(down: maximum - maximum / 4)
                keptHot.store(round.kept, ordering: .relaxed)
            } while round.compacted > 0 && hotCount > maximum + round.kept
            isCompacting.store(false, ordering: .releasing)
            // A request released between the last check and the flag's reset started nothing.
            if round.compacted > 0, hotCount > maximum + round.kept { compactLeastRecentlyUsed() }
        }
    }

    /// One round of `compactLeastRecentlyUsed()`: the idle full sessions, least recently used
    /// first, put away until `target` are left; returns how many it left hot because they hold
    /// state their stored form does not, and how many it put away.
    private func compactionRound(down target: Int) async -> (kept: Int, compacted: Int) {
        var idle: [(tick: UInt64, actor: SessionActor)] = []
        for shard in shards {
            shard.actors.withLock { actors in
                for actor in actors.values
                where actor.isHot.load(ordering: .relaxed) && actor.activeRequests.load(ordering: .relaxed) == 0 {
                    idle.append((actor.lastUsedTick.load(ordering: .relaxed), actor))
                }
            }
        }
        var excess = hotCount - target
        var kept = 0
        var compacted = 0
        for candidate in idle.sorted(by: { $0.tick < $1.tick }) where excess > 0 {
            // Taken by a request since the scan: it is in use again, so no longer least recent.
            guard candidate.actor.activeRequests.load(ordering: .relaxed) == 0 else { continue }
            switch await candidate.actor.goDormant() {
            case nil:
                excess -= 1
                compacted += 1
            case .stateBeyondItsRows: kept += 1
            case .inUse: break
            }
        }
        return (kept, compacted)
    }

    /// Unloads the session if it is in memory and no request holds it.
    func unload(_ id: SessionID) {
        let removed = shard(id).actors.withLock { actors in
            guard let actor = actors[id], actor.activeRequests.load(ordering: .relaxed) == 0 else { return false }
            actors[id] = nil
            return true
        }
        if removed {
            loaded.subtract(1, ordering: .relaxed)
            environment.readCache?.remove(id)
        }
    }

    /// When a request last took the session, if it is held in memory.
    func lastUse(of id: SessionID) -> Date? {
        shard(id).actors.withLock { actors in
            actors[id].map { Date(millisecondsSince1970: $0.lastUsedMilliseconds.load(ordering: .relaxed)) }
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
        try await withActor(id, credential: credential) { actor in
            try await actor.read(query, credential: credential)
        }
    }

    /// The whole session as `read(.session, …)` would answer it now, from memory without its
    /// actor, when the session is loaded, its rendering is current and `credential` is the admin
    /// or the token its actor verified; nil otherwise (then `read` answers). Counts as a use of
    /// the session, as a read does. See `SessionReadCache`.
    package func cachedSession(_ id: SessionID, credential: Credential) -> RenderedSession? {
        guard let entry = environment.readCache?.entry(id, credential: credential), let actor = entry.actor else {
            return nil
        }
        actor.lastUsedTick.store(tick.add(1, ordering: .relaxed).newValue, ordering: .relaxed)
        actor.lastUsedMilliseconds.store(environment.now().millisecondsSince1970, ordering: .relaxed)
        return entry.rendered
    }

    /// Sessions whose rendered JSON is cached for reads without their actor (at most the loaded ones).
    package var cachedSessionCount: Int { environment.readCache?.count ?? 0 }

    /// Reads answered by `cachedSession(_:credential:)` since the start.
    package var cachedReadCount: Int { environment.readCache?.hits ?? 0 }

    /// A reader's view of a session (version, ended, optional snapshot). `.notFound` when it does
    /// not exist.
    package func readerHead(of id: SessionID, credential: Credential, snapshot: Bool) async throws -> ReaderHead {
        try await withActor(id, credential: credential) { actor in
            try await actor.readerHead(credential: credential, snapshot: snapshot)
        }
    }

    /// Runs a command on a session. `.notFound` when it does not exist.
    package func perform(_ command: SessionCommand, on id: SessionID, context: CommandContext) async throws
        -> CommandOutcome
    {
        try await withActor(id, credential: context.credential) { actor in
            let outcome = try await actor.perform(command, context: context)
            if outcome != nil, command.isPurge { forget(id, actor) }
            return outcome
        }
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
            let answer = try await environment.store.idempotentAnswer(scope: idempotency.scope, key: idempotency.key)
        {
            return .replayed(answer)
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
        let output = OutputLimits(limits: environment.configuration.limits)
        try output.check(schema)
        let new = try environment.newSession(
            schema: schema, root: fields["root"] ?? [:], at: Timestamp.truncated(environment.now()))
        let (session, event, created) = (new.session, new.event, new.created)
        var mutation = new.mutation
        try output.checkSession(bytes: SessionFootprint(session).sessionBytes)
        try output.check(eventBytes: mutation.event.json.utf8.count)
        if let idempotency {
            // The answer carries the token: it is kept sealed under the client's key.
            mutation.idempotency = try idempotency.record(created).record(
                scope: idempotency.scope, key: idempotency.key, session: session.id, at: event.at, isSecret: true,
                identifiers: environment.identifiers)
        }
        do {
            try await environment.store.commit(mutation)
        } catch let error as StoreError where error.code == .conflict {
            // A concurrent create with the same idempotency key won: answer what it answered.
            if let idempotency,
                let answer = try await environment.store.idempotentAnswer(
                    scope: idempotency.scope, key: idempotency.key)
            {
                return .replayed(answer)
            }
            throw error
        }
        await install(session)
        environment.eventCommitted(mutation.event, event)
        return .created(created)
    }

    /// Installs a session just committed (created, imported or forked) in its actor, which
    /// counts as a use of it (least-recently-used unloading).
    func install(_ session: sending LiveSession) async {
        let actor = take(session.id)
        await actor.install(session)
        release(actor)
    }

    // MARK: - Listing

    /// The admin list, ordered by id, `limit` at a time from after `cursor`.
    package func list(limit: Int, cursor: SessionID?) async throws -> SessionList {
        let summaries = try await environment.store.sessions(after: cursor, limit: limit + 1)
        let page = Array(summaries.prefix(limit))
        return SessionList(sessions: page, nextCursor: summaries.count > limit ? page.last?.id : nil)
    }
}

/// How many sessions are in their full form, kept by their actors as they change form.
final class HotSessionCount: Sendable {
    private let count = Atomic<Int>(0)

    func add(_ delta: Int) { count.add(delta, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
