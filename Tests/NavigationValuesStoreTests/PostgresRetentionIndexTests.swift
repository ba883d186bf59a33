import Foundation
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesPostgres
@testable import NavigationValuesStore

/// Migrations/postgres/0006 moves retention's index from (state, updated_at) to
/// (state, updated_minute): it fills updated_minute for the sessions already there, and an
/// ordinary change of a session (same state, same minute) becomes a HOT update, which adds no
/// index entry.
@Suite(.needsPostgres) struct PostgresRetentionIndexTests {
    let sample = SampleSession()

    @Test func theMigrationFillsEachSessionsMinuteAndMovesTheIndex() async throws {
        try await PostgresTestServer.withDatabase { url in
            try PostgresMigrator(migrations: Array(Migration.embeddedPostgres.prefix(5))).migrate(url: url)
            // A minute's first and last millisecond, one in between, 0, and a time before 1970.
            let times: [Int64] = [1_796_000_040_000, 1_796_000_099_999, 1_796_000_061_234, 0, -1_234]
            let rows = times.enumerated().map { index, time in
                "('s_\(index)', 1, 'active', '{}', 'ab', to_timestamp(\(time) / 1000.0), to_timestamp(\(time) / 1000.0))"
            }
            try await PostgresTestServer.psql(
                url,
                """
                INSERT INTO sessions (id, version, state, schema, token_hash, created_at, updated_at)
                VALUES \(rows.joined(separator: ", "));
                """)
            let store = try await PostgresSessionStore.open(url: url, configuration: .testing())
            await store.close()

            let connection = try PostgresConnection(url: url)
            let minutes = try connection.query(
                "SELECT \(PostgresDialect().milliseconds("updated_minute")) FROM sessions ORDER BY id"
            ).rows
            // Rounded down, in UTC: before 1970 that is away from zero.
            #expect(minutes == [["1796000040000"], ["1796000040000"], ["1796000040000"], ["0"], ["-60000"]])
            let indexes = try connection.query(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'sessions' ORDER BY indexname"
            ).rows
            #expect(indexes.map { $0[0] } == ["sessions_by_state_and_updated_minute", "sessions_pkey"])
            #expect(indexes.first?[1]?.hasSuffix("(state, updated_minute)") == true)
            let options = try connection.query("SELECT reloptions FROM pg_class WHERE relname = 'sessions'").rows
            #expect(options == [["{fillfactor=90}"]])
            // Nothing else about sessions changed: the same columns plus updated_minute.
            let columns = try connection.query(
                """
                SELECT column_name, data_type, is_nullable FROM information_schema.columns
                WHERE table_name = 'sessions' AND column_name LIKE 'updated%' ORDER BY column_name
                """
            ).rows
            #expect(
                columns == [
                    ["updated_at", "timestamp with time zone", "NO"],
                    ["updated_minute", "timestamp with time zone", "NO"],
                ])

            // An instance of an older binary, still running during an upgrade, inserts sessions
            // without updated_minute: they get '-infinity', and retention still finds them when
            // due (first, since it checks updated_at exactly).
            try await PostgresTestServer.psql(
                url,
                """
                INSERT INTO sessions (id, version, state, schema, token_hash, created_at, updated_at)
                VALUES ('s_older', 1, 'active', '{}', 'ab', to_timestamp(1796000050), to_timestamp(1796000050));
                """)
            let reopened = try await PostgresSessionStore.open(url: url, configuration: .testing())
            let due = try await reopened.sessions(
                in: .active, updatedBefore: Date(millisecondsSince1970: 1_796_000_060_000), limit: 10)
            let notYet = try await reopened.sessions(
                in: .active, updatedBefore: Date(millisecondsSince1970: 1_796_000_050_000), limit: 10)
            await reopened.close()
            #expect(due.map(\.id.rawValue) == ["s_older", "s_4", "s_3", "s_0"])
            #expect(due.first?.updatedAt == Date(millisecondsSince1970: 1_796_000_050_000))
            #expect(notYet.map(\.id.rawValue) == ["s_4", "s_3", "s_0"])
        }
    }

    /// Retention's query, as the store runs it, can search the index on both of its columns (the
    /// planner is told not to scan the table, which on a test's few rows it would prefer).
    @Test func retentionsQueryCanSearchTheIndex() async throws {
        try await PostgresTestServer.withDatabase { url in
            let store = try await PostgresSessionStore.open(url: url, configuration: .testing())
            await store.close()
            let connection = try PostgresConnection(url: url)
            _ = try connection.query("SET enable_seqscan = off")
            let plan = try connection.query(
                "EXPLAIN \(PostgresSessionStore.sessionsByStateAndAge)", ["active", "1796000040000", "100"]
            ).rows.compactMap { $0.first ?? nil }.joined(separator: "\n")
            #expect(plan.contains("Index Scan using sessions_by_state_and_updated_minute"), "\(plan)")
            #expect(plan.contains("Index Cond: ((state = 'active'::text) AND (updated_minute <"), "\(plan)")
            #expect(!plan.contains("Seq Scan"), "\(plan)")
        }
    }

    /// Twenty changes within the session's minute are HOT; the one that crosses into the next
    /// minute, and the one that ends the session, move the index entry and are not. (The counts
    /// are PostgreSQL's statistics, which a backend reports when it exits: the store is closed
    /// before they are read.)
    @Test func changesWithinAMinuteAndAStateAreHOTUpdates() async throws {
        try await PostgresTestServer.withDatabase { url in
            let store = try await PostgresSessionStore.open(url: url, configuration: .testing())
            try await store.commit(sample.creation)
            func change(_ seq: Int64, at date: Date, _ state: SessionState = .active) -> StoredMutation {
                var event = sample.event(seq)
                event.at = date
                return StoredMutation(
                    session: sample.id, event: event,
                    changes: [.updateSession(sample.id, version: seq, state: state, updatedAt: date)])
            }
            // sample.at is 20 s into its minute.
            for seq in Int64(2)...21 {
                try await store.commit(change(seq, at: sample.at.addingTimeInterval(Double(seq) / 1_000)))
            }
            try await store.commit(change(22, at: sample.at.addingTimeInterval(60)))
            try await store.commit(change(23, at: sample.at.addingTimeInterval(60.5), .ended))
            await store.close()

            let connection = try PostgresConnection(url: url)
            var counts: [[String?]] = []
            let reported = try await eventually {
                counts = try connection.query(
                    "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'sessions'"
                ).rows
                return counts.first?.first == "22"
            }
            #expect(reported, "sessions' statistics: \(counts)")
            #expect(counts == [["22", "20"]])
            let reopened = try await PostgresSessionStore.open(url: url, configuration: .testing())
            let loaded = try await reopened.loadSession(sample.id)
            await reopened.close()
            #expect(loaded?.record.version == 23 && loaded?.record.state == .ended)
            #expect(loaded?.record.updatedAt == sample.at.addingTimeInterval(60.5))
        }
    }
}
