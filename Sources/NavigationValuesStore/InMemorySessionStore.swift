import Foundation
import NavigationValues
import NavigationValuesWire
import Synchronization

/// The ``SessionStore`` kept in this process's memory, in plain Swift: no database library, no
/// file, nothing kept after the process ends. For an app's tests and previews (the in-memory
/// server of `NavigationValuesTesting`), on any platform.
///
/// It keeps the rules the SQL schema enforces, with the same ``StoreError`` codes: a duplicate
/// key is a `.conflict`, a change to a row that does not exist, a link to a screen that does not
/// exist or JSON text that is not JSON is `.invalidData`, and a mutation of an existing session is
/// conditional on the version it was made from. Each commit applies to a copy of the tables and
/// replaces them only when every change stood, so a failing mutation leaves nothing behind. Times
/// are kept to the millisecond, as the databases keep them.
///
/// A commit copies the tables it changes: fine for the sessions of a test or a preview, not a
/// store for a server under load.
///
/// ```swift
/// let store = InMemorySessionStore()
/// try await store.commit(mutation)
/// let session = try await store.loadSession(mutation.session)
/// ```
public final class InMemorySessionStore: SessionStoreMaintenance {
    /// How the store keeps time.
    public struct Configuration: Sendable {
        /// How long an idempotency record is kept (docs/API.md: 24 h).
        public var idempotencyLifetime: Duration = .seconds(24 * 60 * 60)
        /// The clock for idempotency expiry and purge tombstones.
        public var now: @Sendable () -> Date = { Date() }

        public init() {}
    }

    private let configuration: Configuration
    private let tables = Mutex(Tables())
    private let figures = Mutex(StoreMetrics())

    /// An empty store.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    public var isShared: Bool { false }

    public func commitNotices() -> AsyncStream<CommitNotice> { AsyncStream { $0.finish() } }

    public var metrics: StoreMetrics { figures.withLock { $0 } }

    public func close() async {
        tables.withLock { $0.isClosed = true }
    }

    public func checkWritable() async throws {
        try read { _ in }
    }

    // MARK: - Committing

    public func commit(_ mutation: StoredMutation) async throws {
        try write([mutation])
    }

    public func commitAll(_ mutations: [StoredMutation]) async throws {
        guard !mutations.isEmpty else { return }
        try write(mutations)
    }

    public func beginTurn(on id: SessionID, until deadline: ContinuousClock.Instant) async throws -> any SessionTurn {
        // One process holds the store: the session's actor already orders its writers.
        figures.withLock { $0.turns += 1 }
        return Turn(store: self, session: try await loadSession(id))
    }

    /// Applies `mutations` to a copy of the tables, all or none, and records the outcome.
    private func write(_ mutations: [StoredMutation]) throws {
        let started = ContinuousClock.now
        let now = configuration.now()
        let cutoff = idempotencyCutoff(now)
        let result = Result { () throws(StoreError) in
            try tables.withLock { tables throws(StoreError) -> Void in
                guard !tables.isClosed else { throw StoreError(code: .closed, message: "the store is closed") }
                var copy = tables
                // A copy of a session (import, fork) is not checked against its own version after
                // its first mutation, as the SQL store does not: no other writer can see it yet.
                let isCopy = mutations.count > 1 && mutations.first?.createsItsSession == true
                for (index, mutation) in mutations.enumerated() {
                    let isInner = isCopy && index > 0 && mutation.session == mutations.first?.session
                    try copy.apply(mutation, checksVersion: !isInner, now: now, idempotencyCutoff: cutoff)
                }
                tables = copy
            }
        }
        let latency = (ContinuousClock.now - started).seconds
        let error: StoreError? = if case .failure(let error) = result { error } else { nil }
        figures.withLock { metrics in
            metrics.recordBatch(size: mutations.count, duration: latency)
            for _ in mutations { metrics.recordCommit(latency: latency, error: error) }
        }
        try result.get()
    }

