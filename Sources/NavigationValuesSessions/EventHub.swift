import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire
import Synchronization

/// Fans committed events out to subscribers: those of one session and those of every session
/// (the admin stream).
///
/// Publishing never waits. Each subscriber has a bounded buffer, counted in events
/// (`bufferLimit`) and in bytes (`bufferBytes`, which also counts the event its stream is
/// writing until the client has taken it): a subscriber that falls behind either is dropped (its
/// stream ends, and the client resumes by event id). So a slow reader slows neither writers nor
/// other readers, and a reader that stops reading holds at most its budget. Subscribers are
/// capped per session and in total; past a cap, `subscribe` throws `SubscriberLimitError` (503).
///
/// Subscribers of one event share one encoded frame (`Item.frame`), so a hundred stalled
/// readers of one large event hold it once.
///
/// A stream that has caught up parks its subscription on its connection (`Subscription.park`):
/// while parked, the next event in seq order (and a keep-alive) is written by the publisher
/// straight to the connection's writer, if the connection has room for it, without waking the
/// stream's task, so a fan-out to a thousand caught-up streams is a thousand queued writes
/// for their event loops rather than a thousand task wake-ups. Anything else (a gap, a resync,
/// a connection behind, the session's end) goes through the subscription's buffer to the task,
/// which unparks first and so writes after everything written for it while it was parked.
public final class EventHub: Sendable {
    /// How many subscribers, and how far behind each may fall.
    public struct Limits: Sendable, Equatable {
        /// Events a subscriber may have waiting before it is dropped.
        public var bufferLimit = 1_024
        /// Bytes of events a subscriber may have waiting, the one being written included, before
        /// it is dropped; a subscriber with nothing waiting always takes the next event.
        public var bufferBytes = 1024 * 1024
        /// Subscribers of one session at once (streams and long polls).
        public var maxPerSession = 100
        /// Subscribers at once, every session and the admin stream together.
        public var maxTotal = 10_000

        public init() {}
    }

    /// What a subscriber receives.
    package enum Item: Sendable {
        /// An event, its bytes charged to the subscriber's budget until `Subscription.release(_:)`.
        case event(StoredEvent, frame: SharedFrame, charge: Int)
        /// Time to send a keep-alive comment.
        case keepAlive
        /// Events may have been missed (another instance's notices were lost): read the store
        /// for everything after the last event sent.
        case resync
    }

    private struct Subscriber {
        var continuation: AsyncStream<Item>.Continuation
        var budget: SubscriberBudget
    }

    /// Written to a parked stream on each keep-alive tick: one array for every stream.
    private static let keepAliveComment = Array(": keep-alive\n\n".utf8)

    private struct State {
        var nextID: UInt64 = 0
        var bySession: [SessionID: [UInt64: Subscriber]] = [:]
        var everySession: [UInt64: Subscriber] = [:]
        var count = 0
    }

