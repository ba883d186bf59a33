import Foundation
import NavigationValuesWire

// What the store adds for issue 13: reads bounded by bytes, the token checked before a session
// is loaded, and the maintenance retention needs. Each read has a default built on the base
// contract, so another store conforms before it implements the efficient form.

/// A page of events: oldest first, bounded by count and by bytes.
public struct EventPage: Sendable, Equatable {
    public var events: [StoredEvent]
    /// Whether events after the last one exist (the page was cut by its count or its bytes).
    public var hasMore: Bool

    public init(events: [StoredEvent], hasMore: Bool) {
        self.events = events
        self.hasMore = hasMore
    }
}

/// What the server checks before it loads a session: who may use it and how much of its history
/// is kept. One small read, so that a request with another session's token loads nothing.
public struct SessionAccess: Sendable, Equatable {
    /// SHA-256 of the session token, hex.
    public var tokenHash: String
    public var state: SessionState
    public var version: Int64
    /// Events up to and including this seq were compacted away (0: none).
    public var compactedSeq: Int64

    public init(tokenHash: String, state: SessionState, version: Int64, compactedSeq: Int64) {
        self.tokenHash = tokenHash
        self.state = state
        self.version = version
        self.compactedSeq = compactedSeq
    }
}

extension SessionStore {
    /// Events of a session with `seq > after`, oldest first: at most `limit`, and no more JSON
    /// than `maxBytes` together, except that the first event is always included, whatever its
    /// size. This default reads `limit + 1` events and cuts them.
    public func eventPage(of id: SessionID, after: Int64, limit: Int, maxBytes: Int) async throws -> EventPage {
        let events = try await self.events(of: id, after: after, limit: limit + 1)
        return EventPage(cutting: events, limit: limit, maxBytes: maxBytes)
    }

    /// The session's token hash, state, version and compacted seq; nil when it does not exist.
    /// This default loads the whole session.
    public func access(to id: SessionID) async throws -> SessionAccess? {
        guard let record = try await loadSession(id)?.record else { return nil }
        return SessionAccess(
            tokenHash: record.tokenHash, state: record.state, version: record.version,
            compactedSeq: record.compactedSeq)
    }
}

extension EventPage {
    /// `events` (oldest first, possibly one more than `limit`) cut to `limit` and `maxBytes`.
    public init(cutting events: [StoredEvent], limit: Int, maxBytes: Int) {
        var kept: [StoredEvent] = []
        var bytes = 0
        for event in events {
            let size = event.json.utf8.count
            if kept.count == limit || (!kept.isEmpty && bytes + size > maxBytes) { break }
            kept.append(event)
            bytes += size
        }
        self.init(events: kept, hasMore: kept.count < events.count)
    }
}

// MARK: - Maintenance

/// A session retention looks at: its id, its version and when it last changed.
public struct SessionStamp: Sendable, Equatable {
    public var id: SessionID
    public var version: Int64
    public var updatedAt: Date

    public init(id: SessionID, version: Int64, updatedAt: Date) {
        self.id = id
        self.version = version
        self.updatedAt = updatedAt
    }
}

/// How much of each session's history compaction keeps: the newest `keepEvents` events, and
/// every event younger than `keepAge`. A rule that is nil holds nothing back; with both nil
/// nothing is compacted. Compaction removes only what every rule set lets go, and only up to a
/// snapshot, which stays.
public struct CompactionRule: Sendable, Equatable {
    public var keepEvents: Int?
    public var keepAge: Duration?

    public init(keepEvents: Int? = nil, keepAge: Duration? = nil) {
        self.keepEvents = keepEvents
        self.keepAge = keepAge
    }

    /// Whether the rule removes anything at all.
    public var isActive: Bool { keepEvents != nil || keepAge != nil }
}

/// What a store offers retention (issue 13): finding sessions by state and age, compacting
/// history, and forgetting old tombstones. `SessionRetention.run` uses it when the store
/// conforms; ending and purging sessions go through the service as any other mutation.
public protocol SessionStoreMaintenance: SessionStore {
    /// Sessions in `state` whose last change is older than `before`, oldest change first, at most `limit`.
    func sessions(in state: SessionState, updatedBefore before: Date, limit: Int) async throws -> [SessionStamp]

    /// Compacts the history of at most `limit` sessions, those with the most to remove first:
    /// for each, the newest snapshot that `rule` lets go becomes the compacted point; the events
    /// up to it and the snapshots before it are deleted, and `compactedSeq` records it. Returns
    /// how many events were deleted.
    func compactHistory(_ rule: CompactionRule, now: Date, limit: Int) async throws -> Int

    /// Deletes tombstones of sessions purged before `before` (their ids then read as never
    /// having existed: 404 rather than 410) and expired idempotency records. Returns how many
    /// rows were deleted.
    func removeExpiredRecords(tombstonesBefore before: Date) async throws -> Int
}
