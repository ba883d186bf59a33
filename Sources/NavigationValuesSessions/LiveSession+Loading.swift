import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

// Sessions rebuilt from storage: from the state tables (the live path after a restart), from a
// snapshot and from the `session.created` event (replay). Stored data that does not fit throws
// `CorruptSessionError`; nothing read back can stop the process.

extension LiveSession {
    // MARK: - From the state tables

    /// Rebuilds a session from its stored rows; with `schema`, the schema already derived (its
    /// record's schema text is then not read).
    static func load(_ stored: StoredSession, schema derived: SchemaInfo? = nil) throws(CorruptSessionError)
        -> LiveSession
    {
        let id = stored.record.id
        func parse(_ text: String, _ what: @autoclosure () -> String) throws(CorruptSessionError) -> JSONValue {
            do { return try JSONValue(parsing: text) } catch {
                throw CorruptSessionError(session: id, reason: "\(what()) is not valid JSON: \(error)")
            }
        }
        let session: LiveSession
        if let derived {
            session = LiveSession(record: stored.record, schemaInfo: derived)
        } else {
            let schema = try Self.schema(try parse(stored.record.schemaJSON, "the schema"), session: id)
            session = LiveSession(record: stored.record, schema: schema)
        }
        var byStack: [StackID: [StoredScreen]] = [:]
        for screen in stored.screens { byStack[screen.record.stack, default: []].append(screen) }
        let known = Set(stored.stacks.map(\.id)).union([.main])
        if let stray = byStack.keys.first(where: { !known.contains($0) }) {
            throw CorruptSessionError(session: id, reason: "screens are on stack '\(stray)', which the session lacks")
        }
        // The main stack first, then the tabs in their order, then the presentations in the
        // order they came, so a presenter is there (on top of its stack) before the stack it
        // presents: a tab may have moved after a presentation of one of its screens.
        try session.loadScreens(byStack[.main] ?? [], onto: .main, parse: parse)
        let tabs = stored.stacks.filter { $0.kind == .tab }
        for stack in tabs + stored.stacks.filter({ $0.kind != .tab }) {
            try session.loadScreens(byStack[stack.id] ?? [], of: stack, parse: parse)
        }
        for tab in tabs { session.tabPositions[tab.id] = tab.position }
        try session.select(stored.selectedStack)
        session.nextStackPosition = (stored.stacks.map(\.position).max() ?? 0) + 1
        return session
    }

    /// Adds a stored tab or presentation with its screens.
    private func loadScreens(
        _ screens: [StoredScreen], of stack: StackRecord,
        parse: (String, @autoclosure () -> String) throws(CorruptSessionError) -> JSONValue
    ) throws(CorruptSessionError) {
        let sorted = screens.sorted { $0.record.index < $1.record.index }
        guard let root = sorted.first else { throw corrupt("stack '\(stack.id)' has no screens") }
        let seed = ScreenSeed(id: root.record.id, name: root.record.name, values: [:])
        try addStack(stack.id, kind: stack.kind, presenter: stack.presenter, root: seed)
        try restore(root, on: stack.id, isPushed: false, parse: parse)
        try loadScreens(Array(sorted.dropFirst()), onto: stack.id, parse: parse)
    }

    /// Pushes stored screens onto a stack, in order, with their values, handlers and memory.
    private func loadScreens(
        _ screens: [StoredScreen], onto stack: StackID,
        parse: (String, @autoclosure () -> String) throws(CorruptSessionError) -> JSONValue
    ) throws(CorruptSessionError) {
        for screen in screens.sorted(by: { $0.record.index < $1.record.index }) {
            try restore(screen, on: stack, isPushed: true, parse: parse)
        }
    }

    /// One stored screen: pushed onto `stack` (or already there, a stack's root), then given its
    /// values, handlers and what they remember.
    private func restore(
        _ screen: StoredScreen, on stack: StackID, isPushed: Bool,
        parse: (String, @autoclosure () -> String) throws(CorruptSessionError) -> JSONValue
    ) throws(CorruptSessionError) {
        let screenID = screen.record.id.rawValue
        var values: [String: JSONValue] = [:]
        for (name, text) in screen.values {
            values[name] = try parse(text, "value '\(name)' of screen \(screenID)")
        }
        let seed = ScreenSeed(id: screen.record.id, name: screen.record.name, values: values)
        let entry: Screen
        if isPushed {
            entry = try pushScreen(seed, onto: stack)
        } else {
            guard let root = tree.screen(id: screen.record.id) else { throw corrupt("no screen \(screenID)") }
            for (name, value) in values { root.context.setValue(value, for: valueKey(name)) }
            entry = root
        }
        for (name, handler) in screen.handlers {
            entry.context.setPreferenceHandler(named: name, passBack: handler.passBack)
        }
        var names = Set(screen.preferences.keys)
        names.formUnion(screen.handlers.keys)
        for name in names {
            let what = "preference '\(name)' of screen \(screenID)"
            var received: JSONValue?
            if let text = screen.preferences[name] { received = try parse(text, what) }
            var memory: (received: JSONValue, decision: PreferenceDecision)?
            if let handler = screen.handlers[name], let last = handler.lastValueJSON {
                var decision = PreferenceDecision.stopped
                if let passed = handler.lastPassedJSON { decision = .passedBack(try parse(passed, what)) }
                memory = (try parse(last, what), decision)
            }
            entry.context.restorePreference(named: name, received: received, memory: memory)
        }
    }

