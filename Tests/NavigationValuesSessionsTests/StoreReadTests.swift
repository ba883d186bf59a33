import Foundation
import NavigationValues
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

@testable import NavigationValuesSessions

/// The service reads history a page at a time and checks tokens with one small read, through the
/// store's own `eventPage` and `access`: never through reads of whole events or whole sessions that
/// a default built on `events(of:)` or `loadSession` would make.
@Suite struct StoreReadTests {
    @Test func aTokenCheckAndAForkUseTheStoresOwnBoundedReads() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-reads-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let sqlite = try await SQLiteSessionStore.open(path: folder.appendingPathComponent("s.sqlite").path)
            let store = CountingStore(sqlite)
            let first = SessionService(store: store, configuration: ServiceConfiguration())
            guard case .created(let created) = try await first.sessions.create(body: [:], idempotency: nil) else {
                throw SessionServiceTests.TestFailure("create replayed")
            }
            let id = created.session.id
            for name in ["B", "C", "D"] {
                _ = try await first.sessions.perform(
                    .push(stack: "main", body: ["name": .string(name)]), on: id,
                    context: CommandContext(credential: .token(created.token)))
            }

            // A second service, as after a restart: nothing is loaded.
            let second = SessionService(store: store, configuration: ServiceConfiguration())
            store.reset()
            let other = IdentifierGenerator.live.token()
            await #expect(throws: SessionError.self) {
                _ = try await second.sessions.readerHead(of: id, credential: .token(other), snapshot: false)
            }
            #expect(store.count(.access) == 1)
            #expect(store.count(.loadSession) == 0)

            store.reset()
            _ = try await second.copies.fork(id, at: nil, credential: .token(created.token), idempotency: nil)
            #expect(store.count(.eventPage) >= 1)
            #expect(store.count(.events) == 0)
            await sqlite.close()
        }
    }
}

/// A real store behind a wrapper that counts the reads made through it.
final class CountingStore: SessionStore {
    enum Read: Hashable, Sendable { case events, eventPage, access, loadSession }

    let base: any SessionStore
    private let counts = Mutex<[Read: Int]>([:])

    init(_ base: any SessionStore) { self.base = base }

    func count(_ read: Read) -> Int { counts.withLock { $0[read, default: 0] } }
    func reset() { counts.withLock { $0 = [:] } }
    private func counted(_ read: Read) { counts.withLock { $0[read, default: 0] += 1 } }

    func events(of id: SessionID, after: Int64, limit: Int) async throws -> [StoredEvent] {
        counted(.events)
        return try await base.events(of: id, after: after, limit: limit)
    }

    func eventPage(of id: SessionID, after: Int64, limit: Int, maxBytes: Int) async throws
        -> NavigationValuesStore.EventPage
    {
        counted(.eventPage)
        return try await base.eventPage(of: id, after: after, limit: limit, maxBytes: maxBytes)
    }

    func access(to id: SessionID) async throws -> NavigationValuesStore.SessionAccess? {
        counted(.access)
        return try await base.access(to: id)
    }

    func loadSession(_ id: SessionID) async throws -> StoredSession? {
        counted(.loadSession)
        return try await base.loadSession(id)
    }

    func commit(_ mutation: StoredMutation) async throws { try await base.commit(mutation) }
    func commitAll(_ mutations: [StoredMutation]) async throws { try await base.commitAll(mutations) }
    func snapshot(of id: SessionID, atOrBefore seq: Int64) async throws -> StoredSnapshot? {
        try await base.snapshot(of: id, atOrBefore: seq)
    }
    func sessions(after cursor: SessionID?, limit: Int) async throws -> [SessionSummary] {
        try await base.sessions(after: cursor, limit: limit)
    }
    func idempotencyRecord(scope: String, key: String) async throws -> IdempotencyRecord? {
        try await base.idempotencyRecord(scope: scope, key: key)
    }
    func wasPurged(_ id: SessionID) async throws -> Bool { try await base.wasPurged(id) }
    func checkWritable() async throws { try await base.checkWritable() }
    func beginTurn(on id: SessionID, until deadline: ContinuousClock.Instant) async throws -> any SessionTurn {
        try await base.beginTurn(on: id, until: deadline)
    }
    func version(of id: SessionID) async throws -> Int64? { try await base.version(of: id) }
    var isShared: Bool { base.isShared }
    func commitNotices() -> AsyncStream<CommitNotice> { base.commitNotices() }
    var metrics: StoreMetrics { base.metrics }
    func close() async { await base.close() }
    func insertObserver(
        _ observer: ObserverRecord, limit: Int, now: Date, idempotency: IdempotencyRecord?
    ) async throws -> Bool {
        try await base.insertObserver(observer, limit: limit, now: now, idempotency: idempotency)
    }
    func observer(tokenHash: String) async throws -> ObserverRecord? { try await base.observer(tokenHash: tokenHash) }
    func observer(id: ObserverID) async throws -> ObserverRecord? { try await base.observer(id: id) }
    func observers(of session: SessionID?, after cursor: ObserverID?, limit: Int) async throws -> [ObserverRecord] {
        try await base.observers(of: session, after: cursor, limit: limit)
    }
    func deleteObserver(_ id: ObserverID) async throws -> Bool { try await base.deleteObserver(id) }
    func insertHandoff(_ handoff: HandoffRecord, limit: Int, now: Date) async throws -> Bool {
        try await base.insertHandoff(handoff, limit: limit, now: now)
    }
    func handoff(id: String) async throws -> HandoffRecord? { try await base.handoff(id: id) }
    func consumeHandoff(_ id: String, at: Date, device: DeviceTokenRecord?, maxDevices: Int) async throws
        -> HandoffConsumption
    {
        try await base.consumeHandoff(id, at: at, device: device, maxDevices: maxDevices)
    }
    func deviceTokenSession(tokenHash: String) async throws -> SessionID? {
        try await base.deviceTokenSession(tokenHash: tokenHash)
    }
}
