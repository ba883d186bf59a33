import NavigationValues

// A core `ScreenTree` whose elements are the screens' names, as the API shows it and read back
// from what the API shows: the server renders its sessions with these, and a client's mirror
// renders and rebuilds its copy with the same ones, so the two cannot disagree on a `resolved`,
// a `previous` or the order of the stacks.

/// The named value keys of a session's schema: each declared value with its default and its
/// observation flag, any other name with no default.
///
/// ```swift
/// let keys = SchemaValueKeys(schema: schema)
/// context.setValue("x", for: keys.key("title"))
/// ```
package struct SchemaValueKeys: Sendable {
    private let declared: [String: NamedValueKey]
    /// What every declared value reads before a screen writes it (the root's `resolved` starts here).
    package let defaults: [String: JSONValue]

    /// The keys of these declared values.
    package init(_ entries: [(name: String, defaultValue: JSONValue, isObservationIgnored: Bool)]) {
        var declared: [String: NamedValueKey] = [:]
        var defaults: [String: JSONValue] = [:]
        for entry in entries {
            declared[entry.name] = NamedValueKey(
                entry.name, defaultValue: entry.defaultValue, isObservationIgnored: entry.isObservationIgnored)
            defaults[entry.name] = entry.defaultValue
        }
        self.declared = declared
        self.defaults = defaults
    }

    /// The keys a schema resource declares.
    package init(schema: SchemaResource) {
        self.init(schema.values.map { ($0.key, $0.value.defaultValue, $0.value.isObservationIgnored) })
    }

    /// The key with this name: declared, or with no default.
    package func key(_ name: String) -> NamedValueKey { declared[name] ?? NamedValueKey(name) }
}

// MARK: - Rendering

extension ScreenTree where Element == String {
    /// The main stack's screens (the session resource's `screens`) and every other stack, the tabs
    /// in their order then the presentations in the order they came (`stacks`), as
    /// `GET /v1/sessions/{id}` shows them. `includeMemory` adds each handler's memory (snapshots).
    package func resources(keys: SchemaValueKeys, includeMemory: Bool = false) -> (
        screens: [ScreenResource], stacks: [StackResource]
    ) {
        var presenters: [ScreenID: [String: JSONValue]] = [:]
        let screens = screenResources(of: .main, from: keys.defaults, includeMemory: includeMemory, &presenters)
        var stacks: [StackResource] = []
        stacks.reserveCapacity(stackIDs.count - 1)
        // A presenter is rendered before what it presents: tabs, then presentations in their order.
        for id in stackIDs.dropFirst() {
            let presenter = presenter(of: id)
            let start = presenter.flatMap { presenters[$0] } ?? keys.defaults
            stacks.append(
                StackResource(
                    id: id, kind: kind(of: id) ?? .tab, presenter: presenter,
                    screens: screenResources(of: id, from: start, includeMemory: includeMemory, &presenters)))
        }
        return (screens, stacks)
    }

    /// One stack as docs/Stacks.md's STACK.
    package func resource(ofStack id: StackID, keys: SchemaValueKeys) -> StackResource {
        let presenter = presenter(of: id)
        var start = keys.defaults
        if let presenter, let context = self[id: presenter] {
            for (name, value) in context.resolvedNamedValues { start[name] = value }
        }
        var presenters: [ScreenID: [String: JSONValue]] = [:]
        return StackResource(
            id: id, kind: kind(of: id) ?? .tab, presenter: presenter,
            screens: screenResources(of: id, from: start, includeMemory: false, &presenters))
    }

    /// One screen, of any stack, as docs/API.md's SCREEN.
    package func resource(
        of entry: ScreenStack<String>.Screen, keys: SchemaValueKeys, includeMemory: Bool = false
    ) -> ScreenResource {
        var resolved = keys.defaults
        for (name, value) in entry.context.resolvedNamedValues { resolved[name] = value }
        let stackID = stackID(containing: entry.id) ?? .main
        let index = stack(stackID)?.index(of: entry.id) ?? 0
        return resource(of: entry, on: stackID, index: index, resolved: resolved, includeMemory: includeMemory)
    }

