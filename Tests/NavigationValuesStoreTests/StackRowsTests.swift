import Foundation
import NavigationValues
import NavigationValuesPostgres
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

/// The rows of several stacks per session (migration 0003, docs/Stacks.md): screens on tabs and
/// presentations, stack rows, the selected stack.
@Suite struct StackRowsTests {
    let sample = SampleSession()

    /// A tab `t` whose root `c_t` presents sheet `p_1` holding `c_p0` → `c_p1`; `t` selected.
    var stackChanges: [StateChange] {
        let session = sample.id
        return [
            .insertStack(StackRecord(id: StackID("t"), session: session, position: 1, kind: .tab, presenter: nil)),
            .insertScreen(
                ScreenRecord(
                    id: ScreenID("c_t"), session: session, index: 0, name: "Tab", role: "screen", previous: nil,
                    stack: StackID("t"))),
            .insertStack(
                StackRecord(id: StackID("p_1"), session: session, position: 2, kind: .sheet, presenter: ScreenID("c_t"))
            ),
            .insertScreen(
                ScreenRecord(
                    id: ScreenID("c_p0"), session: session, index: 0, name: "Sheet", role: "screen",
                    previous: ScreenID("c_t"), stack: StackID("p_1"))),
            .insertScreen(
                ScreenRecord(
                    id: ScreenID("c_p1"), session: session, index: 1, name: "Page", role: "screen",
                    previous: ScreenID("c_p0"), stack: StackID("p_1"))),
            .setValue(ScreenID("c_p1"), key: "title", json: #""page""#),
            .setHandler(ScreenID("c_p0"), key: "pick", passBack: true),
            .selectStack(session, StackID("t")),
        ]
    }

    @Test(arguments: StoreSetup.contract)
    func stacksTheirScreensAndTheSelectionRoundTrip(setup: StoreSetup) async throws {
        try await withStore(setup) { store in
            try await store.store.commit(sample.creation)
            try await store.store.commit(sample.mutation(2, stackChanges))
            let loaded = try #require(try await store.reading().loadSession(sample.id))
            #expect(loaded.selectedStack == StackID("t"))
            #expect(
                loaded.stacks == [
                    StackRecord(id: StackID("t"), session: sample.id, position: 1, kind: .tab, presenter: nil),
                    StackRecord(
                        id: StackID("p_1"), session: sample.id, position: 2, kind: .sheet, presenter: ScreenID("c_t")),
                ])
            // The main stack's screens first, then each stack's, root first.
            #expect(loaded.screens.map(\.record.id.rawValue) == [sample.root.rawValue, "c_p0", "c_p1", "c_t"])
            #expect(loaded.screens.map(\.record.stack.rawValue) == ["main", "p_1", "p_1", "t"])
            #expect(loaded.screens[2].values == ["title": #""page""#])
            #expect(loaded.screens[1].handlers["pick"] == HandlerRecord(passBack: true))
            // The admin list's depth counts the main stack only, as before.
            #expect(try await store.reading().sessions(after: nil, limit: 10).first?.depth == 1)
        }
    }

    @Test(arguments: StoreSetup.contract)
    func dismissingDeletesTheStackRowBeforeItsScreensAndTheirRows(setup: StoreSetup) async throws {
        try await withStore(setup) { store in
            try await store.store.commit(sample.creation)
            try await store.store.commit(sample.mutation(2, stackChanges))
            try await store.store.commit(
                sample.mutation(
                    3,
                    [
                        .deleteStacks(sample.id, [StackID("p_1")]),
                        .deleteScreens([ScreenID("c_p1"), ScreenID("c_p0")]),
                    ]))
            let loaded = try #require(try await store.reading().loadSession(sample.id))
            #expect(loaded.stacks.map(\.id) == [StackID("t")])
            #expect(loaded.screens.map(\.record.id.rawValue) == [sample.root.rawValue, "c_t"])
        }
    }

    @Test(arguments: StoreSetup.contract)
    func aPresentersScreenIsNotDeletedWhileItsStackRowLinksToIt(setup: StoreSetup) async throws {
        try await withStore(setup) { store in
            try await store.store.commit(sample.creation)
            try await store.store.commit(sample.mutation(2, stackChanges))
            await expectStoreError(.invalidData) {
                try await store.store.commit(
                    sample.mutation(3, [.deleteScreens([ScreenID("c_p1"), ScreenID("c_p0"), ScreenID("c_t")])]))
            }
            #expect(try await store.store.loadSession(sample.id)?.record.version == 2)
        }
    }

    @Test(arguments: StoreSetup.contract)
    func purgingASessionDeletesItsStacks(setup: StoreSetup) async throws {
        try await withStore(setup) { store in
            try await store.store.commit(sample.creation)
            try await store.store.commit(sample.mutation(2, stackChanges))
            try await store.store.commit(
                StoredMutation(session: sample.id, event: sample.event(3), changes: [.purgeSession(sample.id)]))
            #expect(try await store.reading().loadSession(sample.id) == nil)
            #expect(try await store.reading().wasPurged(sample.id))
        }
    }

