import Foundation
import NavigationValuesStore
import Testing

/// A mutation that cannot be written fails alone, as a typed error, and leaves nothing behind.
@Suite struct CommitFailureTests {
    let sample = SampleSession()

    @Test(arguments: StoreSetup.contract)
    func aDuplicateSeqIsAConflictAndItsChangesAreUndone(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            try await store.commit(sample.mutation(2, [.setValue(sample.root, key: "k", json: "1")]))
            let error = await expectStoreError(.conflict) {
                try await store.commit(sample.mutation(2, [.setValue(sample.root, key: "k", json: "2")]))
            }
            // The commit was conditional on version 1, which the session left behind.
            #expect(error?.message.contains("is at version 2, not 1") == true, "\(String(describing: error))")
            let session = try #require(try await subject.reading().loadSession(sample.id))
            #expect(session.screens[0].values == ["k": "1"])
            #expect(session.record.version == 2)
        }
    }

    @Test(arguments: StoreSetup.contract)
    func aDuplicateSessionIsAConflict(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            try await subject.store.commit(sample.creation)
            await expectStoreError(.conflict) { try await subject.store.commit(sample.creation) }
        }
    }

    @Test(arguments: StoreSetup.contract)
    func changesToRowsThatDoNotExistAreInvalidData(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            // Updating a session that does not exist.
            await expectStoreError(.invalidData) { try await store.commit(sample.mutation(1)) }
            try await store.commit(sample.creation)
            // Remembering a delivery for a handler that does not exist.
            await expectStoreError(.invalidData) {
                try await store.commit(
                    sample.mutation(2, [.rememberDelivery(sample.root, key: "none", valueJSON: "1", passedJSON: nil)]))
            }
            // A screen of an unknown session (foreign key).
            let stranger = SampleSession("s_stranger")
            await expectStoreError(.invalidData) {
                try await store.commit(sample.mutation(2, [.insertScreen(stranger.screenRecord(0))]))
            }
            // A value that is not JSON (CHECK json_valid).
            await expectStoreError(.invalidData) {
                try await store.commit(sample.mutation(2, [.setValue(sample.root, key: "k", json: "{not json")]))
            }
            // Deleting a screen that another screen still links to.
            try await store.commit(sample.mutation(2, [.insertScreen(sample.screenRecord(1))]))
            await expectStoreError(.invalidData) {
                try await store.commit(sample.mutation(3, [.deleteScreens([sample.root])]))
            }
            // An event of another session.
            var mixed = sample.mutation(3)
            mixed.event.session = stranger.id
            await expectStoreError(.invalidData) { try await store.commit(mixed) }
            #expect(try await store.events(of: sample.id, after: 0, limit: 10).map(\.seq) == [1, 2])
            #expect(store.metrics.failedMutations == 6)
            #expect(store.metrics.committedMutations == 2)
        }
    }

    @Test(arguments: StoreSetup.contract)
    func aClosedStoreRefusesWork(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            await subject.store.close()
            await expectStoreError(.closed) { try await subject.store.commit(sample.creation) }
            await expectStoreError(.closed) { _ = try await subject.store.loadSession(sample.id) }
        }
    }
}