    // MARK: - Reading

    /// Runs `body` on the tables, unless the store is closed.
    private func read<T: Sendable>(_ body: (Tables) throws -> T) throws -> T {
        try tables.withLock { tables in
            guard !tables.isClosed else { throw StoreError(code: .closed, message: "the store is closed") }
            return try body(tables)
        }
    }

    public func loadSession(_ id: SessionID) async throws -> StoredSession? {
        try read { $0.sessions[id]?.stored }
    }

    public func version(of id: SessionID) async throws -> Int64? {
        try read { $0.sessions[id]?.record.version }
    }

    public func events(of id: SessionID, after: Int64, limit: Int) async throws -> [StoredEvent] {
        guard limit > 0 else { return [] }
        return try read { tables in Array(tables.events(of: id, after: after).prefix(limit)) }
    }

    public func eventPage(of id: SessionID, after: Int64, limit: Int, maxBytes: Int) async throws -> EventPage {
        guard limit > 0 else { return EventPage(events: [], hasMore: false) }
        return try read { tables in
            var cut = PageCut(limit: limit, maxBytes: maxBytes)
            var page: [StoredEvent] = []
            for event in tables.events(of: id, after: after) {
                guard cut.admit(seq: event.seq, size: event.json.utf8.count) else { break }
                page.append(event)
            }
            return EventPage(events: page, hasMore: cut.hasMore)
        }
    }

    public func access(to id: SessionID) async throws -> SessionAccess? {
        try read { tables in
            tables.sessions[id].map { session in
                SessionAccess(
                    tokenHash: session.record.tokenHash, state: session.record.state,
                    version: session.record.version, compactedSeq: session.record.compactedSeq)
            }
        }
    }

    public func snapshot(of id: SessionID, atOrBefore seq: Int64) async throws -> StoredSnapshot? {
        try read { tables in tables.snapshots[id]?.last { $0.seq <= seq } }
    }

    public func sessions(after cursor: SessionID?, limit: Int) async throws -> [SessionSummary] {
        guard limit > 0 else { return [] }
        return try read { tables in
            tables.sessions.values
                .filter { Tables.isOrdered(cursor?.rawValue ?? "", $0.record.id.rawValue) }
                .sorted { Tables.isOrdered($0.record.id.rawValue, $1.record.id.rawValue) }
                .prefix(limit)
                .map { session in
                    SessionSummary(
                        id: session.record.id, version: session.record.version, state: session.record.state,
                        depth: session.screens.values.count(where: { $0.record.stack == .main }),
                        updatedAt: session.record.updatedAt)
                }
        }
    }

    public func wasPurged(_ id: SessionID) async throws -> Bool {
        try read { $0.tombstones[id] != nil }
    }

    public func idempotencyRecord(scope: String, key: String) async throws -> IdempotencyRecord? {
        let cutoff = idempotencyCutoff(configuration.now())
        return try read { tables in
            tables.idempotency[IdempotencyKey(scope: scope, key: key)].flatMap { record in
                record.createdAt.millisecondsSince1970 >= cutoff ? record : nil
            }
        }
    }

    /// Records created before this millisecond count as absent.
    private func idempotencyCutoff(_ now: Date) -> Int64 {
        now.addingTimeInterval(-configuration.idempotencyLifetime.seconds).millisecondsSince1970
    }

    // MARK: - Maintenance

    public func sessions(in state: SessionState, updatedBefore before: Date, limit: Int) async throws
        -> [SessionStamp]
    {
        guard limit > 0 else { return [] }
        let cutoff = before.millisecondsSince1970
        return try read { tables in
            tables.sessions.values
                .map(\.record)
                .filter { $0.state == state && $0.updatedAt.millisecondsSince1970 < cutoff }
                .sorted { ($0.updatedAt, $0.id.rawValue) < ($1.updatedAt, $1.id.rawValue) }
                .prefix(limit)
                .map { SessionStamp(id: $0.id, version: $0.version, updatedAt: $0.updatedAt) }
        }
    }