    /// The state changes that `events` (the log after `stored`'s version, in order) make to the
    /// session as stored, each applied as the live request that made it was: what a store that
    /// writes state behind its log writes to catch a state up (``StateReplayer``).
    @Sendable static func replayedChanges(_ stored: StoredSession, _ events: [StoredEvent]) throws -> [StateChange] {
        let id = stored.record.id
        let session = try load(stored)
        var changes: [StateChange] = []
        var position = stored.record.version
        for stored in events {
            guard stored.seq == position + 1 else {
                throw CorruptSessionError(session: id, reason: "event \(position + 1) is missing")
            }
            let event = try SessionReplay.decode(stored, session: id).event
            guard let operation = SessionOperation(replaying: event) else {
                throw CorruptSessionError(
                    session: id, reason: "event \(stored.seq) (\(event.kind.rawValue)) is not a change of the session")
            }
            changes += try session.apply(operation, seq: stored.seq, at: stored.at).changes
            position = stored.seq
        }
        return changes
    }

    // MARK: - From a snapshot (replay)

    /// Rebuilds a session from a snapshot: the session resource with each handler's memory, read
    /// back into the tree as Wire reads any session resource (`ScreenTree.load(_:keys:)`).
    static func load(snapshot: SessionResource) throws(CorruptSessionError) -> LiveSession {
        let id = snapshot.id
        let record = SessionRecord(
            id: id, version: snapshot.version, state: snapshot.state, schemaJSON: "", tokenHash: "",
            createdAt: snapshot.createdAt, updatedAt: snapshot.updatedAt, origin: snapshot.origin)
        let session = LiveSession(record: record, schema: try schema(snapshot.schema, session: id))
        do {
            try session.tree.load(snapshot, keys: session.keys)
        } catch {
            throw session.corrupt("the snapshot does not fit a session: \(error.message)")
        }
        for (index, stack) in snapshot.stacks.enumerated() where stack.kind == .tab {
            session.tabPositions[stack.id] = index + 1
        }
        session.nextStackPosition = snapshot.stacks.count + 1
        return session
    }

    /// Adds a stack read back from storage, with its root (without values); what does not fit the
    /// tree (a presenter that is not on top, a duplicate id) is damage.
    private func addStack(
        _ id: StackID, kind: StackKind, presenter: ScreenID?, root: ScreenSeed
    ) throws(CorruptSessionError) {
        guard kind != .main else { throw corrupt("stack '\(id)' is a second main stack") }
        let style = kind.presentationStyle
        guard style == nil || presenter != nil else { throw corrupt("presentation '\(id)' has no presenter") }
        do {
            if let style, let presenter {
                try tree.present(style, from: presenter, id: id, root: root.name, rootID: root.id)
            } else {
                try tree.addStack(id, root: root.name, rootID: root.id)
            }
        } catch {
            throw corrupt("stack '\(id)' does not fit the session: \(error.message)")
        }
    }

    private func select(_ id: StackID) throws(CorruptSessionError) {
        do {
            try tree.select(id)
        } catch {
            throw corrupt("the selected stack '\(id)' cannot be selected: \(error.message)")
        }
    }

    /// A session right after its `session.created` event.
    static func created(
        root: ScreenResource, schema json: JSONValue, session id: SessionID, at date: Date
    ) throws(CorruptSessionError) -> LiveSession {
        let record = SessionRecord(
            id: id, version: 1, state: .active, schemaJSON: "", tokenHash: "", createdAt: date, updatedAt: date)
        let session = LiveSession(record: record, schema: try schema(json, session: id))
        try session.pushScreen(ScreenSeed(root))
        return session
    }

    private static func schema(_ json: JSONValue, session id: SessionID) throws(CorruptSessionError) -> SessionSchema {
        do {
            return try SessionSchema(json: json)
        } catch {
            throw CorruptSessionError(session: id, reason: "invalid schema: \(error.detail)")
        }
    }
}
