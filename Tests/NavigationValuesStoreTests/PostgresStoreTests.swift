import Foundation
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesPostgres
@testable import NavigationValuesStore

/// What only the PostgreSQL store does: its migrator, several stores on one database (as several
/// instances), notifications between them, and a lost connection.
@Suite(.needsPostgres) struct PostgresStoreTests {
    let sample = SampleSession()

    // MARK: - Migrations

    @Test func aNewDatabaseGetsEveryMigrationOnceEvenWhenTwoStoresOpenItAtOnce() async throws {
        try await PostgresTestServer.withDatabase { url in
            async let first = PostgresSessionStore.open(url: url, configuration: .testing())
            async let second = PostgresSessionStore.open(url: url, configuration: .testing())
            let stores = try await [first, second]
            let applied = try PostgresMigrator().appliedMigrations(url: url)
            #expect(applied.map(\.version) == Migration.embeddedPostgres.map(\.version))
            #expect(applied.map(\.checksum) == Migration.embeddedPostgres.map(\.checksum))
            #expect(try PostgresMigrator().migrate(url: url).isEmpty)
            for store in stores { await store.close() }
        }
    }

    @Test func theMigratorRefusesAnEditedANewerOrAForeignHistory() async throws {
        try await PostgresTestServer.withDatabase { url in
            let original = Migration(
                version: 1, name: "create_things",
                sql:
                    "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL);\n"
            )
            #expect(try PostgresMigrator(migrations: [original]).migrate(url: url).map(\.version) == [1])
            // The same file, edited after it shipped.
            var edited = original
            edited.sql += "-- a comment\n"
            let error = await expectStoreError(.migrationRefused) {
                try PostgresMigrator(migrations: [edited]).migrate(url: url)
            }
            #expect(error?.message.contains("must never be edited") == true)
            // A binary that knows fewer migrations than the database has.
            let second = Migration(version: 2, name: "add_more", sql: "CREATE TABLE more (id integer);\n")
            try PostgresMigrator(migrations: [original, second]).migrate(url: url)
            let newer = await expectStoreError(.migrationRefused) {
                try PostgresMigrator(migrations: [original]).migrate(url: url)
            }
            #expect(newer?.message.contains("newer than this binary") == true)
            // The store itself refuses a database that is not one of ours.
            await expectStoreError(.migrationRefused) {
                _ = try await PostgresSessionStore.open(url: url, configuration: .testing())
            }
        }
        try await PostgresTestServer.withDatabase { url in
            try await PostgresTestServer.psql(url, "CREATE TABLE someone_elses (id integer)")
            let foreign = await expectStoreError(.migrationRefused) {
                _ = try await PostgresSessionStore.open(url: url, configuration: .testing())
            }
            #expect(foreign?.message.contains("not a NavigationValues database") == true)
        }
    }

    // MARK: - Several instances

    @Test func aStoreWhoseCopyIsStaleGetsAConflictAndNothingOfItsMutationIsKept() async throws {
        try await PostgresTestServer.withDatabase { url in
            let first = try await PostgresSessionStore.open(url: url, configuration: .testing())
            let second = try await PostgresSessionStore.open(url: url, configuration: .testing())
            try await first.commit(sample.creation)
            try await first.commit(sample.mutation(2, [.setValue(sample.root, key: "k", json: "1")]))
            // The second instance still believes the session is at version 1.
            let error = await expectStoreError(.conflict) {
                try await second.commit(sample.mutation(2, [.setValue(sample.root, key: "k", json: "2")]))
            }
            #expect(error?.sqlState == "NV409")
            #expect(try await second.version(of: sample.id) == 2)
            #expect(try await second.loadSession(sample.id)?.screens[0].values == ["k": "1"])
            // Reloaded, it goes on from version 2.
            try await second.commit(sample.mutation(3, [.setValue(sample.root, key: "k", json: "3")]))
            #expect(try await first.events(of: sample.id, after: 0, limit: 10).map(\.seq) == [1, 2, 3])
            await first.close()
            await second.close()
        }
    }

