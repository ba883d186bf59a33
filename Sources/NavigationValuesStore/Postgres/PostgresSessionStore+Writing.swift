import Foundation
import NavigationValues
import NavigationValuesWire
import Synchronization

// MARK: - A mutation as statements

extension PostgresSessionStore {
    /// The statements that write one mutation, in order: the version check (unless it creates
    /// its session), its state changes, its event and snapshot (unless it purged its own
    /// session), its idempotency record, and the notification to other instances.
    ///
    /// `checksVersion` false leaves the version check out: for the later mutations of a copy,
    /// whose session the same transaction creates, so no other writer can see it yet.
    func statements(for mutation: StoredMutation, checksVersion: Bool = true) throws -> [PostgresConnection.Statement] {
        guard mutation.event.session == mutation.session,
            mutation.snapshot.map({ $0.session == mutation.session }) ?? true
        else {
            throw StoreError(
                code: .invalidData, message: "the event and snapshot must belong to the mutation's session")
        }
        typealias Statement = PostgresConnection.Statement
        var statements: [Statement] = []
        let session = mutation.session.rawValue
        let createsSession = mutation.changes.contains {
            if case .insertSession(let record) = $0, record.id == mutation.session { true } else { false }
        }
        if !createsSession, checksVersion {
            // Conditional on the version this mutation was made from: another instance's write
            // since then makes it a conflict (NV409), and the caller reloads.
            statements.append(
                Statement("SELECT navigation_values_expect_version($1, $2)", [session, "\(mutation.event.seq - 1)"]))
        }
        var isPurged = false
        for change in mutation.changes {
            statements += try self.statements(for: change)
            if case .purgeSession(let id) = change, id == mutation.session { isPurged = true }
        }
        let event = mutation.event
        if !isPurged {
            statements.append(
                Statement(
                    "INSERT INTO events (session, seq, type, json, at) VALUES ($1, $2, $3, $4, \(Self.time(5)))",
                    [session, "\(event.seq)", event.type, event.json, Self.milliseconds(event.at)]))
            if let snapshot = mutation.snapshot {
                statements.append(
                    Statement(
                        "INSERT INTO snapshots (session, seq, json) VALUES ($1, $2, $3)",
                        [session, "\(snapshot.seq)", snapshot.json]))
            }
        }
        if var record = mutation.idempotency {
            // A purge's own record outlives its session, attached to none, until it expires.
            if isPurged, record.session == mutation.session { record.session = nil }
            statements += try idempotencyStatements(for: record)
        }
        return statements
    }

    /// Keeps the first answer under a key: an unexpired record makes the write a conflict, an
    /// expired one is replaced.
    func idempotencyStatements(for record: IdempotencyRecord) throws -> [PostgresConnection.Statement] {
        [
            PostgresConnection.Statement(
                "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND created_at < \(Self.time(3))",
                [record.scope, record.key, Self.milliseconds(idempotencyCutoff)]),
            PostgresConnection.Statement(
                """
                INSERT INTO idempotency_keys (scope, key, status, headers, body, created_at, session)
                VALUES ($1, $2, $3, $4, $5, \(Self.time(6)), $7)
                """,
                [
                    record.scope, record.key, "\(record.status)", try Self.jsonText(record.headers),
                    Self.bytea(record.body), Self.milliseconds(record.createdAt), record.session?.rawValue,
                ]),
        ]
    }

    /// The notifications of a batch's mutations: one line `INSTANCE SESSION SEQ` per mutation
    /// (plus ` JSON`, the event, for a purge, whose event is not stored), as few notifications as
    /// fit PostgreSQL's 8000-byte payload. Delivered to every listening instance when (and only
    /// if) the transaction commits, in commit order (https://www.postgresql.org/docs/current/sql-notify.html).
    func notifications(for mutations: [StoredMutation]) -> [PostgresConnection.Statement] {
        var statements: [PostgresConnection.Statement] = []
        var payload = ""
        func flush() {
            if !payload.isEmpty { statements.append(.init("SELECT pg_notify($1, $2)", [Self.channel, payload])) }
            payload = ""
        }
        for mutation in mutations {
            var line = "\(instance) \(mutation.session.rawValue) \(mutation.event.seq)"
            let isPurge = mutation.changes.contains {
                if case .purgeSession(let id) = $0, id == mutation.session { true } else { false }
            }
            if isPurge { line += " " + mutation.event.json }
            if payload.utf8.count + line.utf8.count + 1 > 7_900 { flush() }
            payload += payload.isEmpty ? line : "\n" + line
        }
        flush()
        return statements
    }

