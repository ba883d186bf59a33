import Foundation
import NavigationValues
import NavigationValuesWire

/// What a session's event stream delivers.
public enum SessionStreamItem: Sendable, Equatable {
    /// The whole session at `version` (only first, and only when the stream was asked to start
    /// with a snapshot).
    case snapshot(SessionResource)
    /// An event.
    case event(RecordedEvent)
    /// An event of a type added to the API after this client was built: skip it, or start again
    /// from a snapshot (as `RemoteStack` does).
    case unrecognized(UnrecognizedEvent)

    /// The snapshot's version, or the event's `seq`.
    public var seq: Int64 {
        switch self {
        case .snapshot(let session): session.version
        case .event(let event): event.seq
        case .unrecognized(let event): event.seq
        }
    }
}

/// How event streams reconnect and how much they hold.
public struct StreamOptions: Sendable {
    /// No byte for this long (the server sends a keep-alive comment every 15 s) means the
    /// connection is dead: it is dropped and the stream reconnects.
    public var idleTimeout: Duration = .seconds(45)
    /// The wait before the first reconnection; it doubles after each failed one.
    public var initialReconnectDelay: Duration = .milliseconds(50)
    /// The longest wait between reconnections.
    public var maxReconnectDelay: Duration = .seconds(5)
    /// Reconnections in a row without an event after which the stream throws the last failure
    /// (`RemoteError.connectionFailed` or `.unavailable`); nil: keep trying until cancelled.
    public var maxConsecutiveFailures: Int?
    /// Unread bytes a stream may hold; past that its connection is cut and it resumes from the
    /// last event read, so a slow reader costs bounded memory.
    public var maxBufferedBytes = 4 << 20
    /// Told before each reconnection (for logs and metrics).
    public var onReconnect: (@Sendable (ReconnectNotice) -> Void)?

    /// The defaults: 45 s of silence, reconnections from 50 ms doubling to 5 s, forever, 4 MiB.
    public init() {}
}

/// A stream about to reconnect: from where, and why.
public struct ReconnectNotice: Sendable {
    /// The `Last-Event-ID` it resumes after (nil: it had none yet).
    public var after: Int64?
    /// Failed connections in a row so far, from 1.
    public var consecutiveFailures: Int
    /// Why: the connection ended or failed, or the server answered this status.
    public var reason: String
    /// How long it waits first.
    public var delay: Duration
}

/// A session's events (`GET /v1/sessions/{id}/events`, server-sent events) as an `AsyncSequence`
/// that reconnects by itself and resumes with `Last-Event-ID`: in order, none twice, none missing.
/// Made by `RemoteSession.events(after:snapshot:)`; each iteration opens its own connection.
public struct SessionEventStream: AsyncSequence, Sendable {
    /// What the stream delivers.
    public typealias Element = SessionStreamItem

    let session: RemoteSession
    let after: Int64?
    let snapshot: Bool

    /// A new reader, with a connection of its own.
    public func makeAsyncIterator() -> Iterator {
        Iterator(reader: EventStreamReader(source: .session(session), after: after, snapshot: snapshot))
    }

    /// Reads the stream; cancelling the reading task closes its connection.
    public struct Iterator: AsyncIteratorProtocol {
        let reader: EventStreamReader

        /// The next item; nil after `session.ended`.
        ///
        /// - Throws: `RemoteError` (see `RemoteSession.events(after:snapshot:)`), `CancellationError`.
        public mutating func next() async throws -> SessionStreamItem? {
            try await reader.nextItem()
        }

        /// The next item, read on the caller's actor: what `for try await` calls (SE-0421), so a loop
        /// on the main actor reads and decodes every event there instead of hopping to the global
        /// executor and back for each one.
        ///
        /// - Throws: as `next()`.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> SessionStreamItem? {
            try await reader.nextItem(isolation: actor)
        }
    }
}

/// One event of the stream of every session (`GET /v1/events`): the session and its event.
public struct TaggedEvent: Sendable, Equatable {
    /// The session the event belongs to.
    public var session: SessionID
    /// The event.
    public var event: ReceivedEvent
}

/// Every session's events as they happen (`GET /v1/events`, admin); reconnects by itself, but
/// cannot resume (see `NavigationValuesClient.allEvents()`).
public struct AllSessionsEventStream: AsyncSequence, Sendable {
    /// What the stream delivers.
    public typealias Element = TaggedEvent

    let transport: HTTPTransport

    /// A new reader, with a connection of its own.
    public func makeAsyncIterator() -> Iterator {
        Iterator(reader: EventStreamReader(source: .allSessions(transport), after: nil, snapshot: false))
    }

    /// Reads the stream; cancelling the reading task closes its connection.
    public struct Iterator: AsyncIteratorProtocol {
        let reader: EventStreamReader

        /// The next event.
        public mutating func next() async throws -> TaggedEvent? {
            while let item = try await reader.nextFrame() {
                if let tagged = try reader.tagged(item) { return tagged }
            }
            return nil
        }

        /// The next event, read on the caller's actor (what `for try await` calls, SE-0421).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> TaggedEvent? {
            while let item = try await reader.nextFrame(isolation: actor) {
                if let tagged = try reader.tagged(item) { return tagged }
            }
            return nil
        }
    }
}
