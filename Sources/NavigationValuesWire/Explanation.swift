import NavigationValues

// Why a screen reads what it reads (`?explain=1`): for each resolved value, the screen whose own
// value it is (or the schema's default); for each received preference, the walk that delivered
// it. The core computes both with the code that resolves values and walks preferences
// (`ScreenContext.resolvedNamedValueSources`, `preferenceArrival(named:)`); these shapes only
// carry them.

/// A screen's explanation: the `explanation` member of a SCREEN read with `?explain=1`.
///
/// ```json
/// {"values": {"title": {"source": "screen", "screen": "c_…", "stack": "main"},
///             "counter": {"source": "default"}},
///  "preferences": {"selection": {"publisher": "c_…", "index": 1, "hops": [HOP, …]}}}
/// ```
public struct ScreenExplanation: Sendable, Equatable {
    /// Every key of the screen's `resolved`, with where its value comes from.
    public var values: [String: ValueOrigin]
    /// Every key of the screen's `preferences`, with the walk that delivered it; nil when the
    /// server did not see that walk (the value was loaded from storage: after a restart, on another
    /// instance, or from a snapshot a replay started at).
    public var preferences: [String: PreferenceArrivalResource?]

    public init(values: [String: ValueOrigin] = [:], preferences: [String: PreferenceArrivalResource?] = [:]) {
        self.values = values
        self.preferences = preferences
    }

    public var json: JSONValue {
        [
            "values": .object(values.mapValues(\.json)),
            "preferences": .object(preferences.mapValues { $0?.json ?? .null }),
        ]
    }

    /// Decodes what `json` writes.
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        var values: [String: ValueOrigin] = [:]
        for (key, value) in try fields.object("values") {
            values[key] = try ValueOrigin(json: value, pointer: fields.at("values") + "/" + JSONPointer.escaped(key))
        }
        var preferences: [String: PreferenceArrivalResource?] = [:]
        for (key, value) in try fields.object("preferences") {
            let here = fields.at("preferences") + "/" + JSONPointer.escaped(key)
            if value == .null {
                preferences[key] = .some(nil)
            } else {
                preferences[key] = try PreferenceArrivalResource(json: value, pointer: here)
            }
        }
        self.init(values: values, preferences: preferences)
    }
}

/// Where a resolved value comes from: a screen's own value (this screen's, or one along its
/// `previous` chain, across presentations to the presenter), or the schema's default.
public enum ValueOrigin: Sendable, Equatable {
    /// The own value of `screen`, of the stack `stack`.
    case screen(ScreenID, stack: StackID)
    /// No screen of the chain has its own value: the schema's default.
    case schemaDefault

    /// `{"source": "screen", "screen": "c_…", "stack": "main"}` or `{"source": "default"}`.
    public var json: JSONValue {
        switch self {
        case .screen(let screen, let stack):
            ["source": "screen", "screen": .string(screen.rawValue), "stack": .string(stack.rawValue)]
        case .schemaDefault: ["source": "default"]
        }
    }

    /// Decodes what `json` writes.
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        switch try fields.string("source") {
        case "screen": self = .screen(try fields.screenID("screen"), stack: StackID(try fields.string("stack")))
        case "default": self = .schemaDefault
        default: throw WireDecodingError(pointer: fields.at("source"), reason: "expected screen or default")
        }
    }
}

/// The walk that delivered a screen's last received value of a key (SEMANTICS.md §3): every screen
/// it visited from the publisher on, and this screen's place among them (`index`).
public struct PreferenceArrivalResource: Sendable, Equatable {
    /// The whole walk, the publisher first; it goes on past `index` when this screen passed the value on.
    public var hops: [PreferenceHopResource]
    /// This screen's hop in `hops`.
    public var index: Int

    public init(hops: [PreferenceHopResource], index: Int) {
        self.hops = hops
        self.index = index
    }

    /// The screen that published, nil when it had no id.
    public var publisher: ScreenID? { hops.first?.screen }

    public var json: JSONValue {
        [
            "publisher": publisher.map { .string($0.rawValue) } ?? .null,
            "index": .integer(Int64(index)),
            "hops": .array(hops.map(\.json)),
        ]
    }

    /// Decodes what `json` writes.
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        let hops = try fields.list("hops") { item, here throws(WireDecodingError) in
            try PreferenceHopResource(json: item, pointer: here)
        }
        let index = try fields.integer("index")
        guard index >= 0, index < Int64(hops.count) else {
            throw WireDecodingError(pointer: fields.at("index"), reason: "expected a position in hops")
        }
        self.init(hops: hops, index: Int(index))
    }
}

