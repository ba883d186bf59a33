import Foundation
import NavigationValuesWire

// What the store offers beside its base contract: reads bounded by bytes, the token checked before
// a session is loaded, and the maintenance retention needs.

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

/// Cuts a page of events by count and by bytes, from their sizes, oldest first: the first event
/// always fits; the page ends before the first event past `limit` or past `maxBytes` together.
struct PageCut {
    let limit: Int
    let maxBytes: Int
    /// Events in the page so far.
    private(set) var count = 0
    /// The last event's seq in the page, nil while it is empty.
    private(set) var last: Int64?
    /// Whether an event after the page exists (the page was cut by its count or its bytes).
    private(set) var hasMore = false
    private var bytes = 0

    init(limit: Int, maxBytes: Int) {
        self.limit = limit
        self.maxBytes = maxBytes
    }

    /// Takes the next event's seq and size; false when it does not belong to the page (then
    /// the page is complete and `hasMore` is true).
    mutating func admit(seq: Int64, size: Int) -> Bool {
        if count == limit || (count > 0 && bytes + size > maxBytes) {
            hasMore = true
            return false
        }
        count += 1
        bytes += size
        last = seq
        return true
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

/// What a store offers retention: finding sessions by state and age, compacting history, and
/// forgetting old tombstones. `SessionRetention.run` uses it when the store
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
