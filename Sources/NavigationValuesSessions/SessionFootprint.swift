import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// The bytes of JSON a session renders as (`LiveSession.resource()`, docs/API.md's session resource),
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

    /// What a screen's `resolved` holds, by size: each name's value bytes, and its members'
    /// bytes together (without commas).
    struct Resolved {
        var sizes: [String: Int] = [:]
        var content = 0

        /// The declared defaults, which every root of the main stack or of a tab starts from.
        init(defaults: [String: JSONValue]) {
            for (name, value) in defaults {
                let size = value.serializedByteCount
                sizes[name] = size
                content += JSONValue.stringByteCount(name) + 1 + size
            }
        }
    }

    /// Bytes of each screen's SCREEN JSON of the main stack, root first.
    private(set) var screenBytes: [Int] = []
    /// Bytes of the whole session resource.
    private(set) var sessionBytes = 0

    /// Measures `layers` stacked root first over `defaults` (the declared values' defaults), as
    /// the main stack of a session of one stack; `envelopeBytes` is the session resource without
    /// screens (`"screens":[]`).
    init(layers: [Layer], defaults: [String: JSONValue], envelopeBytes: Int) {
        var kept: [ScreenID: Resolved] = [:]
        screenBytes = Self.measure(
            layers, from: Resolved(defaults: defaults), presenter: nil, presentedRoots: [:], keeping: &kept)
        sessionBytes = envelopeBytes + screenBytes.reduce(0, +) + Self.commas(layers.count)
    }

    /// The bytes of each of `layers` (one stack, root first) whose root inherits `start`;
    /// `presenter` is the root's `previous` (a presentation's), `presentedRoots` each presenting
    /// screen's `next`. What a presenting screen resolves to is kept in `kept`, for what it presents.
    private static func measure(
        _ layers: [Layer], from start: Resolved, presenter: ScreenID?, presentedRoots: [ScreenID: ScreenID],
        keeping kept: inout [ScreenID: Resolved]
    ) -> [Int] {
        var resolved = start
        var bytes: [Int] = []
        bytes.reserveCapacity(layers.count)
        for (index, layer) in layers.enumerated() {
            var valuesContent = 0
            for (name, value) in layer.values {
                let size = value.serializedByteCount
                let member = JSONValue.stringByteCount(name) + 1
                valuesContent += member + size
                if let shadowed = resolved.sizes[name] {
                    resolved.content += size - shadowed
                } else {
                    resolved.content += member + size
                }
                resolved.sizes[name] = size
            }
            if presentedRoots[layer.id] != nil { kept[layer.id] = resolved }
            var screen = Self.skeletonBytes(
                of: layer, index: index, previous: index > 0 ? layers[index - 1].id : presenter,
                next: index + 1 < layers.count ? layers[index + 1].id : presentedRoots[layer.id])
            screen += valuesContent + Self.commas(layer.values.count)
            screen += resolved.content + Self.commas(resolved.sizes.count)
            screen += Self.membersBytes(layer.preferences)
            for (name, passBack) in layer.handlers {
                screen += JSONValue.stringByteCount(name) + 1 + (passBack ? Self.passBackTrue : Self.passBackFalse)
            }
            screen += Self.commas(layer.handlers.count)
            bytes.append(screen)
        }
        return bytes
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
    /// The footprint of `session` as it is now, every stack of it (docs/Stacks.md): the main
    /// stack and each tab from the defaults, each presentation from what its presenter resolves to.
    init(_ session: LiveSession) {
        let tree = session.tree
        var presentedRoots: [ScreenID: ScreenID] = [:]
        for id in tree.stackIDs.dropFirst() {
            if let presenter = tree.presenter(of: id), let root = tree.stack(id)?.firstEntry?.id {
                presentedRoots[presenter] = root
            }
        }
        let start = session.schemaFootprint.defaults
        var kept: [ScreenID: Resolved] = [:]
        screenBytes = Self.measure(
            tree.main.entries.map(Layer.init), from: start, presenter: nil, presentedRoots: presentedRoots,
            keeping: &kept)
        var stacksBytes = 0
        let others = tree.stackIDs.dropFirst()
        for id in others {
            let presenter = tree.presenter(of: id)
            let bytes = Self.measure(
                (tree.stack(id)?.entries ?? []).map(Layer.init), from: presenter.flatMap { kept[$0] } ?? start,
                presenter: presenter, presentedRoots: presentedRoots, keeping: &kept)
            stacksBytes +=
                StackResource(id: id, kind: tree.kind(of: id) ?? .tab, presenter: presenter, screens: []).json
                .serializedByteCount + bytes.reduce(0, +) + Self.commas(bytes.count)
        }
        sessionBytes =
            session.envelopeBytes + screenBytes.reduce(0, +) + Self.commas(screenBytes.count) + stacksBytes
            + Self.commas(others.count)
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

/// What a session's schema adds to its rendered size; measured once per live session, since
/// the schema never changes (measuring it on every push was a twentieth of a push's CPU).
struct SchemaFootprint {
    /// The schema's JSON, in bytes.
    let bytes: Int
    /// What the declared defaults put in the `resolved` of every root of the main stack or a tab.
    let defaults: SessionFootprint.Resolved

    init(_ schema: SessionSchema) {
        bytes = schema.json.serializedByteCount
        defaults = SessionFootprint.Resolved(defaults: schema.values.mapValues { $0.defaultValue })
    }
}

extension LiveSession {
    /// The session resource without its screens and stacks (`"screens":[]`, `"stacks":[]`): the
    /// rest rendered with an empty schema (`{}`, 2 bytes), plus the schema's measured bytes.
    var envelopeBytes: Int {
        SessionResource(
            id: record.id, version: record.version, state: record.state, createdAt: record.createdAt,
            updatedAt: record.updatedAt, schema: .object([:]), screens: [], selectedStack: tree.selectedStackID,
            visibleScreen: tree.visibleStack.lastEntry?.id, stacks: []
        ).json.serializedByteCount - 2 + schemaFootprint.bytes
    }
}
