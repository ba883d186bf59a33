import Dispatch
import Foundation
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesSQLite
@testable import NavigationValuesStore

@Suite struct ReadPoolTests {
    /// While the writer holds an open write transaction with an uncommitted event, readers
    /// answer at once, from the last committed state (WAL, https://sqlite.org/wal.html).
    @Test func readsDoNotWaitForAnOpenWriteTransaction() async throws {
        try await withTemporaryDatabase { path in
            let store = try SQLiteSessionStore(path: path)
            let sample = SampleSession()
            try await store.commit(sample.creation)

            let inserted = DispatchSemaphore(value: 0)
            let finish = DispatchSemaphore(value: 0)
            store.writer.queue.async {
                do {
                    try store.writer.onQueue { db in
                        try db.inTransaction {
                            try db.execute(
                                "INSERT INTO events (session, seq, type, json, at) VALUES (?, 2, 'x', '{}', 0)",
                                [.text(sample.id.rawValue)])
                            inserted.signal()
                            finish.wait()
                        }
                    }
                } catch {
                    inserted.signal()  // the final expectation then fails
                }
            }
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    inserted.wait()
                    continuation.resume()
                }
            }
            let seen: [Int64]
            let session: StoredSession?
            do {
                seen = try await withTimeout(.seconds(10)) {
                    try await store.events(of: sample.id, after: 0, limit: 10).map(\.seq)
                }
                session = try await withTimeout(.seconds(10)) { try await store.loadSession(sample.id) }
            } catch {
                finish.signal()
                throw error
            }
            finish.signal()
            #expect(seen == [1])
            #expect(session?.record.version == 1)
            // Once committed, the readers see it. The transaction commits on the writer's queue
            // after `finish`; what runs there next runs after the commit (`checkWritable` is no
            // such barrier: it answers from the store's last write, which was a second ago at most).
            await withCheckedContinuation { continuation in store.writer.queue.async { continuation.resume() } }
            #expect(try await store.events(of: sample.id, after: 0, limit: 10).map(\.seq) == [1, 2])
            await store.close()
        }
    }
}