    private func statements(for change: StateChange) throws -> [PostgresConnection.Statement] {
        typealias Statement = PostgresConnection.Statement
        switch change {
        case .insertSession(let session):
            return [
                Statement(
                    """
                    INSERT INTO sessions
                        (id, version, state, schema, token_hash, created_at, updated_at, updated_minute,
                         origin_session, origin_version)
                    VALUES ($1, $2, $3, $4, $5, \(Self.time(6)), \(Self.time(7)), \(Self.minute(7)), $8, $9)
                    """,
                    [
                        session.id.rawValue, "\(session.version)", session.state.rawValue, session.schemaJSON,
                        session.tokenHash, Self.milliseconds(session.createdAt), Self.milliseconds(session.updatedAt),
                        session.origin?.session.rawValue, session.origin.map { "\($0.version)" },
                    ])
            ]
        case .updateSession(let id, let version, let state, let updatedAt):
            return [
                Statement(
                    "SELECT navigation_values_update_session($1, $2, $3, \(Self.time(4)))",
                    [id.rawValue, "\(version)", state.rawValue, Self.milliseconds(updatedAt)])
            ]
        case .insertScreen(let screen):
            return [
                Statement(
                    """
                    INSERT INTO screen_contexts (id, session, stack, idx, name, role, previous)
                    VALUES ($1, $2, $3, $4, $5, $6, $7)
                    """,
                    [
                        screen.id.rawValue, screen.session.rawValue, screen.stack.rawValue, "\(screen.index)",
                        screen.name, screen.role, screen.previous?.rawValue,
                    ])
            ]
        case .deleteScreens(let ids):
            // One statement, so links between the deleted screens are checked once, at its end.
            return [
                Statement(
                    "DELETE FROM screen_contexts WHERE id = ANY($1::text[])", [Self.textArray(ids.map(\.rawValue))])
            ]
        case .setValue(let screen, let key, let json):
            return [
                Statement(
                    """
                    INSERT INTO context_values (screen, key, json) VALUES ($1, $2, $3)
                    ON CONFLICT (screen, key) DO UPDATE SET json = excluded.json
                    """,
                    [screen.rawValue, key, json])
            ]
        case .removeValue(let screen, let key):
            return [Statement("DELETE FROM context_values WHERE screen = $1 AND key = $2", [screen.rawValue, key])]
        case .setHandler(let screen, let key, let passBack):
            return [
                Statement(
                    """
                    INSERT INTO preference_handlers (screen, key, pass_back, last_value, last_passed)
                    VALUES ($1, $2, $3, NULL, NULL)
                    ON CONFLICT (screen, key) DO UPDATE
                    SET pass_back = excluded.pass_back, last_value = NULL, last_passed = NULL
                    """,
                    [screen.rawValue, key, passBack ? "true" : "false"])
            ]
        case .removeHandler(let screen, let key):
            return [
                Statement("DELETE FROM preference_handlers WHERE screen = $1 AND key = $2", [screen.rawValue, key])
            ]
        case .rememberDelivery(let screen, let key, let valueJSON, let passedJSON):
            return [
                Statement(
                    "SELECT navigation_values_remember_delivery($1, $2, $3, $4)",
                    [screen.rawValue, key, valueJSON, passedJSON])
            ]
        case .setReceivedPreference(let screen, let key, let json):
            return [
                Statement(
                    """
                    INSERT INTO received_preferences (screen, key, json) VALUES ($1, $2, $3)
                    ON CONFLICT (screen, key) DO UPDATE SET json = excluded.json
                    """,
                    [screen.rawValue, key, json])
            ]
        case .purgeSession(let id):
            // Screens, their rows, events, snapshots and idempotency records follow by ON DELETE
            // CASCADE; a tombstone remembers that the session was purged.
            return [
                Statement("DELETE FROM sessions WHERE id = $1", [id.rawValue]),
                Statement(
                    "INSERT INTO purged_sessions (id, purged_at) VALUES ($1, \(Self.time(2))) ON CONFLICT (id) DO NOTHING",
                    [id.rawValue, Self.milliseconds(configuration.now())]),
            ]
        case .insertStack(let stack):
            return [
                Statement(
                    "INSERT INTO screen_stacks (session, id, position, kind, presenter) VALUES ($1, $2, $3, $4, $5)",
                    [
                        stack.session.rawValue, stack.id.rawValue, "\(stack.position)", stack.kind.rawValue,
                        stack.presenter?.rawValue,
                    ])
            ]
        case .deleteStacks(let session, let ids):
            return [
                Statement(
                    "DELETE FROM screen_stacks WHERE session = $1 AND id = ANY($2::text[])",
                    [session.rawValue, Self.textArray(ids.map(\.rawValue))])
            ]
        case .selectStack(let session, let stack):
            return [
                Statement(
                    "SELECT navigation_values_select_stack($1, $2)", [session.rawValue, stack.rawValue])
            ]
        case .setStackPosition(let session, let stack, let position):
            return [
                Statement(
                    "UPDATE screen_stacks SET position = $1 WHERE session = $2 AND id = $3",
                    ["\(position)", session.rawValue, stack.rawValue])
            ]
        }
    }

