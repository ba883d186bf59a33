import Foundation
import NavigationValues

/// An event as a client reads it from a server that may be newer than the client: one of the types
/// it knows, decoded, or one added since, kept as JSON with its `seq` so that nothing is skipped
/// silently (decoding is additive: unknown members are ignored, unknown types are kept).
///
/// ```swift
/// switch try ReceivedEvent(json: item) {
/// case .event(let recorded): print(recorded.seq, recorded.event.kind)
/// case .unrecognized(let other): print(other.seq, other.type)   // resynchronise from a snapshot
/// }
/// ```
public enum ReceivedEvent: Sendable, Equatable {
    case event(RecordedEvent)
    case unrecognized(UnrecognizedEvent)

    /// The event's `seq`.
    public var seq: Int64 {
        switch self {
        case .event(let event): event.seq
        case .unrecognized(let event): event.seq
        }
    }

    /// The event as JSON: what `init(json:)` decodes.
    public var json: JSONValue {
        switch self {
        case .event(let event): event.json
        case .unrecognized(let event): event.json
        }
    }

    /// Decodes one event: a known type as `RecordedEvent`, any other type as `UnrecognizedEvent`.
    ///
    /// - Throws: `WireDecodingError` when `type` or `seq` is missing, or a known type is malformed.
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        let type = try fields.string("type")
        guard SessionEvent.Kind(rawValue: type) != nil else {
            self = .unrecognized(UnrecognizedEvent(seq: try fields.integer("seq"), type: type, json: json))
            return
        }
        do {
            self = .event(try RecordedEvent(json: json))
        } catch {
            throw WireDecodingError(pointer: pointer + error.pointer, reason: error.reason)
        }
    }
}

/// An event of a type this build does not know (added to the API after it): its `seq`, its
/// `type` and all of its JSON.
public struct UnrecognizedEvent: Sendable, Equatable {
    /// The event's seq.
    public var seq: Int64
    /// The event's type, as the server names it.
    public var type: String
    /// The whole event, `seq` and `type` included.
    public var json: JSONValue

    /// An event with its seq, type and JSON.
    public init(seq: Int64, type: String, json: JSONValue) {
        self.seq = seq
        self.type = type
        self.json = json
    }
}

/// What the JSON long poll answers (`GET /v1/sessions/{id}/events?after=N&wait=S`):
/// `{"events": [...], "last": N}`, `last` being the seq to ask after next.
public struct EventPage: Sendable, Equatable {
    /// The events, in seq order.
    public var events: [ReceivedEvent]
    /// The seq of the last event in the page, or the `after` asked for when it is empty.
    public var last: Int64

    /// A page with its events and its last seq.
    public init(events: [ReceivedEvent], last: Int64) {
        self.events = events
        self.last = last
    }

    /// The page as JSON.
    public var json: JSONValue { ["events": .array(events.map(\.json)), "last": .integer(last)] }

    /// Decodes what `json` writes (unknown members are ignored).
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try JSONObjectReader(json)
        self.init(
            events: try fields.list("events") { item, pointer throws(WireDecodingError) in
                try ReceivedEvent(json: item, pointer: pointer)
            },
            last: try fields.integer("last"))
    }
}

/// A page of a session's history (`GET /v1/sessions/{id}/history?after=N&limit=L`):
/// `{"events": [...], "next": N or null}`.
public struct HistoryPage: Sendable, Equatable {
    /// The events, in seq order.
    public var events: [ReceivedEvent]
    /// The `after` to ask for the next page; nil on the last page.
    public var next: Int64?

    /// A page with its events and the next page's cursor.
    public init(events: [ReceivedEvent], next: Int64?) {
        self.events = events
        self.next = next
    }

    /// The page as JSON.
    public var json: JSONValue { ["events": .array(events.map(\.json)), "next": next.map { .integer($0) } ?? .null] }

    /// Decodes what `json` writes (unknown members are ignored).
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try JSONObjectReader(json)
        var next: Int64?
        if try fields.value("next") != .null { next = try fields.integer("next") }
        self.init(
            events: try fields.list("events") { item, pointer throws(WireDecodingError) in
                try ReceivedEvent(json: item, pointer: pointer)
            },
            next: next)
    }
}
