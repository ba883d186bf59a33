import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// Rebuilds a session as it was right after any event, from the newest snapshot at or before it
/// and the events that follow, using the same `apply` as live requests.
///
/// ```swift
/// let session = try await SessionReplay.session(SessionID("s_…"), at: 12, in: store)
/// session.screens.map(\.name)
/// ```
public enum SessionReplay {
    /// Why a replay cannot be answered.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public enum Reason: Sendable { case unknownSession, eventOutOfRange }
        public var reason: Reason
        public var description: String

        package init(reason: Reason, description: String) {
            self.reason = reason
            self.description = description
        }
    }

    /// The session right after event `at` (default: the latest), as `GET /v1/sessions/{id}` shows it.
    ///
    /// - Throws: `Failure` for an unknown session or an `at` outside 1…latest; `CorruptSessionError`
    ///   when the stored history does not replay; `StoreError`.
    public static func session(_ id: SessionID, at: Int64? = nil, in store: any SessionStore) async throws
        -> SessionResource
    {
        let (record, latest) = try await stored(id, in: store)
        let target = at ?? latest
        guard target >= 1, target <= latest else {
            throw Failure(
                reason: .eventOutOfRange, description: "session \(id.rawValue) has events 1 to \(latest), not \(target)"
            )
        }
        var session = try await rebuild(id, at: target, in: store).resource()
        session.origin = record.origin  // a fork's link, whether the replay started from a snapshot or not
        return session
    }

    /// Session `id`'s record and its latest version, which is its log's: a store that writes
    /// state behind its log (and a read-only one that cannot catch it up) has rows that may lag it.
    ///
    /// - Throws: `Failure` for an unknown session; `StoreError`.
    package static func stored(_ id: SessionID, in store: any SessionStore) async throws
        -> (record: SessionRecord, latest: Int64)
    {
        guard let record = try await store.loadSession(id)?.record else {
            throw Failure(reason: .unknownSession, description: "no session \(id.rawValue)")
        }
        return (record, max(record.version, try await store.version(of: id) ?? record.version))
    }

    /// The session right after event `target`: the newest snapshot at or before it, then the
    /// events after the snapshot, applied as live requests are.
    static func rebuild(_ id: SessionID, at target: Int64, in store: any SessionStore) async throws
        -> LiveSession
    {
        func corrupt(_ reason: String) -> CorruptSessionError { CorruptSessionError(session: id, reason: reason) }
        var session: LiveSession
        var position: Int64
        if let snapshot = try await store.snapshot(of: id, atOrBefore: target) {
            do {
                let resource = try SessionResource(json: try JSONValue(parsing: snapshot.json))
                guard resource.id == id, resource.version == snapshot.seq else {
                    throw corrupt("snapshot \(snapshot.seq) is of another session or version")
                }
                session = try LiveSession.load(snapshot: resource)
            } catch let error as CorruptSessionError {
                throw error
            } catch {
                throw corrupt("snapshot \(snapshot.seq) does not load: \(error)")
            }
            position = snapshot.seq
        } else {
            guard let first = try await store.events(of: id, after: 0, limit: 1).first, first.seq == 1 else {
                throw Failure(reason: .unknownSession, description: "session \(id.rawValue) has no history")
            }
            guard case .sessionCreated(let root, let schema) = try decode(first, session: id).event else {
                throw corrupt("event 1 is not session.created")
            }
            session = try LiveSession.created(root: root, schema: schema, session: id, at: first.at)
            position = 1
        }
        while position < target {
            // Pages bounded by bytes as well as count: replaying large events never holds more
            // than a few megabytes of them at once.
            let page = try await store.eventPage(
                of: id, after: position, limit: Int(min(1_000, target - position)), maxBytes: 4 * 1024 * 1024
            ).events
            // Each page must go on from where the last one ended; a gap (or no event at all) is damage.
            guard let first = page.first, first.seq == position + 1 else {
                throw corrupt("event \(position + 1) is missing")
            }
            for stored in page where stored.seq <= target {
                guard stored.seq == position + 1 else { throw corrupt("event \(position + 1) is missing") }
                let event = try decode(stored, session: id).event
                guard let operation = SessionOperation(replaying: event) else {
                    throw corrupt("event \(stored.seq) (\(event.kind.rawValue)) is not a change of the session")
                }
                _ = try session.apply(operation, seq: stored.seq, at: stored.at)
                position = stored.seq
            }
        }
        return session
    }

    static func decode(_ stored: StoredEvent, session id: SessionID) throws(CorruptSessionError)
        -> RecordedEvent
    {
        do {
            let event = try RecordedEvent(text: stored.json)
            guard event.seq == stored.seq else {
                throw CorruptSessionError(session: id, reason: "event \(stored.seq) says it is event \(event.seq)")
            }
            return event
        } catch let error as CorruptSessionError {
            throw error
        } catch {
            throw CorruptSessionError(session: id, reason: "event \(stored.seq) does not decode: \(error)")
        }
    }
}

extension SessionReplay {
    /// The session right after event `target` (which the caller has checked is 1…latest); with
    /// `limits`, each screen with its explanation (`?explain=1`), bounded by them. A walk is
    /// explained when the replay ran it: one before the snapshot the replay started from is not.
    package static func resource(
        of id: SessionID, at target: Int64, in store: any SessionStore, explainingWithin limits: SessionLimits? = nil
    ) async throws -> SessionResource {
        let session = try await rebuild(id, at: target, in: store)
        guard let limits else { return session.resource() }
        return try OutputLimits(limits: limits).explained(session)
    }
}
