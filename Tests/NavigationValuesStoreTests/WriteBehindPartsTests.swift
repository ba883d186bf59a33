import Dispatch
import Foundation
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

@testable import NavigationValuesSQLite
@testable import NavigationValuesStore

/// The state written behind the log goes in parts of at most
/// ``WriteBehind/maximumSessionsPerWrite`` sessions, one transaction each, and the group commit's
/// batches run between two parts: a commit queued while the waiting state is being written waits
/// for one part at most, never for all of it (one transaction of every waiting session held the
/// writer for 5-15 ms every 50 ms under a paced load, which was most of its p90). On a real SQLite
/// file; nothing here is timed.
@Suite struct WriteBehindPartsTests {
    /// Parts of 4 sessions; nothing written behind on its own (no timer, no event bound).
    static let held = WriteBehind(
        maximumEvents: 1_000, maximumDelay: .seconds(60), maximumSessionsPerWrite: 4, isHeldForTests: true)

    /// The 20 sessions of these tests.
    static var samples: [SampleSession] { (0..<20).map { SampleSession("s_part_\($0)") } }

    /// ``samples``, each created (inline) then changed once (log-first, its state waiting).
    static func sessionsWithWaitingState(in store: SQLiteSessionStore) async throws -> [SampleSession] {
        let samples = Self.samples
        for sample in samples {
            try await store.commit(sample.creation)
            try await store.commit(sample.mutation(2, [.setValue(sample.root, key: "page", json: "2")]))
        }
        #expect(store.metrics.stateLagSessions == 20)
        return samples
    }

    @Test func everyTransactionOfWritesBehindHoldsAtMostItsBound() async throws {
        try await withWriteBehindStore(Self.held) { store, _ in
            _ = try await Self.sessionsWithWaitingState(in: store)
            await store.onWriter { store.writeStateBehind() }
            let metrics = store.metrics
            #expect(metrics.stateWriteSessions == 20)
            #expect(metrics.stateWrites == 5, "20 sessions in parts of 4: \(metrics.stateWrites) transactions")
            #expect(metrics.stateLagEvents == 0)
        } reopened: { reopened in
            // Every part committed: the rows as the log says.
            for sample in Self.samples {
                let loaded = try #require(try await reopened.loadSession(sample.id))
                #expect(loaded.record.version == 2)
                #expect(loaded.screens.first?.values == ["page": "2"])
            }
            #expect(reopened.metrics.stateCatchUps == 0)
        }
    }

    /// A round's parts come from one order, made when the round began: those that waited
    /// longest first, each session once; a session written on its own since (a read), purged,
    /// or changed again after the round began is passed over, and one whose changes arrived
    /// after the round began waits for the next round, even when they are dated earlier than its
    /// cutoff. (Filtering the waiting sessions again for each part takes that one in this round.)
    @Test func aRoundTakesItsPartsFromTheOrderItBeganWith() {
        var pending = PendingStates()
        let samples = Self.samples
        let start = ContinuousClock.now
        // s_part_19 waited longest, s_part_0 least.
        for (index, sample) in samples.enumerated() {
            pending.record(
                sample.mutation(2, [.setValue(sample.root, key: "page", json: "2")]),
                at: start + .milliseconds(20 - index))
        }
        let cutoff = start + .seconds(1)
        func ids(_ indices: [Int]) -> [SessionID] {
            indices.map { samples[$0].id }.sorted { $0.rawValue < $1.rawValue }
        }

        var part = pending.take(waitingSince: cutoff, maximum: 4)
        #expect(part.taken.map(\.session) == ids([16, 17, 18, 19]))
        #expect(part.more)
        _ = pending.take(only: samples[15].id)
        pending.forget(samples[14].id)
        pending.record(
            samples[19].mutation(3, [.setValue(samples[19].root, key: "page", json: "3")]),
            at: cutoff + .milliseconds(1))
        let late = SampleSession("s_part_late")
        pending.record(late.mutation(2, [.setValue(late.root, key: "page", json: "2")]), at: start)

        part = pending.take(waitingSince: cutoff, maximum: 4)
        #expect(part.taken.map(\.session) == ids([10, 11, 12, 13]))
        var rest: [SessionID] = []
        while part.more {
            part = pending.take(waitingSince: cutoff, maximum: 4)
            #expect(part.taken.count <= 4)
            rest += part.taken.map(\.session)
        }
        #expect(rest.sorted { $0.rawValue < $1.rawValue } == ids(Array(0...9)))
        #expect(Set(pending.sessions.keys) == [samples[19].id, late.id])
        #expect(pending.eventCount == 2)
        #expect(pending.round == nil, "the round ended: its order is not kept")

        // The next round takes both.
        part = pending.take(waitingSince: cutoff + .seconds(1), maximum: 4)
        #expect(Set(part.taken.map(\.session)) == [samples[19].id, late.id])
        #expect(!part.more)
    }

