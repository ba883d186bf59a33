import Foundation
import NavigationValuesWire
import Synchronization

// MARK: - Readiness

/// Whether a write worked, and when: what `/readyz` answers from.
struct WriteOutcome: Sendable {
    var at: ContinuousClock.Instant
    var error: StoreError?

    /// How long a write that worked stands for the database's state before a probe asks again.
    static let lifetime: Duration = .seconds(1)
    /// How long a write that failed does: longer, since a probe's one small row may still fit
    /// (in the write-ahead log's space, say) where the commits that failed did not.
    static let failureLifetime: Duration = .seconds(10)

    /// How long this outcome stands.
    var lifetime: Duration { error == nil ? Self.lifetime : Self.failureLifetime }

    /// What a batch's results say of the database: a success says it writes; a failure of the
    /// database itself (`.unavailable`) says it does not; a refused mutation (a conflict,
    /// invalid data) says nothing about it (nil when the batch held only such).
    static func of(_ results: [Result<Void, any Error>], at instant: ContinuousClock.Instant) -> WriteOutcome? {
        var outcome: WriteOutcome?
        for result in results {
            switch result {
            case .success:
                outcome = WriteOutcome(at: instant, error: nil)
            case .failure(let error as StoreError) where error.code == .unavailable:
                if outcome == nil { outcome = WriteOutcome(at: instant, error: error) }
            case .failure:
                continue
            }
        }
        return outcome
    }
}

extension SQLiteSessionStore {
    /// Fails while writes fail (a full disk, a read-only file, an I/O error), and succeeds again
    /// once one works. It answers from the latest write when that worked less than a second ago
    /// or failed less than ten seconds ago, so a server whose commits fail is not ready even when
    /// a tiny probe would slip through; otherwise it writes the one row of `readiness_probe` in a
    /// transaction of its own.
    ///
    /// - Throws: `StoreError` `.unavailable` (or `.closed`).
    public func checkWritable() async throws {
        let now = ContinuousClock.now
        if let last = lastWrite.withLock({ $0 }), now - last.at < last.lifetime {
            if let error = last.error { throw error }
            return
        }
        let probedAt = configuration.now()
        do {
            try await writer.run { db in
                guard !db.isReadOnly else {
                    throw StoreError(code: .unavailable, message: "the database is read-only")
                }
                // As before a batch: a transaction a failed rollback left open is rolled back.
                if db.isInTransaction { try? db.rollback() }
                try db.inTransaction(.immediate) {
                    try db.execute(
                        """
                        INSERT INTO readiness_probe (id, probed_at) VALUES (1, ?)
                        ON CONFLICT (id) DO UPDATE SET probed_at = excluded.probed_at
                        """, [.milliseconds(probedAt)])
                }
            }
            lastWrite.withLock { $0 = WriteOutcome(at: .now, error: nil) }
        } catch let error as StoreError {
            lastWrite.withLock { $0 = WriteOutcome(at: .now, error: error) }
            throw error
        }
    }

    /// Remembers a batch's outcome (see `WriteOutcome.of(_:at:)`).
    func recordWriteOutcome(_ results: [Result<Void, any Error>], at instant: ContinuousClock.Instant) {
        if let outcome = WriteOutcome.of(results, at: instant) { lastWrite.withLock { $0 = outcome } }
    }
}

// MARK: - Retention

extension SQLiteSessionStore: SessionStoreMaintenance {
    /// Retention's query (state ?1, before ?2, limit ?3), through
    /// sessions_by_state_and_updated_minute (Migrations/0008): updated_minute is updated_at rounded
    /// down to its minute, so the order is oldest change first, and updated_at is checked only on
    /// the rows of the minute `before` falls in.
    package static let sessionsByStateAndAge = """
        SELECT id, version, updated_at FROM sessions
        WHERE state = ?1 AND updated_minute < ?2 AND updated_at < ?2
        ORDER BY updated_minute, updated_at LIMIT ?3
        """

    public func sessions(in state: SessionState, updatedBefore before: Date, limit: Int) async throws
        -> [SessionStamp]
    {
        guard limit > 0 else { return [] }
        return try await read { db in
            try db.fetchAll(
                Self.sessionsByStateAndAge, [.text(state.rawValue), .milliseconds(before), .integer(limit)]
            ) { row in SessionStamp(id: SessionID(row.string(0)), version: row.int64(1), updatedAt: row.date(2)) }
        }
    }

    public func compactHistory(_ rule: CompactionRule, now: Date, limit: Int) async throws -> Int {
        guard rule.isActive, limit > 0 else { return 0 }
        let keepEvents: DatabaseValue = rule.keepEvents.map { .integer($0) } ?? .null
        let cutoff: DatabaseValue = rule.keepAge.map { .milliseconds(now.addingTimeInterval(-$0.seconds)) } ?? .null
        return try await writer.run { db in
            try db.inTransaction(.immediate) {
                // The compacted point of each session: its newest snapshot that both rules let
                // go (at least keepEvents events after it, and its event older than the cutoff).
                let targets = try db.fetchAll(
                    """
                    SELECT snapshots.session, max(snapshots.seq) AS point, sessions.compacted_seq
                    FROM snapshots
                    JOIN sessions ON sessions.id = snapshots.session
                    JOIN events ON events.session = snapshots.session AND events.seq = snapshots.seq
                    WHERE snapshots.seq > sessions.compacted_seq
                      AND (?1 IS NULL OR snapshots.seq <= sessions.version - ?1)
                      AND (?2 IS NULL OR events.at < ?2)
                    GROUP BY snapshots.session
                    ORDER BY point - sessions.compacted_seq DESC
                    LIMIT ?3
                    """, [keepEvents, cutoff, .integer(limit)]
                ) { row in (id: row.string(0), point: row.int64(1)) }
                var deleted = 0
                for target in targets {
                    let arguments: [DatabaseValue] = [.text(target.id), .integer(target.point)]
                    try db.execute("DELETE FROM events WHERE session = ?1 AND seq <= ?2", arguments)
                    deleted += db.changes
                    try db.execute("DELETE FROM snapshots WHERE session = ?1 AND seq < ?2", arguments)
                    try db.execute("UPDATE sessions SET compacted_seq = ?2 WHERE id = ?1", arguments)
                }
                return deleted
            }
        }
    }

    public func removeExpiredRecords(tombstonesBefore before: Date) async throws -> Int {
        let cutoff = idempotencyCutoff
        return try await writer.run { db in
            try db.inTransaction(.immediate) {
                try db.execute("DELETE FROM purged_sessions WHERE purged_at < ?", [.milliseconds(before)])
                var deleted = db.changes
                try db.execute("DELETE FROM idempotency_keys WHERE created_at < ?", [.milliseconds(cutoff)])
                deleted += db.changes
                return deleted
            }
        }
    }
}