    /// A database of migration 2 with a session in it: migration 3 keeps every screen, value,
    /// handler (with its memory) and received preference, now on the main stack.
    @Test func migratingADatabaseWithSessionsKeepsEveryRowOnTheMainStack() async throws {
        try await withTemporaryDatabase { path in
            do {  // the connection closes when it goes out of scope
                let db = try Database(path: path)
                try Migrator(migrations: Array(Migration.embedded.prefix(2))).migrate(db)
                try db.executeScript(
                    """
                    INSERT INTO sessions VALUES ('s_old', 3, 'active', '{}', 'ab', 1000, 2000);
                    INSERT INTO screen_contexts VALUES ('c_0', 's_old', 0, 'Home', 'screen', NULL);
                    INSERT INTO screen_contexts VALUES ('c_1', 's_old', 1, 'Detail', 'screen', 'c_0');
                    INSERT INTO context_values VALUES ('c_0', 'title', '"home"');
                    INSERT INTO preference_handlers VALUES ('c_0', 'pick', 1, '"x"', '"x"');
                    INSERT INTO received_preferences VALUES ('c_0', 'pick', '"x"');
                    INSERT INTO events VALUES ('s_old', 1, 'session.created', '{}', 1000);
                    """)
            }
            let store = try SQLiteSessionStore(path: path)
            let loaded = try #require(try await store.loadSession(SessionID("s_old")))
            #expect(loaded.selectedStack == .main && loaded.stacks.isEmpty)
            #expect(loaded.screens.map(\.record.id.rawValue) == ["c_0", "c_1"])
            #expect(loaded.screens.allSatisfy { $0.record.stack == .main })
            #expect(loaded.screens[1].record.previous == ScreenID("c_0"))
            #expect(loaded.screens[0].values == ["title": #""home""#])
            #expect(
                loaded.screens[0].handlers["pick"]
                    == HandlerRecord(passBack: true, lastValueJSON: #""x""#, lastPassedJSON: #""x""#))
            #expect(loaded.screens[0].preferences == ["pick": #""x""#])
            // Two stacks may now each have a screen at position 0.
            try await store.commit(
                StoredMutation(
                    session: SessionID("s_old"),
                    event: StoredEvent(
                        session: SessionID("s_old"), seq: 4, type: "stack.created", json: "{}", at: Date()),
                    changes: [
                        .insertStack(
                            StackRecord(
                                id: StackID("t"), session: SessionID("s_old"), position: 1, kind: .tab, presenter: nil)),
                        .insertScreen(
                            ScreenRecord(
                                id: ScreenID("c_t"), session: SessionID("s_old"), index: 0, name: "Tab", role: "screen",
                                previous: nil, stack: StackID("t"))),
                    ]))
            #expect(try await store.loadSession(SessionID("s_old"))?.screens.count == 3)
            await store.close()
        }
    }

    /// The same on PostgreSQL: a database of migration 1 with a session in it; migration 2
    /// (Migrations/postgres/0002_add_stacks.sql) keeps every row, now on the main stack.
    @Test(.needsPostgres) func migratingAPostgreSQLDatabaseWithSessionsKeepsEveryRowOnTheMainStack() async throws {
        try await PostgresTestServer.withDatabase { url in
            try PostgresMigrator(migrations: Array(Migration.embeddedPostgres.prefix(1))).migrate(url: url)
            try await PostgresTestServer.psql(
                url,
                """
                INSERT INTO sessions VALUES ('s_old', 3, 'active', '{}', 'ab', to_timestamp(1), to_timestamp(2));
                INSERT INTO screen_contexts VALUES ('c_0', 's_old', 0, 'Home', 'screen', NULL);
                INSERT INTO screen_contexts VALUES ('c_1', 's_old', 1, 'Detail', 'screen', 'c_0');
                INSERT INTO context_values VALUES ('c_0', 'title', '"home"');
                INSERT INTO preference_handlers VALUES ('c_0', 'pick', true, '"x"', '"x"');
                INSERT INTO received_preferences VALUES ('c_0', 'pick', '"x"');
                INSERT INTO events VALUES ('s_old', 3, 'session.created', '{}', to_timestamp(1));
                """)
            let store = try await PostgresSessionStore.open(url: url, configuration: .testing())
            let loaded = try #require(try await store.loadSession(SessionID("s_old")))
            #expect(loaded.selectedStack == .main && loaded.stacks.isEmpty)
            #expect(loaded.screens.map(\.record.id.rawValue) == ["c_0", "c_1"])
            #expect(loaded.screens.allSatisfy { $0.record.stack == .main })
            #expect(loaded.screens[1].record.previous == ScreenID("c_0"))
            #expect(loaded.screens[0].values == ["title": #""home""#])
            #expect(
                loaded.screens[0].handlers["pick"]
                    == HandlerRecord(passBack: true, lastValueJSON: #""x""#, lastPassedJSON: #""x""#))
            #expect(loaded.screens[0].preferences == ["pick": #""x""#])
            // Two stacks may now each have a screen at position 0.
            try await store.commit(
                StoredMutation(
                    session: SessionID("s_old"),
                    event: StoredEvent(
                        session: SessionID("s_old"), seq: 4, type: "stack.created", json: "{}", at: Date()),
                    changes: [
                        .insertStack(
                            StackRecord(
                                id: StackID("t"), session: SessionID("s_old"), position: 1, kind: .tab, presenter: nil)),
                        .insertScreen(
                            ScreenRecord(
                                id: ScreenID("c_t"), session: SessionID("s_old"), index: 0, name: "Tab", role: "screen",
                                previous: nil, stack: StackID("t"))),
                        .selectStack(SessionID("s_old"), StackID("t")),
                    ]))
            let migrated = try #require(try await store.loadSession(SessionID("s_old")))
            #expect(migrated.screens.map(\.record.stack.rawValue) == ["main", "main", "t"])
            #expect(migrated.selectedStack == StackID("t"))
            await store.close()
        }
    }
}