    private let state = Mutex(State())
    private let dropped = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)
    private let published = Atomic<Int>(0)
    /// The limits the hub was created with.
    public let limits: Limits

    /// Creates a hub with `limits`.
    public init(limits: Limits = Limits()) {
        var limits = limits
        limits.bufferLimit = max(1, limits.bufferLimit)
        limits.bufferBytes = max(1, limits.bufferBytes)
        self.limits = limits
    }

    /// Creates a hub whose subscribers may fall `bufferLimit` events behind, with the other limits' defaults.
    public convenience init(bufferLimit: Int) {
        var limits = Limits()
        limits.bufferLimit = bufferLimit
        self.init(limits: limits)
    }

    /// Events a subscriber may have waiting before it is dropped.
    public var bufferLimit: Int { limits.bufferLimit }
    /// Subscribers connected now.
    public var subscriberCount: Int { state.withLock { $0.count } }
    /// Subscribers dropped for falling behind, since start.
    public var droppedSubscriberCount: Int { dropped.load(ordering: .relaxed) }
    /// Subscriptions refused for a cap, since start.
    public var refusedSubscriberCount: Int { refused.load(ordering: .relaxed) }
    /// Events published since start.
    public var publishedEventCount: Int { published.load(ordering: .relaxed) }

    /// A subscription to one session's events (or every session's when `session` is nil, each
    /// event's JSON then carrying its `"session"`). Items published from now on are buffered
    /// until read. The stream ends when the subscriber is dropped or cancelled.
    ///
    /// - Throws: `SubscriberLimitError` when the session, or the server, has as many
    ///   subscribers as its limit allows.
    package func subscribe(to session: SessionID?) throws(SubscriberLimitError) -> Subscription {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Item.self, bufferingPolicy: .bufferingOldest(limits.bufferLimit))
        let budget = SubscriberBudget(limit: limits.bufferBytes)
        let subscriber = Subscriber(continuation: continuation, budget: budget)
        let admitted = state.withLock { state -> Result<UInt64, SubscriberLimitError> in
            guard state.count < limits.maxTotal else {
                return .failure(SubscriberLimitError(scope: .server, limit: limits.maxTotal))
            }
            state.nextID += 1
            let id = state.nextID
            if let session {
                let current = state.bySession[session]?.count ?? 0
                guard current < limits.maxPerSession else {
                    return .failure(SubscriberLimitError(scope: .session, limit: limits.maxPerSession))
                }
                state.bySession[session, default: [:]][id] = subscriber
            } else {
                state.everySession[id] = subscriber
            }
            state.count += 1
            return .success(id)
        }
        switch admitted {
        case .failure(let error):
            refused.add(1, ordering: .relaxed)
            continuation.finish()
            throw error
        case .success(let id):
            continuation.onTermination = { [weak self] _ in self?.remove(id, session: session) }
            return Subscription(items: stream, continuation: continuation, budget: budget)
        }
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
        if !sessionTargets.isEmpty {
            let frame = SharedFrame()
            let charge = event.json.utf8.count + SharedFrame.overhead
            for subscriber in sessionTargets where !subscriber.budget.writeIfParked(event, frame) {
                deliver(.event(event, frame: frame, charge: charge), to: subscriber)
            }
        }
        guard !everyTargets.isEmpty else { return }
        var tagged = event
        tagged.json = String(decoding: recorded.serializedBytes(taggedWith: event.session), as: UTF8.self)
        let frame = SharedFrame()
        let charge = tagged.json.utf8.count + SharedFrame.overhead
        for subscriber in everyTargets { deliver(.event(tagged, frame: frame, charge: charge), to: subscriber) }
    }

    /// Wakes every subscriber to send a keep-alive comment.
    package func tick() {
        let targets = state.withLock { state in
            state.bySession.values.flatMap(\.values) + Array(state.everySession.values)
        }
        for subscriber in targets where !subscriber.budget.writeIfParked(keepAlive: Self.keepAliveComment) {
            deliver(.keepAlive, to: subscriber)
        }
    }

    private func deliver(_ item: Item, to subscriber: Subscriber) {
        if case .event(_, _, let charge) = item, !subscriber.budget.charge(charge) {
            drop(subscriber)
            return
        }
        if case .dropped = subscriber.continuation.yield(item) {
            drop(subscriber)
        }
    }

    private func drop(_ subscriber: Subscriber) {
        dropped.add(1, ordering: .relaxed)
        subscriber.continuation.finish()
    }

    /// Ends every subscription (server shutdown).
    package func finishAll() {
        let targets = state.withLock { state in
            state.bySession.values.flatMap(\.values) + Array(state.everySession.values)
        }
        for subscriber in targets { subscriber.continuation.finish() }
    }
}

/// A subscription refused because a cap is reached: of the session's subscribers, or of the
/// server's. Worth retrying later (HTTP 503 with `Retry-After`).
public struct SubscriberLimitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which cap was reached.
    public enum Scope: Sendable, Equatable {
        case session
        case server
    }

    public var scope: Scope
    /// The cap.
    public var limit: Int

    public var description: String {
        switch scope {
        case .session: "the session has \(limit) subscribers, its most (max-subscribers-per-session)"
        case .server: "the server has \(limit) subscribers, its most (max-subscribers)"
        }
    }
}

