import Foundation
import NavigationValues

/// What happened to a session: one case per event type of API.md (Events), named for what
/// happened, each with its typed payload. Every mutation appends exactly one.
///
/// Encoding and decoding sit side by side below, so the two cannot drift apart; a test
/// round-trips every case.
///
/// ```swift
/// let event = RecordedEvent(seq: 4, at: now, event: .screenPushed(screen))
/// event.json      // {"at": "…", "screen": {…}, "seq": 4, "type": "screen.pushed"}
/// ```
public enum SessionEvent: Sendable, Equatable {
    /// The first event: the root screen and the schema.
    case sessionCreated(root: ScreenResource, schema: JSONValue)
    case screenPushed(ScreenResource)
    /// The popped screens, topmost first.
    case screensPopped([ScreenID])
    /// Every screen above the root replaced in one step: the popped ones topmost first, then the pushed ones.
    case pathReplaced(popped: [ScreenID], pushed: [ScreenResource])
    /// Values set and removed on one screen, and every resolved value that changed because of it.
    case valuesUpdated(screen: ScreenID, set: [String: JSONValue], removed: [String], affected: [AffectedValue])
    case handlerSet(screen: ScreenID, key: String, passBack: Bool)
    case handlerRemoved(screen: ScreenID, key: String)
    /// A preference published on `screen`: who received what, and where the walk stopped (nil:
    /// past the root).
    case preferencePublished(
        screen: ScreenID, key: String, value: JSONValue, deliveries: [PreferenceDelivery], stoppedAt: ScreenID?)
    case sessionEnded

    /// The event types, as API.md names them.
    public enum Kind: String, Sendable, CaseIterable {
        case sessionCreated = "session.created"
        case screenPushed = "screen.pushed"
        case screensPopped = "screens.popped"
        case pathReplaced = "path.replaced"
        case valuesUpdated = "values.updated"
        case handlerSet = "handler.set"
        case handlerRemoved = "handler.removed"
        case preferencePublished = "preference.published"
        case sessionEnded = "session.ended"
    }

    /// This event's type.
    public var kind: Kind {
        switch self {
        case .sessionCreated: .sessionCreated
        case .screenPushed: .screenPushed
        case .screensPopped: .screensPopped
        case .pathReplaced: .pathReplaced
        case .valuesUpdated: .valuesUpdated
        case .handlerSet: .handlerSet
        case .handlerRemoved: .handlerRemoved
        case .preferencePublished: .preferencePublished
        case .sessionEnded: .sessionEnded
        }
    }

    /// The type of the snapshot event an SSE stream may start with (`?snapshot=1`). It is never
    /// stored and is not a `SessionEvent`: its data is the whole session.
    public static let snapshotType = "session.snapshot"
}

/// One resolved value that changed: on `screen`, `key` now reads `value` (API.md, `affected`).
public struct AffectedValue: Sendable, Equatable {
    public var screen: ScreenID
    public var key: String
    public var value: JSONValue

    public init(screen: ScreenID, key: String, value: JSONValue) {
        self.screen = screen
        self.key = key
        self.value = value
    }

    public var json: JSONValue { ["screen": .string(screen.rawValue), "key": .string(key), "value": value] }

    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        self.init(
            screen: try fields.screenID("screen"), key: try fields.string("key"), value: try fields.value("value"))
    }
}

/// One screen whose handler received a published preference, and the value it received.
public struct PreferenceDelivery: Sendable, Equatable {
    public var screen: ScreenID
    public var value: JSONValue

    public init(screen: ScreenID, value: JSONValue) {
        self.screen = screen
        self.value = value
    }

    public var json: JSONValue { ["screen": .string(screen.rawValue), "value": value] }

    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        self.init(screen: try fields.screenID("screen"), value: try fields.value("value"))
    }
}

/// An event as it is stored and sent: its `seq` (per session, from 1, equal to the session's
/// version after it), when it happened, and what happened.
public struct RecordedEvent: Sendable, Equatable {
    public var seq: Int64
    public var at: Date
    public var event: SessionEvent

    public init(seq: Int64, at: Date, event: SessionEvent) {
        self.seq = seq
        self.at = at
        self.event = event
    }

    /// `{"seq", "type", "at", …the event's fields}` (API.md, Events).
    public var json: JSONValue {
        var members = Self.fields(of: event)
        members["seq"] = .integer(seq)
        members["type"] = .string(event.kind.rawValue)
        members["at"] = .string(Timestamp.string(from: at))
        return .object(members)
    }

