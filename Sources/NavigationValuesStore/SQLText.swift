/// Every statement of the SQL store, written once with numbered parameters and the dialect's
/// pieces, rendered for one engine when the store opens.
package struct SQLText: Sendable {
    // MARK: Writing a mutation
    package let insertSession: String
    /// The version and last change; with ``SQLDialect/rewritesIndexOnAssignment``, only those.
    package let updateSession: String
    /// The indexed state and minute, only when one of them changes (``SQLDialect/rewritesIndexOnAssignment``).
    package let updateSessionIndexKeys: String
    package let insertScreen: String
    package let deleteScreen: String
    package let deleteScreens: String
    package let setValue: String
    package let removeValue: String
    package let setHandler: String
    package let removeHandler: String
    package let rememberDelivery: String
    package let setReceivedPreference: String
    package let deleteSession: String
    package let insertTombstone: String
    package let insertStack: String
    package let deleteStacks: String
    package let selectStack: String
    package let setStackPosition: String
    package let insertEvent: String
    package let insertSnapshot: String
    /// A snapshot kept apart from its state write, which failed: none is written twice.
    package let insertSnapshotUnlessPresent: String
    package let expectVersion: String
    /// The session's version as its log says, for a mutation that commits its event only.
    package let expectLogVersion: String
    /// The session's version and last change, only when its state is at ?4 (?5 without the
    /// split): state written behind never goes back, nor skips a version.
    package let advanceSession: String
    package let replaceExpiredIdempotencyRecord: String
    package let insertIdempotencyRecord: String
    package let deleteExpiredIdempotencyRecords: String
    package let readinessProbe: String

    // MARK: Reading
    package let sessionRow: String
    package let screens: String
    package let values: String
    package let handlers: String
    package let receivedPreferences: String
    package let stacks: String
    package let version: String
    package let events: String
    package let eventSizes: String
    /// The events after the version the session's state reflects (written behind).
    package let eventsAfterState: String
    /// Sessions whose state is behind their log.
    package let laggingSessions: String
    package let eventRange: String
    package let access: String
    package let snapshot: String
    package let sessionList: String
    package let wasPurged: String
    package let idempotencyRecord: String

    // MARK: Maintenance
    package let sessionsByStateAndAge: String
    package let compactionTargets: String
    package let compactEvents: String
    package let compactSnapshots: String
    package let recordCompaction: String
    package let deleteTombstones: String

    // MARK: Observer tokens
    package let deleteExpiredObservers: String
    package let countObservers: String
    package let sessionExists: String
    package let insertObserver: String
    package let observerByHash: String
    package let observerByID: String
    package let observersOfSession: String
    package let allObservers: String
    package let deleteObserver: String
    package let lockObserverScope: String?

    // MARK: Hand-offs
    package let deleteExpiredHandoffs: String
    package let countOutstandingHandoffs: String
    package let insertHandoff: String
    package let handoffByID: String
    /// Sets `used_at` only while it is NULL, answering the row it changed: one winner.
    package let consumeHandoff: String
    package let countDeviceTokens: String
    package let insertDeviceToken: String
    package let deviceTokenSession: String
    package let pruneHandoffs: String

    // MARK: Turns
    package let lockTimeout: String?
    /// The rest of the transaction commits without waiting for the disk (state written behind).
    package let unsyncedCommit: String?

    package init(_ d: any SQLDialect) {
        func r(_ sql: String) -> String { d.render(sql) }
        let t = d.time
        let ms = d.milliseconds

        // The log's latest seq when it is past the state's version, else the state's version.
        let logVersion = """
            coalesce((SELECT max(seq) FROM events
                      WHERE events.session = sessions.id AND events.seq > sessions.version), sessions.version)
            """

        insertSession = r(
            """
            INSERT INTO sessions
                (id, version, state, schema, token_hash, created_at, updated_at, updated_minute,
                 origin_session, origin_version)
            VALUES (?1, ?2, ?3, ?4, ?5, \(t("?6")), \(t("?7")), \(d.minute(t("?7"))), ?8, ?9)
            """)
        // (version, updated_at, id), or (version, updated_at, state, id) with the index keys.
        updateSession = r(
            d.rewritesIndexOnAssignment
                ? "UPDATE sessions SET version = ?1, updated_at = \(t("?2")) WHERE id = ?3"
                : """
                UPDATE sessions SET version = ?1, updated_at = \(t("?2")), state = ?3,
                    updated_minute = \(d.minute(t("?2")))
                WHERE id = ?4
                """)
        updateSessionIndexKeys = r(
            """
            UPDATE sessions SET state = ?1, updated_minute = \(d.minute("updated_at"))
            WHERE id = ?2 AND NOT (\(d.isSame("state", "?1")) AND \(d.isSame("updated_minute", d.minute("updated_at"))))
            """)
        insertScreen = r(
            """
            INSERT INTO screen_contexts (id, session, stack, idx, name, role, previous)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """)
        deleteScreen = r("DELETE FROM screen_contexts WHERE id = ?1")
        deleteScreens = r("DELETE FROM screen_contexts WHERE \(d.isIn("id", list: "?1"))")
        setValue = r(
            """
            INSERT INTO context_values (screen, key, json) VALUES (?1, ?2, ?3)
            ON CONFLICT (screen, key) DO UPDATE SET json = excluded.json
            """)
        removeValue = r("DELETE FROM context_values WHERE screen = ?1 AND key = ?2")
        setHandler = r(
            """
            INSERT INTO preference_handlers (screen, key, pass_back, last_value, last_passed)
            VALUES (?1, ?2, ?3, NULL, NULL)
            ON CONFLICT (screen, key) DO UPDATE
            SET pass_back = excluded.pass_back, last_value = NULL, last_passed = NULL
            """)
        removeHandler = r("DELETE FROM preference_handlers WHERE screen = ?1 AND key = ?2")
        rememberDelivery = r(
            "UPDATE preference_handlers SET last_value = ?1, last_passed = ?2 WHERE screen = ?3 AND key = ?4")
        setReceivedPreference = r(
            """
            INSERT INTO received_preferences (screen, key, json) VALUES (?1, ?2, ?3)
            ON CONFLICT (screen, key) DO UPDATE SET json = excluded.json
            """)
        deleteSession = r("DELETE FROM sessions WHERE id = ?1")
        insertTombstone = r(
            "INSERT INTO purged_sessions (id, purged_at) VALUES (?1, \(t("?2"))) ON CONFLICT (id) DO NOTHING")
        insertStack = r(
            "INSERT INTO screen_stacks (session, id, position, kind, presenter) VALUES (?1, ?2, ?3, ?4, ?5)")
        deleteStacks = r("DELETE FROM screen_stacks WHERE session = ?1 AND \(d.isIn("id", list: "?2"))")
        selectStack = r("UPDATE sessions SET selected_stack = ?1 WHERE id = ?2")
        setStackPosition = r("UPDATE screen_stacks SET position = ?1 WHERE session = ?2 AND id = ?3")
        insertEvent = r(
            "INSERT INTO events (session, seq, type, json, at, bytes) VALUES (?1, ?2, ?3, ?4, \(t("?5")), ?6)")
        insertSnapshot = r("INSERT INTO snapshots (session, seq, json) VALUES (?1, ?2, ?3)")
        insertSnapshotUnlessPresent = r(
            "INSERT INTO snapshots (session, seq, json) VALUES (?1, ?2, ?3) ON CONFLICT (session, seq) DO NOTHING")
        expectVersion = r("SELECT version FROM sessions WHERE id = ?1" + d.lockingRead)
        expectLogVersion = r("SELECT \(logVersion) FROM sessions WHERE id = ?1" + d.lockingRead)
        advanceSession = r(
            d.rewritesIndexOnAssignment
                ? "UPDATE sessions SET version = ?1, updated_at = \(t("?2")) WHERE id = ?3 AND version = ?4"
                : """
                UPDATE sessions SET version = ?1, updated_at = \(t("?2")), state = ?3,
                    updated_minute = \(d.minute(t("?2")))
                WHERE id = ?4 AND version = ?5
                """)
        replaceExpiredIdempotencyRecord = r(
            "DELETE FROM idempotency_keys WHERE scope = ?1 AND key = ?2 AND created_at < \(t("?3"))")
        insertIdempotencyRecord = r(
            """
            INSERT INTO idempotency_keys (scope, key, status, headers, body, created_at, session)
            VALUES (?1, ?2, ?3, ?4, ?5, \(t("?6")), ?7)
            """)
        deleteExpiredIdempotencyRecords = r("DELETE FROM idempotency_keys WHERE created_at < \(t("?1"))")
        readinessProbe = r(
            """
            INSERT INTO readiness_probe (id, probed_at) VALUES (1, \(t("?1")))
            ON CONFLICT (id) DO UPDATE SET probed_at = excluded.probed_at
            """)

        sessionRow = r(
            """
            SELECT version, state, schema, token_hash, \(ms("created_at")), \(ms("updated_at")), selected_stack,
                   origin_session, origin_version, compacted_seq
            FROM sessions WHERE id = ?1
            """)
        // The main stack's screens first, then each other stack's; each stack's root first.
        screens = r(
            """
            SELECT id, idx, name, role, previous, stack FROM screen_contexts WHERE session = ?1
            ORDER BY stack <> 'main', stack, idx
            """)
        let ofSession = "JOIN screen_contexts s ON s.id = t.screen WHERE s.session = ?1"
        values = r("SELECT t.screen, t.key, t.json FROM context_values t \(ofSession)")
        handlers = r(
            "SELECT t.screen, t.key, t.pass_back, t.last_value, t.last_passed FROM preference_handlers t \(ofSession)")
        receivedPreferences = r("SELECT t.screen, t.key, t.json FROM received_preferences t \(ofSession)")
        stacks = r("SELECT id, position, kind, presenter FROM screen_stacks WHERE session = ?1 ORDER BY position")
        version = r("SELECT \(logVersion) FROM sessions WHERE id = ?1")
        events = r(
            "SELECT seq, type, json, \(ms("at")) FROM events WHERE session = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3")
        eventSizes = r(
            """
            SELECT seq, coalesce(bytes, \(d.byteLength("json"))) FROM events
            WHERE session = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3
            """)
        eventRange = r(
            """
            SELECT seq, type, json, \(ms("at")) FROM events
            WHERE session = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq
            """)
        // The log's version, then the state's: they differ while the state is written behind.
        access = r("SELECT token_hash, state, \(logVersion), compacted_seq, version FROM sessions WHERE id = ?1")
        eventsAfterState = r(
            """
            SELECT events.seq, events.type, events.json, \(ms("events.at")) FROM events
            JOIN sessions ON sessions.id = events.session
            WHERE events.session = ?1 AND events.seq > sessions.version ORDER BY events.seq
            """)
        laggingSessions = r(
            """
            SELECT id FROM sessions
            WHERE EXISTS (SELECT 1 FROM events WHERE events.session = sessions.id AND events.seq > sessions.version)
            LIMIT ?1
            """)
        snapshot = r("SELECT seq, json FROM snapshots WHERE session = ?1 AND seq <= ?2 ORDER BY seq DESC LIMIT 1")
        sessionList = r(
            """
            SELECT id, \(logVersion), state, \(ms("updated_at")),
                   (SELECT count(*) FROM screen_contexts
                    WHERE screen_contexts.session = sessions.id AND screen_contexts.stack = 'main'),
                   version
            FROM sessions WHERE id > ?1 ORDER BY id LIMIT ?2
            """)
        wasPurged = r("SELECT 1 FROM purged_sessions WHERE id = ?1")
        idempotencyRecord = r(
            """
            SELECT status, headers, body, \(ms("created_at")), session FROM idempotency_keys
            WHERE scope = ?1 AND key = ?2 AND created_at >= \(t("?3"))
            """)

        // Through sessions_by_state_and_updated_minute (Migrations/0008, postgres/0006):
        // updated_minute is updated_at rounded down to its minute, so the order is oldest change
        // first, and updated_at decides only among the rows of the minute `before` falls in.
        sessionsByStateAndAge = r(
            """
            SELECT id, version, \(ms("updated_at")) FROM sessions
            WHERE state = ?1 AND updated_minute < \(t("?2")) AND updated_at < \(t("?2"))
            ORDER BY updated_minute, updated_at LIMIT ?3
            """)
        // The compacted point of each session: its newest snapshot that both rules let go (at
        // least ?1 events after it, and its event older than ?2).
        compactionTargets = r(
            """
            SELECT snapshots.session, max(snapshots.seq)
            FROM snapshots
            JOIN sessions ON sessions.id = snapshots.session
            JOIN events ON events.session = snapshots.session AND events.seq = snapshots.seq
            WHERE snapshots.seq > sessions.compacted_seq
              AND snapshots.seq <= sessions.version - ?1
              AND events.at < \(t("?2"))
            GROUP BY snapshots.session, sessions.compacted_seq
            ORDER BY max(snapshots.seq) - sessions.compacted_seq DESC
            LIMIT ?3
            """)
        compactEvents = r("DELETE FROM events WHERE session = ?1 AND seq <= ?2")
        compactSnapshots = r("DELETE FROM snapshots WHERE session = ?1 AND seq < ?2")
        // Never back: two passes at once (two instances) each record their own point.
        recordCompaction = r("UPDATE sessions SET compacted_seq = ?2 WHERE id = ?1 AND compacted_seq < ?2")
        deleteTombstones = r("DELETE FROM purged_sessions WHERE purged_at < \(t("?1"))")

        deleteExpiredObservers = r(
            """
            DELETE FROM observer_tokens
            WHERE \(d.isSame("session", "?1")) AND expires_at IS NOT NULL AND expires_at <= \(t("?2"))
            """)
        countObservers = r("SELECT count(*) FROM observer_tokens WHERE \(d.isSame("session", "?1"))")
        sessionExists = r("SELECT 1 FROM sessions WHERE id = ?1")
        insertObserver = r(
            """
            INSERT INTO observer_tokens (id, session, token_hash, label, created_at, expires_at)
            VALUES (?1, ?2, ?3, ?4, \(t("?5")), \(t("?6")))
            """)
        let observerColumns = "id, session, token_hash, label, \(ms("created_at")), \(ms("expires_at"))"
        observerByHash = r("SELECT \(observerColumns) FROM observer_tokens WHERE token_hash = ?1")
        observerByID = r("SELECT \(observerColumns) FROM observer_tokens WHERE id = ?1")
        observersOfSession = r(
            "SELECT \(observerColumns) FROM observer_tokens WHERE session = ?1 AND id > ?2 ORDER BY id LIMIT ?3")
        allObservers = r("SELECT \(observerColumns) FROM observer_tokens WHERE id > ?1 ORDER BY id LIMIT ?2")
        deleteObserver = r("DELETE FROM observer_tokens WHERE id = ?1")
        lockObserverScope = d.transactionLock.map(r)

        deleteExpiredHandoffs = r("DELETE FROM handoffs WHERE session = ?1 AND expires_at <= \(t("?2"))")
        countOutstandingHandoffs = r(
            "SELECT count(*) FROM handoffs WHERE session = ?1 AND used_at IS NULL AND expires_at > \(t("?2"))")
        insertHandoff = r(
            """
            INSERT INTO handoffs (id, session, fork, version, created_at, expires_at, used_at)
            VALUES (?1, ?2, ?3, ?4, \(t("?5")), \(t("?6")), NULL)
            """)
        handoffByID = r(
            """
            SELECT id, session, fork, version, \(ms("created_at")), \(ms("expires_at")), \(ms("used_at"))
            FROM handoffs WHERE id = ?1
            """)
        consumeHandoff = r(
            "UPDATE handoffs SET used_at = \(t("?2")) WHERE id = ?1 AND used_at IS NULL RETURNING session")
        countDeviceTokens = r("SELECT count(*) FROM device_tokens WHERE session = ?1")
        insertDeviceToken = r(
            "INSERT INTO device_tokens (token_hash, session, handoff, created_at) VALUES (?1, ?2, ?3, \(t("?4")))")
        deviceTokenSession = r("SELECT session FROM device_tokens WHERE token_hash = ?1")
        pruneHandoffs = r("DELETE FROM handoffs WHERE expires_at < \(t("?1"))")
        lockTimeout = d.lockTimeout.map(r)
        unsyncedCommit = d.unsyncedCommit.map(r)
    }
}
