import Foundation
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesPostgres
@testable import NavigationValuesSQLite
@testable import NavigationValuesStore

/// What the store adds for the server's limits, on every backend: pages bounded by bytes, the token hash
/// read alone, retention's maintenance, idempotency records that go with their session, and
/// honest readiness.
@Suite struct StoreLimitsContractTests {
    let sample = SampleSession()

    /// Event `seq` whose JSON is about `bytes` long.
    func sized(_ seq: Int64, bytes: Int) -> StoredMutation {
        var mutation = sample.mutation(seq)
        mutation.event.json = #"{"seq":\#(seq),"pad":"\#(String(repeating: "x", count: bytes))"}"#
        return mutation
    }

    @Test(arguments: StoreSetup.contract)
    func aPageStopsAtItsBytesButAlwaysHoldsOneEvent(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            // Events 2...6 of about 1,000 bytes, then 7 of 10,000 and 8 of 10.
            for seq in Int64(2)...6 { try await store.commit(sized(seq, bytes: 1_000)) }
            try await store.commit(sized(7, bytes: 10_000))
            try await store.commit(sized(8, bytes: 10))
            let reader = try await subject.reading()
            let everything = try await reader.events(of: sample.id, after: 0, limit: 100)
            let sizes = Dictionary(uniqueKeysWithValues: everything.map { ($0.seq, $0.json.utf8.count) })

            // 2,500 bytes after event 1: events 2 and 3 fit, 4 would not.
            let first = try await reader.eventPage(of: sample.id, after: 1, limit: 100, maxBytes: 2_500)
            #expect(first.events.map(\.seq) == [2, 3])
            #expect(first.hasMore)
            #expect(first.events == Array(everything[1...2]))
            // A budget of exactly the bytes of 2...6 takes them all.
            let exact = (2...6).reduce(0) { $0 + sizes[Int64($1)]! }
            let five = try await reader.eventPage(of: sample.id, after: 1, limit: 100, maxBytes: exact)
            #expect(five.events.map(\.seq) == [2, 3, 4, 5, 6])
            #expect(five.hasMore)
            // An event larger than the whole budget still comes, alone.
            let big = try await reader.eventPage(of: sample.id, after: 6, limit: 100, maxBytes: 100)
            #expect(big.events.map(\.seq) == [7])
            #expect(big.hasMore)
            // The count bounds too; the last page says there is no more.
            let counted = try await reader.eventPage(of: sample.id, after: 0, limit: 3, maxBytes: 1_000_000)
            #expect(counted.events.map(\.seq) == [1, 2, 3])
            #expect(counted.hasMore)
            let last = try await reader.eventPage(of: sample.id, after: 7, limit: 100, maxBytes: 100)
            #expect(last.events.map(\.seq) == [8])
            #expect(!last.hasMore)
            let none = try await reader.eventPage(of: sample.id, after: 8, limit: 100, maxBytes: 100)
            #expect(none == EventPage(events: [], hasMore: false))
        }
    }

    /// Events stored before their size was (an older binary's rows, NULL `bytes`) are measured
    /// from their JSON, and cut exactly as the others.
    @Test(arguments: [StoreSetup.file] + (PostgresTestServer.isAvailable ? [StoreSetup.postgres] : []))
    func aPageMeasuresEventsStoredWithoutTheirSize(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            for seq in Int64(2)...6 { try await store.commit(sized(seq, bytes: 1_000)) }
            let measured = try await store.eventPage(of: sample.id, after: 1, limit: 100, maxBytes: 2_500)
            let forget = "UPDATE events SET bytes = NULL WHERE seq <= 4"
            if setup.isPostgres {
                try PostgresConnection(url: subject.path).query(forget)
            } else {
                try Database(path: subject.path).execute(forget)
            }
            let unmeasured = try await store.eventPage(of: sample.id, after: 1, limit: 100, maxBytes: 2_500)
            #expect(unmeasured == measured)
            #expect(unmeasured.events.map(\.seq) == [2, 3])
            #expect(unmeasured.hasMore)
        }
    }

    @Test(arguments: StoreSetup.contract)
    func accessReadsTheTokenHashStateVersionAndCompactedSeqAlone(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            try await store.commit(sample.mutation(2))
            let reader = try await subject.reading()
            #expect(
                try await reader.access(to: sample.id)
                    == SessionAccess(tokenHash: "ab12", state: .active, version: 2, compactedSeq: 0))
            #expect(try await reader.access(to: SessionID("s_missing")) == nil)
        }
    }

    @Test(arguments: StoreSetup.contract)
    func compactionKeepsTheNewestEventsBehindASnapshotAndRecordsThePoint(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            for seq in Int64(2)...10 {
                let snapshot =
                    seq % 4 == 0 ? StoredSnapshot(session: sample.id, seq: seq, json: #"{"at":\#(seq)}"#) : nil
                try await store.commit(sample.mutation(seq, snapshot: snapshot))
            }
            // Compacted through the store that reads (the same, another instance's, or the file
            // reopened, as after a restart).
            let reader = try await subject.reading()
            let maintenance = try #require(reader as? any SessionStoreMaintenance)
            // Nothing to do without a rule.
            #expect(try await maintenance.compactHistory(CompactionRule(), now: sample.at, limit: 10) == 0)
            // Keep 3: the newest snapshot with 3 events after it is at 4 (8 has only 2).
            #expect(try await maintenance.compactHistory(CompactionRule(keepEvents: 3), now: sample.at, limit: 10) == 4)
            #expect(try await reader.events(of: sample.id, after: 0, limit: 100).map(\.seq) == Array(5...10))
            #expect(try await reader.snapshot(of: sample.id, atOrBefore: 10)?.seq == 8)
            #expect(try await reader.snapshot(of: sample.id, atOrBefore: 7)?.seq == 4)
            #expect(try await reader.access(to: sample.id)?.compactedSeq == 4)
            #expect(try await reader.loadSession(sample.id)?.record.compactedSeq == 4)
            // Again with the same rule: nothing more.
            #expect(try await maintenance.compactHistory(CompactionRule(keepEvents: 3), now: sample.at, limit: 10) == 0)
            // By age: event 8 is at +8 s; a cutoff after it lets 8 go, one before it does not.
            let early = sample.at.addingTimeInterval(8 + 60)
            #expect(
                try await maintenance.compactHistory(CompactionRule(keepAge: .seconds(60)), now: early, limit: 10) == 0)
            let late = sample.at.addingTimeInterval(8.5 + 60)
            #expect(
                try await maintenance.compactHistory(CompactionRule(keepAge: .seconds(60)), now: late, limit: 10) == 4)
            #expect(try await reader.events(of: sample.id, after: 0, limit: 100).map(\.seq) == [9, 10])
            #expect(try await reader.snapshot(of: sample.id, atOrBefore: 8)?.seq == 8)
            #expect(try await reader.snapshot(of: sample.id, atOrBefore: 7) == nil)
            #expect(try await reader.access(to: sample.id)?.compactedSeq == 8)
            // Writes go on after the compacted point.
            try await reader.commit(sample.mutation(11))
            #expect(try await reader.events(of: sample.id, after: 8, limit: 100).map(\.seq) == [9, 10, 11])
        }
    }

    @Test(arguments: StoreSetup.contract)
    func retentionFindsSessionsByStateAndAgeOldestFirst(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            let older = SampleSession("s_older", at: sample.at)
            let newer = SampleSession("s_newer", at: sample.at.addingTimeInterval(100))
            try await store.commit(newer.creation)
            try await store.commit(older.creation)
            let maintenance = try #require(store as? any SessionStoreMaintenance)
            let all = try await maintenance.sessions(
                in: .active, updatedBefore: sample.at.addingTimeInterval(1_000), limit: 10)
            #expect(all.map(\.id) == [older.id, newer.id])
            #expect(all.first == SessionStamp(id: older.id, version: 1, updatedAt: older.at))
            #expect(
                try await maintenance.sessions(in: .active, updatedBefore: sample.at.addingTimeInterval(50), limit: 10)
                    .map(\.id) == [older.id])
            #expect(
                try await maintenance.sessions(
                    in: .active, updatedBefore: sample.at.addingTimeInterval(1_000), limit: 1
                )
                .map(\.id) == [older.id])
            #expect(
                try await maintenance.sessions(
                    in: .ended, updatedBefore: sample.at.addingTimeInterval(1_000), limit: 10
                )
                .isEmpty)
        }
    }

    /// Retention's index is on updated_at rounded down to its minute, moved only when a change
    /// crosses into another minute or changes the state (Migrations/0008; for PostgreSQL,
    /// Migrations/postgres/0006): within one
    /// minute, and across minutes, what retention finds still follows the exact last change.
    @Test(arguments: StoreSetup.contract)
    func retentionFollowsTheExactLastChangeWithinAndAcrossMinutes(setup: StoreSetup) async throws {
        let minute = Date(millisecondsSince1970: 1_796_000_040_000)  // a minute's first millisecond
        func at(_ milliseconds: Int64) -> Date {
            Date(millisecondsSince1970: minute.millisecondsSince1970 + milliseconds)
        }
        func change(_ session: SampleSession, to version: Int64, at date: Date, _ state: SessionState = .active)
            -> StoredMutation
        {
            var event = session.event(version)
            event.at = date
            return StoredMutation(
                session: session.id, event: event,
                changes: [.updateSession(session.id, version: version, state: state, updatedAt: date)])
        }
        try await withStore(setup) { subject in
            let store = subject.store
            let early = SampleSession("s_early", at: at(10_000))
            let moved = SampleSession("s_moved", at: at(5_000))  // changed again later in the minute
            let crossed = SampleSession("s_crossed", at: at(-50_000))  // the minute before, changed in this one
            let ended = SampleSession("s_ended", at: at(15_000))
            let stale = SampleSession("s_stale", at: at(-50_001))  // left in the minute before
            for session in [early, moved, crossed, ended, stale] { try await store.commit(session.creation) }
            try await store.commit(change(moved, to: 2, at: at(30_000)))
            try await store.commit(change(crossed, to: 2, at: at(20_000)))
            try await store.commit(change(ended, to: 2, at: at(25_000), .ended))
            let reader = try await subject.reading()
            let maintenance = try #require(reader as? any SessionStoreMaintenance)
            func found(_ state: SessionState, before milliseconds: Int64, limit: Int = 10) async throws -> [String] {
                try await maintenance.sessions(in: state, updatedBefore: at(milliseconds), limit: limit)
                    .map(\.id.rawValue)
            }
            // Strictly before, to the millisecond, oldest change first.
            #expect(try await found(.active, before: 30_001) == ["s_stale", "s_early", "s_crossed", "s_moved"])
            #expect(try await found(.active, before: 30_000) == ["s_stale", "s_early", "s_crossed"])
            #expect(try await found(.active, before: 20_000) == ["s_stale", "s_early"])
            #expect(try await found(.active, before: 10_000) == ["s_stale"])
            #expect(try await found(.active, before: 0) == ["s_stale"])
            #expect(try await found(.active, before: -50_001).isEmpty)
            #expect(try await found(.active, before: 120_000, limit: 2) == ["s_stale", "s_early"])
            // The ended session left the active ones, with its exact time.
            #expect(try await found(.ended, before: 25_000).isEmpty)
            let endedStamps = try await maintenance.sessions(in: .ended, updatedBefore: at(25_001), limit: 10)
            #expect(endedStamps == [SessionStamp(id: ended.id, version: 2, updatedAt: at(25_000))])
            let movedStamp = try await maintenance.sessions(in: .active, updatedBefore: at(60_000), limit: 10).last
            #expect(movedStamp == SessionStamp(id: moved.id, version: 2, updatedAt: at(30_000)))
            if subject.setup.isSQLiteFile {
                // The stored minute is exactly updated_at's, for every row.
                let db = try Database(path: subject.path)
                #expect(
                    try db.fetchOne(
                        "SELECT count(*) FROM sessions WHERE updated_minute IS NOT updated_at - updated_at % 60000"
                    ) { $0.int(0) } == 0)
            }
            if subject.setup.isPostgres {
                // The same on PostgreSQL (Migrations/postgres/0006), rounded in UTC.
                let connection = try PostgresConnection(url: subject.path)
                let rows = try connection.query(
                    """
                    SELECT count(*) FROM sessions
                    WHERE updated_minute <> date_trunc('minute', updated_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                    """
                ).rows
                #expect(rows == [["0"]])
            }
        }
    }

    @Test(arguments: StoreSetup.contract)
    func idempotencyRecordsGoWithTheirSessionAndTombstonesExpire(setup: StoreSetup) async throws {
        let clock = TestClock(sample.at)
        try await withStore(setup, now: { clock.now }) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            let push = IdempotencyRecord(
                scope: "POST /v1/sessions/s_sample/push", key: "k1", status: 201, headers: [:],
                body: Data("sealed".utf8), createdAt: clock.now, session: sample.id)
            try await store.commit(sample.mutation(2, idempotency: push))
            #expect(try await store.idempotencyRecord(scope: push.scope, key: "k1") == push)
            // The purge deletes the session's records; its own stays, attached to none.
            let purgeRecord = IdempotencyRecord(
                scope: "POST /v1/sessions/s_sample/purge", key: "k2", status: 204, headers: [:], body: Data(),
                createdAt: clock.now, session: sample.id)
            var purge = sample.mutation(3, [.purgeSession(sample.id)], idempotency: purgeRecord)
            purge.changes.removeAll { if case .updateSession = $0 { true } else { false } }
            try await store.commit(purge)
            let reader = try await subject.reading()
            #expect(try await reader.idempotencyRecord(scope: push.scope, key: "k1") == nil)
            var kept = purgeRecord
            kept.session = nil
            #expect(try await reader.idempotencyRecord(scope: purgeRecord.scope, key: "k2") == kept)
            #expect(try await reader.wasPurged(sample.id))
            // Tombstones purged before the cutoff go; the purge's record goes once expired.
            let maintenance = try #require(reader as? any SessionStoreMaintenance)
            #expect(try await maintenance.removeExpiredRecords(tombstonesBefore: clock.now.addingTimeInterval(-1)) == 0)
            #expect(try await reader.wasPurged(sample.id))
            clock.advance(by: 24 * 60 * 60 + 1)
            #expect(try await maintenance.removeExpiredRecords(tombstonesBefore: clock.now) == 2)
            #expect(try await !reader.wasPurged(sample.id))
            #expect(try await reader.idempotencyRecord(scope: purgeRecord.scope, key: "k2") == nil)
        }
    }

    @Test(arguments: StoreSetup.contract)
    func aStoreThatWritesIsReady(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            try await subject.store.checkWritable()
            try await subject.store.commit(sample.creation)
            try await subject.store.checkWritable()
        }
    }

    /// PostgreSQL in read-only mode (as a standby, or an administrator's switch) is not ready,
    /// and is again once writes work.
    @Test(.needsPostgres)
    func aReadOnlyPostgreSQLIsNotReadyUntilItWritesAgain() async throws {
        try await PostgresTestServer.withDatabase { url in
            let store = try await PostgresSessionStore.open(url: url, configuration: .testing())
            try await store.checkWritable()
            let admin = try await PostgresTestServer.adminURL()
            let name = try #require(URLComponents(string: url)?.path.dropFirst())
            try await PostgresTestServer.psql(admin, "ALTER DATABASE \(name) SET default_transaction_read_only = on")
            await store.dropConnections()
            try await waitUntil("not ready") {
                do {
                    try await store.checkWritable()
                    return false
                } catch let error as StoreError {
                    return error.code == .unavailable
                }
            }
            await expectStoreError(.unavailable) { try await store.commit(sample.creation) }
            try await PostgresTestServer.psql(admin, "ALTER DATABASE \(name) RESET default_transaction_read_only")
            await store.dropConnections()
            try await waitUntil("ready again") { (try? await store.checkWritable()) != nil }
            try await store.commit(sample.creation)
            await store.close()
        }
    }
}
