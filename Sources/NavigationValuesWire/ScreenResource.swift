import NavigationValues

/// A screen as the API shows it (docs/API.md, Resources: SCREEN), root first by `index`.
///
/// ```json
/// {"id": "c_…", "index": 0, "name": "Home", "role": "screen", "previous": null, "next": "c_…",
///  "values": {"title": "x"}, "resolved": {"title": "x", "counter": 0},
///  "preferences": {"selectedItem": "chosen"}, "handlers": {"selectedItem": {"passBack": true}}}
/// ```
public struct ScreenResource: Sendable, Equatable {
    public var id: ScreenID
    /// Position in the stack, 0 for the root.
    public var index: Int
    public var name: String
    public var role: ScreenContextRole
    public var previous: ScreenID?
    public var next: ScreenID?
    /// This screen's own overrides.
    public var values: [String: JSONValue]
    /// What every declared key, and every key set on this screen or an earlier one, reads as here.
    public var resolved: [String: JSONValue]
    /// The last value this screen's handler received, per key.
    public var preferences: [String: JSONValue]
    public var handlers: [String: HandlerResource]

    public init(
        id: ScreenID, index: Int, name: String, role: ScreenContextRole = .screen, previous: ScreenID?,
        next: ScreenID?, values: [String: JSONValue] = [:], resolved: [String: JSONValue] = [:],
        preferences: [String: JSONValue] = [:], handlers: [String: HandlerResource] = [:]
    ) {
        self.id = id
        self.index = index
        self.name = name
        self.role = role
        self.previous = previous
        self.next = next
        self.values = values
        self.resolved = resolved
        self.preferences = preferences
        self.handlers = handlers
    }

    /// The screen as JSON.
    public var json: JSONValue {
        [
            "id": .string(id.rawValue),
            "index": .integer(Int64(index)),
            "name": .string(name),
            "role": .string(role.rawValue),
            "previous": previous.map { .string($0.rawValue) } ?? .null,
            "next": next.map { .string($0.rawValue) } ?? .null,
            "values": .object(values),
            "resolved": .object(resolved),
            "preferences": .object(preferences),
            "handlers": .object(handlers.mapValues(\.json)),
        ]
    }

    /// Decodes what `json` writes.
    ///
    /// - Throws: `WireDecodingError` naming the first member that is missing or mistyped.
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        let roleName = try fields.string("role")
        guard let role = ScreenContextRole(rawValue: roleName) else {
            throw WireDecodingError(pointer: fields.at("role"), reason: "expected screen or navigationStack")
        }
        let index = try fields.integer("index")
        guard index >= 0, index < Int64(Int32.max) else {
            throw WireDecodingError(pointer: fields.at("index"), reason: "expected a position in the stack")
        }
        var handlers: [String: HandlerResource] = [:]
        for (key, value) in try fields.object("handlers") {
            handlers[key] = try HandlerResource(
                json: value, pointer: fields.at("handlers") + "/" + JSONPointer.escaped(key))
        }
        self.init(
            id: try fields.screenID("id"), index: Int(index), name: try fields.string("name"), role: role,
            previous: try fields.optionalScreenID("previous"), next: try fields.optionalScreenID("next"),
            values: try fields.object("values"), resolved: try fields.object("resolved"),
            preferences: try fields.object("preferences"), handlers: handlers)
    }
}

/// A screen's handler for one preference key: whether it passes values back, and (in snapshots
/// only) its memory of the last delivery (docs/SEMANTICS.md §3, change detection).
public struct HandlerResource: Sendable, Equatable {
    public var passBack: Bool
    /// What the handler last received and decided; nil when it has received nothing, and in
    /// every answer but a snapshot's.
    public var memory: HandlerMemory?

    public init(passBack: Bool, memory: HandlerMemory? = nil) {
        self.passBack = passBack
        self.memory = memory
    }

    /// `{"passBack": true}`, plus `lastReceived`, `lastDecision` (`passed` or `stopped`) and
    /// `lastPassed` when it carries memory.
    public var json: JSONValue {
        var fields: [String: JSONValue] = ["passBack": .bool(passBack)]
        if let memory {
            fields["lastReceived"] = memory.received
            switch memory.decision {
            case .passedBack(let passed):
                fields["lastDecision"] = "passed"
                fields["lastPassed"] = passed
            case .stopped:
                fields["lastDecision"] = "stopped"
            }
        }
        return .object(fields)
    }

    /// Decodes what `json` writes.
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        var memory: HandlerMemory?
        if let received = fields.members["lastReceived"] {
            switch try fields.string("lastDecision") {
            case "passed":
                memory = HandlerMemory(received: received, decision: .passedBack(try fields.value("lastPassed")))
            case "stopped": memory = HandlerMemory(received: received, decision: .stopped)
            default: throw WireDecodingError(pointer: fields.at("lastDecision"), reason: "expected passed or stopped")
            }
        }
        self.init(passBack: try fields.bool("passBack"), memory: memory)
    }
}

/// What a handler last received and what it did with it.
public struct HandlerMemory: Sendable, Equatable {
    public var received: JSONValue
    public var decision: PreferenceDecision

    public init(received: JSONValue, decision: PreferenceDecision) {
        self.received = received
        self.decision = decision
    }
}