    public func compactHistory(_ rule: CompactionRule, now: Date, limit: Int) async throws -> Int {
        guard rule.isActive, limit > 0 else { return 0 }
        let keepEvents = Int64(rule.keepEvents ?? 0)
        let cutoff = rule.keepAge.map { now.addingTimeInterval(-$0.seconds).millisecondsSince1970 } ?? .max
        return try tables.withLock { tables in
            guard !tables.isClosed else { throw StoreError(code: .closed, message: "the store is closed") }
            // Each session's compacted point: its newest snapshot that both rules let go (at least
            // `keepEvents` events after it, and its event older than the cutoff).
            var targets: [(id: SessionID, point: Int64, gain: Int64)] = []
            for (id, session) in tables.sessions {
                let record = session.record
                let point = tables.snapshots[id]?.last { snapshot in
                    guard snapshot.seq > record.compactedSeq, snapshot.seq <= record.version - keepEvents,
                        let event = tables.event(of: id, seq: snapshot.seq)
                    else { return false }
                    return event.at.millisecondsSince1970 < cutoff
                }
                if let point { targets.append((id, point.seq, point.seq - record.compactedSeq)) }
            }
            targets.sort { ($0.gain, $1.id.rawValue) > ($1.gain, $0.id.rawValue) }
            var deleted = 0
            for target in targets.prefix(limit) {
                let before = tables.events[target.id]?.count ?? 0
                tables.events[target.id]?.removeAll { $0.seq <= target.point }
                deleted += before - (tables.events[target.id]?.count ?? 0)
                tables.snapshots[target.id]?.removeAll { $0.seq < target.point }
                tables.sessions[target.id]?.record.compactedSeq = target.point
            }
            return deleted
        }
    }

    public func removeExpiredRecords(tombstonesBefore before: Date) async throws -> Int {
        let tombstoneCutoff = before.millisecondsSince1970
        let idempotencyCutoff = idempotencyCutoff(configuration.now())
        let now = configuration.now()
        return try tables.withLock { tables in
            guard !tables.isClosed else { throw StoreError(code: .closed, message: "the store is closed") }
            let count = tables.tombstones.count + tables.idempotency.count + tables.handoffs.count
            tables.tombstones = tables.tombstones.filter { $0.value.millisecondsSince1970 >= tombstoneCutoff }
            tables.idempotency = tables.idempotency.filter {
                $0.value.createdAt.millisecondsSince1970 >= idempotencyCutoff
            }
            // A used hand-off is kept until it expires, so that a second redeem says "used".
            tables.handoffs = tables.handoffs.filter { $0.value.expiresAt >= now }
            return count - tables.tombstones.count - tables.idempotency.count - tables.handoffs.count
        }
    }

    // MARK: - Observer tokens

    public func insertObserver(
        _ observer: ObserverRecord, limit: Int, now: Date, idempotency: IdempotencyRecord?
    ) async throws -> Bool {
        let cutoff = idempotencyCutoff(configuration.now())
        return try tables.withLock { tables throws(StoreError) -> Bool in
            guard !tables.isClosed else { throw StoreError(code: .closed, message: "the store is closed") }
            var copy = tables
            let expired = copy.observers.values.filter {
                $0.session == observer.session
                    && ($0.expiresAt?.millisecondsSince1970 ?? .max) <= now.millisecondsSince1970
            }
            for record in expired { copy.removeObserver(record.id) }
            guard copy.observers.values.count(where: { $0.session == observer.session }) < limit else {
                tables = copy
                return false
            }
            if let session = observer.session, copy.sessions[session] == nil {
                throw StoreError(code: .invalidData, message: "session \(session) does not exist")
            }
            guard copy.observers[observer.id] == nil, copy.observerIDs[observer.tokenHash] == nil else {
                throw StoreError(code: .conflict, message: "observer token \(observer.id) or its hash is taken")
            }
            var kept = observer
            kept.createdAt = kept.createdAt.storedMillisecond
            kept.expiresAt = kept.expiresAt?.storedMillisecond
            copy.observers[observer.id] = kept
            copy.observerIDs[observer.tokenHash] = observer.id
            if let idempotency { try copy.keep(idempotency, cutoff: cutoff) }
            tables = copy
            return true
        }
    }

