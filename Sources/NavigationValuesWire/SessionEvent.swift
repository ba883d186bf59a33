import Foundation
import NavigationValues

/// What happened to a session: one case per event type of docs/API.md (Events), named for what
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

    // MARK: Several stacks (docs/Stacks.md). A change that touches only the main stack keeps the
    // types above; one that touches another stack has a type of its own.

    /// A tab added, with its root.
    case stackCreated(StackResource)
    /// The main stack or a tab selected.
    case stackSelected(StackID)
    /// A tab removed: its screens (topmost first), the presentations dismissed with them
    /// (innermost first), and the stack selected after it.
    case stackRemoved(stack: StackID, screens: [ScreenID], dismissed: [StackID], selected: StackID)
    /// A stack presented by a screen (its `presenter`), with its root.
    case stackPresented(StackResource)
    /// A presentation dismissed: its screens (topmost first) and the presentations inside it.
    case stackDismissed(stack: StackID, screens: [ScreenID], dismissed: [StackID])
    /// A screen pushed onto a stack other than the main one.
    case stackScreenPushed(stack: StackID, screen: ScreenResource)
    /// Screens popped from a stack, topmost first, with the presentations dismissed because a popped
    /// screen presented them (on the main stack only when there were such presentations).
    case stackScreensPopped(stack: StackID, screens: [ScreenID], dismissed: [StackID])
    /// Every screen above a stack's root replaced in one step (`path.replaced` for another stack, or
    /// for the main one when presentations were dismissed).
    case stackPathReplaced(stack: StackID, popped: [ScreenID], pushed: [ScreenResource], dismissed: [StackID])
    /// A tab moved to `position` among the tabs (0: the first one after the main stack).
    case stackMoved(stack: StackID, position: Int)
    /// Every screen above `screen` in its stack replaced; `screen` keeps its id, values and handlers.
    case screensReplaced(
        stack: StackID, screen: ScreenID, popped: [ScreenID], pushed: [ScreenResource], dismissed: [StackID])
    /// A preference published on `screen`, which was then popped (or, the root of a presentation,
    /// dismissed it): the walk as `preferencePublished` has it, and what left `stack`.
    case screenReturned(
        screen: ScreenID, key: String, value: JSONValue, deliveries: [PreferenceDelivery], stoppedAt: ScreenID?,
        stack: StackID, popped: [ScreenID], dismissed: [StackID])
    /// Several changes applied all-or-nothing as one event (one version step), in order.
    case batchApplied([SessionEvent])

    /// The event types, as docs/API.md names them.
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
        case stackCreated = "stack.created"
        case stackSelected = "stack.selected"
        case stackRemoved = "stack.removed"
        case stackPresented = "stack.presented"
        case stackDismissed = "stack.dismissed"
        case stackScreenPushed = "stack.screen.pushed"
        case stackScreensPopped = "stack.screens.popped"
        case stackPathReplaced = "stack.path.replaced"
        case stackMoved = "stack.moved"
        case screensReplaced = "screens.replaced"
        case screenReturned = "screen.returned"
        case batchApplied = "batch.applied"
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
        case .stackCreated: .stackCreated
        case .stackSelected: .stackSelected
        case .stackRemoved: .stackRemoved
        case .stackPresented: .stackPresented
        case .stackDismissed: .stackDismissed
        case .stackScreenPushed: .stackScreenPushed
        case .stackScreensPopped: .stackScreensPopped
        case .stackPathReplaced: .stackPathReplaced
        case .stackMoved: .stackMoved
        case .screensReplaced: .screensReplaced
        case .screenReturned: .screenReturned
        case .batchApplied: .batchApplied
        }
    }

    /// The type of the snapshot event an SSE stream may start with (`?snapshot=1`). It is never
    /// stored and is not a `SessionEvent`: its data is the whole session.
    public static let snapshotType = "session.snapshot"
}

// MARK: - Changes of a stack's screens

extension SessionEvent {
    /// Whether a change of `stack`'s screens keeps docs/API.md's types (`screen.pushed`,
    /// `screens.popped`, `path.replaced`): only when it touches the main stack alone, dismissing no
    /// presentation, so that a client that knows only those types keeps an exact picture of the
    /// main stack (docs/Stacks.md, Events). Any other change of a stack's screens has the type that
    /// names its stack. The three constructors below are the only places that choose.
    private static func keepsAPITypes(_ stack: StackID, dismissed: [StackID]) -> Bool {
        stack == .main && dismissed.isEmpty
    }

    /// A screen pushed onto `stack`: `screen.pushed` on the main stack, `stack.screen.pushed` on another.
    package static func pushed(_ screen: ScreenResource, onto stack: StackID) -> SessionEvent {
        keepsAPITypes(stack, dismissed: [])
            ? .screenPushed(screen) : .stackScreenPushed(stack: stack, screen: screen)
    }

