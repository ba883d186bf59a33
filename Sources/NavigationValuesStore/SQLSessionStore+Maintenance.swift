import Foundation
import NavigationValuesWire

// MARK: - Retention

extension SQLSessionStore: SessionStoreMaintenance {
    public func sessions(in state: SessionState, updatedBefore before: Date, limit: Int) async throws
        -> [SessionStamp]
    {
        guard limit > 0 else { return [] }
        try await settleState()
        let sql = text.sessionsByStateAndAge
        return try await driver.read { connection in
            try connection.fetchAll(sql, [.text(state.rawValue), .milliseconds(before), .integer(limit)]) { row in
                SessionStamp(id: SessionID(try row.string(0)), version: try row.int64(1), updatedAt: try row.date(2))
            }
        }
    }

    public func compactHistory(_ rule: CompactionRule, now: Date, limit: Int) async throws -> Int {
        guard rule.isActive, limit > 0 else { return 0 }
        try await settleState()
        // A rule that is nil holds nothing back: keep no events after the point, and every event
        // older than the end of time.
        let keepEvents = Int64(rule.keepEvents ?? 0)
        let cutoff = rule.keepAge.map { now.addingTimeInterval(-$0.seconds) } ?? Self.endOfTime
        let text = text
        return try await driver.write { connection in
            try connection.transaction {
                let targets = try connection.fetchAll(
                    text.compactionTargets, [.integer(keepEvents), .milliseconds(cutoff), .integer(limit)]
                ) { row in (id: try row.string(0), point: try row.int64(1)) }
                var deleted = 0
                for target in targets {
                    // Events up to the point and the snapshots before it go; compacted_seq records it.
                    let arguments: [DatabaseValue] = [.text(target.id), .integer(target.point)]
                    deleted += try connection.execute(text.compactEvents, arguments)
                    try connection.execute(text.compactSnapshots, arguments)
                    try connection.execute(text.recordCompaction, arguments)
                }
                return deleted
            }
        }
    }

    /// 9999-12-31T23:59:59.999Z: later than any event, and a time every engine stores.
    private static var endOfTime: Date { Date(millisecondsSince1970: 253_402_300_799_999) }

    public func removeExpiredRecords(tombstonesBefore before: Date) async throws -> Int {
        let cutoff = idempotencyCutoff
        let text = text
        return try await driver.write { connection in
            try connection.transaction {
                try connection.execute(text.deleteTombstones, [.milliseconds(before)])
                    + connection.execute(text.deleteExpiredIdempotencyRecords, [.milliseconds(cutoff)])
            }
        }
    }
}

// MARK: - Observer tokens

extension SQLSessionStore {
    public func insertObserver(
        _ observer: ObserverRecord, limit: Int, now: Date, idempotency: IdempotencyRecord?
    ) async throws -> Bool {
        let text = text
        let scope = DatabaseValue.text(observer.session?.rawValue)
        let insert =
            [
                WriteStep(
                    text.insertObserver,
                    [
                        .text(observer.id.rawValue), scope, .text(observer.tokenHash), .text(observer.label),
                        .milliseconds(observer.createdAt), observer.expiresAt.map { .milliseconds($0) } ?? .null,
                    ])
            ] + (try idempotency.map(idempotencySteps(for:)) ?? [])
        return try await driver.write { connection in
            try connection.transaction { () throws -> Bool in
                // Several instances may issue tokens of one scope at once: where the engine's
                // write transactions do not exclude each other, a lock on the scope makes the
                // count and the insert one step.
                if let lock = text.lockObserverScope {
                    try connection.execute(lock, [.text("observer_tokens " + (observer.session?.rawValue ?? ""))])
                }
                try connection.execute(text.deleteExpiredObservers, [scope, .milliseconds(now)])
                let count = try connection.fetchOne(text.countObservers, [scope]) { try $0.int(0) } ?? 0
                guard count < limit else { return false }
                if let session = observer.session {
                    guard try connection.fetchOne(text.sessionExists, [.text(session.rawValue)], { _ in true }) != nil
                    else {
                        throw StoreError(code: .invalidData, message: "session \(session) does not exist")
                    }
                }
                for step in insert { try connection.execute(step.sql, step.arguments) }
                return true
            }
        }
    }

    public func observer(tokenHash: String) async throws -> ObserverRecord? {
        try await observers(text.observerByHash, [.text(tokenHash)]).first
    }

    public func observer(id: ObserverID) async throws -> ObserverRecord? {
        try await observers(text.observerByID, [.text(id.rawValue)]).first
    }

    public func observers(of session: SessionID?, after cursor: ObserverID?, limit: Int) async throws
        -> [ObserverRecord]
    {
        guard limit > 0 else { return [] }
        let after = DatabaseValue.text(cursor?.rawValue ?? "")
        if let session {
            return try await observers(text.observersOfSession, [.text(session.rawValue), after, .integer(limit)])
        }
        return try await observers(text.allObservers, [after, .integer(limit)])
    }

    public func deleteObserver(_ id: ObserverID) async throws -> Bool {
        let sql = text.deleteObserver
        return try await driver.write { connection in try connection.execute(sql, [.text(id.rawValue)]) == 1 }
    }

    private func observers(_ sql: String, _ arguments: [DatabaseValue]) async throws -> [ObserverRecord] {
        try await driver.read { connection in
            try connection.fetchAll(sql, arguments) { row in
                ObserverRecord(
                    id: ObserverID(try row.string(0)),
                    session: try row.optionalString(1).map(SessionID.init(rawValue:)),
                    tokenHash: try row.string(2), label: try row.string(3), createdAt: try row.date(4),
                    expiresAt: try row.optionalDate(5))
            }
        }
    }
}
