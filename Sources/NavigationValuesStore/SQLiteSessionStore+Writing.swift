import Foundation
import NavigationValues
import NavigationValuesWire
import Synchronization

// MARK: - Applying a mutation

extension SQLiteSessionStore {
    /// Writes one mutation: its state changes in order, then its event and snapshot (unless the
    /// mutation purged its own session, which keeps nothing), then its idempotency record.
    /// Runs inside the batch's savepoint for this mutation.
    func apply(_ mutation: StoredMutation, in db: Database) throws {
        guard mutation.event.session == mutation.session,
            mutation.snapshot.map({ $0.session == mutation.session }) ?? true
        else {
            throw StoreError(
                code: .invalidData, message: "the event and snapshot must belong to the mutation's session")
        }
        let createsSession = mutation.changes.contains {
            if case .insertSession(let record) = $0, record.id == mutation.session { true } else { false }
        }
        if !createsSession {
            try expectVersion(mutation.event.seq - 1, of: mutation.session, in: db)
        }
        var isPurged = false
        for change in mutation.changes {
            try apply(change, in: db)
            if case .purgeSession(let id) = change, id == mutation.session { isPurged = true }
        }
        if !isPurged {
            let event = mutation.event
            try db.execute(
                "INSERT INTO events (session, seq, type, json, at) VALUES (?, ?, ?, ?, ?)",
                [
                    .text(event.session.rawValue), .integer(event.seq), .text(event.type), .text(event.json),
                    .milliseconds(event.at),
                ])
            if let snapshot = mutation.snapshot {
                try db.execute(
                    "INSERT INTO snapshots (session, seq, json) VALUES (?, ?, ?)",
                    [.text(snapshot.session.rawValue), .integer(snapshot.seq), .text(snapshot.json)])
            }
        }
        if var record = mutation.idempotency {
            // A purge's own record outlives its session, attached to none, until it expires.
            if isPurged, record.session == mutation.session { record.session = nil }
            try insert(record, in: db)
        }
    }

