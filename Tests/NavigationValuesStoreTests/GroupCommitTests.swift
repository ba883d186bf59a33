import Dispatch
import Foundation
import NavigationValuesWire
import Testing

@testable import NavigationValuesPostgres
@testable import NavigationValuesSQLite
@testable import NavigationValuesStore

/// A store whose writer queue a test can hold, so that commits queue up and share one batch.
protocol GatedStore: SessionStore {
    func enqueueOnWriter(_ work: @escaping @Sendable () -> Void)
    var queuedCommitCount: Int { get }
}

extension SQLSessionStore: GatedStore {
    func enqueueOnWriter(_ work: @escaping @Sendable () -> Void) { driver.enqueueOnWriter(work) }
}

@Suite struct GroupCommitTests {
    /// Holds the writer queue until `release()`, so that commits queue up and share one batch.
    final class WriterGate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        init(_ store: any GatedStore) {
            store.enqueueOnWriter { [semaphore] in semaphore.wait() }
        }
        func release() { semaphore.signal() }
    }

    /// Waits, up to `timeout`, until `count` commits are queued.
    func waitUntilQueued(_ store: any GatedStore, count: Int, timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while store.queuedCommitCount < count {
            guard ContinuousClock.now < deadline else {
                Issue.record("only \(store.queuedCommitCount) of \(count) commits queued")
                return
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Queues each request (one mutation: `commit`; several: `commitAll`) behind `gate`, one at a
    /// time and in order, then opens the gate; returns each request's error, nil when it committed.
    /// One at a time: child tasks started together may reach the queue in any order, and a seq
    /// queued before the one below it is a conflict (seen at load: 9 failures instead of 1).
    func commitQueuedInOrder(
        _ requests: [[StoredMutation]], to store: any GatedStore, behind gate: WriterGate
    ) async throws -> [StoreError?] {
        try await withThrowingTaskGroup(of: (Int, StoreError?).self) { group in
            for (position, mutations) in requests.enumerated() {
                group.addTask {
                    do {
                        if mutations.count == 1 {
                            try await store.commit(mutations[0])
                        } else {
                            try await store.commitAll(mutations)
                        }
                        return (position, nil)
                    } catch let error as StoreError {
                        return (position, error)
                    }
                }
                try await waitUntilQueued(store, count: position + 1)
            }
            gate.release()
            var results = [StoreError?](repeating: nil, count: requests.count)
            for try await (position, error) in group { results[position] = error }
            return results
        }
    }

    /// (Not on the in-memory store: it commits each call at once, with no writer queue to hold.)
    @Test(arguments: StoreSetup.contract.filter { ![.reopenedFile, .reopenedPostgres, .inMemory].contains($0) })
    func aDuplicateSeqFailsOnlyItsOwnCallerInsideABatch(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = try #require(subject.store as? any GatedStore)
            let sample = SampleSession()
            try await store.commit(sample.creation)
            let gate = WriterGate(store)
            // Seqs 2...11, and a second seq 6 that must fail alone.
            let seqs: [Int64] = Array(2...11) + [6]
            let requests = seqs.enumerated().map { position, seq in
                let value = position == seqs.count - 1 ? "duplicate" : "\(seq)"
                return [sample.mutation(seq, [.setValue(sample.root, key: "v\(seq)", json: #""\#(value)""#)])]
            }
            let results = try await commitQueuedInOrder(requests, to: store, behind: gate)
            // Whichever of the two seq-6 mutations ran second failed; every other one succeeded.
            let failed = results.enumerated().filter { $0.element != nil }
            #expect(failed.count == 1)
            #expect(failed.first.map { seqs[$0.offset] } == 6)
            #expect(failed.first?.element?.code == .conflict)
            #expect(store.metrics.largestBatch == seqs.count)
            #expect(store.metrics.batches == 2)
            let events = try await store.events(of: sample.id, after: 0, limit: 100)
            #expect(events.map(\.seq) == Array(1...11))
            let values = try #require(try await store.loadSession(sample.id)).screens[0].values
            #expect(values.count == 10)
        }
    }

    /// When the first request of a batch fails, it fails alone: a request of several mutations
    /// after it (commitAll) and a single one still commit, each exactly once.
    @Test(arguments: StoreSetup.sqlite.filter { $0 != .reopenedFile })
    func aBatchWhoseFirstRequestFailsKeepsTheOthers(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = try #require(subject.store as? SQLiteSessionStore)
            let sessions = (0..<3).map { SampleSession("s_batch\($0)") }
            for session in sessions { try await store.commit(session.creation) }
            let gate = WriterGate(store)
            let first = sessions[0]
            let pair = sessions[1]
            let single = sessions[2]
            let requests: [[StoredMutation]] = [
                // Made from version 2, which the session has not reached: a conflict.
                [first.mutation(3, [.setValue(first.root, key: "k", json: "1")])],
                [
                    pair.mutation(2, [.setValue(pair.root, key: "a", json: "1")]),
                    pair.mutation(3, [.setValue(pair.root, key: "b", json: "2")]),
                ],
                [single.mutation(2, [.setValue(single.root, key: "c", json: "3")])],
            ]
            let outcomes = try await commitQueuedInOrder(requests, to: store, behind: gate)
            #expect(outcomes[0]?.code == .conflict)
            #expect(outcomes[0]?.message.contains("is at version 1, not 2") == true)
            #expect(outcomes[1] == nil)
            #expect(outcomes[2] == nil)
            #expect(try await store.events(of: first.id, after: 0, limit: 10).map(\.seq) == [1])
            #expect(try await store.events(of: pair.id, after: 0, limit: 10).map(\.seq) == [1, 2, 3])
            #expect(try await store.events(of: single.id, after: 0, limit: 10).map(\.seq) == [1, 2])
            let paired = try #require(try await store.loadSession(pair.id))
            #expect(paired.record.version == 3)
            #expect(paired.screens[0].values == ["a": "1", "b": "2"])
            #expect(try #require(try await store.loadSession(first.id)).screens[0].values.isEmpty)
            #expect(store.metrics.batches == 4)
        }
    }

    /// Log-first commits (the state written behind) that fail inside a batch fail alone and leave
    /// nothing behind, whether their write ran in a savepoint of its own or not: an event the
    /// database refuses (its JSON is not JSON), the write's one changing statement, run without
    /// a savepoint; and an event followed by an idempotency record whose key is taken, which
    /// must take its event back with it. The commits around them land, and no state of a failed
    /// one waits to be written.
    @Test func logFirstCommitsThatFailInsideABatchLeaveNothingBehind() async throws {
        let held = WriteBehind(maximumEvents: 1_000, maximumDelay: .seconds(60), isHeldForTests: true)
        try await withWriteBehindStore(held) { store, _ in
            let sessions = (0..<4).map { SampleSession("s_logfirst\($0)") }
            for session in sessions { try await store.commit(session.creation) }
            func record(_ session: SampleSession) -> IdempotencyRecord {
                IdempotencyRecord(
                    scope: "POST /v1/sessions/push", key: "k", status: 200, headers: [:], body: Data("{}".utf8),
                    createdAt: Date(), session: session.id)
            }
            try await store.commit(sessions[0].mutation(2, idempotency: record(sessions[0])))
            var refused = sessions[1].mutation(2, [.setValue(sessions[1].root, key: "a", json: "1")])
            refused.event.json = "not JSON"
            let gate = WriterGate(store)
            let requests: [[StoredMutation]] = [
                [sessions[0].mutation(3, [.setValue(sessions[0].root, key: "b", json: "2")])],
                [refused],
                [
                    sessions[2].mutation(
                        2, [.setValue(sessions[2].root, key: "c", json: "3")], idempotency: record(sessions[2]))
                ],
                [sessions[3].mutation(2, [.setValue(sessions[3].root, key: "d", json: "4")])],
            ]
            let outcomes = try await commitQueuedInOrder(requests, to: store, behind: gate)
            #expect(outcomes[0] == nil)
            #expect(outcomes[1]?.code == .invalidData)
            #expect(outcomes[2]?.code == .conflict)
            #expect(outcomes[3] == nil)
            #expect(store.metrics.largestBatch == 4)
            #expect(store.metrics.stateLagEvents == 3, "seqs 2 and 3 of the first session, 2 of the last")
            #expect(try await store.events(of: sessions[0].id, after: 0, limit: 10).map(\.seq) == [1, 2, 3])
            #expect(try await store.events(of: sessions[1].id, after: 0, limit: 10).map(\.seq) == [1])
            #expect(try await store.events(of: sessions[2].id, after: 0, limit: 10).map(\.seq) == [1])
            #expect(try await store.events(of: sessions[3].id, after: 0, limit: 10).map(\.seq) == [1, 2])
            let answer = try #require(try await store.idempotencyRecord(scope: "POST /v1/sessions/push", key: "k"))
            #expect(answer.session == sessions[0].id)
            #expect(try #require(try await store.loadSession(sessions[0].id)).screens[0].values == ["b": "2"])
            #expect(try #require(try await store.loadSession(sessions[1].id)).record.version == 1)
            #expect(try #require(try await store.loadSession(sessions[2].id)).screens[0].values.isEmpty)
            #expect(try #require(try await store.loadSession(sessions[3].id)).screens[0].values == ["d": "4"])
        }
    }

    @Test func closingFinishesTheQueuedCommitsFirst() async throws {
        try await withTemporaryDatabase { path in
            let store = try await SQLiteSessionStore.open(path: path)
            let gate = WriterGate(store)
            let sessions = (0..<5).map { SampleSession("s_\($0)") }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for session in sessions {
                    group.addTask { try await store.commit(session.creation) }
                }
                try await waitUntilQueued(store, count: sessions.count)
                group.addTask { await store.close() }
                gate.release()
                try await group.waitForAll()
            }
            await expectStoreError(.closed) { try await store.commit(SampleSession("s_late").creation) }
            let reopened = try SQLiteSessionStore(path: path)
            #expect(try await reopened.sessions(after: nil, limit: 10).map(\.id) == sessions.map(\.id))
            await reopened.close()
        }
    }

    @Test(arguments: StoreSetup.contract.filter { [.reopenedFile, .reopenedPostgres, .inMemory].contains($0) })
    func twoHundredConcurrentCommitsAllLand(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let session = SampleSession("s_\(1000 + index)")
                        try await store.commit(session.creation)
                    }
                }
                try await group.waitForAll()
            }
            let reopened = try await subject.reading()
            let listed = try await reopened.sessions(after: nil, limit: 1_000)
            #expect(listed.map(\.id) == (0..<200).map { SessionID("s_\(1000 + $0)") })
            let metrics = store.metrics
            #expect(metrics.committedMutations == 200)
            #expect(metrics.failedMutations == 0)
            #expect(metrics.batches >= 1 && metrics.batches <= 200)
            #expect(metrics.commitLatencyBuckets.last ?? 0 <= 200)
            #expect(metrics.commitLatencySum > 0)
        }
    }
}