    @Test func concurrentWritersOnTwoStoresGetEverySeqExactlyOnce() async throws {
        try await PostgresTestServer.withDatabase { url in
            let stores = [
                try await PostgresSessionStore.open(url: url, configuration: .testing()),
                try await PostgresSessionStore.open(url: url, configuration: .testing()),
            ]
            try await stores[0].commit(sample.creation)
            // Each writer retries its next seq until one store wins it: the database decides.
            let wins = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        var won: [Int64] = []
                        let store = stores[writer % 2]
                        while true {
                            guard let version = try await store.version(of: sample.id), version < 40 else { return won }
                            do {
                                try await store.commit(
                                    sample.mutation(
                                        version + 1, [.setValue(sample.root, key: "w\(writer)", json: "\(version)")]))
                                won.append(version + 1)
                            } catch let error as StoreError where error.code == .conflict {
                                continue
                            }
                        }
                    }
                }
                var all: [Int64] = []
                for try await won in group { all += won }
                return all
            }
            #expect(wins.sorted() == Array(2...40))
            #expect(try await stores[1].events(of: sample.id, after: 0, limit: 100).map(\.seq) == Array(1...40))
            for store in stores { await store.close() }
        }
    }

    @Test func anotherStoreHearsOfEveryCommitInOrderButNotOfItsOwn() async throws {
        try await PostgresTestServer.withDatabase { url in
            let writer = try await PostgresSessionStore.open(url: url, configuration: .testing())
            let listener = try await PostgresSessionStore.open(url: url, configuration: .testing())
            let heard = listener.commitNotices()
            let own = writer.commitNotices()
            try await waitUntil("both stores listen", timeout: .seconds(20)) {
                writer.listener?.isListening == true && listener.listener?.isListening == true
            }
            try await writer.commit(sample.creation)
            for seq in Int64(2)...5 { try await writer.commit(sample.mutation(seq)) }
            try await writer.commit(
                StoredMutation(
                    session: sample.id, event: sample.event(6, "session.ended"), changes: [.purgeSession(sample.id)]))
            let notices = try await collect(6, of: heard, timeout: .seconds(20))
            #expect(
                Array(notices.prefix(5))
                    == (1...5).map { CommitNotice.committed(session: sample.id, seq: $0, purge: nil) })
            guard case .committed(let session, 6, let purge) = notices[5] else {
                Issue.record("expected the purge's notice, got \(notices[5])")
                return
            }
            #expect(session == sample.id)
            #expect(purge?.json == sample.event(6, "session.ended").json)
            // A batch of concurrent commits shares notifications (several lines each): all arrive.
            let many = (0..<40).map { SampleSession("s_many_\($0)") }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for session in many { group.addTask { try await writer.commit(session.creation) } }
                try await group.waitForAll()
            }
            let batch = try await collect(many.count, of: heard, timeout: .seconds(20))
            let heardSessions = batch.compactMap { notice -> String? in
                guard case .committed(let session, 1, nil) = notice else { return nil }
                return session.rawValue
            }
            #expect(heardSessions.sorted() == many.map(\.id.rawValue).sorted())
            // The writer's own commits are not echoed back to it.
            try await listener.commit(SampleSession("s_other").creation)
            #expect(
                try await first(of: own, timeout: .seconds(20))
                    == .committed(session: SessionID("s_other"), seq: 1, purge: nil))
            await writer.close()
            await listener.close()
        }
    }

    // MARK: - Faults

    @Test func aLostConnectionIsUnavailableThenTheStoreReconnectsByItself() async throws {
        try await PostgresTestServer.withDatabase { url in
            let store = try await PostgresSessionStore.open(url: url, configuration: .testing())
            try await store.commit(sample.creation)
            #expect(try await store.version(of: sample.id) == 1)
            // The server ends every connection of this database, as a restart or failover would.
            try await PostgresTestServer.psql(
                url,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            await expectStoreError(.unavailable) { try await store.commit(sample.mutation(2)) }
            // Calls heal once the connection is made again, without restarting anything.
            #expect(
                try await eventually(timeout: .seconds(20), pollingEvery: .milliseconds(50)) {
                    (try? await store.checkWritable()) != nil
                })
            try await store.commit(sample.mutation(2))
            #expect(
                try await eventually(timeout: .seconds(20), pollingEvery: .milliseconds(50)) {
                    (try? await store.version(of: sample.id)) == 2
                })
            #expect(try await eventually(timeout: .seconds(20)) { store.listener?.isListening == true })
            await store.close()
        }
    }

    @Test func anUnreachableServerIsUnavailable() async throws {
        let error = await expectStoreError(.unavailable) {
            _ = try await PostgresSessionStore.open(url: "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
        }
        #expect(error?.message.contains("cannot connect") == true)
    }
}
