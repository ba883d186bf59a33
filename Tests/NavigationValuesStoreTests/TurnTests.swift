import Foundation
import NavigationValuesPostgres
import NavigationValuesStore
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

/// A writer's turn on a session: the session as stored once the writers before it are done, and
/// a commit no other writer can get ahead of.
@Suite struct TurnTests {
    let sample = SampleSession()

    @Test(arguments: StoreSetup.contract)
    func aTurnReadsTheSessionAndCommitsItsMutation(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            try await store.commit(sample.mutation(2))
            let turn = try await store.beginTurn(on: sample.id, until: .now + .seconds(10))
            #expect(turn.session?.record.version == 2)
            try await turn.commit(sample.mutation(3))
            await turn.end()  // nothing more once committed
            #expect(try await store.version(of: sample.id) == 3)
            #expect(store.metrics.turns == 1)
            #expect(store.metrics.committedMutations == 3)
            let missing = try await store.beginTurn(on: SessionID("s_missing"), until: .now + .seconds(10))
            #expect(missing.session == nil)
            await missing.end()
        }
    }

    /// Two stores on one database, as two instances: a turn holds the session's row until it
    /// commits; the next waits for it, then reads what it committed. Past its deadline, a wait
    /// is a conflict.
    @Test(.needsPostgres) func aSecondTurnWaitsForTheFirstAndAWaitPastItsDeadlineIsAConflict() async throws {
        try await PostgresTestServer.withDatabase { url in
            let first = try await PostgresSessionStore.open(url: url, configuration: .testing())
            let second = try await PostgresSessionStore.open(url: url, configuration: .testing())
            do {
                try await first.commit(sample.creation)
                let holding = try await first.beginTurn(on: sample.id, until: .now + .seconds(10))

                // Past its deadline while the first holds the session: a conflict, and nothing kept.
                let started = ContinuousClock.now
                await expectStoreError(.conflict) {
                    _ = try await second.beginTurn(on: sample.id, until: .now + .milliseconds(300))
                }
                #expect(ContinuousClock.now - started >= .milliseconds(250))
                // A commit of the session through the group commit waits too, so it cannot get ahead.
                let ordinary = Task { try await second.commit(sample.mutation(2)) }

                // The next turn waits until the first commits, and reads what it committed.
                let waiting = Task { try await second.beginTurn(on: sample.id, until: .now + .seconds(10)) }
                try await Task.sleep(for: .milliseconds(200))
                try await holding.commit(sample.mutation(2))
                let next = try await waiting.value
                #expect(next.session?.record.version == 2)
                try await next.commit(sample.mutation(3))
                await expectStoreError(.conflict) { try await ordinary.value }
                #expect(try await first.events(of: sample.id, after: 0, limit: 10).map(\.seq) == [1, 2, 3])
                #expect(second.metrics.turns == 2)
            } catch {
                await first.close()
                await second.close()
                throw error
            }
            await first.close()
            await second.close()
        }
    }
}
