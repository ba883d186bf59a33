import Foundation
import NavigationValues
import NavigationValuesWire
import Synchronization

// MARK: - Reading

extension PostgresSessionStore {
    public func loadSession(_ id: SessionID) async throws -> StoredSession? {
        let ofSession = "JOIN screen_contexts s ON s.id = t.screen WHERE s.session = $1"
        // One round trip, one snapshot: every statement reads the same committed state.
        let statements: [PostgresConnection.Statement] = [
            .init("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"),
            .init(
                """
                SELECT version, state, schema, token_hash, \(Self.milliseconds(column: "created_at")),
                       \(Self.milliseconds(column: "updated_at")), selected_stack, origin_session, origin_version,
                       compacted_seq
                FROM sessions WHERE id = $1
                """, [id.rawValue]),
            // The main stack's screens first, then each other stack's; each stack's root first.
            .init(
                """
                SELECT id, idx, name, role, previous, stack FROM screen_contexts WHERE session = $1
                ORDER BY stack <> 'main', stack, idx
                """, [id.rawValue]),
            .init("SELECT t.screen, t.key, t.json FROM context_values t \(ofSession)", [id.rawValue]),
            .init(
                "SELECT t.screen, t.key, t.pass_back, t.last_value, t.last_passed FROM preference_handlers t \(ofSession)",
                [id.rawValue]),
            .init("SELECT t.screen, t.key, t.json FROM received_preferences t \(ofSession)", [id.rawValue]),
            .init(
                "SELECT id, position, kind, presenter FROM screen_stacks WHERE session = $1 ORDER BY position",
                [id.rawValue]),
            .init("COMMIT"),
        ]
        let results = try await read { connection in
            let outcomes = try connection.pipeline(statements)
            do {
                return try Self.rows(of: outcomes)
            } catch {
                _ = try? connection.query("ROLLBACK")  // leave no failed transaction open on the reader
                throw error
            }
        }
        guard let row = results[1].first else { return nil }
        var origin: SessionOrigin?
        if row.count > 8, let originSession = row[7] {
            origin = SessionOrigin(session: SessionID(originSession), version: try Self.int64(row, 8))
        }
        let record = SessionRecord(
            id: id, version: try Self.int64(row, 0), state: try Self.state(try Self.text(row, 1)),
            schemaJSON: try Self.text(row, 2), tokenHash: try Self.text(row, 3), createdAt: try Self.date(row, 4),
            updatedAt: try Self.date(row, 5), origin: origin, compactedSeq: try Self.int64(row, 9))
        var screens = try results[2].map { row in
            StoredScreen(
                record: ScreenRecord(
                    id: ScreenID(try Self.text(row, 0)), session: id, index: Int(try Self.int64(row, 1)),
                    name: try Self.text(row, 2), role: try Self.text(row, 3),
                    previous: row[4].map(ScreenID.init(rawValue:)), stack: StackID(try Self.text(row, 5))))
        }
        let stacks = try results[6].map { row in
            let kindName = try Self.text(row, 2)
            guard let kind = StackKind(rawValue: kindName), kind != .main else {
                throw StoreError(code: .corrupt, message: "unknown stack kind '\(kindName)'")
            }
            return StackRecord(
                id: StackID(try Self.text(row, 0)), session: id, position: Int(try Self.int64(row, 1)), kind: kind,
                presenter: row[3].map(ScreenID.init(rawValue:)))
        }
        var positions: [ScreenID: Int] = [:]
        for (position, screen) in screens.enumerated() { positions[screen.record.id] = position }
        for row in results[3] {
            if let position = positions[ScreenID(try Self.text(row, 0))] {
                screens[position].values[try Self.text(row, 1)] = try Self.text(row, 2)
            }
        }
        for row in results[4] {
            if let position = positions[ScreenID(try Self.text(row, 0))] {
                screens[position].handlers[try Self.text(row, 1)] = HandlerRecord(
                    passBack: try Self.text(row, 2) == "t", lastValueJSON: row[3], lastPassedJSON: row[4])
            }
        }
        for row in results[5] {
            if let position = positions[ScreenID(try Self.text(row, 0))] {
                screens[position].preferences[try Self.text(row, 1)] = try Self.text(row, 2)
            }
        }
        return StoredSession(
            record: record, screens: screens, stacks: stacks, selectedStack: StackID(try Self.text(row, 6)))
    }

    public func version(of id: SessionID) async throws -> Int64? {
        let rows = try await read { connection in
            try connection.query("SELECT version FROM sessions WHERE id = $1", [id.rawValue]).rows
        }
        return try rows.first.map { try Self.int64($0, 0) }
    }

    public func events(of id: SessionID, after: Int64, limit: Int) async throws -> [StoredEvent] {
        guard limit > 0 else { return [] }
        let rows = try await read { connection in
            try connection.query(
                """
                SELECT seq, type, json, \(Self.milliseconds(column: "at")) FROM events
                WHERE session = $1 AND seq > $2 ORDER BY seq LIMIT $3
                """, [id.rawValue, "\(after)", "\(limit)"]
            ).rows
        }
        return try rows.map { row in
            StoredEvent(
                session: id, seq: try Self.int64(row, 0), type: try Self.text(row, 1), json: try Self.text(row, 2),
                at: try Self.date(row, 3))
        }
    }

