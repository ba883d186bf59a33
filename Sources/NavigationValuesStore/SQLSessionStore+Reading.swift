import Foundation
import NavigationValues
import NavigationValuesWire

// MARK: - Reading

extension SQLSessionStore {
    /// The session's state brought up to its log: the changes this process holds for it are
    /// written first, and events past its stored state with no changes held (``WriteBehind``) are
    /// replayed and written.
    public func loadSession(_ id: SessionID) async throws -> StoredSession? {
        let queries = loadQueries(of: id)
        if options.writeBehind.isOn, hasWaitingState(id) { await onWriter { self.writeStateBehind(only: id) } }
        // Another read (or, on a shared database, another instance writing its state behind)
        // may move the state on first; its write then stands, and this read finds it. A session
        // whose state keeps moving while its log grows (writers on several instances) is read
        // again as long as it does; three reads without the state moving end the wait.
        var stateVersion: Int64?
        var stalled = 0
        while stalled < 3 {
            let (session, after) = try await driver.read { connection in
                try LoadedSession.read(id, queries, on: connection)
            }
            // Without a replayer (a tool reading the file), the rows as they are.
            guard let session, !after.isEmpty, replaysStates else { return session }
            if let stateVersion, session.record.version <= stateVersion { stalled += 1 }
            stateVersion = session.record.version
            try await catchUp(session, with: after)
        }
        throw StoreError(code: .unavailable, message: "the state of session \(id) did not catch up with its log")
    }

    /// The queries that read a whole session, in ``LoadedSession``'s order: its rows, then the
    /// events past the version they reflect.
    func loadQueries(of id: SessionID) -> [SQLQuery] {
        // The state may have been written behind its log, whatever this store's setting: by this
        // process, an earlier one, or (a shared database) another instance.
        [
            text.sessionRow, text.screens, text.values, text.handlers, text.receivedPreferences, text.stacks,
            text.eventsAfterState,
        ].map { SQLQuery($0, [.text(id.rawValue)]) }
    }

    public func version(of id: SessionID) async throws -> Int64? {
        let sql = text.version
        return try await driver.read { connection in
            try connection.fetchOne(sql, [.text(id.rawValue)]) { try $0.int64(0) }
        }
    }

    public func events(of id: SessionID, after: Int64, limit: Int) async throws -> [StoredEvent] {
        guard limit > 0 else { return [] }
        let sql = text.events
        return try await driver.read { connection in
            try connection.fetchAll(sql, [.text(id.rawValue), .integer(after), .integer(limit)]) { row in
                try Self.event(row, of: id)
            }
        }
    }

    public func eventPage(of id: SessionID, after: Int64, limit: Int, maxBytes: Int) async throws -> EventPage {
        guard limit > 0 else { return EventPage(events: [], hasMore: false) }
        let (sizes, range) = (text.eventSizes, text.eventRange)
        return try await driver.read { connection in
            // The sizes first (stored numbers, none of the JSON), stopping at the first event that
            // does not fit; then the JSON of the events that do, on the same connection.
            var cut = PageCut(limit: limit, maxBytes: maxBytes)
            try connection.scan(sizes, [.text(id.rawValue), .integer(after), .integer(limit + 1)]) { row in
                cut.admit(seq: try row.int64(0), size: try row.int(1))
            }
            guard let last = cut.last else { return EventPage(events: [], hasMore: false) }
            let events = try connection.fetchAll(range, [.text(id.rawValue), .integer(after), .integer(last)]) { row in
                try Self.event(row, of: id)
            }
            return EventPage(events: events, hasMore: cut.hasMore)
        }
    }

    public func access(to id: SessionID) async throws -> SessionAccess? {
        let sql = text.access
        let read = { [driver] in
            try await driver.read { connection in
                try connection.fetchOne(sql, [.text(id.rawValue)]) { row in
                    (
                        access: SessionAccess(
                            tokenHash: try row.string(0), state: try SessionState(stored: row.string(1)),
                            version: try row.int64(2),
                            compactedSeq: try row.int64(3)),
                        stateVersion: try row.int64(4)
                    )
                }
            }
        }
        guard var found = try await read() else { return nil }
        guard found.access.version > found.stateVersion else { return found.access }
        // The state is written behind: the state its waiting changes reach, or, when none wait
        // here, the session brought up to its log.
        if let state = waitingState(of: id) {
            found.access.state = state
            return found.access
        }
        _ = try await loadSession(id)
        return try await read()?.access
    }

    public func snapshot(of id: SessionID, atOrBefore seq: Int64) async throws -> StoredSnapshot? {
        // Snapshots are written behind with the state.
        if hasWaitingState(id) { await onWriter { self.writeStateBehind(only: id) } }
        let sql = text.snapshot
        return try await driver.read { connection in
            try connection.fetchOne(sql, [.text(id.rawValue), .integer(seq)]) { row in
                StoredSnapshot(session: id, seq: try row.int64(0), json: try row.string(1))
            }
        }
    }

    public func sessions(after cursor: SessionID?, limit: Int) async throws -> [SessionSummary] {
        guard limit > 0 else { return [] }
        try await settleState()
        let sql = text.sessionList
        let read = { [driver] in
            try await driver.read { connection in
                try connection.fetchAll(sql, [.text(cursor?.rawValue ?? ""), .integer(limit)]) { row in
                    (
                        summary: SessionSummary(
                            id: SessionID(try row.string(0)), version: try row.int64(1),
                            state: try SessionState(stored: row.string(2)),
                            depth: try row.int(4), updatedAt: try row.date(3)),
                        stateVersion: try row.int64(5)
                    )
                }
            }
        }
        let page = try await read()
        // A row whose state lags its log (written behind by another instance, or by one that
        // stopped first) is brought up to it, and the page read again.
        let lagging = page.filter { $0.summary.version > $0.stateVersion }.map(\.summary.id)
        guard !lagging.isEmpty, replaysStates else { return page.map(\.summary) }
        for id in lagging { _ = try await loadSession(id) }
        return try await read().map(\.summary)
    }