    private func apply(_ change: StateChange, in db: Database) throws {
        switch change {
        case .insertSession(let session):
            try db.execute(
                """
                INSERT INTO sessions
                    (id, version, state, schema, token_hash, created_at, updated_at, updated_minute,
                     origin_session, origin_version)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7 - ?7 % 60000, ?8, ?9)
                """,
                [
                    .text(session.id.rawValue), .integer(session.version), .text(session.state.rawValue),
                    .text(session.schemaJSON), .text(session.tokenHash), .milliseconds(session.createdAt),
                    .milliseconds(session.updatedAt), .text(session.origin?.session.rawValue),
                    session.origin.map { .integer($0.version) } ?? .null,
                ])
        case .updateSession(let id, let version, let state, let updatedAt):
            // state and updated_minute are the keys of retention's index: SQLite rewrites an
            // index entry whenever an UPDATE assigns one of its columns, even to the value it had,
            // so they are assigned only when one of them changes (Migrations/0008).
            try db.execute(
                "UPDATE sessions SET version = ?, updated_at = ? WHERE id = ?",
                [.integer(version), .milliseconds(updatedAt), .text(id.rawValue)])
            try expectOneRow(in: db, "session \(id) does not exist")
            try db.execute(
                """
                UPDATE sessions SET state = ?1, updated_minute = updated_at - updated_at % 60000
                WHERE id = ?2 AND (state IS NOT ?1 OR updated_minute IS NOT updated_at - updated_at % 60000)
                """, [.text(state.rawValue), .text(id.rawValue)])
        case .insertScreen(let screen):
            try db.execute(
                """
                INSERT INTO screen_contexts (id, session, stack, idx, name, role, previous)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(screen.id.rawValue), .text(screen.session.rawValue), .text(screen.stack.rawValue),
                    .integer(screen.index), .text(screen.name), .text(screen.role), .text(screen.previous?.rawValue),
                ])
        case .deleteScreens(let ids):
            if ids.count == 1, let id = ids.first {
                // The common pop of one screen: a lookup by key, no JSON array, no temporary table.
                try db.execute("DELETE FROM screen_contexts WHERE id = ?", [.text(id.rawValue)])
            } else {
                // One statement, so links between the deleted screens are checked once, at its end.
                try db.execute(
                    "DELETE FROM screen_contexts WHERE id IN (SELECT value FROM json_each(?))",
                    [.text(try jsonArray(ids.map(\.rawValue)))])
            }
        case .setValue(let screen, let key, let json):
            try db.execute(
                """
                INSERT INTO context_values (screen, key, json) VALUES (?, ?, ?)
                ON CONFLICT (screen, key) DO UPDATE SET json = excluded.json
                """,
                [.text(screen.rawValue), .text(key), .text(json)])
        case .removeValue(let screen, let key):
            try db.execute(
                "DELETE FROM context_values WHERE screen = ? AND key = ?", [.text(screen.rawValue), .text(key)])
        case .setHandler(let screen, let key, let passBack):
            try db.execute(
                """
                INSERT INTO preference_handlers (screen, key, pass_back, last_value, last_passed)
                VALUES (?, ?, ?, NULL, NULL)
                ON CONFLICT (screen, key) DO UPDATE
                SET pass_back = excluded.pass_back, last_value = NULL, last_passed = NULL
                """,
                [.text(screen.rawValue), .text(key), .bool(passBack)])
        case .removeHandler(let screen, let key):
            try db.execute(
                "DELETE FROM preference_handlers WHERE screen = ? AND key = ?", [.text(screen.rawValue), .text(key)])
        case .rememberDelivery(let screen, let key, let valueJSON, let passedJSON):
            try db.execute(
                "UPDATE preference_handlers SET last_value = ?, last_passed = ? WHERE screen = ? AND key = ?",
                [.text(valueJSON), .text(passedJSON), .text(screen.rawValue), .text(key)])
            try expectOneRow(in: db, "screen \(screen) has no handler for \(key)")
        case .setReceivedPreference(let screen, let key, let json):
            try db.execute(
                """
                INSERT INTO received_preferences (screen, key, json) VALUES (?, ?, ?)
                ON CONFLICT (screen, key) DO UPDATE SET json = excluded.json
                """,
                [.text(screen.rawValue), .text(key), .text(json)])
        case .purgeSession(let id):
            // Screens, their rows, events, snapshots and idempotency records follow by ON DELETE
            // CASCADE; a tombstone remembers that the session was purged.
            try db.execute("DELETE FROM sessions WHERE id = ?", [.text(id.rawValue)])
            try db.execute(
                "INSERT OR IGNORE INTO purged_sessions (id, purged_at) VALUES (?, ?)",
                [.text(id.rawValue), .milliseconds(configuration.now())])
        case .insertStack, .deleteStacks, .selectStack, .setStackPosition:
            try applyStackChange(change, in: db)
        }
    }

    /// The changes of several stacks (docs/Stacks.md).
    private func applyStackChange(_ change: StateChange, in db: Database) throws {
        switch change {
        case .insertStack(let stack):
            try db.execute(
                "INSERT INTO screen_stacks (session, id, position, kind, presenter) VALUES (?, ?, ?, ?, ?)",
                [
                    .text(stack.session.rawValue), .text(stack.id.rawValue), .integer(stack.position),
                    .text(stack.kind.rawValue), .text(stack.presenter?.rawValue),
                ])
        case .deleteStacks(let session, let ids):
            try db.execute(
                "DELETE FROM screen_stacks WHERE session = ? AND id IN (SELECT value FROM json_each(?))",
                [.text(session.rawValue), .text(try jsonArray(ids.map(\.rawValue)))])
        case .selectStack(let session, let stack):
            try db.execute(
                "UPDATE sessions SET selected_stack = ? WHERE id = ?", [.text(stack.rawValue), .text(session.rawValue)])
            try expectOneRow(in: db, "session \(session) does not exist")
        case .setStackPosition(let session, let stack, let position):
            try db.execute(
                "UPDATE screen_stacks SET position = ? WHERE session = ? AND id = ?",
                [.integer(position), .text(session.rawValue), .text(stack.rawValue)])
        default:
            break
        }
    }

    /// Keeps the first answer under a key: an unexpired record makes this mutation a conflict,
    /// an expired one is replaced.
    func insert(_ record: IdempotencyRecord, in db: Database) throws {
        try db.execute(
            "DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND created_at < ?",
            [.text(record.scope), .text(record.key), .milliseconds(idempotencyCutoff)])
        try db.execute(
            """
            INSERT INTO idempotency_keys (scope, key, status, headers, body, created_at, session)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(record.scope), .text(record.key), .integer(record.status), .text(try jsonObject(record.headers)),
                .blob(record.body), .milliseconds(record.createdAt), .text(record.session?.rawValue),
            ])
    }

    /// Deletes expired idempotency records, at most once a minute, inside the batch's
    /// transaction. A failure here must not fail the batch, so it is only skipped.
    func removeExpiredIdempotencyRecords(in db: Database) {
        let now = configuration.now()
        let isDue = lastIdempotencyCleanup.withLock { last in
            guard now.timeIntervalSince(last) >= 60 else { return false }
            last = now
            return true
        }
        guard isDue else { return }
        try? db.inSavepoint {
            try db.execute("DELETE FROM idempotency_keys WHERE created_at < ?", [.milliseconds(idempotencyCutoff)])
        }
    }

    /// Records created before this instant count as absent.
    var idempotencyCutoff: Date {
        configuration.now().addingTimeInterval(-configuration.idempotencyLifetime.seconds)
    }

    /// The mutation is conditional on the version it was made from (``SessionStore/commit(_:)``).
    private func expectVersion(_ expected: Int64, of id: SessionID, in db: Database) throws {
        let current = try db.fetchOne("SELECT version FROM sessions WHERE id = ?", [.text(id.rawValue)]) { $0.int64(0) }
        guard let current else { throw StoreError(code: .invalidData, message: "session \(id) does not exist") }
        guard current == expected else {
            throw StoreError(code: .conflict, message: "session \(id) is at version \(current), not \(expected)")
        }
    }

    private func expectOneRow(in db: Database, _ message: @autoclosure () -> String) throws {
        guard db.changes == 1 else { throw StoreError(code: .invalidData, message: message()) }
    }

    private func jsonArray(_ strings: [String]) throws -> String {
        try jsonText(strings)
    }

    private func jsonObject(_ dictionary: [String: String]) throws -> String {
        try jsonText(dictionary)
    }

    private func jsonText(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw StoreError(code: .invalidData, message: "cannot encode \(type(of: value)) as JSON: \(error)")
        }
    }
}
