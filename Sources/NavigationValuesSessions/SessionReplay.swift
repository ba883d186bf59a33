import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// Rebuilds a session as it was right after any event, from the newest snapshot at or before it
/// and the events that follow, using the same `apply` as live requests.
///
/// ```swift
/// let json = try await SessionReplay.session(SessionID("s_…"), at: 12, in: store)
/// ```
public enum SessionReplay {
    /// Why a replay cannot be answered.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public enum Reason: Sendable { case unknownSession, eventOutOfRange }
        public var reason: Reason
        public var description: String
    }

    /// The session right after event `at` (default: the latest), as `GET /v1/sessions/{id}` shows it.
    ///
    /// - Throws: `Failure` for an unknown session or an `at` outside 1…latest; `StoreError`.
    public static func session(_ id: SessionID, at: Int64? = nil, in store: any SessionStore) async throws -> JSONValue {
        let latest = try await latestSeq(of: id, in: store)
        let target = at ?? latest
        guard target >= 1, target <= latest else {
            throw Failure(reason: .eventOutOfRange, description: "session \(id.rawValue) has events 1 to \(latest), not \(target)")
        }
        return try await rebuild(id, at: target, in: store).renderSession()
    }

    /// The same, read straight from a database file (read-only, so it works while a server writes
    /// to it): what `navigation-values replay --db PATH SESSION [--at N]` prints.
    public static func session(_ id: SessionID, at: Int64? = nil, databasePath: String) async throws -> JSONValue {
        var configuration = SQLiteSessionStore.Configuration()
        configuration.access = .readOnly
        let store = try await SQLiteSessionStore.open(path: databasePath, configuration: configuration)
        do {
            let result = try await session(id, at: at, in: store)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }

    /// The newest event's seq, from the event log (which also covers ended sessions).
    static func latestSeq(of id: SessionID, in store: any SessionStore) async throws -> Int64 {
        guard let stored = try await store.loadSession(id) else {
            throw Failure(reason: .unknownSession, description: "no session \(id.rawValue)")
        }
        return stored.record.version
    }

    package static func rebuild(_ id: SessionID, at target: Int64, in store: any SessionStore) async throws -> LiveSession {
        var session: LiveSession
        var position: Int64
        if let snapshot = try await store.snapshot(of: id, atOrBefore: target) {
            session = try LiveSession.load(snapshot: try JSONValue(parsing: snapshot.json), session: id)
            position = snapshot.seq
        } else {
            guard let first = try await store.events(of: id, after: 0, limit: 1).first, first.seq == 1 else {
                throw Failure(reason: .unknownSession, description: "session \(id.rawValue) has no history")
            }
            session = try created(from: first, session: id)
            position = 1
        }
        while position < target {
            let page = try await store.events(of: id, after: position, limit: Int(min(1_000, target - position)))
            guard !page.isEmpty else { break }
            for event in page where event.seq <= target {
                guard event.seq == position + 1 else {
                    throw CorruptSessionError(session: id, reason: "event \(position + 1) is missing")
                }
                if let operation = try LiveSession.operation(fromEvent: try JSONValue(parsing: event.json), session: id) {
                    _ = session.apply(operation, seq: event.seq, at: event.at)
                }
                position = event.seq
            }
        }
        return session
    }

    /// The session right after its `session.created` event.
    private static func created(from event: StoredEvent, session id: SessionID) throws -> LiveSession {
        let json = try JSONValue(parsing: event.json)
        guard let root = json["root"], let rootID = root["id"]?.stringValue, let name = root["name"]?.stringValue else {
            throw CorruptSessionError(session: id, reason: "session.created lacks its root")
        }
        let schema: SessionSchema
        do { schema = try SessionSchema(json: json["schema"] ?? [:]) } catch {
            throw CorruptSessionError(session: id, reason: "session.created has an invalid schema")
        }
        let record = SessionRecord(
            id: id, version: 1, state: .active, schemaJSON: schema.json.serialized(), tokenHash: "",
            createdAt: event.at, updatedAt: event.at)
        let session = LiveSession(record: record, schema: schema)
        session.pushScreen(ScreenSeed(id: ScreenID(rootID), name: name, values: root["values"]?.objectValue ?? [:]))
        return session
    }
}