/// One subscriber's buffered items.
package struct Subscription: Sendable {
    package let items: AsyncStream<EventHub.Item>
    let continuation: AsyncStream<EventHub.Item>.Continuation
    let budget: SubscriberBudget

    package func cancel() {
        budget.detach()
        continuation.finish()
    }

    /// Gives back an event's bytes once the stream has handed it to the client's connection.
    package func release(_ item: EventHub.Item) {
        if case .event(_, _, let charge) = item { budget.release(charge) }
    }

    /// Lets the hub write the events after `last`, in seq order, straight to `sink` until the
    /// stream takes its next item: for a stream that has written everything up to `last` and
    /// is about to wait for more. Everything the stream wrote before parking is ahead of them.
    package func park(after last: Int64, on sink: any LiveEventSink) {
        budget.park(after: last, on: sink)
    }

    /// Takes the stream back from the hub (before it writes anything else); returns the last
    /// seq written while it was parked, or the one it parked after.
    package func unpark() -> Int64 {
        budget.unpark()
    }
}

/// A stream's connection, as the hub sees it while the stream is parked: where the next events
/// can be written at once, by the publishing thread, without waking the stream's task.
package protocol LiveEventSink: AnyObject, Sendable {
    /// Queues `event`'s frame for the client if the stream would write it as it is (not the
    /// session's end, which ends the stream) and the connection has room for it now (nothing
    /// waiting, under its high-water mark); false, having written nothing, otherwise.
    func writeIfReady(_ event: StoredEvent, _ frame: SharedFrame) -> Bool
    /// Queues `bytes` (a comment) if the connection has room for them now; false otherwise.
    func writeIfReady(_ bytes: [UInt8]) -> Bool
}

/// One subscriber's state beside its buffer: the bytes it holds, charged when an event is
/// queued for it and released once its stream has written it; and whether its stream is
/// parked, with the connection events may be written to meanwhile.
final class SubscriberBudget: Sendable {
    private struct Parking {
        /// Set while parked.
        var sink: (any LiveEventSink)?
        /// The last seq written to the stream.
        var last: Int64 = 0
    }

    private let used = Atomic<Int>(0)
    let limit: Int
    private let parking = Mutex(Parking())

    init(limit: Int) { self.limit = limit }

    func park(after last: Int64, on sink: any LiveEventSink) {
        parking.withLock { parking in
            parking.sink = sink
            parking.last = last
        }
    }

    func unpark() -> Int64 {
        parking.withLock { parking in
            parking.sink = nil
            return parking.last
        }
    }

    /// Unparks for good: the subscription ends (and the sink is not kept).
    func detach() {
        parking.withLock { $0.sink = nil }
    }

    /// Writes `event` to the parked stream's connection when it is the one after the last
    /// written, and the connection takes it now; the stream stays parked.
    func writeIfParked(_ event: StoredEvent, _ frame: SharedFrame) -> Bool {
        parking.withLock { parking in
            guard let sink = parking.sink, event.seq == parking.last + 1, sink.writeIfReady(event, frame) else {
                return false
            }
            parking.last = event.seq
            return true
        }
    }

    /// Writes a keep-alive comment to the parked stream's connection, if it takes it now.
    func writeIfParked(keepAlive comment: [UInt8]) -> Bool {
        parking.withLock { parking in
            guard let sink = parking.sink else { return false }
            return sink.writeIfReady(comment)
        }
    }

    /// Takes `bytes` if they fit, or if nothing is held (so that one event larger than the whole
    /// budget still gets through to a subscriber that keeps up).
    func charge(_ bytes: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while true {
            guard current == 0 || current + bytes <= limit else { return false }
            let (exchanged, original) = used.compareExchange(
                expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    func release(_ bytes: Int) {
        used.subtract(bytes, ordering: .relaxed)
    }
}

/// An event's encoded frame, made once by the first subscriber that writes it and shared by the
/// others (the hub knows nothing of the encoding: the stream passes it in).
package final class SharedFrame: Sendable {
    /// Bytes a frame adds to its event's JSON (`id:`, `event:`, `data:` and the line ends), about.
    static let overhead = 64
    private let bytes = Mutex<[UInt8]?>(nil)

    /// The frame, made with `encode` the first time it is asked for.
    package func bytes(_ encode: () -> [UInt8]) -> [UInt8] {
        bytes.withLock { frame in
            if let frame { return frame }
            let made = encode()
            frame = made
            return made
        }
    }
}
