import Foundation
import NavigationValuesWire

// MARK: - Observer tokens

extension SQLiteSessionStore {
    public func insertObserver(
        _ observer: ObserverRecord, limit: Int, now: Date, idempotency: IdempotencyRecord?
    ) async throws -> Bool {
        try await writer.run { db in
            guard !db.isReadOnly else { throw StoreError(code: .unavailable, message: "the database is read-only") }
            return try db.inTransaction(.immediate) { () throws -> Bool in
                let scope: DatabaseValue = .text(observer.session?.rawValue)
                try db.execute(
                    "DELETE FROM observer_tokens WHERE session IS ? AND expires_at IS NOT NULL AND expires_at <= ?",
                    [scope, .milliseconds(now)])
                let count =
                    try db.fetchOne("SELECT count(*) FROM observer_tokens WHERE session IS ?", [scope]) { $0.int(0) }
                    ?? 0
                guard count < limit else { return false }
                if let session = observer.session {
                    let exists = try db.fetchOne("SELECT 1 FROM sessions WHERE id = ?", [.text(session.rawValue)]) {
                        _ in true
                    }
                    guard exists != nil else {
                        throw StoreError(code: .invalidData, message: "session \(session) does not exist")
                    }
                }
                try db.execute(
                    """
                    INSERT INTO observer_tokens (id, session, token_hash, label, created_at, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .text(observer.id.rawValue), scope, .text(observer.tokenHash), .text(observer.label),
                        .milliseconds(observer.createdAt), observer.expiresAt.map { .milliseconds($0) } ?? .null,
                    ])
                if let idempotency { try self.insert(idempotency, in: db) }
                return true
            }
        }
    }

    public func observer(tokenHash: String) async throws -> ObserverRecord? {
        try await read { db in
            try db.fetchOne(
                "SELECT \(Self.observerColumns) FROM observer_tokens WHERE token_hash = ?",
                [
                    .text(tokenHash)
                ]
            ) { row in Self.observer(row) }
        }
    }

    public func observer(id: ObserverID) async throws -> ObserverRecord? {
        try await read { db in
            try db.fetchOne("SELECT \(Self.observerColumns) FROM observer_tokens WHERE id = ?", [.text(id.rawValue)]) {
                row in Self.observer(row)
            }
        }
    }

    public func observers(of session: SessionID?, after cursor: ObserverID?, limit: Int) async throws
        -> [ObserverRecord]
    {
        guard limit > 0 else { return [] }
        return try await read { db in
            if let session {
                return try db.fetchAll(
                    "SELECT \(Self.observerColumns) FROM observer_tokens WHERE session = ? AND id > ? ORDER BY id LIMIT ?",
                    [.text(session.rawValue), .text(cursor?.rawValue ?? ""), .integer(limit)]
                ) { row in Self.observer(row) }
            }
            return try db.fetchAll(
                "SELECT \(Self.observerColumns) FROM observer_tokens WHERE id > ? ORDER BY id LIMIT ?",
                [.text(cursor?.rawValue ?? ""), .integer(limit)]
            ) { row in Self.observer(row) }
        }
    }

    public func deleteObserver(_ id: ObserverID) async throws -> Bool {
        try await writer.run { db in
            guard !db.isReadOnly else { throw StoreError(code: .unavailable, message: "the database is read-only") }
            try db.execute("DELETE FROM observer_tokens WHERE id = ?", [.text(id.rawValue)])
            return db.changes == 1
        }
    }

    private static let observerColumns = "id, session, token_hash, label, created_at, expires_at"

    private static func observer(_ row: Row) -> ObserverRecord {
        ObserverRecord(
            id: ObserverID(row.string(0)), session: row.optionalString(1).map(SessionID.init(rawValue:)),
            tokenHash: row.string(2), label: row.string(3), createdAt: row.date(4),
            expiresAt: row.isNull(5) ? nil : row.date(5))
    }
}