/// One screen a preference walk visited, and what it did with the value.
///
/// ```json
/// {"screen": "c_…", "handling": "called", "received": "p", "decision": "passed", "passed": "p"}
/// ```
public struct PreferenceHopResource: Sendable, Equatable {
    /// The screen; nil when it had no id.
    public var screen: ScreenID?
    /// `transparent` (no handler: passed on unchanged), `called` (its handler received the value),
    /// `remembered` (its handler had already received it: its remembered decision applied).
    public var handling: PreferenceHop.Handling
    /// The value that reached the screen.
    public var received: JSONValue
    /// What it passed on toward `previous`; nil when it stopped the walk.
    public var passed: JSONValue?

    public init(screen: ScreenID?, handling: PreferenceHop.Handling, received: JSONValue, passed: JSONValue?) {
        self.screen = screen
        self.handling = handling
        self.received = received
        self.passed = passed
    }

    /// A core hop of a named key, whose values are JSON.
    public init(_ hop: PreferenceHop) {
        self.init(
            screen: hop.screenID, handling: hop.handling, received: hop.received as? JSONValue ?? .null,
            passed: hop.passed.map { $0 as? JSONValue ?? .null })
    }

    /// `decision` is `passed` (with `passed`) or `stopped`.
    public var json: JSONValue {
        var fields: [String: JSONValue] = [
            "screen": screen.map { .string($0.rawValue) } ?? .null,
            "handling": .string(handling.rawValue),
            "received": received,
            "decision": passed == nil ? "stopped" : "passed",
        ]
        if let passed { fields["passed"] = passed }
        return .object(fields)
    }

    /// Decodes what `json` writes.
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        guard let handling = PreferenceHop.Handling(rawValue: try fields.string("handling")) else {
            throw WireDecodingError(pointer: fields.at("handling"), reason: "expected transparent, called or remembered")
        }
        let passed: JSONValue?
        switch try fields.string("decision") {
        case "passed": passed = try fields.value("passed")
        case "stopped": passed = nil
        default: throw WireDecodingError(pointer: fields.at("decision"), reason: "expected passed or stopped")
        }
        self.init(
            screen: try fields.optionalScreenID("screen"), handling: handling, received: try fields.value("received"),
            passed: passed)
    }
}

extension ScreenExplanation: WireCodable {}
extension ValueOrigin: WireCodable {}
extension PreferenceArrivalResource: WireCodable {}
extension PreferenceHopResource: WireCodable {}

// MARK: - Computing

extension ScreenTree where Element == String {
    /// Why the screen `entry` reads what it reads: the sources of every key of its `resolved` (the
    /// declared keys of `keys` and every key with an override along its chain) and the walks of its
    /// received preferences.
    package func explanation(of entry: ScreenStack<String>.Screen, keys: SchemaValueKeys) -> ScreenExplanation {
        let context = entry.context
        var values: [String: ValueOrigin] = [:]
        for name in keys.defaults.keys { values[name] = .schemaDefault }
        for (name, resolved) in context.resolvedNamedValueSources {
            if let source = resolved.source.screenID {
                values[name] = .screen(source, stack: stackID(containing: source) ?? .main)
            }
        }
        var preferences: [String: PreferenceArrivalResource?] = [:]
        for name in context.receivedNamedPreferences.keys {
            preferences[name] = context.preferenceArrival(named: name).map { arrival in
                PreferenceArrivalResource(hops: arrival.hops.map(PreferenceHopResource.init), index: arrival.index)
            }
        }
        return ScreenExplanation(values: values, preferences: preferences)
    }

    /// Adds each screen's explanation to `screens` and `stacks` (as `resources(keys:)` renders
    /// them), stopping with nil as soon as the explanations pass `maxBytes` of JSON together.
    package func explain(
        _ screens: inout [ScreenResource], _ stacks: inout [StackResource], keys: SchemaValueKeys, maxBytes: Int
    ) -> Bool {
        var bytes = 0
        func add(_ resource: inout ScreenResource) -> Bool {
            guard let entry = screen(id: resource.id) else { return true }
            let explanation = explanation(of: entry, keys: keys)
            bytes += explanation.json.serializedByteCount + 16
            guard bytes <= maxBytes else { return false }
            resource.explanation = explanation
            return true
        }
        for index in screens.indices where !add(&screens[index]) { return false }
        for stack in stacks.indices {
            for index in stacks[stack].screens.indices where !add(&stacks[stack].screens[index]) { return false }
        }
        return true
    }
}
