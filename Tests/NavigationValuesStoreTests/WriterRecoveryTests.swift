import Foundation
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesSQLite
@testable import NavigationValuesStore

/// A rollback that fails leaves the writer's transaction open (`Database.rollback()` throws then).
/// The writer tries again before its next batch and before a readiness probe, so that one failure
/// does not fail every later write, and nothing of the abandoned transaction is ever committed.
@Suite struct WriterRecoveryTests {
    let sample = SampleSession()

    /// What a failed rollback leaves behind: a transaction open on the writer connection, holding
    /// an event that no caller was told of.
    func leaveATransactionOpen(on store: SQLiteSessionStore) async throws {
        let sessionID = sample.id.rawValue
        try await store.writer.run { db in
            try db.execute("BEGIN IMMEDIATE")
            try db.execute(
                "INSERT INTO events (session, seq, type, json, at) VALUES (?, 2, 'left.open', '{}', 0)",
                [.text(sessionID)])
        }
    }

    @Test func theNextBatchRollsBackATransactionLeftOpenAndCommits() async throws {
        try await withTemporaryDatabase { path in
            let store = try SQLiteSessionStore(path: path)
            try await store.commit(sample.creation)
            try await leaveATransactionOpen(on: store)
            try await store.commit(sample.mutation(2))
            try await store.commit(sample.mutation(3))
            #expect(try await store.events(of: sample.id, after: 0, limit: 10).map(\.type)
                == ["session.created", "values.updated", "values.updated"])
            await store.close()
            // What is on disk is what the callers were told.
            let reopened = try SQLiteSessionStore(path: path)
            #expect(try await reopened.events(of: sample.id, after: 0, limit: 10).map(\.seq) == [1, 2, 3])
            #expect(try await reopened.loadSession(sample.id)?.record.version == 3)
            await reopened.close()
        }
    }

    @Test func aReadinessProbeRollsBackATransactionLeftOpen() async throws {
        try await withTemporaryDatabase { path in
            let store = try SQLiteSessionStore(path: path)
            try await store.commit(sample.creation)
            await store.close()
            // A fresh store, whose readiness has not been probed yet.
            let probed = try SQLiteSessionStore(path: path)
            try await leaveATransactionOpen(on: probed)
            try await probed.checkWritable()
            #expect(try await probed.events(of: sample.id, after: 0, limit: 10).map(\.seq) == [1])
            try await probed.commit(sample.mutation(2))
            #expect(try await probed.events(of: sample.id, after: 0, limit: 10).map(\.type)
                == ["session.created", "values.updated"])
            await probed.close()
        }
    }
}
