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
        // A used hand-off is kept until it expires, so that a second redeem says "used".
        let handoffCutoff = options.now()
        let text = text
        return try await driver.write { connection in
            try connection.transaction {
                try connection.execute(text.deleteTombstones, [.milliseconds(before)])
                    + connection.execute(text.deleteExpiredIdempotencyRecords, [.milliseconds(cutoff)])
                    + connection.execute(text.pruneHandoffs, [.milliseconds(handoffCutoff)])
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

// MARK: - Hand-offs

extension SQLSessionStore {
    public func insertHandoff(_ handoff: HandoffRecord, limit: Int, now: Date) async throws -> Bool {
        let text = text
        let session = DatabaseValue.text(handoff.session.rawValue)
        return try await driver.write { connection in
            try connection.transaction { () throws -> Bool in
                // Instances issuing hand-offs of one session at once: the count and the insert
                // are one step where write transactions do not exclude each other.
                if let lock = text.lockObserverScope {
                    try connection.execute(lock, [.text("handoffs " + handoff.session.rawValue)])
                }
                try connection.execute(text.deleteExpiredHandoffs, [session, .milliseconds(now)])
                let count =
                    try connection.fetchOne(text.countOutstandingHandoffs, [session, .milliseconds(now)]) {
                        try $0.int(0)
                    } ?? 0
                guard count < limit else { return false }
                guard try connection.fetchOne(text.sessionExists, [session], { _ in true }) != nil else {
                    throw StoreError(code: .invalidData, message: "session \(handoff.session) does not exist")
                }
                try connection.execute(
                    text.insertHandoff,
                    [
                        .text(handoff.id), session, .integer(handoff.fork ? 1 : 0), .integer(handoff.version),
                        .milliseconds(handoff.createdAt), .milliseconds(handoff.expiresAt),
                    ])
                return true
            }
        }
    }

    public func handoff(id: String) async throws -> HandoffRecord? {
        let sql = text.handoffByID
        return try await driver.read { connection in
            try connection.fetchOne(sql, [.text(id)]) { row in
                HandoffRecord(
                    id: try row.string(0), session: SessionID(try row.string(1)), fork: try row.int64(2) != 0,
                    version: try row.int64(3), createdAt: try row.date(4), expiresAt: try row.date(5),
                    usedAt: try row.optionalDate(6))
            }
        }
    }

    public func consumeHandoff(_ id: String, at: Date, device: DeviceTokenRecord?, maxDevices: Int) async throws
        -> HandoffConsumption
    {
        let text = text
        do {
            return try await driver.write { connection in
                try connection.transaction { () throws -> HandoffConsumption in
                    // The conditional update is the single use: under PostgreSQL's row lock a
                    // second redeemer waits, then finds used_at set and changes nothing.
                    guard
                        let session = try connection.fetchOne(
                            text.consumeHandoff, [.text(id), .milliseconds(at)], { try $0.string(0) })
                    else { return .notAvailable }
                    guard let device else { return .consumed }
                    guard device.session.rawValue == session else {
                        throw StoreError(code: .invalidData, message: "hand-off \(id) is not of \(device.session)")
                    }
                    if let lock = text.lockObserverScope {
                        try connection.execute(lock, [.text("device_tokens " + session)])
                    }
                    let count =
                        try connection.fetchOne(text.countDeviceTokens, [.text(session)]) { try $0.int(0) } ?? 0
                    // Thrown to roll the use back; answered below.
                    guard count < maxDevices else { throw DeviceLimitReached() }
                    try connection.execute(
                        text.insertDeviceToken,
                        [
                            .text(device.tokenHash), .text(session), .text(id), .milliseconds(device.createdAt),
                        ])
                    return .consumed
                }
            }
        } catch is DeviceLimitReached {
            return .tooManyDevices
        }
    }

    public func deviceTokenSession(tokenHash: String) async throws -> SessionID? {
        let sql = text.deviceTokenSession
        return try await driver.read { connection in
            try connection.fetchOne(sql, [.text(tokenHash)]) { SessionID(try $0.string(0)) }
        }
    }
}

/// Rolls a hand-off's use back when its session has all the device tokens it may.
private struct DeviceLimitReached: Error {}
