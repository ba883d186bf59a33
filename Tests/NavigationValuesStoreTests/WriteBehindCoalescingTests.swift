import Foundation
import NavigationValues
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

@testable import NavigationValuesPostgres
@testable import NavigationValuesSQLite
@testable import NavigationValuesStore

/// Log-first commits coalesce a session's waiting state: what one write-behind transaction
/// writes for several events is the fewest row writes that reach the last event's state. Counted
/// in the statements the store plans and in the rows it leaves, on both engines; nothing here is
/// timed (the write-behind is held until the session is read).
@Suite struct WriteBehindCoalescingTests {
    /// Nothing is written behind on its own: the test reads the waiting state, then the session.
    static let held = WriteBehind(maximumEvents: 1_000, maximumDelay: .seconds(60), isHeldForTests: true)

    /// A push then a pop of the same screen, then three updates of one value of the root, each
    /// its own commit of a session created before them.
    static func commitChanges(to store: any SessionStore, _ sample: SampleSession) async throws {
        try await store.commit(sample.creation)
        let pushed = sample.screenRecord(1, name: "Detail")
        try await store.commit(
            sample.mutation(2, [.insertScreen(pushed), .setValue(pushed.id, key: "item", json: "7")]))
        try await store.commit(sample.mutation(3, [.deleteScreens([pushed.id])]))
        for (seq, page) in [(4, "1"), (5, "2"), (6, "3")] {
            try await store.commit(sample.mutation(Int64(seq), [.setValue(sample.root, key: "page", json: page)]))
        }
    }

    /// The waiting state of events 2 to 6 as one write: no screen row, one value row, one
    /// version; then written, the rows as event 6 left them.
    static func expectCoalesced<Driver: SQLDriver>(_ store: SQLSessionStore<Driver>, _ sample: SampleSession)
        async throws
    {
        let waiting = try #require(store.behind.withLock { $0.sessions[sample.id] })
        #expect(waiting.from == 1 && waiting.to == 6)
        let write = try #require(store.stateWrite(of: sample.id, waiting))
        let statements = write.steps.map(\.sql)
        let text = store.text
        let screenWrites = [text.insertScreen, text.deleteScreen, text.deleteScreens]
        #expect(statements.filter { screenWrites.contains($0) }.isEmpty, "a screen pushed and popped is not written")
        #expect(statements.filter { $0 == text.setValue }.count == 1, "three updates of one value: one row written")
        #expect(statements.filter { $0 == text.advanceSession }.count == 1)
        #expect(statements.count == (store.splitsSessionUpdate ? 3 : 2), "\(statements)")

        // Read, the session is written first: one transaction, its rows as event 6 left them.
        let loaded = try #require(try await store.loadSession(sample.id))
        #expect(loaded.record.version == 6)
        #expect(loaded.screens.map(\.record.id) == [sample.root])
        #expect(loaded.screens.first?.values == ["page": "3"])
        let metrics = store.metrics
        #expect(metrics.stateWrites == 1)
        #expect(metrics.stateWriteSessions == 1)
        #expect(metrics.stateWriteEvents == 5)
        #expect(metrics.stateWriteFailures == 0)
        #expect(metrics.stateLagEvents == 0)
    }

    /// The coalescing rule itself, on changes as they wait: what each case keeps, in order.
    @Test func coalescedStateKeepsTheLastWriteOfEachRowAndCancelsWhatWasAddedAndRemoved() {
        let session = SessionID("s_coalesce")
        func screen(_ id: String) -> ScreenRecord {
            ScreenRecord(id: ScreenID(id), session: session, index: 1, name: id, role: "screen", previous: nil)
        }
        func stack(_ id: String) -> StackRecord {
            StackRecord(id: StackID(id), session: session, position: 1, kind: .tab, presenter: nil)
        }
        func version(_ seq: Int64) -> StateChange {
            .updateSession(session, version: seq, state: .active, updatedAt: Date(timeIntervalSince1970: Double(seq)))
        }
        let (x, a, b, root) = (ScreenID("c_x"), ScreenID("c_a"), ScreenID("c_b"), ScreenID("c_root"))
        let cases: [(changes: [StateChange], kept: [StateChange])] = [
            // A push then a pop of the same screen: the session's row alone, at its last version.
            (
                [.insertScreen(screen("c_x")), .setValue(x, key: "k", json: "1"), version(2), .deleteScreens([x]), version(3)],
                [version(3)]
            ),
            // One row written twice, another once.
            (
                [.setValue(root, key: "k", json: "1"), .setValue(root, key: "j", json: "1"),
                 .setValue(root, key: "k", json: "2")],
                [.setValue(root, key: "j", json: "1"), .setValue(root, key: "k", json: "2")]
            ),
            // A removal of a screen that was there stays; one of a screen added since cancels out,
            // and a removal of both keeps the one that was there.
            (
                [.deleteScreens([a]), .insertScreen(screen("c_a")), .removeValue(a, key: "k"), .setValue(b, key: "k", json: "1"),
                 .deleteScreens([a, b])],
                [.deleteScreens([a]), .setValue(b, key: "k", json: "1"), .deleteScreens([b])]
            ),
            // Added, removed, added again: the second addition stands.
            (
                [.insertScreen(screen("c_x")), .deleteScreens([x]), .insertScreen(screen("c_x")),
                 .setHandler(x, key: "h", passBack: true)],
                [.insertScreen(screen("c_x")), .setHandler(x, key: "h", passBack: true)]
            ),
            // A tab added, moved and removed cancels out; one removed then added again is written as both.
            (
                [.insertStack(stack("t")), .setStackPosition(session, StackID("t"), position: 2),
                 .deleteStacks(session, [StackID("t"), StackID("u")]), .deleteStacks(session, [StackID("v")]),
                 .insertStack(stack("v"))],
                [.deleteStacks(session, [StackID("u")]), .deleteStacks(session, [StackID("v")]), .insertStack(stack("v"))]
            ),
            // Many changes (compared through a set): one row written forty times keeps its last write.
            (
                (1...40).map { .setValue(root, key: "k", json: "\($0)") } + [version(41)],
                [.setValue(root, key: "k", json: "40"), version(41)]
            ),
        ]
        for (changes, kept) in cases {
            #expect(SQLSessionStore<SQLiteDriver>.coalescedState(changes, of: session) == kept)
        }
    }

