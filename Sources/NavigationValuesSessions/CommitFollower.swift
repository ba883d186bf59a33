import Foundation
import NavigationValuesStore
import NavigationValuesWire

/// Follows the commits other instances make on a shared store (PostgreSQL's `LISTEN/NOTIFY`):
/// each notice carries `(session, seq)`; a loaded copy behind it is dropped, and when someone
/// here follows that session, the event is read from the store (the table carries the data) and
/// handed to the event hub. Subscribers fill any gap from the store themselves, so a notice that
/// is late or lost never makes a stream skip an event.
///
/// ```swift
/// let follower = CommitFollower(store: store, service: service, hub: hub)
/// // …
/// follower.stop()
/// ```
package final class CommitFollower: Sendable {
    private let task: Task<Void, Never>

    /// Starts following `store`'s notices (nothing to follow when the store is not shared).
    package init(store: any SessionStore, service: SessionService, hub: EventHub) {
        let notices = store.commitNotices()
        task = Task {
            for await notice in notices {
                switch notice {
                case .mayHaveMissed:
                    hub.resync(nil)
                case .committed(let session, let seq, let purge):
                    await service.sessions.sessionMovedOn(session, to: seq)
                    guard hub.hasSubscribers(for: session) else { continue }
                    do {
                        let stored: StoredEvent? =
                            if let purge { purge } else {
                                try await store.events(of: session, after: seq - 1, limit: 1).first
                            }
                        guard let stored, stored.seq == seq else {
                            // Purged meanwhile, or not visible yet: the subscribers look for themselves.
                            hub.resync(session)
                            continue
                        }
                        hub.publishFromAnotherInstance(stored, try RecordedEvent(text: stored.json))
                    } catch {
                        // The store cannot be read now: the session's subscribers re-read it themselves.
                        hub.resync(session)
                    }
                }
            }
        }
    }

    /// Stops following.
    package func stop() {
        task.cancel()
    }
}