    /// Deletes expired idempotency records, at most once a minute, in a batch's transaction.
    func expiredIdempotencyCleanup() -> PostgresConnection.Statement? {
        let now = configuration.now()
        let isDue = lastIdempotencyCleanup.withLock { last in
            guard now.timeIntervalSince(last) >= 60 else { return false }
            last = now
            return true
        }
        guard isDue else { return nil }
        return PostgresConnection.Statement(
            "DELETE FROM idempotency_keys WHERE created_at < \(Self.time(1))", [Self.milliseconds(idempotencyCutoff)])
    }

    /// Records created before this instant count as absent.
    var idempotencyCutoff: Date {
        configuration.now().addingTimeInterval(-configuration.idempotencyLifetime.seconds)
    }

    // MARK: - Values as text parameters

    /// SQL turning parameter `$n`, whole milliseconds since 1970, into a timestamptz.
    static func time(_ parameter: Int) -> String { "to_timestamp($\(parameter)::bigint / 1000.0)" }

    /// SQL for parameter `parameter` (milliseconds since 1970) rounded down to its minute, as a
    /// timestamptz: the sessions' updated_minute (Migrations/postgres/0006).
    static func minute(_ parameter: Int) -> String {
        "date_trunc('minute', \(time(parameter)) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'"
    }

    /// SQL reading a timestamptz column back as whole milliseconds since 1970.
    static func milliseconds(column: String) -> String { "(extract(epoch FROM \(column)) * 1000)::bigint" }

    static func milliseconds(_ date: Date) -> String { "\(date.millisecondsSince1970)" }

    /// `bytea` in its hex text form (https://www.postgresql.org/docs/current/datatype-binary.html).
    static func bytea(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = Array("\\x".utf8)
        text.reserveCapacity(2 + data.count * 2)
        for byte in data {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A text array literal, each element double-quoted.
    static func textArray(_ strings: [String]) -> String {
        let quoted = strings.map { string in
            "\"" + string.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                + "\""
        }
        return "{" + quoted.joined(separator: ",") + "}"
    }

    static func jsonText(_ dictionary: [String: String]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(dictionary), as: UTF8.self)
        } catch {
            throw StoreError(code: .invalidData, message: "cannot encode headers as JSON: \(error)")
        }
    }
}