    public func observer(tokenHash: String) async throws -> ObserverRecord? {
        try read { tables in tables.observerIDs[tokenHash].flatMap { tables.observers[$0] } }
    }

    public func observer(id: ObserverID) async throws -> ObserverRecord? {
        try read { $0.observers[id] }
    }

    public func observers(of session: SessionID?, after cursor: ObserverID?, limit: Int) async throws
        -> [ObserverRecord]
    {
        guard limit > 0 else { return [] }
        return try read { tables in
            Array(
                tables.observers.values
                    .filter {
                        (session == nil || $0.session == session)
                            && Tables.isOrdered(cursor?.rawValue ?? "", $0.id.rawValue)
                    }
                    .sorted { Tables.isOrdered($0.id.rawValue, $1.id.rawValue) }
                    .prefix(limit))
        }
    }

    public func deleteObserver(_ id: ObserverID) async throws -> Bool {
        try tables.withLock { tables in
            guard !tables.isClosed else { throw StoreError(code: .closed, message: "the store is closed") }
            return tables.removeObserver(id)
        }
    }

    // MARK: - Hand-offs

    public func insertHandoff(_ handoff: HandoffRecord, limit: Int, now: Date) async throws -> Bool {
        try tables.withLock { tables throws(StoreError) -> Bool in
            guard !tables.isClosed else { throw StoreError(code: .closed, message: "the store is closed") }
            tables.handoffs = tables.handoffs.filter {
                $0.value.session != handoff.session || $0.value.expiresAt > now
            }
            let outstanding = tables.handoffs.values.count(where: {
                $0.session == handoff.session && $0.usedAt == nil && $0.expiresAt > now
            })
            guard outstanding < limit else { return false }
            guard tables.sessions[handoff.session] != nil else {
                throw StoreError(code: .invalidData, message: "session \(handoff.session) does not exist")
            }
            guard tables.handoffs[handoff.id] == nil else {
                throw StoreError(code: .conflict, message: "hand-off \(handoff.id) exists")
            }
            var kept = handoff
            kept.createdAt = kept.createdAt.storedMillisecond
            kept.expiresAt = kept.expiresAt.storedMillisecond
            tables.handoffs[handoff.id] = kept
            return true
        }
    }

    public func handoff(id: String) async throws -> HandoffRecord? {
        try read { $0.handoffs[id] }
    }

    public func consumeHandoff(_ id: String, at: Date, device: DeviceTokenRecord?, maxDevices: Int) async throws
        -> HandoffConsumption
    {
        try tables.withLock { tables throws(StoreError) -> HandoffConsumption in
            guard !tables.isClosed else { throw StoreError(code: .closed, message: "the store is closed") }
            guard var handoff = tables.handoffs[id], handoff.usedAt == nil else { return .notAvailable }
            if let device {
                guard device.session == handoff.session else {
                    throw StoreError(code: .invalidData, message: "hand-off \(id) is not of \(device.session)")
                }
                guard tables.deviceTokens.values.count(where: { $0.session == handoff.session }) < maxDevices else {
                    return .tooManyDevices
                }
                guard tables.sessions[handoff.session] != nil else {
                    throw StoreError(code: .invalidData, message: "session \(handoff.session) does not exist")
                }
                var kept = device
                kept.createdAt = kept.createdAt.storedMillisecond
                tables.deviceTokens[device.tokenHash] = kept
            }
            handoff.usedAt = at.storedMillisecond
            tables.handoffs[id] = handoff
            return .consumed
        }
    }

