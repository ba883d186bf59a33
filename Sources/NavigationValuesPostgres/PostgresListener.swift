import Foundation
import NavigationValuesStore
import NavigationValuesWire
import Synchronization

/// A connection of its own that `LISTEN`s for other instances' commits, on a thread of its own
/// (it blocks in `poll`), reconnecting by itself when the connection is lost.
///
/// Notifications carry lines of `INSTANCE SESSION SEQ` (and, for a purge, the event's JSON);
/// this instance's own are skipped. After a reconnection it yields ``CommitNotice/mayHaveMissed``:
/// notifications sent while it was away are lost, so readers re-read what they follow.
final class PostgresListener: Sendable {
    /// The other instances' commits, as they arrive; finishes when the listener stops.
    let notices: AsyncStream<CommitNotice>
    private let continuation: AsyncStream<CommitNotice>.Continuation
    private let isStopped = Atomic<Bool>(false)
    private let finished = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    /// Whether the listening connection is up now.
    private let connected = Atomic<Bool>(false)

    init(url: String, channel: String, instance: String, timeout: Duration) {
        (notices, continuation) = AsyncStream.makeStream(of: CommitNotice.self, bufferingPolicy: .unbounded)
        let thread = Thread { [self] in
            run(url: url, channel: channel, instance: instance, timeout: timeout)
        }
        thread.name = "NavigationValuesStore.postgres.listener"
        thread.start()
    }

    /// Whether the listening connection is up.
    var isListening: Bool { connected.load(ordering: .relaxed) }

    private func run(url: String, channel: String, instance: String, timeout: Duration) {
        var connection: PostgresConnection?
        var wasConnected = false
        var retryDelay = Duration.milliseconds(100)
        while !isStopped.load(ordering: .relaxed) {
            if connection == nil {
                do {
                    let fresh = try PostgresConnection(url: url, timeout: timeout)
                    try fresh.query("LISTEN \(channel)")
                    connection = fresh
                    connected.store(true, ordering: .relaxed)
                    retryDelay = .milliseconds(100)
                    if wasConnected { continuation.yield(.mayHaveMissed) }
                    wasConnected = true
                } catch {
                    pause(retryDelay)
                    retryDelay = min(retryDelay * 2, .seconds(2))
                    continue
                }
            }
            guard let listening = connection else { continue }
            do {
                for notification in try listening.notifications(waitingUpTo: .milliseconds(250))
                where notification.channel == channel {
                    for line in notification.payload.split(separator: "\n") {
                        if let notice = Self.notice(String(line), skipping: instance) { continuation.yield(notice) }
                    }
                }
            } catch {
                connection = nil
                connected.store(false, ordering: .relaxed)
            }
        }
        connection = nil
        connected.store(false, ordering: .relaxed)
        continuation.finish()
        let waiters = finished.withLock { state in
            state.done = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits `delay` (a reconnection back-off), returning early once stopped.
    private func pause(_ delay: Duration) {
        let deadline = ContinuousClock.now + delay
        while ContinuousClock.now < deadline, !isStopped.load(ordering: .relaxed) {
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Parses `INSTANCE SESSION SEQ [JSON]`; nil for this instance's own or a malformed payload.
    static func notice(_ payload: String, skipping instance: String) -> CommitNotice? {
        let parts = payload.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0] != instance, let seq = Int64(parts[2]) else { return nil }
        let session = SessionID(String(parts[1]))
        var purge: StoredEvent?
        if parts.count == 4 {
            purge = StoredEvent(
                session: session, seq: seq, type: "session.ended", json: String(parts[3]), at: Date())
        }
        return .committed(session: session, seq: seq, purge: purge)
    }

    /// Stops listening and waits for the thread to end.
    func stop() async {
        isStopped.store(true, ordering: .relaxed)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = finished.withLock { state in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }
}
