import Foundation
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import Testing

/// Every table, written through `commit(_:)` and read back through the `SessionStore` API.
@Suite struct SessionStoreRoundTripTests {
    let sample = SampleSession()

    @Test(arguments: StoreSetup.contract)
    func aSessionWithScreensValuesHandlersAndPreferencesRoundTrips(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            try await store.commit(sample.mutation(2, [.insertScreen(sample.screenRecord(1, name: "Detail"))]))
            try await store.commit(
                sample.mutation(
                    3,
                    [
                        .setValue(sample.root, key: "title", json: #""Inbox""#),
                        .setValue(sample.screen(1), key: "counter", json: "3"),
                        .setValue(sample.screen(1), key: "filter", json: #"{"unread":true}"#),
                    ]))
            try await store.commit(sample.mutation(4, [.setHandler(sample.root, key: "selected", passBack: true)]))
            try await store.commit(
                sample.mutation(
                    5,
                    [
                        .rememberDelivery(sample.root, key: "selected", valueJSON: #""a""#, passedJSON: #""a""#),
                        .setReceivedPreference(sample.root, key: "selected", json: #""a""#),
                    ]))

            let loaded = try await subject.reading().loadSession(sample.id)
            var record = sample.record
            record.version = 5
            record.updatedAt = sample.at.addingTimeInterval(5)
            let expected = StoredSession(
                record: record,
                screens: [
                    StoredScreen(
                        record: sample.screenRecord(0, name: "Home"), values: ["title": #""Inbox""#],
                        handlers: [
                            "selected": HandlerRecord(passBack: true, lastValueJSON: #""a""#, lastPassedJSON: #""a""#)
                        ],
                        preferences: ["selected": #""a""#]),
                    StoredScreen(
                        record: sample.screenRecord(1, name: "Detail"),
                        values: ["counter": "3", "filter": #"{"unread":true}"#]),
                ])
            #expect(loaded == expected)
        }
    }

    @Test(arguments: StoreSetup.contract)
    func replacingAHandlerForgetsItsMemoryAndRemovingItKeepsTheReceivedValue(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            try await store.commit(
                sample.mutation(
                    2,
                    [
                        .setHandler(sample.root, key: "a", passBack: false),
                        .setHandler(sample.root, key: "b", passBack: true),
                        .setValue(sample.root, key: "gone", json: "1"),
                    ]))
            try await store.commit(
                sample.mutation(
                    3,
                    [
                        .rememberDelivery(sample.root, key: "a", valueJSON: "1", passedJSON: nil),
                        .rememberDelivery(sample.root, key: "b", valueJSON: "2", passedJSON: "2"),
                        .setReceivedPreference(sample.root, key: "b", json: "2"),
                    ]))
            try await store.commit(
                sample.mutation(
                    4,
                    [
                        .setHandler(sample.root, key: "a", passBack: true),
                        .removeHandler(sample.root, key: "b"),
                        .removeValue(sample.root, key: "gone"),
                    ]))
            let root = try #require(try await subject.reading().loadSession(sample.id)?.screens.first)
            #expect(root.handlers == ["a": HandlerRecord(passBack: true)])
            #expect(root.preferences == ["b": "2"])
            #expect(root.values == [:])
        }
    }

    @Test(arguments: StoreSetup.contract)
    func deletingScreensDeletesTheirValuesHandlersAndPreferences(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            try await store.commit(
                sample.mutation(
                    2,
                    [
                        .insertScreen(sample.screenRecord(1)), .insertScreen(sample.screenRecord(2)),
                        .setValue(sample.screen(1), key: "k", json: "1"),
                        .setHandler(sample.screen(2), key: "p", passBack: true),
                        .setReceivedPreference(sample.screen(2), key: "p", json: "1"),
                    ]))
            try await store.commit(sample.mutation(3, [.deleteScreens([sample.screen(1), sample.screen(2)])]))
            let reader = try await subject.reading()
            let session = try #require(try await reader.loadSession(sample.id))
            #expect(session.screens.map(\.record.id) == [sample.root])
            #expect(try await reader.sessions(after: nil, limit: 10).map(\.depth) == [1])
            if setup.isSQLiteFile {
                let db = try Database(path: subject.path, access: .readOnly)
                for table in ["context_values", "preference_handlers", "received_preferences"] {
                    #expect(try db.fetchOne("SELECT count(*) FROM \(table)") { $0.int(0) } == 0, "\(table)")
                }
            }
        }
    }

    @Test(arguments: StoreSetup.contract)
    func eventsComeBackInOrderAfterTheCursorUpToTheLimit(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            for seq in Int64(2)...10 { try await store.commit(sample.mutation(seq)) }
            let reader = try await subject.reading()
            #expect(try await reader.events(of: sample.id, after: 0, limit: 100).count == 10)
            #expect(try await reader.events(of: sample.id, after: 3, limit: 4) == (4...7).map { sample.event($0) })
            #expect(try await reader.events(of: sample.id, after: 10, limit: 100).isEmpty)
            #expect(try await reader.events(of: sample.id, after: 0, limit: 0).isEmpty)
            #expect(try await reader.events(of: SessionID("s_other"), after: 0, limit: 10).isEmpty)
            #expect(try await reader.events(of: sample.id, after: 0, limit: 1).first?.type == "session.created")
        }
    }

    @Test(arguments: StoreSetup.contract)
    func theNewestSnapshotAtOrBeforeASeqIsFound(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            try await store.commit(sample.creation)
            for seq in Int64(2)...9 {
                let snapshot =
                    seq % 4 == 0 ? StoredSnapshot(session: sample.id, seq: seq, json: #"{"v":\#(seq)}"#) : nil
                try await store.commit(sample.mutation(seq, snapshot: snapshot))
            }
            let reader = try await subject.reading()
            #expect(try await reader.snapshot(of: sample.id, atOrBefore: 3) == nil)
            #expect(try await reader.snapshot(of: sample.id, atOrBefore: 4)?.seq == 4)
            #expect(
                try await reader.snapshot(of: sample.id, atOrBefore: 100)
                    == StoredSnapshot(session: sample.id, seq: 8, json: #"{"v":8}"#))
        }
    }

    @Test(arguments: StoreSetup.contract)
    func sessionsAreListedByIdInPagesWithTheirDepth(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            for name in ["s_c", "s_a", "s_b"] {
                let session = SampleSession(name)
                try await store.commit(session.creation)
                if name == "s_b" {
                    try await store.commit(session.mutation(2, [.insertScreen(session.screenRecord(1))]))
                    try await store.commit(
                        StoredMutation(
                            session: session.id, event: session.event(3, "session.ended"),
                            changes: [.updateSession(session.id, version: 3, state: .ended, updatedAt: session.at)]))
                }
            }
            let reader = try await subject.reading()
            let first = try await reader.sessions(after: nil, limit: 2)
            #expect(
                first == [
                    SessionSummary(id: SessionID("s_a"), version: 1, state: .active, depth: 1, updatedAt: sample.at),
                    SessionSummary(id: SessionID("s_b"), version: 3, state: .ended, depth: 2, updatedAt: sample.at),
                ])
            #expect(try await reader.sessions(after: SessionID("s_b"), limit: 2).map(\.id) == [SessionID("s_c")])
            #expect(try await reader.sessions(after: SessionID("s_c"), limit: 2).isEmpty)
            #expect(try await reader.loadSession(SessionID("s_b"))?.record.state == .ended)
            #expect(try await reader.loadSession(SessionID("s_missing")) == nil)
        }
    }

    @Test(arguments: StoreSetup.contract)
    func purgingASessionKeepsNothingButItsIdempotencyRecord(setup: StoreSetup) async throws {
        try await withStore(setup) { subject in
            let store = subject.store
            let other = SampleSession("s_other")
            try await store.commit(other.creation)
            try await store.commit(sample.creation)
            try await store.commit(
                sample.mutation(
                    2,
                    [
                        .insertScreen(sample.screenRecord(1)), .setValue(sample.screen(1), key: "k", json: "1"),
                        .setHandler(sample.root, key: "p", passBack: true),
                    ], snapshot: StoredSnapshot(session: sample.id, seq: 2, json: "{}")))
            let answer = IdempotencyRecord(
                scope: "DELETE /v1/sessions/s_sample", key: "k1", status: 204, headers: [:], body: Data(),
                createdAt: Date())
            try await store.commit(
                StoredMutation(
                    session: sample.id, event: sample.event(3, "session.ended"), changes: [.purgeSession(sample.id)],
                    idempotency: answer))
            let reader = try await subject.reading()
            #expect(try await reader.loadSession(sample.id) == nil)
            #expect(try await reader.events(of: sample.id, after: 0, limit: 10).isEmpty)
            #expect(try await reader.snapshot(of: sample.id, atOrBefore: 10) == nil)
            #expect(try await reader.sessions(after: nil, limit: 10).map(\.id) == [other.id])
            #expect(try await reader.idempotencyRecord(scope: answer.scope, key: "k1")?.status == 204)
            #expect(try await reader.loadSession(other.id)?.screens.count == 1)
            #expect(try await reader.wasPurged(sample.id))
            #expect(try await !reader.wasPurged(other.id))
            #expect(try await !reader.wasPurged(SessionID("s_never")))
            if setup.isSQLiteFile {
                let db = try Database(path: subject.path, access: .readOnly)
                let rows = try db.fetchOne(
                    """
                    SELECT (SELECT count(*) FROM screen_contexts) + (SELECT count(*) FROM context_values)
                         + (SELECT count(*) FROM preference_handlers) + (SELECT count(*) FROM events)
                         + (SELECT count(*) FROM snapshots)
                    """
                ) { $0.int(0) }
                #expect(rows == 2)  // the other session's root screen and event
            }
        }
    }
}