    @Test func sqlite() async throws {
        try await withWriteBehindStore(Self.held) { store, _ in
            let sample = SampleSession()
            try await Self.commitChanges(to: store, sample)
            try await Self.expectCoalesced(store, sample)
        }
    }

    /// A state write that fails (another instance brought the state to another version first)
    /// still writes the snapshots taken with its events, so that a later load starts its replay
    /// from them; the catch-up that follows makes none.
    @Test func snapshotsOfAFailedStateWriteAreWrittenOnTheirOwn() async throws {
        try await withWriteBehindStore(Self.held) { store, path in
            let sample = SampleSession()
            try await store.commit(sample.creation)
            for seq in 2...3 {
                var mutation = sample.mutation(Int64(seq), [.setValue(sample.root, key: "page", json: "\(seq)")])
                if seq == 2 { mutation.snapshot = StoredSnapshot(session: sample.id, seq: 2, json: #"{"at":2}"#) }
                try await store.commit(mutation)
            }
            // Another writer moves the state's version on, as an instance catching the session up
            // would: the waiting write, conditional on version 1, fails.
            let other = try Database(path: path, access: .readWrite)
            try other.execute("UPDATE sessions SET version = 3 WHERE id = '\(sample.id.rawValue)'")
            await store.onWriter { store.writeStateBehind() }
            #expect(store.metrics.stateWriteFailures == 1)
            let snapshot = try await store.snapshot(of: sample.id, atOrBefore: 3)
            #expect(snapshot?.seq == 2)
            #expect(snapshot?.json == #"{"at":2}"#)
        }
    }

    /// In one transaction of writes behind, a session's write that fails after its first
    /// statement (its version moved on, then a value for a screen that does not exist) leaves
    /// nothing of itself, and the sessions beside it are written: the transaction, first run
    /// without a savepoint per session, is run again with them.
    @Test func aStateWriteThatFailsHalfwayLeavesNothingAndTheOthersLand() async throws {
        try await withWriteBehindStore(Self.held) { store, path in
            let broken = SampleSession("s_broken")
            let fine = SampleSession("s_fine")
            for sample in [broken, fine] { try await store.commit(sample.creation) }
            try await store.commit(broken.mutation(2, [.setValue(broken.screen(9), key: "page", json: "2")]))
            try await store.commit(fine.mutation(2, [.setValue(fine.root, key: "page", json: "2")]))
            await store.onWriter { store.writeStateBehind() }
            #expect(store.metrics.stateWriteSessions == 2)
            #expect(store.metrics.stateWriteFailures == 1)
            let other = try Database(path: path, access: .readOnly)
            let versions = try other.fetchAll("SELECT id, version FROM sessions ORDER BY id") {
                "\($0.string(0)) \($0.int64(1))"
            }
            #expect(versions == ["s_broken 1", "s_fine 2"])
            let values = try other.fetchAll("SELECT screen, key, json FROM context_values") {
                "\($0.string(0)) \($0.string(1)) \($0.string(2))"
            }
            #expect(values == ["c_s_fine_0 page 2"])
        }
    }

    @Test(.needsPostgres) func postgres() async throws {
        try await PostgresTestServer.withDatabase { url in
            var configuration = PostgresSessionStore.Configuration.testing()
            configuration.writeBehind = Self.held
            let store = try await PostgresSessionStore.open(url: url, configuration: configuration)
            let sample = SampleSession()
            try await Self.commitChanges(to: store, sample)
            try await Self.expectCoalesced(store, sample)
            await store.close()
        }
    }
}
