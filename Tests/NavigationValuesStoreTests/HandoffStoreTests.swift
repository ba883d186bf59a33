import Foundation
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

@testable import NavigationValuesStore

/// The store's half of hand-offs, on every store: a hand-off is used once (of concurrent
/// consumers exactly one wins), a device token is kept with the use in one transaction and goes
/// with its session, outstanding hand-offs are bounded, and expired ones are pruned.
@Suite(.serialized) struct HandoffStoreTests {
    static let now = Date(millisecondsSince1970: 1_796_000_000_000)

    func handoff(_ id: String, _ session: SessionID, expiresIn seconds: TimeInterval = 300, fork: Bool = false)
        -> HandoffRecord
    {
        HandoffRecord(
            id: id, session: session, fork: fork, version: 1, createdAt: Self.now,
            expiresAt: Self.now.addingTimeInterval(seconds))
    }

    func device(_ hash: String, _ session: SessionID, _ handoff: String) -> DeviceTokenRecord {
        DeviceTokenRecord(tokenHash: hash, session: session, handoff: handoff, createdAt: Self.now)
    }

    @Test(arguments: StoreSetup.contract)
    func aHandoffIsUsedOnceAndItsDeviceTokenIsKeptWithTheUse(setup: StoreSetup) async throws {
        let clock = Mutex(Self.now)
        try await withStore(setup, now: { clock.withLock { $0 } }) { subject in
            let store = subject.store
            let sample = SampleSession("s_handed")
            try await store.commit(sample.creation)
            #expect(try await store.insertHandoff(handoff("h1", sample.id), limit: 2, now: Self.now))
            #expect(try await store.insertHandoff(handoff("h2", sample.id, fork: true), limit: 2, now: Self.now))
            #expect(try await !store.insertHandoff(handoff("h3", sample.id), limit: 2, now: Self.now))
            _ = await expectStoreError(.invalidData) {
                _ = try await store.insertHandoff(handoff("h4", SessionID("s_none")), limit: 2, now: Self.now)
            }

            // From here on through `reader`: the file reopened, or a second PostgreSQL store (as
            // another instance), which races the first for the hand-off.
            let reader = try await subject.reading()
            #expect(try await reader.handoff(id: "h2") == handoff("h2", sample.id, fork: true))
            #expect(try await reader.handoff(id: "h3") == nil)
            #expect(try await reader.deviceTokenSession(tokenHash: "hash-1") == nil)

            // Concurrent consumers of one hand-off: exactly one wins, and only its token is kept.
            let consumers: [any SessionStore] = setup == .reopenedFile ? [reader] : [store, reader]
            let outcomes = try await withThrowingTaskGroup(of: HandoffConsumption.self) { group in
                for index in 0..<8 {
                    let consumer = consumers[index % consumers.count]
                    group.addTask {
                        try await consumer.consumeHandoff(
                            "h1", at: Self.now, device: device("hash-\(index)", sample.id, "h1"), maxDevices: 10)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.count(where: { $0 == .consumed }) == 1)
            #expect(outcomes.count(where: { $0 == .notAvailable }) == 7)
            var kept = 0
            for index in 0..<8 where try await reader.deviceTokenSession(tokenHash: "hash-\(index)") == sample.id {
                kept += 1
            }
            #expect(kept == 1)
            #expect(try await reader.handoff(id: "h1")?.usedAt == Self.now)
            #expect(
                try await reader.consumeHandoff("h-none", at: Self.now, device: nil, maxDevices: 10) == .notAvailable)

            // Past the devices' limit nothing changes: the hand-off stays unused.
            #expect(try await reader.insertHandoff(handoff("h5", sample.id), limit: 3, now: Self.now))
            #expect(
                try await reader.consumeHandoff(
                    "h5", at: Self.now, device: device("hash-x", sample.id, "h5"), maxDevices: 1) == .tooManyDevices)
            #expect(try await reader.handoff(id: "h5")?.usedAt == nil)
            #expect(try await reader.deviceTokenSession(tokenHash: "hash-x") == nil)

            // Used or not, a hand-off stays until it expires, then the retention pass prunes it.
            let maintenance = try #require(reader as? any SessionStoreMaintenance)
            _ = try await maintenance.removeExpiredRecords(tombstonesBefore: Self.now)
            #expect(try await reader.handoff(id: "h1") != nil)
            clock.withLock { $0 = Self.now.addingTimeInterval(301) }
            #expect(try await maintenance.removeExpiredRecords(tombstonesBefore: Self.now) >= 3)
            for id in ["h1", "h2", "h5"] { #expect(try await reader.handoff(id: id) == nil, "\(id)") }
        }
    }

    @Test(arguments: StoreSetup.contract)
    func expiredHandoffsDoNotCountAndDeviceTokensGoWithTheirSession(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            let sample = SampleSession("s_purged")
            try await store.commit(sample.creation)
            #expect(try await store.insertHandoff(handoff("h1", sample.id, expiresIn: 10), limit: 1, now: Self.now))
            #expect(try await !store.insertHandoff(handoff("h2", sample.id), limit: 1, now: Self.now))
            // Once h1 has expired it no longer counts (and is deleted on the way).
            let later = Self.now.addingTimeInterval(11)
            #expect(try await store.insertHandoff(handoff("h2", sample.id), limit: 1, now: later))
            #expect(try await store.handoff(id: "h1") == nil)
            #expect(
                try await store.consumeHandoff("h2", at: later, device: device("hash", sample.id, "h2"), maxDevices: 4)
                    == .consumed)
            #expect(try await store.deviceTokenSession(tokenHash: "hash") == sample.id)
            try await store.commit(
                StoredMutation(
                    session: sample.id, event: sample.event(2, "session.ended"), changes: [.purgeSession(sample.id)]))
            let reader = try await subject.reading()
            #expect(try await reader.deviceTokenSession(tokenHash: "hash") == nil)
            // The hand-off's record outlives the purge (a redeem says the session was purged).
            #expect(try await reader.handoff(id: "h2")?.session == sample.id)
        }
    }
}