    public func snapshot(of id: SessionID, atOrBefore seq: Int64) async throws -> StoredSnapshot? {
        let rows = try await read { connection in
            try connection.query(
                "SELECT seq, json FROM snapshots WHERE session = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 1",
                [id.rawValue, "\(seq)"]
            ).rows
        }
        return try rows.first.map { row in
            StoredSnapshot(session: id, seq: try Self.int64(row, 0), json: try Self.text(row, 1))
        }
    }

    public func sessions(after cursor: SessionID?, limit: Int) async throws -> [SessionSummary] {
        guard limit > 0 else { return [] }
        let rows = try await read { connection in
            try connection.query(
                """
                SELECT id, version, state, \(Self.milliseconds(column: "updated_at")),
                       (SELECT count(*) FROM screen_contexts
                        WHERE screen_contexts.session = sessions.id AND screen_contexts.stack = 'main')
                FROM sessions WHERE id > $1 ORDER BY id LIMIT $2
                """, [cursor?.rawValue ?? "", "\(limit)"]
            ).rows
        }
        return try rows.map { row in
            SessionSummary(
                id: SessionID(try Self.text(row, 0)), version: try Self.int64(row, 1),
                state: try Self.state(try Self.text(row, 2)), depth: Int(try Self.int64(row, 4)),
                updatedAt: try Self.date(row, 3))
        }
    }

    public func wasPurged(_ id: SessionID) async throws -> Bool {
        let rows = try await read { connection in
            try connection.query("SELECT 1 FROM purged_sessions WHERE id = $1", [id.rawValue]).rows
        }
        return !rows.isEmpty
    }

    public func idempotencyRecord(scope: String, key: String) async throws -> IdempotencyRecord? {
        let cutoff = Self.milliseconds(idempotencyCutoff)
        let rows = try await read { connection in
            try connection.query(
                """
                SELECT status, headers, body, \(Self.milliseconds(column: "created_at")), session
                FROM idempotency_keys
                WHERE scope = $1 AND key = $2 AND created_at >= \(Self.time(3))
                """, [scope, key, cutoff]
            ).rows
        }
        return try rows.first.map { row in
            IdempotencyRecord(
                scope: scope, key: key, status: Int(try Self.int64(row, 0)),
                headers: try Self.headers(try Self.text(row, 1)), body: try Self.data(fromBytea: try Self.text(row, 2)),
                createdAt: try Self.date(row, 3), session: row.count > 4 ? row[4].map(SessionID.init(rawValue:)) : nil)
        }
    }

    // MARK: - Read connections

    /// Runs `body` on a read connection, taken in turn.
    func read<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let index = nextReader.withLock { next in
            defer { next = (next + 1) % readers.count }
            return next
        }
        return try await readers[index].run(body)
    }

    // MARK: - Columns

    /// The rows of every statement, or the first failure.
    static func rows(of outcomes: [PostgresConnection.Outcome]) throws -> [[[String?]]] {
        try outcomes.map { outcome in
            switch outcome {
            case .rows(let rows): return rows.rows
            case .failed(let error): throw error
            case .skipped: throw StoreError(code: .failed, message: "a statement of the read did not run")
            }
        }
    }

    private static func corrupt(_ what: String) -> StoreError {
        StoreError(code: .corrupt, message: "a stored row does not read back: \(what)")
    }

    static func text(_ row: [String?], _ column: Int) throws -> String {
        guard column < row.count, let text = row[column] else { throw corrupt("column \(column) is missing") }
        return text
    }

    static func int64(_ row: [String?], _ column: Int) throws -> Int64 {
        guard let value = Int64(try text(row, column)) else { throw corrupt("column \(column) is not an integer") }
        return value
    }

    static func date(_ row: [String?], _ column: Int) throws -> Date {
        Date(millisecondsSince1970: try int64(row, column))
    }

    static func state(_ text: String) throws -> SessionState {
        guard let state = SessionState(rawValue: text) else {
            throw StoreError(code: .corrupt, message: "unknown session state '\(text)'")
        }
        return state
    }

    static func headers(_ json: String) throws -> [String: String] {
        do {
            return try JSONDecoder().decode([String: String].self, from: Data(json.utf8))
        } catch {
            throw StoreError(code: .corrupt, message: "idempotency headers are not a JSON object of strings")
        }
    }

    /// Bytes from `bytea`'s hex text form (`\x0a1b…`).
    static func data(fromBytea text: String) throws -> Data {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else {
            throw corrupt("a bytea value is not in hex form")
        }
        func nibble(_ byte: UInt8) throws -> UInt8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: throw corrupt("a bytea value has a character that is not hex")
            }
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity((utf8.count - 2) / 2)
        var index = 2
        while index < utf8.count {
            bytes.append(try nibble(utf8[index]) << 4 | nibble(utf8[index + 1]))
            index += 2
        }
        return Data(bytes)
    }
}
