import Foundation
import NavigationValuesWire

// What the store offers beside its base contract, as SQLiteSessionStore has it: reads bounded by
// bytes, the token checked before a session is loaded, and the maintenance retention needs.

extension PostgresSessionStore {
    public func eventPage(of id: SessionID, after: Int64, limit: Int, maxBytes: Int) async throws -> EventPage {
        guard limit > 0 else { return EventPage(events: [], hasMore: false) }
        // The sizes first (a number per event, none of their JSON), then the JSON of the events
        // that fit, on the same connection.
        let rows = try await read { connection in
            let sizes = try connection.query(
                """
                SELECT seq, coalesce(bytes, octet_length(json::text)) FROM events
                WHERE session = $1 AND seq > $2 ORDER BY seq LIMIT $3
                """, [id.rawValue, "\(after)", "\(limit + 1)"]
            ).rows
            var cut = PageCut(limit: limit, maxBytes: maxBytes)
            for row in sizes {
                guard cut.admit(seq: try Self.int64(row, 0), size: Int(try Self.int64(row, 1))) else { break }
            }
            guard let last = cut.last else { return (rows: [[String?]](), hasMore: false) }
            let rows = try connection.query(
                """
                SELECT seq, type, json, \(Self.milliseconds(column: "at")) FROM events
                WHERE session = $1 AND seq > $2 AND seq <= $3 ORDER BY seq
                """, [id.rawValue, "\(after)", "\(last)"]
            ).rows
            return (rows: rows, hasMore: cut.hasMore)
        }
        let events = try rows.rows.map { row in
            StoredEvent(
                session: id, seq: try Self.int64(row, 0), type: try Self.text(row, 1), json: try Self.text(row, 2),
                at: try Self.date(row, 3))
        }
        return EventPage(events: events, hasMore: rows.hasMore)
    }

    public func access(to id: SessionID) async throws -> SessionAccess? {
        let rows = try await read { connection in
            try connection.query(
                "SELECT token_hash, state, version, compacted_seq FROM sessions WHERE id = $1", [id.rawValue]
            ).rows
        }
        return try rows.first.map { row in
            SessionAccess(
                tokenHash: try Self.text(row, 0), state: try Self.state(try Self.text(row, 1)),
                version: try Self.int64(row, 2), compactedSeq: try Self.int64(row, 3))
        }
    }
}

extension PostgresSessionStore: SessionStoreMaintenance {
    /// Retention's query (state $1, before $2 in milliseconds, limit $3), through
    /// sessions_by_state_and_updated_minute (Migrations/postgres/0006): updated_minute is
    /// updated_at rounded down to its minute, so the order is oldest change first, and updated_at
    /// decides only among the rows of the minute `before` falls in.
    package static let sessionsByStateAndAge = """
        SELECT id, version, \(milliseconds(column: "updated_at")) FROM sessions
        WHERE state = $1 AND updated_minute < \(time(2)) AND updated_at < \(time(2))
        ORDER BY updated_minute, updated_at LIMIT $3
        """

    public func sessions(in state: SessionState, updatedBefore before: Date, limit: Int) async throws
        -> [SessionStamp]
    {
        guard limit > 0 else { return [] }
        let rows = try await read { connection in
            try connection.query(
                Self.sessionsByStateAndAge, [state.rawValue, Self.milliseconds(before), "\(limit)"]
            ).rows
        }
        return try rows.map { row in
            SessionStamp(
                id: SessionID(try Self.text(row, 0)), version: try Self.int64(row, 1), updatedAt: try Self.date(row, 2))
        }
    }

    public func compactHistory(_ rule: CompactionRule, now: Date, limit: Int) async throws -> Int {
        guard rule.isActive, limit > 0 else { return 0 }
        let keepEvents = rule.keepEvents.map { "\($0)" }
        let cutoff = rule.keepAge.map { Self.milliseconds(now.addingTimeInterval(-$0.seconds)) }
        // One statement, so one transaction: the compacted point of each session is its newest
        // snapshot that both rules let go (at least keepEvents events after it, and its event
        // older than the cutoff); the events up to it and the snapshots before it go, and
        // compacted_seq records it. A commit of another instance only appends after it.
        let rows = try await writer.run { connection in
            try connection.query(
                """
                WITH targets AS (
                    SELECT snapshots.session, max(snapshots.seq) AS point
                    FROM snapshots
                    JOIN sessions ON sessions.id = snapshots.session
                    JOIN events ON events.session = snapshots.session AND events.seq = snapshots.seq
                    WHERE snapshots.seq > sessions.compacted_seq
                      AND ($1::bigint IS NULL OR snapshots.seq <= sessions.version - $1::bigint)
                      AND ($2::bigint IS NULL OR events.at < \(Self.time(2)))
                    GROUP BY snapshots.session, sessions.compacted_seq
                    ORDER BY max(snapshots.seq) - sessions.compacted_seq DESC
                    LIMIT $3
                ), gone_events AS (
                    DELETE FROM events USING targets
                    WHERE events.session = targets.session AND events.seq <= targets.point
                    RETURNING 1
                ), gone_snapshots AS (
                    DELETE FROM snapshots USING targets
                    WHERE snapshots.session = targets.session AND snapshots.seq < targets.point
                    RETURNING 1
                ), moved AS (
                    UPDATE sessions SET compacted_seq = targets.point FROM targets
                    WHERE sessions.id = targets.session
                    RETURNING 1
                )
                SELECT (SELECT count(*) FROM gone_events), (SELECT count(*) FROM gone_snapshots),
                       (SELECT count(*) FROM moved)
                """, [keepEvents, cutoff, "\(limit)"]
            ).rows
        }
        return Int(try rows.first.map { try Self.int64($0, 0) } ?? 0)
    }

    public func removeExpiredRecords(tombstonesBefore before: Date) async throws -> Int {
        let cutoff = Self.milliseconds(idempotencyCutoff)
        let rows = try await writer.run { connection in
            try connection.query(
                """
                WITH tombstones AS (
                    DELETE FROM purged_sessions WHERE purged_at < \(Self.time(1)) RETURNING 1
                ), records AS (
                    DELETE FROM idempotency_keys WHERE created_at < \(Self.time(2)) RETURNING 1
                )
                SELECT (SELECT count(*) FROM tombstones) + (SELECT count(*) FROM records)
                """, [Self.milliseconds(before), cutoff]
            ).rows
        }
        return Int(try rows.first.map { try Self.int64($0, 0) } ?? 0)
    }
}