    /// Screens popped from `stack`, topmost first, with the presentations dismissed because of them:
    /// `screens.popped` or `stack.screens.popped`.
    package static func popped(_ screens: [ScreenID], from stack: StackID, dismissed: [StackID]) -> SessionEvent {
        keepsAPITypes(stack, dismissed: dismissed)
            ? .screensPopped(screens) : .stackScreensPopped(stack: stack, screens: screens, dismissed: dismissed)
    }

    /// Every screen above `stack`'s root replaced: `path.replaced` or `stack.path.replaced`.
    package static func replacedPath(
        of stack: StackID, popped: [ScreenID], pushed: [ScreenResource], dismissed: [StackID]
    ) -> SessionEvent {
        keepsAPITypes(stack, dismissed: dismissed)
            ? .pathReplaced(popped: popped, pushed: pushed)
            : .stackPathReplaced(stack: stack, popped: popped, pushed: pushed, dismissed: dismissed)
    }
}

extension SessionEvent {
    /// A publish from `screen` (its walk: `deliveries`, `stoppedAt`), then `removal`, the core's
    /// dismissal of that screen (`ScreenTree.dismiss(screen:)`): what left its stack, and the
    /// presentations dismissed with it, the screen's own presentation last when it was its root.
    package static func returned(
        _ screen: ScreenID, key: String, value: JSONValue, deliveries: [PreferenceDelivery], stoppedAt: ScreenID?,
        removal: TreeRemoval
    ) -> SessionEvent {
        .screenReturned(
            screen: screen, key: key, value: value, deliveries: deliveries, stoppedAt: stoppedAt,
            stack: removal.stack, popped: removal.screens,
            dismissed: removal.dismissed + (removal.isStackRemoved ? [removal.stack] : []))
    }
}

