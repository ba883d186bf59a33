import Foundation
import NavigationValues
import NavigationValuesWire
import Synchronization

// MARK: - Reading

extension SQLiteSessionStore {
    public func loadSession(_ id: SessionID) async throws -> StoredSession? {
        try await read { db in try Self.session(id, in: db) }
    }

    public func version(of id: SessionID) async throws -> Int64? {
        try await read { db in
            try db.fetchOne("SELECT version FROM sessions WHERE id = ?", [.text(id.rawValue)]) { $0.int64(0) }
        }
    }

    public func events(of id: SessionID, after: Int64, limit: Int) async throws -> [StoredEvent] {
        guard limit > 0 else { return [] }
        return try await read { db in
            try db.fetchAll(
                "SELECT seq, type, json, at FROM events WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?",
                [.text(id.rawValue), .integer(after), .integer(limit)]
            ) { row in
                StoredEvent(session: id, seq: row.int64(0), type: row.string(1), json: row.string(2), at: row.date(3))
            }
        }
    }

    public func eventPage(of id: SessionID, after: Int64, limit: Int, maxBytes: Int) async throws -> EventPage {
        guard limit > 0 else { return EventPage(events: [], hasMore: false) }
        return try await read { db in
            // The sizes first, stopping at the first event that does not fit; then the JSON of the
            // events that do, in the same read transaction.
            var cut = PageCut(limit: limit, maxBytes: maxBytes)
            try db.scanRows(
                """
                SELECT seq, coalesce(bytes, length(CAST(json AS BLOB))) FROM events
                WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?
                """, [.text(id.rawValue), .integer(after), .integer(limit + 1)]
            ) { row in cut.admit(seq: row.int64(0), size: row.int(1)) }
            guard let last = cut.last else { return EventPage(events: [], hasMore: false) }
            let events = try db.fetchAll(
                "SELECT seq, type, json, at FROM events WHERE session = ? AND seq > ? AND seq <= ? ORDER BY seq",
                [.text(id.rawValue), .integer(after), .integer(last)]
            ) { row in
                StoredEvent(session: id, seq: row.int64(0), type: row.string(1), json: row.string(2), at: row.date(3))
            }
            return EventPage(events: events, hasMore: cut.hasMore)
        }
    }

    public func access(to id: SessionID) async throws -> SessionAccess? {
        try await read { db in
            try db.fetchOne(
                "SELECT token_hash, state, version, compacted_seq FROM sessions WHERE id = ?", [.text(id.rawValue)]
            ) { row in
                SessionAccess(
                    tokenHash: row.string(0), state: try Self.state(row.string(1)), version: row.int64(2),
                    compactedSeq: row.int64(3))
            }
        }
    }

    public func snapshot(of id: SessionID, atOrBefore seq: Int64) async throws -> StoredSnapshot? {
        try await read { db in
            try db.fetchOne(
                "SELECT seq, json FROM snapshots WHERE session = ? AND seq <= ? ORDER BY seq DESC LIMIT 1",
                [.text(id.rawValue), .integer(seq)]
            ) { row in StoredSnapshot(session: id, seq: row.int64(0), json: row.string(1)) }
        }
    }

    public func sessions(after cursor: SessionID?, limit: Int) async throws -> [SessionSummary] {
        guard limit > 0 else { return [] }
        return try await read { db in
            try db.fetchAll(
                """
                SELECT id, version, state, updated_at,
                       (SELECT count(*) FROM screen_contexts
                        WHERE screen_contexts.session = sessions.id AND screen_contexts.stack = 'main')
                FROM sessions WHERE id > ? ORDER BY id LIMIT ?
                """,
                [.text(cursor?.rawValue ?? ""), .integer(limit)]
            ) { row in
                SessionSummary(
                    id: SessionID(row.string(0)), version: row.int64(1), state: try Self.state(row.string(2)),
                    depth: row.int(4), updatedAt: row.date(3))
            }
        }
    }

    public func wasPurged(_ id: SessionID) async throws -> Bool {
        try await read { db in
            try db.fetchOne("SELECT 1 FROM purged_sessions WHERE id = ?", [.text(id.rawValue)]) { _ in true } ?? false
        }
    }

    public func idempotencyRecord(scope: String, key: String) async throws -> IdempotencyRecord? {
        let cutoff = idempotencyCutoff
        return try await read { db in
            try db.fetchOne(
                """
                SELECT status, headers, body, created_at, session FROM idempotency_keys
                WHERE scope = ? AND key = ? AND created_at >= ?
                """,
                [.text(scope), .text(key), .milliseconds(cutoff)]
            ) { row in
                IdempotencyRecord(
                    scope: scope, key: key, status: row.int(0), headers: try Self.headers(row.string(1)),
                    body: row.data(2), createdAt: row.date(3), session: row.optionalString(4).map { SessionID($0) })
            }
        }
    }

