import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire
import Testing

/// What imports and forks need of the store (all of a copy or none, an origin on the session
/// row) and observer tokens (scoped, limited, revoked, cascading with their session).
@Suite struct CopiesAndObserversTests {
    @Test(arguments: StoreSetup.contract)
    func aCopyIsCommittedWholeOrNotAtAll(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let sample = SampleSession("s_copy")
            var creation = sample.creation
            creation.changes[0] = .insertSession(
                SessionRecord(
                    id: sample.id, version: 1, state: .active, schemaJSON: "{}", tokenHash: "ab", createdAt: sample.at,
                    updatedAt: sample.at, origin: SessionOrigin(session: SessionID("s_origin"), version: 7)))
            // The third event repeats seq 2: the whole copy fails and leaves nothing.
            await expectStoreError(.conflict) {
                try await subject.store.commitAll([creation, sample.mutation(2), sample.mutation(2)])
            }
            #expect(try await subject.store.loadSession(sample.id) == nil)
            try await subject.store.commitAll([creation, sample.mutation(2), sample.mutation(3)])
            let plain = SampleSession("s_plain")
            try await subject.store.commit(plain.creation)
            let store = try await subject.reading()
            #expect(try await store.loadSession(plain.id)?.record.origin == nil)
            let loaded = try #require(try await store.loadSession(sample.id))
            #expect(loaded.record.version == 3)
            #expect(loaded.record.origin == SessionOrigin(session: SessionID("s_origin"), version: 7))
            #expect(try await store.events(of: sample.id, after: 0, limit: 10).map(\.seq) == [1, 2, 3])
        }
    }

    /// A copy longer than one round trip's worth of statements (PostgreSQL sends a copy in
    /// chunks, all in one transaction): whole when it succeeds, nothing when its last event fails.
    @Test(arguments: StoreSetup.contract)
    func aLongCopyIsCommittedWholeOrNotAtAll(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let sample = SampleSession("s_long")
            let count: Int64 = 3_000
            // Every event rewrites the same rows (PostgreSQL leaves out all but the last write of
            // each): a value set each time, one set and removed in turn, a handler's memory.
            let history =
                [sample.creation, sample.mutation(2, [.setHandler(sample.root, key: "pick", passBack: true)])]
                + (3...count).map { seq in
                    sample.mutation(
                        seq,
                        [
                            .setValue(sample.root, key: "n", json: "\(seq)"),
                            seq.isMultiple(of: 2)
                                ? .setValue(sample.root, key: "toggled", json: "\(seq)")
                                : .removeValue(sample.root, key: "toggled"),
                            .rememberDelivery(sample.root, key: "pick", valueJSON: "\(seq)", passedJSON: nil),
                            .setReceivedPreference(sample.root, key: "pick", json: "\(seq)"),
                        ])
                }
            await expectStoreError(.conflict) {
                try await subject.store.commitAll(history + [sample.mutation(count)])
            }
            #expect(try await subject.store.loadSession(sample.id) == nil)
            #expect(try await subject.store.events(of: sample.id, after: 0, limit: 10).isEmpty)
            try await subject.store.commitAll(history)
            // Single commits still work after (and alongside) a copy.
            try await subject.store.commit(sample.mutation(count + 1))
            let store = try await subject.reading()
            let loaded = try #require(try await store.loadSession(sample.id))
            #expect(loaded.record.version == count + 1)
            #expect(loaded.record.updatedAt == sample.at.addingTimeInterval(Double(count + 1)))
            let root = try #require(loaded.screens.first)
            #expect(root.values == ["n": "\(count)", "toggled": "\(count)"])
            #expect(
                root.handlers["pick"] == HandlerRecord(passBack: true, lastValueJSON: "\(count)", lastPassedJSON: nil))
            #expect(root.preferences["pick"] == "\(count)")
            let events = try await store.events(of: sample.id, after: count - 2, limit: 10)
            #expect(events.map(\.seq) == [count - 1, count, count + 1])
        }
    }

    @Test(arguments: StoreSetup.contract)
    func observerTokensAreScopedLimitedRevokedAndGoWithTheirSession(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            let sample = SampleSession("s_watched")
            try await store.commit(sample.creation)
            let now = Date(millisecondsSince1970: 1_796_000_000_000)
            func observer(_ id: String, session: SessionID?, expiresAt: Date? = nil) -> ObserverRecord {
                ObserverRecord(
                    id: ObserverID(id), session: session, tokenHash: "hash-\(id)", label: id, createdAt: now,
                    expiresAt: expiresAt)
            }
            #expect(
                try await store.insertObserver(
                    observer("o_a", session: sample.id, expiresAt: now + 10), limit: 2, now: now, idempotency: nil))
            #expect(
                try await store.insertObserver(
                    observer("o_b", session: sample.id), limit: 2, now: now, idempotency: nil))
            #expect(
                try await !store.insertObserver(
                    observer("o_c", session: sample.id), limit: 2, now: now, idempotency: nil))
            // Once o_a has expired, it makes room (and is deleted).
            #expect(
                try await store.insertObserver(
                    observer("o_c", session: sample.id), limit: 2, now: now + 10, idempotency: nil))
            #expect(try await store.observer(id: ObserverID("o_a")) == nil)
            #expect(
                try await store.insertObserver(observer("o_every", session: nil), limit: 1, now: now, idempotency: nil))
            await expectStoreError(.invalidData) {
                _ = try await store.insertObserver(
                    observer("o_x", session: SessionID("s_none")), limit: 5, now: now, idempotency: nil)
            }
            await expectStoreError(.conflict) {
                var twin = observer("o_twin", session: nil)
                twin.tokenHash = "hash-o_b"
                _ = try await store.insertObserver(twin, limit: 5, now: now, idempotency: nil)
            }
            #expect(try await store.observer(tokenHash: "hash-o_b")?.id == ObserverID("o_b"))
            #expect(
                try await store.observers(of: sample.id, after: nil, limit: 10).map(\.id.rawValue) == ["o_b", "o_c"])
            #expect(
                try await store.observers(of: nil, after: ObserverID("o_b"), limit: 10).map(\.id.rawValue)
                    == ["o_c", "o_every"])
            #expect(try await store.deleteObserver(ObserverID("o_b")))
            #expect(try await !store.deleteObserver(ObserverID("o_b")))
            try await store.commit(
                StoredMutation(
                    session: sample.id, event: sample.event(2, "session.ended"), changes: [.purgeSession(sample.id)]))
            #expect(try await store.observer(id: ObserverID("o_c")) == nil)
            #expect(try await store.observer(id: ObserverID("o_every")) != nil)
        }
    }
}
