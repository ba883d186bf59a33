import Foundation
import NavigationValuesWire

// MARK: - Observer tokens

extension PostgresSessionStore {
    public func insertObserver(
        _ observer: ObserverRecord, limit: Int, now: Date, idempotency: IdempotencyRecord?
    ) async throws -> Bool {
        typealias Statement = PostgresConnection.Statement
        let scope = observer.session?.rawValue
        var insert: [Statement] = [
            Statement(
                """
                INSERT INTO observer_tokens (id, session, token_hash, label, created_at, expires_at)
                VALUES ($1, $2, $3, $4, \(Self.time(5)), \(Self.time(6)))
                """,
                [
                    observer.id.rawValue, scope, observer.tokenHash, observer.label,
                    Self.milliseconds(observer.createdAt), observer.expiresAt.map { Self.milliseconds($0) },
                ])
        ]
        if let idempotency { insert += try idempotencyStatements(for: idempotency) }
        let statements = insert
        return try await writer.run { connection in
            // Several instances may issue tokens of one scope at once: a transaction-scoped
            // advisory lock on the scope makes the count and the insert one step.
            let check: [Statement] = [
                Statement("BEGIN"),
                Statement("SELECT pg_advisory_xact_lock(hashtext('observer_tokens ' || coalesce($1, '')))", [scope]),
                Statement(
                    """
                    DELETE FROM observer_tokens
                    WHERE session IS NOT DISTINCT FROM $1 AND expires_at IS NOT NULL AND expires_at <= \(Self.time(2))
                    """, [scope, Self.milliseconds(now)]),
                Statement("SELECT count(*) FROM observer_tokens WHERE session IS NOT DISTINCT FROM $1", [scope]),
                Statement("SELECT count(*) FROM sessions WHERE id = $1", [scope]),
            ]
            do {
                let rows = try Self.rows(of: try connection.pipeline(check))
                let count = try Self.int64(rows[3].first ?? [], 0)
                guard count < limit else {
                    try connection.query("ROLLBACK")
                    return false
                }
                if let scope, try Self.int64(rows[4].first ?? [], 0) == 0 {
                    throw StoreError(code: .invalidData, message: "session \(scope) does not exist")
                }
                _ = try Self.rows(of: try connection.pipeline(statements + [Statement("COMMIT")]))
                return true
            } catch {
                _ = try? connection.query("ROLLBACK")  // leave no failed transaction open on the writer
                throw error
            }
        }
    }

    public func observer(tokenHash: String) async throws -> ObserverRecord? {
        try await observers(where: "token_hash = $1", [tokenHash]).first
    }

    public func observer(id: ObserverID) async throws -> ObserverRecord? {
        try await observers(where: "id = $1", [id.rawValue]).first
    }

    public func observers(of session: SessionID?, after cursor: ObserverID?, limit: Int) async throws
        -> [ObserverRecord]
    {
        guard limit > 0 else { return [] }
        if let session {
            return try await observers(
                where: "session = $1 AND id > $2 ORDER BY id LIMIT $3",
                [session.rawValue, cursor?.rawValue ?? "", "\(limit)"])
        }
        return try await observers(where: "id > $1 ORDER BY id LIMIT $2", [cursor?.rawValue ?? "", "\(limit)"])
    }

    public func deleteObserver(_ id: ObserverID) async throws -> Bool {
        let rows = try await writer.run { connection in
            try connection.query("DELETE FROM observer_tokens WHERE id = $1", [id.rawValue])
        }
        return rows.affectedRows == 1
    }

    private func observers(where condition: String, _ parameters: [String?]) async throws -> [ObserverRecord] {
        let rows = try await read { connection in
            try connection.query(
                """
                SELECT id, session, token_hash, label, \(Self.milliseconds(column: "created_at")),
                       \(Self.milliseconds(column: "expires_at"))
                FROM observer_tokens WHERE \(condition)
                """, parameters
            ).rows
        }
        return try rows.map { row in
            ObserverRecord(
                id: ObserverID(try Self.text(row, 0)), session: row[1].map(SessionID.init(rawValue:)),
                tokenHash: try Self.text(row, 2), label: try Self.text(row, 3), createdAt: try Self.date(row, 4),
                expiresAt: row[5] == nil ? nil : try Self.date(row, 5))
        }
    }
}
