import Foundation
import NavigationValues
import NavigationValuesCrypto
import NavigationValuesStore
import NavigationValuesWire
import Synchronization

/// A reader's view of a session at one instant.
package struct ReaderHead: Sendable {
    package var version: Int64
    package var isEnded: Bool
    package var snapshot: SessionResource?
    /// For a fork, where it came from (replays show it too).
    package var origin: SessionOrigin?
}

/// Owns one session's live state and applies its commands one at a time, in arrival order.
///
/// The actor's own isolation is not enough: it is re-entered while a commit is awaited, so a FIFO
/// turnstile keeps a second command out until the first is committed and answered. A failed commit
/// drops the live state, which the next command reloads from the store.
///
/// On a shared store (several instances on one PostgreSQL database) the loaded copy may be
/// stale: reads check the stored version first (one cheap query) and reload when it moved; a
/// command is applied to the copy optimistically and committed conditionally on its version, and
/// when the commit is a conflict (another instance moved the session on) the actor reloads and
/// runs the command again; after `optimisticAttempts` conflicts it waits for its turn in the
/// database (``SessionStore/beginTurn(on:until:)``), behind the session's other writers, and runs
/// once more on the session as stored then, which nobody moves on before it commits: the client
/// sees one answer, applied once, and a 503 only past `maxWriteWait`. A refusal judged on the copy
/// (a 404 screen, a 409, a 412) is checked against the stored version before it is answered, and
/// judged again on a current copy when the copy was stale.
actor SessionActor {
    let id: SessionID
    let environment: ServiceEnvironment
    /// Requests holding this actor now, counted by `SessionRegistry` under its shard's lock: an
    /// actor that none holds may be unloaded (least recently used first).
    nonisolated let activeRequests = Atomic<Int>(0)
    /// When a request last took this actor: a service-wide counter, for least-recently-used order.
    nonisolated let lastUsedTick = Atomic<UInt64>(0)
    /// When a request last took this actor, in milliseconds since 1970 (retention's idle check).
    nonisolated let lastUsedMilliseconds = Atomic<Int64>(0)
    var live: LiveSession? {
        didSet {
            rendered = nil
            verifiedToken = nil
            environment.readCache?.remove(id)
            // Whatever replaced the full form (or dropped it) is the truth: a compact form put
            // away before is older. `goDormant()` sets `dormant` after this.
            dormant = nil
            let isHot = live != nil
            if self.isHot.exchange(isHot, ordering: .relaxed) != isHot {
                hotSessions.add(isHot ? 1 : -1)
            }
        }
    }
    /// The session in its compact form, when it is loaded but outside the hot set (`goDormant()`);
    /// nil whenever `live` is set. The next request rebuilds `live` from it, without the store.
    private var dormant: DormantSession?
    /// Whether `live` holds the full session: what the registry's hot set counts.
    nonisolated let isHot = Atomic<Bool>(false)
    /// The service's count of actors holding a full session (`SessionRegistry.hotCount`).
    private nonisolated let hotSessions: HotSessionCount
    /// The last token that matched the session's token hash: the next request with the same
    /// token is compared with it (in constant time) instead of being hashed again.
    private var verifiedToken: String?
    /// The live session's JSON at the version it was rendered at, for the reads that follow.
    /// Keyed by version (a command changes `live` in place and moves its version on) and dropped
    /// whenever `live` is dropped or replaced.
    private var rendered: RenderedSession?
    private var isBusy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// The turn a command runs in after its conflicts: its commit goes through it. Boxed: an
    /// optional existential takes six words in every loaded session's actor, and turns are rare.
    private var turn: TurnBox?
    /// How many times a command runs on a copy (reloaded after a conflict) before it waits for
    /// its turn: a second try usually lands and holds no lock, where a turn holds the session's
    /// row while it reloads, and the writers that meet it conflict too (16 writers pushing 50
    /// times each through two instances: 37 to 52 turns at 2, 371 to 471 at 1).
    static let optimisticAttempts = 2

    init(id: SessionID, environment: ServiceEnvironment, hotSessions: HotSessionCount) {
        self.id = id
        self.environment = environment
        self.hotSessions = hotSessions
    }

    deinit {
        if isHot.load(ordering: .relaxed) { hotSessions.add(-1) }
    }

    // MARK: - Hot and dormant

    /// Why a session stays in its full form (`mustStayHot`).
    enum HotReason {
        /// A request is inside the actor: for now.
        case inUse
        /// It holds state its stored form does not: for as long as it does.
        case stateBeyondItsRows
    }

    /// Puts the full session away in its compact form (`DormantSession`), unless it must stay
    /// hot; nil when it did (or it holds no full session), else why not. Called by the registry
    /// for the least recently used idle sessions past `maxHotSessions`.
    func goDormant() -> HotReason? {
        guard let live else { return nil }
        if let reason = mustStayHot(live) { return reason }
        let compact = DormantSession(live)
        self.live = nil
        dormant = compact
        return nil
    }

    /// The one rule of what keeps a loaded session in its full form. It stays hot while:
    /// - a request is inside the actor (a command awaiting its commit, a read, a turn held, or
    ///   requests waiting at the turnstile): they hold the full session and expect to keep it;
    /// - it holds state its stored form does not (`LiveSession.hasStateBeyondItsRows`): a
    ///   rebuild would lose it.
    /// Nothing else keeps it: subscribers are served by the event hub and the log, not by the
    /// session; state written behind the log, idempotency records and history are the store's;
    /// the compact form is made from memory, never from the store, so state not yet written
    /// behind is in it; the actor's caches (the rendered JSON, the token last verified, the
    /// size bound) are derived and made again.
    private func mustStayHot(_ session: LiveSession) -> HotReason? {
        if isBusy || !waiting.isEmpty || turn != nil { return .inUse }
        if session.hasStateBeyondItsRows { return .stateBeyondItsRows }
        return nil
    }

    /// The full session, rebuilt from its compact form when it is dormant (then hot again).
    private func awaken() {
        guard live == nil, let dormant else { return }
        do {
            live = try dormant.session(id: id)
        } catch {
            // A compact form that does not read back is a bug of ours; the store still has every
            // committed change, so the session loads from it as after an unload.
            self.dormant = nil
        }
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

    // MARK: - Reads

    /// Answers a read; nil when the session does not exist (the caller forgets this actor).
    func read(_ query: SessionQuery, credential: Credential) async throws -> SessionQuery.Result? {
        await enter()
        defer { leave() }
        guard let session = try await loadedSession(fresh: true) else { return nil }
        try authorize(credential, for: session)
        switch query {
        case .session:
            if let rendered, rendered.version == session.record.version {
                environment.readCache?.fill(id, rendered: rendered, verifiedToken: verifiedToken, actor: self)
                return .session(rendered)
            }
            let fresh = RenderedSession(session.resource())
            rendered = fresh
            environment.readCache?.fill(id, rendered: fresh, verifiedToken: verifiedToken, actor: self)
            return .session(fresh)
        case .screen(let reference):
            guard let entry = session.screen(reference: reference) else {
                throw SessionError(.notFound, "no screen '\(reference)' in session \(id.rawValue)")
            }
            return .screen(session.resource(of: entry), version: session.record.version)
        case .explainedSession:
            let limits = OutputLimits(limits: environment.configuration.limits)
            return .session(RenderedSession(try limits.explained(session)))
        case .explainedScreen(let reference):
            guard let entry = session.screen(reference: reference) else {
                throw SessionError(.notFound, "no screen '\(reference)' in session \(id.rawValue)")
            }
            var resource = session.resource(of: entry)
            resource.explanation = session.tree.explanation(of: entry, keys: session.keys)
            try OutputLimits(limits: environment.configuration.limits)
                .checkExplanation(bytes: resource.json.serializedByteCount)
            return .screen(resource, version: session.record.version)
        case .stacks:
            return .stacks(session.stackList())
        case .stack(let reference):
            guard let stackID = session.stackID(reference: reference) else {
                throw SessionError(.notFound, "no stack '\(reference)' in session \(id.rawValue)")
            }
            return .stack(session.stackResource(stackID), version: session.record.version)
        }
    }

    /// Where a reader stands: checks the credential and reports the session's version (and, when
    /// asked, the whole session at that version). Runs in the turnstile, so no mutation is half
    /// applied; a subscription taken before this call sees every event after `version`.
    func readerHead(credential: Credential, snapshot: Bool) async throws -> ReaderHead? {
        await enter()
        defer { leave() }
        guard let session = try await loadedSession(fresh: true) else { return nil }
        try authorize(credential, for: session)
        return ReaderHead(
            version: session.record.version, isEnded: session.record.state == .ended,
            snapshot: snapshot ? session.resource() : nil, origin: session.record.origin)
    }

    // MARK: - Commands

    /// Runs a command; nil when the session does not exist (the caller forgets this actor).
    func perform(_ command: SessionCommand, context: CommandContext) async throws -> CommandOutcome? {
        await enter()
        defer { leave() }
        environment.readCache?.remove(id)  // before anything changes: no cached read of the version before
        for _ in 0..<Self.optimisticAttempts {
            guard let session = try await loadedSession(fresh: false) else { return nil }
            do {
                return try await run(command, context: context, on: session)
            } catch let error as StoreError where error.code == .conflict {
                // Another writer moved the session on since this copy was loaded (or holds it now).
            } catch let error as StoreError where error.code == .invalidData && environment.store.isShared {
                // The session went away under this copy (purged through another instance).
                guard try await isStale(session) else { throw error }
            } catch let error as SessionError where environment.store.isShared && error.isJudgedOnTheCopy {
                // Refused on a copy that may be stale: answer it only if the copy is current.
                guard try await isStale(session) else { throw error }
            }
            live = nil
        }
        return try await performInTurn(command, context: context)
    }

    /// Runs a command in the session's turn: once the writers before it are done, on the session
    /// as stored then, committed before any other writer moves it on.
    private func performInTurn(_ command: SessionCommand, context: CommandContext) async throws -> CommandOutcome? {
        let deadline = ContinuousClock.now + environment.configuration.maxWriteWait
        let turn = try await environment.store.beginTurn(on: id, until: deadline)
        do {
            guard let stored = turn.session else {
                await turn.end()
                return nil
            }
            let session = try LiveSession.load(stored)
            live = session
            self.turn = TurnBox(turn)
            defer { self.turn = nil }
            let outcome = try await run(command, context: context, on: session)
            await turn.end()
            return outcome
        } catch {
            await turn.end()
            throw error
        }
    }

    /// Runs a command once on `session`.
    private func run(_ command: SessionCommand, context: CommandContext, on session: LiveSession) async throws
        -> CommandOutcome
    {
        try authorize(context.credential, for: session, toChange: true)
        // A retry gets its first answer even if the session has moved on or ended since.
        if let idempotency = context.idempotency,
            let answer = try await environment.store.idempotentAnswer(scope: idempotency.scope, key: idempotency.key)
        {
            return .replayed(answer)
        }
        // An ended session still accepts a purge (deleting its history); every other mutation is 410.
        if session.record.state == .ended, !command.isPurge {
            throw SessionError(.gone, "session \(id.rawValue) has ended")
        }
        if let expected = context.ifMatch, expected != session.record.version {
            throw SessionError(
                .versionMismatch, "session \(id.rawValue) is at version \(session.record.version), not \(expected)",
                currentVersion: session.record.version)
        }
        let validator = CommandValidator(
            session: session, limits: environment.configuration.limits, newScreenID: environment.newScreenID)
        if case .batch(let body) = command {
            return .applied(try await commitBatch(body, session: session, validator: validator, context: context))
        }
        let operation = try validator.operation(for: command)
        try OutputLimits(limits: environment.configuration.limits).preflight(operation, on: session)
        let (result, answer) = try await commit(operation, session: session, context: context)
        return .applied(result, answer: answer)
    }

    /// Whether the stored session moved on from `session` (or is gone).
    private func isStale(_ session: LiveSession) async throws -> Bool {
        try await environment.store.version(of: id) != session.record.version
    }

    /// Another instance committed event `seq`: a copy behind it is dropped, so the next request
    /// reloads instead of meeting a conflict.
    func movedOn(to seq: Int64) {
        if let live, live.record.version < seq { self.live = nil }
        if let dormant, dormant.version < seq { self.dormant = nil }
    }

    private func commit(
        _ operation: SessionOperation, session: LiveSession, context: CommandContext
    ) async throws -> (MutationResult, StoredAnswer?) {
        let seq = session.record.version + 1
        let at = Timestamp.truncated(environment.now())
        let applied: Applied
        let result: MutationResult
        let answer: StoredAnswer?
        let event: RecordedEvent
        let stored: StoredEvent
        do {
            applied = try session.apply(operation, seq: seq, at: at)
            result = try session.answer(to: applied.event, version: seq)
            let output = OutputLimits(limits: environment.configuration.limits)
            // A push of one screen checks the session's size on its grown bound, once its event
            // is encoded (the event's bytes bound the screen's); anything else is measured now.
            let pushed: ScreenID? = if case .push(_, let seed) = operation { seed.id } else { nil }
            if pushed == nil { try output.checkApplied(operation, to: session, version: seq) }
            event = RecordedEvent(seq: seq, at: at, event: applied.event)
            stored = StoredEvent(event, session: id)
            if let pushed,
                !output.pushStaysWithinBound(session, version: seq, eventBytes: stored.json.utf8.count, screen: pushed)
            {
                try output.checkApplied(operation, to: session, version: seq)
            }
            // The answer rendered once: its size checked, kept for retries and sent, the same bytes.
            answer = context.answer?(result)
            if let answer {
                try output.check(eventBytes: stored.json.utf8.count, answerBytes: answer.body.count)
            } else {
                try output.check(eventBytes: stored.json.utf8.count, answer: result)
            }
        } catch {
            // Refused by a limit, or a validated operation that does not apply (our bug): the
            // state is changed in memory only. Drop it; the next request reloads what is committed.
            live = nil
            throw error
        }
        try await store(
            applied, answer: result, rendered: answer, of: session, event: event, stored: stored,
            isPurge: operation.isPurge, context: context)
        return (result, answer)
    }

    /// Commits what a change applied (its event, its rows, the answer under its idempotency key, a
    /// snapshot when one is due) and publishes the event. `event` and `stored` are its event,
    /// recorded and encoded (its size checked against the limits); `rendered`, the answer when
    /// it was already rendered (kept under the idempotency key as it is).
    func store(
        _ applied: Applied, answer result: MutationResult, rendered: StoredAnswer? = nil, of session: LiveSession,
        event: RecordedEvent, stored: StoredEvent, isPurge: Bool, context: CommandContext
    ) async throws {
        let seq = event.seq
        let at = event.at
        var mutation = StoredMutation(session: id, event: stored, changes: applied.changes)
        if let idempotency = context.idempotency {
            mutation.idempotency = try (rendered ?? idempotency.record(result)).record(
                scope: idempotency.scope, key: idempotency.key, session: id, at: at, isSecret: false,
                identifiers: environment.identifiers)
        }
        let interval = Int64(environment.configuration.snapshotInterval)
        if interval > 0, seq % interval == 0, !isPurge {
            mutation.snapshot = StoredSnapshot(
                session: id, seq: seq, json: session.resource(includeMemory: true).json.serialized())
        }
        do {
            if let turn {
                try await turn.turn.commit(mutation)
            } else {
                try await environment.store.commit(mutation)
            }
        } catch {
            // The live state ran ahead of the database: forget it; the next command reloads.
            live = nil
            throw error
        }
        if isPurge { live = nil }
        environment.eventCommitted(mutation.event, event)
    }

    // MARK: - Loading and auth

    /// The loaded copy, or the stored session loaded now; nil when it does not exist. With
    /// `fresh` on a shared store, a copy whose version is no longer the stored one is reloaded.
    private func loadedSession(fresh: Bool) async throws -> LiveSession? {
        awaken()
        if let live {
            guard fresh, environment.store.isShared else { return live }
            guard let version = try await environment.store.version(of: id) else {
                self.live = nil
                return nil
            }
            if version == live.record.version { return live }
            self.live = nil
        }
        guard let stored = try await environment.store.loadSession(id) else { return nil }
        let session = try LiveSession.load(stored)
        live = session
        return session
    }

    /// Checks that `credential` may read the session (or, `toChange`, change it). A read-only
    /// credential that covers the session may read it; changing it is 403.
    private func authorize(
        _ credential: Credential, for session: LiveSession, toChange: Bool = false
    ) throws(SessionError) {
        switch credential {
        case .admin:
            return
        case .reader(let grant):
            guard grant.covers(id) else {
                throw SessionError(.forbidden, "this \(grant.name) does not cover session \(id.rawValue)")
            }
            if toChange {
                throw SessionError(
                    .forbidden, "this \(grant.name) is read-only: it cannot change session \(id.rawValue)")
            }
        case .token(let token):
            // A token that could not have been issued is invalid (401); a well-formed token that
            // is not this session's belongs to another session, or to none (403, docs/API.md Auth).
            guard IdentifierGenerator.isWellFormedToken(token) else {
                throw SessionError(.unauthorized, "invalid token")
            }
            if let verifiedToken, constantTimeEquals(token, verifiedToken) { return }
            guard let digest = session.tokenDigest, digest.matches(TokenDigest(of: token)) else {
                throw SessionError(.forbidden, "this token does not belong to session \(id.rawValue)")
            }
            verifiedToken = token
        case .device(let session):
            guard session == id else {
                throw SessionError(.forbidden, "this token does not belong to session \(id.rawValue)")
            }
        case .none:
            throw SessionError(.unauthorized, "send Authorization: Bearer <token>")
        }
    }

    /// Installs a freshly created session.
    func install(_ session: LiveSession) {
        live = session
    }
}

/// A turn held by a command (see `SessionActor.turn`).
private final class TurnBox: Sendable {
    let turn: any SessionTurn
    init(_ turn: any SessionTurn) { self.turn = turn }
}

extension StoredEvent {
    /// The row of a recorded event: its JSON text (of `json`, its JSON when already built), written once.
    init(_ event: RecordedEvent, json: JSONValue? = nil, session: SessionID) {
        let text = json.map { $0.serialized() } ?? String(decoding: event.serializedBytes(), as: UTF8.self)
        self.init(session: session, seq: event.seq, type: event.event.kind.rawValue, json: text, at: event.at)
    }
}