    public func wasPurged(_ id: SessionID) async throws -> Bool {
        let sql = text.wasPurged
        return try await driver.read { connection in
            try connection.fetchOne(sql, [.text(id.rawValue)]) { _ in true } ?? false
        }
    }

    public func idempotencyRecord(scope: String, key: String) async throws -> IdempotencyRecord? {
        let sql = text.idempotencyRecord
        let cutoff = idempotencyCutoff
        return try await driver.read { connection in
            try connection.fetchOne(sql, [.text(scope), .text(key), .milliseconds(cutoff)]) { row in
                IdempotencyRecord(
                    scope: scope, key: key, status: try row.int(0), headers: try Self.headers(row.string(1)),
                    body: try row.data(2), createdAt: try row.date(3),
                    session: try row.optionalString(4).map(SessionID.init(rawValue:)))
            }
        }
    }

    // MARK: - Rows

    static func event(_ row: some SQLRow, of id: SessionID) throws -> StoredEvent {
        try LoadedSession.event(row, of: id)
    }

    private static func headers(_ json: String) throws -> [String: String] {
        do {
            return try JSONDecoder().decode([String: String].self, from: Data(json.utf8))
        } catch {
            throw StoreError(code: .corrupt, message: "idempotency headers are not a JSON object of strings")
        }
    }
}

/// A session read back from the rows of ``SQLText``'s six queries, in their order: its row,
/// its screens, their values, handlers and received preferences, and its stacks.
struct LoadedSession {
    let id: SessionID
    var record: SessionRecord?
    var selectedStack = StackID.main
    var screens: [StoredScreen] = []
    var positions: [ScreenID: Int] = [:]
    var stacks: [StackRecord] = []
    /// The events past the version the state reflects (written behind).
    var eventsAfter: [StoredEvent] = []

    init(id: SessionID) { self.id = id }

    /// The session `queries` (``SQLSessionStore/loadQueries(of:)``) read on `connection`.
    static func read(_ id: SessionID, _ queries: [SQLQuery], on connection: some SQLConnection) throws
        -> (session: StoredSession?, eventsAfter: [StoredEvent])
    {
        var loaded = LoadedSession(id: id)
        try connection.readAll(queries) { query, row in try loaded.add(row, of: query) }
        return (try loaded.session(), loaded.eventsAfter)
    }

    mutating func add(_ row: some SQLRow, of query: Int) throws {
        switch query {
        case 0:
            let origin = try row.optionalString(7).map {
                SessionOrigin(session: SessionID($0), version: try row.int64(8))
            }
            record = SessionRecord(
                id: id, version: try row.int64(0), state: try SessionState(stored: row.string(1)),
                schemaJSON: try row.string(2),
                tokenHash: try row.string(3), createdAt: try row.date(4), updatedAt: try row.date(5), origin: origin,
                compactedSeq: try row.int64(9))
            selectedStack = StackID(try row.string(6))
        case 1:
            let screen = ScreenRecord(
                id: ScreenID(try row.string(0)), session: id, index: try row.int(1), name: try row.string(2),
                role: try row.string(3), previous: try row.optionalString(4).map(ScreenID.init(rawValue:)),
                stack: StackID(try row.string(5)))
            positions[screen.id] = screens.count
            screens.append(StoredScreen(record: screen))
        case 2:
            if let position = positions[ScreenID(try row.string(0))] {
                screens[position].values[try row.string(1)] = try row.string(2)
            }
        case 3:
            if let position = positions[ScreenID(try row.string(0))] {
                screens[position].handlers[try row.string(1)] = HandlerRecord(
                    passBack: try row.bool(2), lastValueJSON: try row.optionalString(3),
                    lastPassedJSON: try row.optionalString(4))
            }
        case 4:
            if let position = positions[ScreenID(try row.string(0))] {
                screens[position].preferences[try row.string(1)] = try row.string(2)
            }
        case 6:
            eventsAfter.append(try Self.event(row, of: id))
        default:
            let kindName = try row.string(2)
            guard let kind = StackKind(rawValue: kindName), kind != .main else {
                throw StoreError(code: .corrupt, message: "unknown stack kind '\(kindName)'")
            }
            stacks.append(
                StackRecord(
                    id: StackID(try row.string(0)), session: id, position: try row.int(1), kind: kind,
                    presenter: try row.optionalString(3).map(ScreenID.init(rawValue:))))
        }
    }

    /// An event read as `seq, type, json, at`.
    static func event(_ row: some SQLRow, of id: SessionID) throws -> StoredEvent {
        StoredEvent(
            session: id, seq: try row.int64(0), type: try row.string(1), json: try row.string(2), at: try row.date(3))
    }

    func session() throws -> StoredSession? {
        guard let record else { return nil }
        return StoredSession(record: record, screens: screens, stacks: stacks, selectedStack: selectedStack)
    }
}

extension SessionState {
    /// A state as stored; `.corrupt` for any other text.
    init(stored text: String) throws {
        guard let state = SessionState(rawValue: text) else {
            throw StoreError(code: .corrupt, message: "unknown session state '\(text)'")
        }
        self = state
    }
}