    public func deviceTokenSession(tokenHash: String) async throws -> SessionID? {
        try read { $0.deviceTokens[tokenHash]?.session }
    }

    /// A turn where the session's actor already orders its writers: the session read and the
    /// commit are the store's own.
    private struct Turn: SessionTurn {
        let store: InMemorySessionStore
        let session: StoredSession?

        func commit(_ mutation: StoredMutation) async throws { try await store.commit(mutation) }
        func end() async {}
    }
}

// MARK: - Tables

/// The key of an idempotency record.
private struct IdempotencyKey: Hashable {
    var scope: String
    var key: String
}

/// One session's rows: its own, its screens (with their values, handlers and received
/// preferences) and its other stacks.
private struct SessionRows {
    var record: SessionRecord
    var selectedStack = StackID.main
    var screens: [ScreenID: StoredScreen] = [:]
    var stacks: [StackID: StackRecord] = [:]

    /// The session as `loadSession` reads it: the main stack's screens first, then each other
    /// stack's, each root first; the stacks by position.
    var stored: StoredSession {
        let screens = screens.values.sorted { left, right in
            let (a, b) = (left.record, right.record)
            if (a.stack == .main) != (b.stack == .main) { return a.stack == .main }
            if a.stack != b.stack { return Tables.isOrdered(a.stack.rawValue, b.stack.rawValue) }
            return a.index < b.index
        }
        return StoredSession(
            record: record, screens: screens, stacks: stacks.values.sorted { $0.position < $1.position },
            selectedStack: selectedStack)
    }
}

/// Every row of the store, by table.
private struct Tables {
    var sessions: [SessionID: SessionRows] = [:]
    /// The session of every screen (screen ids are unique across sessions).
    var screenSessions: [ScreenID: SessionID] = [:]
    /// Each session's events, oldest first.
    var events: [SessionID: [StoredEvent]] = [:]
    /// Each session's snapshots, oldest first.
    var snapshots: [SessionID: [StoredSnapshot]] = [:]
    var idempotency: [IdempotencyKey: IdempotencyRecord] = [:]
    /// Purged sessions, with when they were purged.
    var tombstones: [SessionID: Date] = [:]
    var observers: [ObserverID: ObserverRecord] = [:]
    /// Observer ids by token hash.
    var observerIDs: [String: ObserverID] = [:]
    var handoffs: [String: HandoffRecord] = [:]
    /// Device tokens by hash.
    var deviceTokens: [String: DeviceTokenRecord] = [:]
    var isClosed = false

