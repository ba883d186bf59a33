import Foundation
import NavigationValuesStore
import Testing

@Suite struct IdempotencyTests {
    let sample = SampleSession()

    func record(_ key: String, status: Int, at date: Date) -> IdempotencyRecord {
        IdempotencyRecord(
            scope: "POST /v1/sessions/s_sample/push", key: key, status: status,
            headers: ["ETag": #""2""#, "Location": "/v1/sessions/s_sample/screens/c_1"],
            body: Data(#"{"version":2}"#.utf8), createdAt: date)
    }

    @Test(arguments: StoreSetup.contract)
    func aRecordIsReplayedFor24HoursThenCountsAsAbsent(setup: StoreSetup) async throws {
        let clock = TestClock()
        try await withStore(setup, now: { clock.now }) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            let first = record("k", status: 201, at: clock.now)
            try await store.commit(sample.mutation(2, idempotency: first))
            let reader = try await subject.reading()
            #expect(try await reader.idempotencyRecord(scope: first.scope, key: "k") == first)
            #expect(try await reader.idempotencyRecord(scope: "POST /v1/sessions/s_sample/pop", key: "k") == nil)
            clock.advance(by: 24 * 60 * 60 - 1)
            #expect(try await reader.idempotencyRecord(scope: first.scope, key: "k") == first)
            clock.advance(by: 2)
            #expect(try await reader.idempotencyRecord(scope: first.scope, key: "k") == nil)
        }
    }

    @Test(arguments: StoreSetup.contract)
    func aSecondAnswerUnderALiveKeyIsAConflictButAnExpiredKeyIsReused(setup: StoreSetup) async throws {
        let clock = TestClock()
        try await withStore(setup, now: { clock.now }) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            try await store.commit(sample.mutation(2, idempotency: record("k", status: 201, at: clock.now)))
            await expectStoreError(.conflict) {
                try await store.commit(sample.mutation(3, idempotency: record("k", status: 200, at: clock.now)))
            }
            // The refused mutation left nothing: its event is absent.
            #expect(try await store.events(of: sample.id, after: 2, limit: 10).isEmpty)
            clock.advance(by: 24 * 60 * 60 + 1)
            let later = record("k", status: 200, at: clock.now)
            try await store.commit(sample.mutation(3, idempotency: later))
            #expect(try await subject.reading().idempotencyRecord(scope: later.scope, key: "k") == later)
        }
    }
}
