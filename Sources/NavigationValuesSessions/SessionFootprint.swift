import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// The bytes of JSON a session renders as (`LiveSession.resource()`, API.md's session resource),
/// counted without rendering it.
///
/// A screen's `resolved` lists every declared entry and every key set on it or below it, so a
/// session of many screens renders as a multiple of what was stored in it: the reason the
/// server measures before it renders (`OutputLimits`). The count walks each stored value once
/// and each screen once, carrying `resolved`'s size up the stack, so it costs what the session
/// stores, not what it renders.
///
/// ```swift
/// let footprint = SessionFootprint(session)
/// footprint.sessionBytes == session.resource().json.serialized().utf8.count   // true
/// ```
struct SessionFootprint {
    /// One screen, as much of it as its size depends on.
    struct Layer {
        var id: ScreenID
        var name: String
        var role: String
        var values: [String: JSONValue]
        var preferences: [String: JSONValue] = [:]
        /// Handler keys and whether each passes values back.
        var handlers: [String: Bool] = [:]
    }

    /// Bytes of each screen's SCREEN JSON, root first.
    private(set) var screenBytes: [Int] = []
    /// Bytes of the whole session resource.
    private(set) var sessionBytes = 0

    /// Measures `layers` stacked root first over `defaults` (the declared values' defaults);
    /// `envelopeBytes` is the session resource without screens (`"screens":[]`).
    init(layers: [Layer], defaults: [String: JSONValue], envelopeBytes: Int) {
        var resolved: [String: Int] = [:]
        var resolvedContent = 0
        for (name, value) in defaults {
            let size = value.serializedByteCount
            resolved[name] = size
            resolvedContent += JSONValue.stringByteCount(name) + 1 + size
        }
        screenBytes.reserveCapacity(layers.count)
        for (index, layer) in layers.enumerated() {
            var valuesContent = 0
            for (name, value) in layer.values {
                let size = value.serializedByteCount
                let member = JSONValue.stringByteCount(name) + 1
                valuesContent += member + size
                if let shadowed = resolved[name] {
                    resolvedContent += size - shadowed
                } else {
                    resolvedContent += member + size
                }
                resolved[name] = size
            }
            var bytes = Self.skeletonBytes(
                of: layer, index: index, previous: index > 0 ? layers[index - 1].id : nil,
                next: index + 1 < layers.count ? layers[index + 1].id : nil)
            bytes += valuesContent + Self.commas(layer.values.count)
            bytes += resolvedContent + Self.commas(resolved.count)
            bytes += Self.membersBytes(layer.preferences)
            for (name, passBack) in layer.handlers {
                bytes += JSONValue.stringByteCount(name) + 1 + (passBack ? Self.passBackTrue : Self.passBackFalse)
            }
            bytes += Self.commas(layer.handlers.count)
            screenBytes.append(bytes)
        }
        sessionBytes = envelopeBytes + screenBytes.reduce(0, +) + Self.commas(layers.count)
    }

    /// The largest screen's bytes (0 without screens).
    var largestScreenBytes: Int { screenBytes.max() ?? 0 }

    // MARK: - Pieces

    /// A screen with empty `values`, `resolved`, `preferences` and `handlers`.
    private static func skeletonBytes(of layer: Layer, index: Int, previous: ScreenID?, next: ScreenID?) -> Int {
        var bytes = emptyScreenBytes
        bytes += JSONValue.stringByteCount(layer.id.rawValue) - 2
        bytes += JSONValue.integer(Int64(index)).serializedByteCount - 1
        bytes += JSONValue.stringByteCount(layer.name) - 2
        bytes += JSONValue.stringByteCount(layer.role) - JSONValue.stringByteCount(ScreenContextRole.screen.rawValue)
        if let previous { bytes += JSONValue.stringByteCount(previous.rawValue) - 4 }  // instead of null
        if let next { bytes += JSONValue.stringByteCount(next.rawValue) - 4 }
        return bytes
    }

    /// The members of an object, without its braces: `"k":v,"k2":v2`.
    private static func membersBytes(_ members: [String: JSONValue]) -> Int {
        members.reduce(commas(members.count)) { total, member in
            total + JSONValue.stringByteCount(member.key) + 1 + member.value.serializedByteCount
        }
    }

    private static func commas(_ count: Int) -> Int { max(0, count - 1) }

    /// `{"handlers":{},"id":"","index":0,"name":"","next":null,…,"role":"screen","values":{}}`
    private static let emptyScreenBytes = ScreenResource(
        id: ScreenID(""), index: 0, name: "", role: .screen, previous: nil, next: nil
    ).json.serializedByteCount
    private static let passBackTrue = HandlerResource(passBack: true).json.serializedByteCount
    private static let passBackFalse = HandlerResource(passBack: false).json.serializedByteCount
}

extension SessionFootprint {
    /// The footprint of `session` as it is now.
    init(_ session: LiveSession) {
        self.init(
            layers: session.stack.entries.map(Layer.init), defaults: session.schema.values.mapValues(\.defaultValue),
            envelopeBytes: session.envelopeBytes)
    }
}

extension SessionFootprint.Layer {
    /// A screen of a live session.
    init(_ entry: LiveSession.Screen) {
        let context = entry.context
        var handlers: [String: Bool] = [:]
        for name in context.namedPreferenceHandlerKeys {
            handlers[name] = context.preferenceHandlerPassesBack(named: name) ?? false
        }
        self.init(
            id: entry.id, name: entry.element, role: context.role.rawValue, values: context.localNamedValues,
            preferences: context.receivedNamedPreferences, handlers: handlers)
    }

    /// A screen about to be pushed with `seed`.
    init(_ seed: ScreenSeed) {
        self.init(id: seed.id, name: seed.name, role: ScreenContextRole.screen.rawValue, values: seed.values)
    }
}

extension LiveSession {
    /// The session resource without its screens (`"screens":[]`).
    var envelopeBytes: Int {
        SessionResource(
            id: record.id, version: record.version, state: record.state, createdAt: record.createdAt,
            updatedAt: record.updatedAt, schema: schema.json, screens: []
        ).json.serializedByteCount
    }
}