    /// The writer is held while a commit queues behind the start of a round of writes behind:
    /// the round writes its first part, the commit runs next, and only then the other parts.
    /// (With the round written in one transaction, the commit finds all 20 sessions written.)
    @Test func aCommitQueuedDuringARoundWaitsForOnePartOnly() async throws {
        try await withWriteBehindStore(Self.held) { store, _ in
            let samples = try await Self.sessionsWithWaitingState(in: store)

            let gate = DispatchSemaphore(value: 0)
            store.driver.enqueueOnWriter { gate.wait() }
            store.driver.enqueueOnWriter { store.startWritingStateBehind() }
            let late = samples[0]
            let commit = Task {
                try await store.commit(late.mutation(3, [.setValue(late.root, key: "page", json: "3")]))
            }
            while store.queuedCommitCount == 0 { try await Task.sleep(for: .milliseconds(1)) }
            // Runs on the writer right after the commit's batch, before the round's next part.
            let writtenWhenCommitted = Mutex(-1)
            store.driver.enqueueOnWriter {
                writtenWhenCommitted.withLock { $0 = store.metrics.stateWriteSessions }
            }
            gate.signal()
            try await commit.value
            await store.onWriter {}
            #expect(writtenWhenCommitted.withLock { $0 } == 4, "sessions written behind before the commit ran")

            // The round goes on to the end; the commit made after it started waits for the next.
            var waited = 0
            while store.metrics.stateWriteSessions < 20, waited < 5_000 {
                try await Task.sleep(for: .milliseconds(1))
                waited += 1
            }
            #expect(store.metrics.stateWriteSessions == 20)
            #expect(store.metrics.stateLagEvents == 1)
            let loaded = try #require(try await store.loadSession(late.id))
            #expect(loaded.record.version == 3)
            #expect(loaded.screens.first?.values == ["page": "3"])
        }
    }

    /// Under `--sync full` the transactions of state written behind skip the log's sync (the
    /// event log, synced first, rebuilds them), and only they: the mutations' batches are never
    /// among them, and the writer is at `synchronous=FULL` again after each.
    @Test func underSyncFullOnlyStateWritesSkipTheSync() async throws {
        try await withWriteBehindStore(Self.held, sync: .full) { store, _ in
            let samples = try await Self.sessionsWithWaitingState(in: store)
            #expect(store.driver.unsyncedTransactions.load(ordering: .relaxed) == 0, "40 commits, none unsynced")
            await store.onWriter { store.writeStateBehind() }
            #expect(store.metrics.stateWrites == 5)
            #expect(store.driver.unsyncedTransactions.load(ordering: .relaxed) == 5)
            // 2 is FULL (https://sqlite.org/pragma.html#pragma_synchronous).
            let synchronous = try await store.driver.write { db in
                try db.fetchOne("PRAGMA synchronous", []) { $0.int64(0) }
            }
            #expect(synchronous == 2)
            try await store.commit(samples[1].mutation(3, [.setValue(samples[1].root, key: "page", json: "3")]))
            #expect(store.driver.unsyncedTransactions.load(ordering: .relaxed) == 5)
        } reopened: { reopened in
            // kill -9 after the state's transactions is covered by the crash tests; here, the
            // rows reopen as the log says.
            let loaded = try #require(try await reopened.loadSession(Self.samples[0].id))
            #expect(loaded.record.version == 2)
        }
    }
}