    /// The event as the stream of every session sends it: `json` with its `"session"`.
    public func json(taggedWith session: SessionID) -> JSONValue {
        guard case .object(var members) = json else { return json }
        members["session"] = .string(session.rawValue)
        return .object(members)
    }

    // MARK: - Encoding

    private static func fields(of event: SessionEvent) -> [String: JSONValue] {
        func ids(_ ids: [ScreenID]) -> JSONValue { .array(ids.map { .string($0.rawValue) }) }
        switch event {
        case .sessionCreated(let root, let schema):
            return ["root": root.json, "schema": schema]
        case .screenPushed(let screen):
            return ["screen": screen.json]
        case .screensPopped(let screens):
            return ["screens": ids(screens)]
        case .pathReplaced(let popped, let pushed):
            return ["popped": ids(popped), "pushed": .array(pushed.map(\.json))]
        case .valuesUpdated(let screen, let set, let removed, let affected):
            return [
                "screen": .string(screen.rawValue), "set": .object(set), "removed": .array(removed.map { .string($0) }),
                "affected": .array(affected.map(\.json)),
            ]
        case .handlerSet(let screen, let key, let passBack):
            return ["screen": .string(screen.rawValue), "key": .string(key), "passBack": .bool(passBack)]
        case .handlerRemoved(let screen, let key):
            return ["screen": .string(screen.rawValue), "key": .string(key)]
        case .preferencePublished(let screen, let key, let value, let deliveries, let stoppedAt):
            return [
                "screen": .string(screen.rawValue), "key": .string(key), "value": value,
                "deliveries": .array(deliveries.map(\.json)),
                "stoppedAt": stoppedAt.map { .string($0.rawValue) } ?? .null,
            ]
        case .sessionEnded:
            return [:]
        }
    }

    // MARK: - Decoding

    /// Decodes what `json` writes.
    ///
    /// - Throws: `WireDecodingError` for an unknown type or a missing or mistyped field.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try JSONObjectReader(json)
        let typeName = try fields.string("type")
        guard let kind = SessionEvent.Kind(rawValue: typeName) else {
            throw WireDecodingError(pointer: "/type", reason: "unknown event type '\(typeName)'")
        }
        self.init(seq: try fields.integer("seq"), at: try fields.date("at"), event: try Self.event(kind, fields))
    }

    /// Decodes stored JSON text.
    public init(text: String) throws(WireDecodingError) {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: text)
        } catch {
            throw WireDecodingError(pointer: "", reason: "invalid JSON: \(error)")
        }
        try self.init(json: json)
    }

    private static func event(_ kind: SessionEvent.Kind, _ fields: JSONObjectReader) throws(WireDecodingError)
        -> SessionEvent
    {
        func screen(_ name: String) throws(WireDecodingError) -> ScreenResource {
            try ScreenResource(json: try fields.value(name), pointer: fields.at(name))
        }
        switch kind {
        case .sessionCreated:
            return .sessionCreated(root: try screen("root"), schema: try fields.value("schema"))
        case .screenPushed:
            return .screenPushed(try screen("screen"))
        case .screensPopped:
            return .screensPopped(try fields.screenIDs("screens"))
        case .pathReplaced:
            return .pathReplaced(
                popped: try fields.screenIDs("popped"),
                pushed: try fields.list("pushed") { item, pointer throws(WireDecodingError) in
                    try ScreenResource(json: item, pointer: pointer)
                })
        case .valuesUpdated:
            return .valuesUpdated(
                screen: try fields.screenID("screen"), set: try fields.object("set"),
                removed: try fields.strings("removed"),
                affected: try fields.list("affected") { item, pointer throws(WireDecodingError) in
                    try AffectedValue(json: item, pointer: pointer)
                })
        case .handlerSet:
            return .handlerSet(
                screen: try fields.screenID("screen"), key: try fields.string("key"),
                passBack: try fields.bool("passBack"))
        case .handlerRemoved:
            return .handlerRemoved(screen: try fields.screenID("screen"), key: try fields.string("key"))
        case .preferencePublished:
            return .preferencePublished(
                screen: try fields.screenID("screen"), key: try fields.string("key"), value: try fields.value("value"),
                deliveries: try fields.list("deliveries") { item, pointer throws(WireDecodingError) in
                    try PreferenceDelivery(json: item, pointer: pointer)
                },
                stoppedAt: try fields.optionalScreenID("stoppedAt"))
        case .sessionEnded:
            return .sessionEnded
        }
    }
}