    /// The screens of one stack, root first. `start` is what its root inherits (its presenter's
    /// resolved values, for a presentation); `presenters` collects what each presenting screen
    /// resolves to, for the stacks it presents.
    private func screenResources(
        of stackID: StackID, from start: [String: JSONValue], includeMemory: Bool,
        _ presenters: inout [ScreenID: [String: JSONValue]]
    ) -> [ScreenResource] {
        let entries = stack(stackID)?.entries ?? []
        var resolved = start
        var screens: [ScreenResource] = []
        screens.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            // Each screen inherits from the one below it, so `resolved` builds up root to top.
            for (name, value) in entry.context.localNamedValues { resolved[name] = value }
            screens.append(
                resource(of: entry, on: stackID, index: index, resolved: resolved, includeMemory: includeMemory))
        }
        if let top = entries.last, presentation(presentedBy: top.id) != nil { presenters[top.id] = resolved }
        return screens
    }

    /// `previous` and `next` follow the core's links: a presentation's root comes after its
    /// presenter, whose `next` is that root (docs/Stacks.md §1).
    private func resource(
        of entry: ScreenStack<String>.Screen, on stackID: StackID, index: Int, resolved: [String: JSONValue],
        includeMemory: Bool
    ) -> ScreenResource {
        let context = entry.context
        var handlers: [String: HandlerResource] = [:]
        for name in context.namedPreferenceHandlerKeys {
            var handler = HandlerResource(passBack: context.preferenceHandlerPassesBack(named: name) ?? false)
            if includeMemory, let memory = context.preferenceMemory(named: name) {
                handler.memory = HandlerMemory(received: memory.received, decision: memory.decision)
            }
            handlers[name] = handler
        }
        let entries = stack(stackID)?.entries ?? []
        var next: ScreenID?
        if index + 1 < entries.count {
            next = entries[index + 1].id
        } else if let presented = presentation(presentedBy: entry.id) {
            next = stack(presented)?.firstEntry?.id
        }
        return ScreenResource(
            id: entry.id, index: index, name: entry.element, role: context.role,
            previous: index > 0 ? entries[index - 1].id : presenter(of: stackID), next: next,
            values: context.localNamedValues, resolved: resolved, preferences: context.receivedNamedPreferences,
            handlers: handlers)
    }
}

// MARK: - Rebuilding

extension ScreenTree where Element == String {
    /// Rebuilds a session's stacks in this tree, which has none yet (an empty main stack): the main
    /// stack's screens, then each other stack in the order `stacks` lists them (a presenter's stack
    /// before what it presents), then the selection. Every screen gets its own values, handlers,
    /// received preferences and (when the resource has it) each handler's memory.
    ///
    /// - Throws: `NavigationError` when the resource does not fit a tree: a stack without screens,
    ///   a second main stack, a presentation without a presenter or whose presenter is not on top,
    ///   a screen id used twice, a selection that is not the main stack or a tab.
    package func load(_ session: SessionResource, keys: SchemaValueKeys) throws(NavigationError) {
        for screen in session.screens { try push(screen, onto: .main, keys: keys) }
        for stack in session.stacks { try add(stack, keys: keys) }
        try select(session.selectedStack)
    }

    /// Adds a tab or a presentation as a resource shows it (a snapshot's, or the one a
    /// `stack.created` or `stack.presented` event carries), with its screens: a tab after the
    /// others, a presentation from its `presenter`.
    ///
    /// - Throws: `NavigationError` as `addStack` and `present` do, and for a stack without screens,
    ///   a second main stack, or a presentation without a presenter.
    package func add(_ stack: StackResource, keys: SchemaValueKeys) throws(NavigationError) {
        guard let root = stack.screens.first else {
            throw NavigationError(.conflict, "stack '\(stack.id)' has no screens")
        }
        switch stack.kind {
        case .main:
            throw NavigationError(.conflict, "stack '\(stack.id)' is a second main stack")
        case .tab:
            try addStack(stack.id, root: root.name, rootID: root.id) { $0.restore(root, keys: keys) }
        case .sheet, .fullScreenCover:
            guard let style = stack.kind.presentationStyle, let presenter = stack.presenter else {
                throw NavigationError(.conflict, "presentation '\(stack.id)' has no presenter")
            }
            try present(style, from: presenter, id: stack.id, root: root.name, rootID: root.id) {
                $0.restore(root, keys: keys)
            }
        }
        for screen in stack.screens.dropFirst() { try push(screen, onto: stack.id, keys: keys) }
    }

    /// Pushes a screen as a resource shows it onto a stack, with its own values, handlers and
    /// received preferences (a screen an event pushed, or one of a snapshot).
    ///
    /// - Throws: `NavigationError` as `push(_:onto:id:)` does.
    @discardableResult
    package func push(_ screen: ScreenResource, onto stack: StackID, keys: SchemaValueKeys) throws(NavigationError)
        -> ScreenContext
    {
        let context = try push(screen.name, onto: stack, id: screen.id)
        context.restore(screen, keys: keys)
        return context
    }
}

extension ScreenContext {
    /// Gives this context a screen's own values (`null` is no value), handlers, received
    /// preferences and, when the resource carries it, each handler's memory.
    package func restore(_ screen: ScreenResource, keys: SchemaValueKeys) {
        for name in screen.values.keys.sorted() {
            if let value = screen.values[name], value != .null { setValue(value, for: keys.key(name)) }
        }
        for (name, handler) in screen.handlers {
            setPreferenceHandler(named: name, passBack: handler.passBack)
        }
        for name in Set(screen.preferences.keys).union(screen.handlers.keys) {
            let memory = screen.handlers[name]?.memory.map { (received: $0.received, decision: $0.decision) }
            restorePreference(named: name, received: screen.preferences[name], memory: memory)
        }
    }
}