    /// Whether `a` sorts before `b` byte by byte, as the databases order ids.
    static func isOrdered(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    func events(of id: SessionID, after: Int64) -> ArraySlice<StoredEvent> {
        guard let events = events[id] else { return [] }
        let start = events.partitioningIndex { $0.seq > after }
        return events[start...]
    }

    func event(of id: SessionID, seq: Int64) -> StoredEvent? {
        guard let events = events[id] else { return nil }
        let index = events.partitioningIndex { $0.seq >= seq }
        return index < events.count && events[index].seq == seq ? events[index] : nil
    }

    @discardableResult
    mutating func removeObserver(_ id: ObserverID) -> Bool {
        guard let record = observers.removeValue(forKey: id) else { return false }
        observerIDs[record.tokenHash] = nil
        return true
    }

    // MARK: Writing

    /// Writes one mutation as the SQL store's statements would, in their order: the version
    /// check (unless it creates its session), its changes, its event and snapshot (unless it
    /// purged its own session), then its idempotency record.
    mutating func apply(
        _ mutation: StoredMutation, checksVersion: Bool, now: Date, idempotencyCutoff: Int64
    ) throws(StoreError) {
        let id = mutation.session
        guard mutation.event.session == id, mutation.snapshot.map({ $0.session == id }) ?? true else {
            throw StoreError(
                code: .invalidData, message: "the event and snapshot must belong to the mutation's session")
        }
        if checksVersion, !mutation.createsItsSession {
            guard let current = sessions[id]?.record.version else {
                throw StoreError(code: .invalidData, message: "session \(id) does not exist")
            }
            let expected = mutation.event.seq - 1
            guard current == expected else {
                throw StoreError(code: .conflict, message: "session \(id) is at version \(current), not \(expected)")
            }
        }
        for change in mutation.changes { try apply(change, now: now) }
        let isPurged = mutation.purgesItsSession
        if !isPurged {
            try append(mutation.event)
            if let snapshot = mutation.snapshot { try append(snapshot) }
        }
        if var record = mutation.idempotency {
            // A purge's own record outlives its session, attached to none, until it expires.
            if isPurged, record.session == id { record.session = nil }
            try keep(record, cutoff: idempotencyCutoff)
        }
    }

    private mutating func apply(_ change: StateChange, now: Date) throws(StoreError) {
        switch change {
        case .insertSession(let record):
            guard sessions[record.id] == nil else {
                throw StoreError(code: .conflict, message: "session \(record.id) exists")
            }
            try Self.checkJSON(record.schemaJSON, "the session's schema")
            guard record.version >= 0, (record.origin?.version ?? 1) >= 1 else {
                throw StoreError(
                    code: .invalidData, message: "session \(record.id)'s version or origin is out of range")
            }
            var kept = record
            kept.createdAt = record.createdAt.storedMillisecond
            kept.updatedAt = record.updatedAt.storedMillisecond
            sessions[record.id] = SessionRows(record: kept)
        case .updateSession(let id, let version, let state, let updatedAt):
            guard version >= 0 else { throw StoreError(code: .invalidData, message: "version \(version) is negative") }
            try modifySession(id) { session in
                session.record.version = version
                session.record.state = state
                session.record.updatedAt = updatedAt.storedMillisecond
            }
        case .insertScreen(let screen):
            try insert(screen)
        case .deleteScreens(let ids):
            try deleteScreens(ids)
        case .setValue(let screen, let key, let json):
            try Self.checkJSON(json, "the value of \(key)")
            try modifyScreen(screen) { $0.values[key] = json }
        case .removeValue(let screen, let key):
            try? modifyScreen(screen) { $0.values[key] = nil }
        case .setHandler(let screen, let key, let passBack):
            try modifyScreen(screen) { $0.handlers[key] = HandlerRecord(passBack: passBack) }
        case .removeHandler(let screen, let key):
            try? modifyScreen(screen) { $0.handlers[key] = nil }
        case .rememberDelivery(let screen, let key, let valueJSON, let passedJSON):
            try Self.checkJSON(valueJSON, "the delivered value")
            if let passedJSON { try Self.checkJSON(passedJSON, "the passed value") }
            var found = false
            try? modifyScreen(screen) { stored in
                found = stored.handlers[key].modify { handler in
                    handler.lastValueJSON = valueJSON
                    handler.lastPassedJSON = passedJSON
                }
            }
            guard found else {
                throw StoreError(code: .invalidData, message: "screen \(screen) has no handler for \(key)")
            }
        case .setReceivedPreference(let screen, let key, let json):
            try Self.checkJSON(json, "the received value of \(key)")
            try modifyScreen(screen) { $0.preferences[key] = json }
        case .purgeSession(let id):
            purge(id, at: now)
        case .insertStack(let stack):
            try insert(stack)
        case .deleteStacks(let session, let ids):
            for stack in ids { sessions[session]?.stacks[stack] = nil }
        case .selectStack(let session, let stack):
            try modifySession(session) { $0.selectedStack = stack }
        case .setStackPosition(let session, let stack, let position):
            guard position >= 1 else {
                throw StoreError(code: .invalidData, message: "stack position \(position) is below 1")
            }
            sessions[session]?.stacks[stack]?.position = position
        }
    }

    private mutating func modifySession(_ id: SessionID, _ body: (inout SessionRows) -> Void) throws(StoreError) {
        guard sessions[id].modify(body) else {
            throw StoreError(code: .invalidData, message: "session \(id) does not exist")
        }
    }

    private mutating func modifyScreen(_ id: ScreenID, _ body: (inout StoredScreen) -> Void) throws(StoreError) {
        var found = false
        if let session = screenSessions[id] { sessions[session].modify { found = $0.screens[id].modify(body) } }
        guard found else { throw StoreError(code: .invalidData, message: "screen \(id) does not exist") }
    }

    private mutating func insert(_ screen: ScreenRecord) throws(StoreError) {
        guard screenSessions[screen.id] == nil else {
            throw StoreError(code: .conflict, message: "screen \(screen.id) exists")
        }
        guard let session = sessions[screen.session] else {
            throw StoreError(code: .invalidData, message: "session \(screen.session) does not exist")
        }
        guard screen.index >= 0, screen.role == "screen" || screen.role == "navigationStack" else {
            throw StoreError(code: .invalidData, message: "screen \(screen.id)'s index or role is out of range")
        }
        if let previous = screen.previous, screenSessions[previous] == nil {
            throw StoreError(code: .invalidData, message: "screen \(previous) does not exist")
        }
        if session.screens.values.contains(where: { $0.record.stack == screen.stack && $0.record.index == screen.index }
        ) {
            throw StoreError(
                code: .conflict,
                message: "stack \(screen.stack) of session \(screen.session) has a screen \(screen.index)")
        }
        sessions[screen.session]?.screens[screen.id] = StoredScreen(record: screen)
        screenSessions[screen.id] = screen.session
    }

    /// Deletes the screens that exist with their rows; a screen or a stack left linking to one
    /// of them is `.invalidData`, as a foreign key checked at the statement's end.
    private mutating func deleteScreens(_ ids: [ScreenID]) throws(StoreError) {
        let deleted = Set(ids.filter { screenSessions[$0] != nil })
        guard !deleted.isEmpty else { return }
        // Screens and stacks link only to screens of their own session.
        let touched = Set(deleted.compactMap { screenSessions[$0] })
        for session in touched.compactMap({ sessions[$0] }) {
            for screen in session.screens.values where !deleted.contains(screen.record.id) {
                if let previous = screen.record.previous, deleted.contains(previous) {
                    throw StoreError(code: .invalidData, message: "screen \(screen.record.id) links to \(previous)")
                }
            }
            for stack in session.stacks.values {
                if let presenter = stack.presenter, deleted.contains(presenter) {
                    throw StoreError(code: .invalidData, message: "stack \(stack.id) is presented by \(presenter)")
                }
            }
        }
        for session in touched {
            sessions[session].modify { rows in for id in deleted { rows.screens[id] = nil } }
        }
        for id in deleted { screenSessions[id] = nil }
    }

    private mutating func insert(_ stack: StackRecord) throws(StoreError) {
        guard let session = sessions[stack.session] else {
            throw StoreError(code: .invalidData, message: "session \(stack.session) does not exist")
        }
        guard stack.id != .main, stack.kind != .main, stack.position >= 1,
            (stack.kind == .tab) == (stack.presenter == nil)
        else {
            throw StoreError(code: .invalidData, message: "stack \(stack.id) is not a tab or a presentation")
        }
        if let presenter = stack.presenter, screenSessions[presenter] == nil {
            throw StoreError(code: .invalidData, message: "screen \(presenter) does not exist")
        }
        guard session.stacks[stack.id] == nil else {
            throw StoreError(code: .conflict, message: "stack \(stack.id) of session \(stack.session) exists")
        }
        sessions[stack.session]?.stacks[stack.id] = stack
    }

    /// Deletes every row of the session (its idempotency records and observer tokens with it)
    /// and keeps a tombstone of its id.
    private mutating func purge(_ id: SessionID, at now: Date) {
        if let session = sessions.removeValue(forKey: id) {
            for screen in session.screens.keys { screenSessions[screen] = nil }
        }
        events[id] = nil
        snapshots[id] = nil
        idempotency = idempotency.filter { $0.value.session != id }
        for observer in observers.values where observer.session == id { removeObserver(observer.id) }
        deviceTokens = deviceTokens.filter { $0.value.session != id }
        if tombstones[id] == nil { tombstones[id] = now.storedMillisecond }
    }

    private mutating func append(_ event: StoredEvent) throws(StoreError) {
        guard sessions[event.session] != nil else {
            throw StoreError(code: .invalidData, message: "session \(event.session) does not exist")
        }
        guard event.seq >= 1 else { throw StoreError(code: .invalidData, message: "event seq \(event.seq) is below 1") }
        try Self.checkJSON(event.json, "event \(event.seq)")
        guard self.event(of: event.session, seq: event.seq) == nil else {
            throw StoreError(code: .conflict, message: "session \(event.session) has an event \(event.seq)")
        }
        var kept = event
        kept.at = event.at.storedMillisecond
        var log = events[event.session] ?? []
        log.insert(kept, at: log.partitioningIndex { $0.seq > event.seq })
        events[event.session] = log
    }

    private mutating func append(_ snapshot: StoredSnapshot) throws(StoreError) {
        guard snapshot.seq >= 1 else {
            throw StoreError(code: .invalidData, message: "snapshot seq \(snapshot.seq) is below 1")
        }
        try Self.checkJSON(snapshot.json, "snapshot \(snapshot.seq)")
        var kept = snapshots[snapshot.session] ?? []
        let index = kept.partitioningIndex { $0.seq >= snapshot.seq }
        guard index == kept.count || kept[index].seq != snapshot.seq else {
            throw StoreError(code: .conflict, message: "session \(snapshot.session) has a snapshot \(snapshot.seq)")
        }
        kept.insert(snapshot, at: index)
        snapshots[snapshot.session] = kept
    }

    /// Keeps the first answer under a key: an unexpired record makes the write a conflict, an
    /// expired one is replaced.
    mutating func keep(_ record: IdempotencyRecord, cutoff: Int64) throws(StoreError) {
        let key = IdempotencyKey(scope: record.scope, key: record.key)
        if let existing = idempotency[key], existing.createdAt.millisecondsSince1970 >= cutoff {
            throw StoreError(code: .conflict, message: "an answer is kept under \(record.scope) \(record.key)")
        }
        if let session = record.session, sessions[session] == nil {
            throw StoreError(code: .invalidData, message: "session \(session) does not exist")
        }
        var kept = record
        kept.createdAt = record.createdAt.storedMillisecond
        idempotency[key] = kept
    }

    /// `.invalidData` unless `text` is JSON, as the databases' checks refuse it.
    private static func checkJSON(_ text: String, _ what: String) throws(StoreError) {
        do {
            _ = try JSONValue(parsing: text, maxDepth: 1_000)
        } catch {
            throw StoreError(code: .invalidData, message: "\(what) is not JSON: \(error)")
        }
    }
}

extension Date {
    /// The date to the millisecond, as the store keeps it.
    fileprivate var storedMillisecond: Date { Date(millisecondsSince1970: millisecondsSince1970) }
}

extension Optional {
    /// Changes the wrapped value in place (nothing else holds it meanwhile, so it is not
    /// copied); false when there is none.
    @discardableResult
    fileprivate mutating func modify(_ body: (inout Wrapped) -> Void) -> Bool {
        guard case .some(var value) = self else { return false }
        self = nil
        body(&value)
        self = value
        return true
    }
}

extension Collection {
    /// The index of the first element for which `belongs` holds, in a collection where every
    /// element for which it holds comes after every one for which it does not.
    fileprivate func partitioningIndex(where belongs: (Element) -> Bool) -> Index {
        var low = startIndex
        var count = self.count
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if belongs(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}