    // MARK: - Read connections

    /// Runs `body` in one read transaction (a consistent snapshot of the file) on a read
    /// connection, taken in turn; through the writer for `:memory:`.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let connection: SerialConnection
        if readers.isEmpty {
            connection = writer
        } else {
            let index = nextReader.withLock { next in
                defer { next = (next + 1) % readers.count }
                return next
            }
            connection = readers[index]
        }
        return try await connection.run { db in try db.inTransaction(.deferred) { try body(db) } }
    }

    // MARK: - Rows

    private static func session(_ id: SessionID, in db: Database) throws -> StoredSession? {
        let arguments: [DatabaseValue] = [.text(id.rawValue)]
        let record = try db.fetchOne(
            """
            SELECT version, state, schema, token_hash, created_at, updated_at, selected_stack, origin_session,
                   origin_version, compacted_seq
            FROM sessions WHERE id = ?
            """, arguments
        ) { row in
            (
                SessionRecord(
                    id: id, version: row.int64(0), state: try state(row.string(1)), schemaJSON: row.string(2),
                    tokenHash: row.string(3), createdAt: row.date(4), updatedAt: row.date(5),
                    origin: row.optionalString(7).map { SessionOrigin(session: SessionID($0), version: row.int64(8)) },
                    compactedSeq: row.int64(9)),
                StackID(row.string(6))
            )
        }
        guard let (record, selectedStack) = record else { return nil }
        // The main stack's screens first, then each other stack's; each stack's root first.
        var screens = try db.fetchAll(
            """
            SELECT id, idx, name, role, previous, stack FROM screen_contexts WHERE session = ?
            ORDER BY stack <> 'main', stack, idx
            """, arguments
        ) { row in
            StoredScreen(
                record: ScreenRecord(
                    id: ScreenID(row.string(0)), session: id, index: row.int(1), name: row.string(2),
                    role: row.string(3), previous: row.optionalString(4).map(ScreenID.init(rawValue:)),
                    stack: StackID(row.string(5))))
        }
        let stacks = try db.fetchAll(
            "SELECT id, position, kind, presenter FROM screen_stacks WHERE session = ? ORDER BY position", arguments
        ) { row in
            let kindName = row.string(2)
            guard let kind = StackKind(rawValue: kindName), kind != .main else {
                throw StoreError(code: .corrupt, message: "unknown stack kind '\(kindName)'")
            }
            return StackRecord(
                id: StackID(row.string(0)), session: id, position: row.int(1), kind: kind,
                presenter: row.optionalString(3).map(ScreenID.init(rawValue:)))
        }
        var positions: [ScreenID: Int] = [:]
        for (position, screen) in screens.enumerated() { positions[screen.record.id] = position }
        let ofSession = "JOIN screen_contexts ON screen_contexts.id = t.screen WHERE screen_contexts.session = ?"
        try db.forEachRow("SELECT t.screen, t.key, t.json FROM context_values t \(ofSession)", arguments) { row in
            if let position = positions[ScreenID(row.string(0))] {
                screens[position].values[row.string(1)] = row.string(2)
            }
        }
        try db.forEachRow(
            "SELECT t.screen, t.key, t.pass_back, t.last_value, t.last_passed FROM preference_handlers t \(ofSession)",
            arguments
        ) { row in
            if let position = positions[ScreenID(row.string(0))] {
                screens[position].handlers[row.string(1)] = HandlerRecord(
                    passBack: row.int64(2) != 0, lastValueJSON: row.optionalString(3),
                    lastPassedJSON: row.optionalString(4))
            }
        }
        try db.forEachRow("SELECT t.screen, t.key, t.json FROM received_preferences t \(ofSession)", arguments) { row in
            if let position = positions[ScreenID(row.string(0))] {
                screens[position].preferences[row.string(1)] = row.string(2)
            }
        }
        return StoredSession(record: record, screens: screens, stacks: stacks, selectedStack: selectedStack)
    }

    static func state(_ text: String) throws -> SessionState {
        guard let state = SessionState(rawValue: text) else {
            throw StoreError(code: .corrupt, message: "unknown session state '\(text)'")
        }
        return state
    }

    private static func headers(_ json: String) throws -> [String: String] {
        do {
            return try JSONDecoder().decode([String: String].self, from: Data(json.utf8))
        } catch {
            throw StoreError(code: .corrupt, message: "idempotency headers are not a JSON object of strings")
        }
    }
}
