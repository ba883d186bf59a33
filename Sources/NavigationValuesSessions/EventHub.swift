import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire
import Synchronization

/// Fans committed events out to subscribers: those of one session and those of every session
/// (the admin stream).
///
/// Publishing never waits: each subscriber has a bounded buffer, and a subscriber that falls
/// `bufferLimit` events behind is dropped (its stream ends, and the client resumes by event id).
/// So a slow reader slows neither writers nor other readers.
public final class EventHub: Sendable {
    /// What a subscriber receives.
    package enum Item: Sendable {
        case event(StoredEvent)
        /// Time to send a keep-alive comment.
        case keepAlive
        /// Events may have been missed (another instance's notices were lost): read the store
        /// for everything after the last event sent.
        case resync
    }

    private struct State {
        var nextID: UInt64 = 0
        var bySession: [SessionID: [UInt64: AsyncStream<Item>.Continuation]] = [:]
        var everySession: [UInt64: AsyncStream<Item>.Continuation] = [:]
        var count = 0
    }

    private let state = Mutex(State())
    private let dropped = Atomic<Int>(0)
    private let published = Atomic<Int>(0)
    /// Events a subscriber may have waiting before it is dropped.
    public let bufferLimit: Int

    public init(bufferLimit: Int = 1_024) {
        self.bufferLimit = max(1, bufferLimit)
    }

    /// Subscribers connected now.
    public var subscriberCount: Int { state.withLock { $0.count } }
    /// Subscribers dropped for falling behind, since start.
    public var droppedSubscriberCount: Int { dropped.load(ordering: .relaxed) }
    /// Events published since start.
    public var publishedEventCount: Int { published.load(ordering: .relaxed) }

    /// A subscription to one session's events (or every session's when `session` is nil, each
    /// event's JSON then carrying its `"session"`). Items
    /// published from now on are buffered until read. The stream ends when the subscriber is
    /// dropped or cancelled.
    package func subscribe(to session: SessionID?) -> Subscription {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Item.self, bufferingPolicy: .bufferingOldest(bufferLimit))
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            let id = state.nextID
            if let session {
                state.bySession[session, default: [:]][id] = continuation
            } else {
                state.everySession[id] = continuation
            }
            state.count += 1
            return id
        }
        continuation.onTermination = { [weak self] _ in self?.remove(id, session: session) }
        return Subscription(items: stream, continuation: continuation)
    }

    private func remove(_ id: UInt64, session: SessionID?) {
        state.withLock { state in
            if let session {
                guard state.bySession[session]?.removeValue(forKey: id) != nil else { return }
                if state.bySession[session]?.isEmpty == true { state.bySession[session] = nil }
            } else {
                guard state.everySession.removeValue(forKey: id) != nil else { return }
            }
            state.count -= 1
        }
    }

    /// Delivers a committed event to its session's subscribers, and to the subscribers of every
    /// session tagged with its session (encoded once, only when there are such subscribers).
    public func publish(_ event: StoredEvent, _ recorded: RecordedEvent) {
        published.add(1, ordering: .relaxed)
        fanOut(event, recorded)
    }

    /// Delivers an event another instance committed (read back from the store), as `publish`
    /// does, without counting it as appended here.
    package func publishFromAnotherInstance(_ event: StoredEvent, _ recorded: RecordedEvent) {
        fanOut(event, recorded)
    }

    /// Whether anyone follows this session's events (its subscribers, or the admin stream's).
    package func hasSubscribers(for session: SessionID) -> Bool {
        state.withLock { !$0.everySession.isEmpty || $0.bySession[session]?.isEmpty == false }
    }

    /// Tells the subscribers of `session` (every subscriber when nil) to re-read the store.
    package func resync(_ session: SessionID?) {
        let targets = state.withLock { state in
            if let session { return Array((state.bySession[session] ?? [:]).values) }
            return state.bySession.values.flatMap(\.values)
        }
        for continuation in targets { deliver(.resync, to: continuation) }
    }

    private func fanOut(_ event: StoredEvent, _ recorded: RecordedEvent) {
        let (sessionTargets, everyTargets) = state.withLock { state in
            (Array((state.bySession[event.session] ?? [:]).values), Array(state.everySession.values))
        }
        for continuation in sessionTargets { deliver(.event(event), to: continuation) }
        guard !everyTargets.isEmpty else { return }
        var tagged = event
        tagged.json = recorded.json(taggedWith: event.session).serialized()
        for continuation in everyTargets { deliver(.event(tagged), to: continuation) }
    }

    /// Wakes every subscriber to send a keep-alive comment.
    package func tick() {
        let targets = state.withLock { state in
            state.bySession.values.flatMap(\.values) + Array(state.everySession.values)
        }
        for continuation in targets { deliver(.keepAlive, to: continuation) }
    }

    private func deliver(_ item: Item, to continuation: AsyncStream<Item>.Continuation) {
        if case .dropped = continuation.yield(item) {
            dropped.add(1, ordering: .relaxed)
            continuation.finish()
        }
    }

    /// Ends every subscription (server shutdown).
    package func finishAll() {
        let targets = state.withLock { state in
            state.bySession.values.flatMap(\.values) + Array(state.everySession.values)
        }
        for continuation in targets { continuation.finish() }
    }
}

/// One subscriber's buffered items.
package struct Subscription: Sendable {
    package let items: AsyncStream<EventHub.Item>
    let continuation: AsyncStream<EventHub.Item>.Continuation

    package func cancel() { continuation.finish() }
}