/// One resolved value that changed: on `screen`, `key` now reads `value` (docs/API.md, `affected`).
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

    /// `{"seq", "type", "at", …the event's fields}` (docs/API.md, Events).
    public var json: JSONValue {
        var members = Self.fields(of: event)
        // Room for the three below at once: one resize of the event's fields, not one per member.
        members.reserveCapacity(members.count + 3)
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

    static func fields(of event: SessionEvent) -> [String: JSONValue] {
        func ids(_ ids: [ScreenID]) -> JSONValue { .array(ids.map { .string($0.rawValue) }) }
        func stacks(_ ids: [StackID]) -> JSONValue { .array(ids.map { .string($0.rawValue) }) }
        func id(_ id: StackID) -> JSONValue { .string(id.rawValue) }
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
        case .stackCreated(let stack), .stackPresented(let stack):
            return ["stack": stack.json]
        case .stackSelected(let stack):
            return ["stack": id(stack)]
        case .stackRemoved(let stack, let screens, let dismissed, let selected):
            return [
                "stack": id(stack), "screens": ids(screens), "dismissed": stacks(dismissed), "selected": id(selected),
            ]
        case .stackDismissed(let stack, let screens, let dismissed),
            .stackScreensPopped(let stack, let screens, let dismissed):
            return ["stack": id(stack), "screens": ids(screens), "dismissed": stacks(dismissed)]
        case .stackScreenPushed(let stack, let screen):
            return ["stack": id(stack), "screen": screen.json]
        case .stackPathReplaced(let stack, let popped, let pushed, let dismissed):
            return [
                "stack": id(stack), "popped": ids(popped), "pushed": .array(pushed.map(\.json)),
                "dismissed": stacks(dismissed),
            ]
        case .stackMoved(let stack, let position):
            return ["stack": id(stack), "position": .integer(Int64(position))]
        case .screensReplaced(let stack, let screen, let popped, let pushed, let dismissed):
            return [
                "stack": id(stack), "screen": .string(screen.rawValue), "popped": ids(popped),
                "pushed": .array(pushed.map(\.json)), "dismissed": stacks(dismissed),
            ]
        case .screenReturned(
            let screen, let key, let value, let deliveries, let stoppedAt, let stack, let popped, let dismissed):
            return [
                "screen": .string(screen.rawValue), "key": .string(key), "value": value,
                "deliveries": .array(deliveries.map(\.json)),
                "stoppedAt": stoppedAt.map { .string($0.rawValue) } ?? .null, "stack": id(stack),
                "popped": ids(popped), "dismissed": stacks(dismissed),
            ]
        case .batchApplied(let events):
            return ["events": .array(events.map(\.json))]
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

    static func event(_ kind: SessionEvent.Kind, _ fields: JSONObjectReader) throws(WireDecodingError)
        -> SessionEvent
    {
        func screen(_ name: String) throws(WireDecodingError) -> ScreenResource {
            try ScreenResource(json: try fields.value(name), pointer: fields.at(name))
        }
        func screens(_ name: String) throws(WireDecodingError) -> [ScreenResource] {
            try fields.list(name) { item, pointer throws(WireDecodingError) in
                try ScreenResource(json: item, pointer: pointer)
            }
        }
        func stack(_ name: String) throws(WireDecodingError) -> StackResource {
            try StackResource(json: try fields.value(name), pointer: fields.at(name))
        }
        func deliveries() throws(WireDecodingError) -> [PreferenceDelivery] {
            try fields.list("deliveries") { item, pointer throws(WireDecodingError) in
                try PreferenceDelivery(json: item, pointer: pointer)
            }
        }
        switch kind {
        case .sessionCreated:
            return .sessionCreated(root: try screen("root"), schema: try fields.value("schema"))
        case .screenPushed:
            return .screenPushed(try screen("screen"))
        case .screensPopped:
            return .screensPopped(try fields.screenIDs("screens"))
        case .pathReplaced:
            return .pathReplaced(popped: try fields.screenIDs("popped"), pushed: try screens("pushed"))
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
                deliveries: try deliveries(), stoppedAt: try fields.optionalScreenID("stoppedAt"))
        case .sessionEnded:
            return .sessionEnded
        case .stackCreated:
            return .stackCreated(try stack("stack"))
        case .stackSelected:
            return .stackSelected(try fields.stackID("stack"))
        case .stackRemoved:
            return .stackRemoved(
                stack: try fields.stackID("stack"), screens: try fields.screenIDs("screens"),
                dismissed: try fields.stackIDs("dismissed"), selected: try fields.stackID("selected"))
        case .stackPresented:
            return .stackPresented(try stack("stack"))
        case .stackDismissed:
            return .stackDismissed(
                stack: try fields.stackID("stack"), screens: try fields.screenIDs("screens"),
                dismissed: try fields.stackIDs("dismissed"))
        case .stackScreenPushed:
            return .stackScreenPushed(stack: try fields.stackID("stack"), screen: try screen("screen"))
        case .stackScreensPopped:
            return .stackScreensPopped(
                stack: try fields.stackID("stack"), screens: try fields.screenIDs("screens"),
                dismissed: try fields.stackIDs("dismissed"))
        case .stackPathReplaced:
            return .stackPathReplaced(
                stack: try fields.stackID("stack"), popped: try fields.screenIDs("popped"),
                pushed: try screens("pushed"), dismissed: try fields.stackIDs("dismissed"))
        case .stackMoved:
            return .stackMoved(stack: try fields.stackID("stack"), position: try fields.position("position"))
        case .screensReplaced:
            return .screensReplaced(
                stack: try fields.stackID("stack"), screen: try fields.screenID("screen"),
                popped: try fields.screenIDs("popped"), pushed: try screens("pushed"),
                dismissed: try fields.stackIDs("dismissed"))
        case .screenReturned:
            return .screenReturned(
                screen: try fields.screenID("screen"), key: try fields.string("key"), value: try fields.value("value"),
                deliveries: try deliveries(), stoppedAt: try fields.optionalScreenID("stoppedAt"),
                stack: try fields.stackID("stack"), popped: try fields.screenIDs("popped"),
                dismissed: try fields.stackIDs("dismissed"))
        case .batchApplied:
            return .batchApplied(
                try fields.list("events") { item, pointer throws(WireDecodingError) in
                    try batchedEvent(item, pointer: pointer)
                })
        }
    }

    /// One event of a batch: `{"type", …its fields}`, never a batch, a creation or an end.
    private static func batchedEvent(_ json: JSONValue, pointer: String) throws(WireDecodingError) -> SessionEvent {
        let fields = try JSONObjectReader(json, at: pointer)
        let typeName = try fields.string("type")
        guard let kind = SessionEvent.Kind(rawValue: typeName) else {
            throw WireDecodingError(pointer: fields.at("type"), reason: "unknown event type '\(typeName)'")
        }
        guard kind != .batchApplied, kind != .sessionCreated, kind != .sessionEnded else {
            throw WireDecodingError(pointer: fields.at("type"), reason: "a batch cannot hold a '\(typeName)' event")
        }
        return try event(kind, fields)
    }
}

extension SessionEvent {
    /// The event as a batch holds it: its type and its fields, without `seq` and `at`.
    public var json: JSONValue {
        var members = RecordedEvent.fields(of: self)
        members["type"] = .string(kind.rawValue)
        return .object(members)
    }
}
