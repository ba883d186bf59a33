import Foundation
import NavigationValuesWire
import Testing

@testable import NavigationValuesSQLite
@testable import NavigationValuesStore

/// The log versions the writer remembers of its own log-first commits (``LogVersions``) stand in
/// for the check in SQL only when they are what the log says: a mutation made from another
/// version, a second writer of a session in the same batch, a purged session and a failed write
/// are still checked in SQL, with the same errors as without them.
@Suite struct LogVersionsTests {
    static let held = WriteBehind(maximumEvents: 1_000, maximumDelay: .seconds(60), isHeldForTests: true)

    /// The message of the check in SQL; a duplicate seq refused by the events' unique key
    /// instead carries SQLite's result code and message.
    static func isCheckedInSQL(_ error: StoreError?, at version: Int64, not expected: Int64) -> Bool {
        error?.code == .conflict && error?.resultCode == nil
            && error?.message.contains("is at version \(version), not \(expected)") == true
    }

    @Test func aMutationFromAVersionBeforeTheRememberedOneIsAConflict() async throws {
        try await withWriteBehindStore(Self.held) { store, _ in
            let sample = SampleSession()
            try await store.commit(sample.creation)
            try await store.commit(sample.mutation(2, [.setValue(sample.root, key: "a", json: "1")]))
            try await store.commit(sample.mutation(3, [.setValue(sample.root, key: "a", json: "2")]))
            let error = await expectStoreError(.conflict) {
                try await store.commit(sample.mutation(3, [.setValue(sample.root, key: "a", json: "3")]))
            }
            #expect(Self.isCheckedInSQL(error, at: 3, not: 2), "\(String(describing: error))")
            // The refusal leaves the session to the check in SQL, which the next one from 3 passes.
            try await store.commit(sample.mutation(4, [.setValue(sample.root, key: "a", json: "4")]))
            #expect(try await store.events(of: sample.id, after: 0, limit: 10).map(\.seq) == [1, 2, 3, 4])
            #expect(try #require(try await store.loadSession(sample.id)).screens[0].values == ["a": "4"])
        }
    }

    /// Another writer of the file (`prune` may run beside a server) appends to a session this
    /// store remembers: the store's next mutation of it, made from the version it remembers, is
    /// refused by the events' unique key as a conflict (the session's actor then reloads it), and
    /// the one after is checked in SQL.
    @Test func anotherWriterOfTheFileMakesTheRememberedVersionAConflict() async throws {
        try await withWriteBehindStore(Self.held) { store, path in
            let sample = SampleSession()
            try await store.commit(sample.creation)
            try await store.commit(sample.mutation(2, [.setValue(sample.root, key: "a", json: "1")]))
            // Another connection to the file appends the session's next event, as `prune` ends a session.
            do {
                let other = try Database(path: path)
                let latest = try other.fetchOne(
                    "SELECT max(seq) FROM events WHERE session = ?1", [.text(sample.id.rawValue)]) { $0.int64(0) }
                #expect(latest == 2)
                _ = try other.execute(
                    "INSERT INTO events (session, seq, type, json, at, bytes) VALUES (?1, 3, 'session.ended', '{}', 0, 2)",
                    [.text(sample.id.rawValue)])
            }  // closed here
            let error = await expectStoreError(.conflict) {
                try await store.commit(sample.mutation(3, [.setValue(sample.root, key: "a", json: "mine")]))
            }
            #expect(error?.resultCode == 2067, "\(String(describing: error))")  // SQLITE_CONSTRAINT_UNIQUE
            let again = await expectStoreError(.conflict) {
                try await store.commit(sample.mutation(3, [.setValue(sample.root, key: "a", json: "mine")]))
            }
            #expect(Self.isCheckedInSQL(again, at: 3, not: 2), "\(String(describing: again))")
            try await store.commit(sample.mutation(4, [.setValue(sample.root, key: "a", json: "4")]))
            #expect(try await store.events(of: sample.id, after: 0, limit: 10).map(\.seq) == [1, 2, 3, 4])
        }
    }

    @Test func aSecondWriterOfASessionInTheSameBatchIsCheckedInSQL() async throws {
        try await withWriteBehindStore(Self.held) { store, _ in
            let sample = SampleSession()
            try await store.commit(sample.creation)
            try await store.commit(sample.mutation(2, [.setValue(sample.root, key: "a", json: "1")]))
            let tests = GroupCommitTests()
            let gate = GroupCommitTests.WriterGate(store)
            let requests: [[StoredMutation]] = [
                [sample.mutation(3, [.setValue(sample.root, key: "a", json: "2")])],
                [sample.mutation(3, [.setValue(sample.root, key: "a", json: "3")])],
                // A request of two, the first from the version the batch's first request reached.
                [
                    sample.mutation(4, [.setValue(sample.root, key: "b", json: "4")]),
                    sample.mutation(5, [.setValue(sample.root, key: "b", json: "5")]),
                ],
            ]
            let outcomes = try await tests.commitQueuedInOrder(requests, to: store, behind: gate)
            #expect(outcomes[0] == nil)
            #expect(Self.isCheckedInSQL(outcomes[1], at: 3, not: 2), "\(String(describing: outcomes[1]))")
            #expect(outcomes[2] == nil)
            #expect(store.metrics.largestBatch == 3)
            try await store.commit(sample.mutation(6, [.setValue(sample.root, key: "a", json: "6")]))
            #expect(try await store.events(of: sample.id, after: 0, limit: 10).map(\.seq) == [1, 2, 3, 4, 5, 6])
            let values = try #require(try await store.loadSession(sample.id)).screens[0].values
            #expect(values == ["a": "6", "b": "5"])
        }
    }

    @Test func aFailedWriteAndAPurgeLeaveTheSessionToTheCheckInSQL() async throws {
        try await withWriteBehindStore(Self.held) { store, _ in
            let sample = SampleSession()
            try await store.commit(sample.creation)
            try await store.commit(sample.mutation(2))
            // Refused by the database (its JSON is not JSON): the log stays at 2.
            var refused = sample.mutation(3)
            refused.event.json = "not JSON"
            await expectStoreError(.invalidData) { try await store.commit(refused) }
            let error = await expectStoreError(.conflict) { try await store.commit(sample.mutation(4)) }
            #expect(Self.isCheckedInSQL(error, at: 2, not: 3), "\(String(describing: error))")
            try await store.commit(sample.mutation(3))
            // A purge is checked against the state's version, as the session's actor reads it first.
            #expect(try #require(try await store.loadSession(sample.id)).record.version == 3)
            try await store.commit(
                StoredMutation(
                    session: sample.id, event: sample.event(4, "session.ended"), changes: [.purgeSession(sample.id)]))
            let gone = await expectStoreError(.invalidData) { try await store.commit(sample.mutation(4)) }
            #expect(gone?.message.contains("does not exist") == true, "\(String(describing: gone))")
            #expect(gone?.resultCode == nil, "\(String(describing: gone))")
        }
    }
}
