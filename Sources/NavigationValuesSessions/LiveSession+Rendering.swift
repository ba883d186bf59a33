import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

// The session, its stacks and its screens as docs/API.md's and docs/Stacks.md's resources.

extension LiveSession {
    /// One screen, of any stack, as docs/API.md's SCREEN.
    func resource(of entry: Screen, includeMemory: Bool = false) -> ScreenResource {
        var resolved: [String: JSONValue] = schema.values.mapValues(\.defaultValue)
        for (name, value) in entry.context.resolvedNamedValues { resolved[name] = value }
        let stackID = tree.stackID(containing: entry.id) ?? .main
        let index = tree.stack(stackID)?.index(of: entry.id) ?? 0
        return resource(of: entry, on: stackID, index: index, resolved: resolved, includeMemory: includeMemory)
    }

    /// `previous` and `next` follow the core's links: a presentation's root comes after its
    /// presenter, whose `next` is that root (docs/Stacks.md §1).
    private func resource(
        of entry: Screen, on stackID: StackID, index: Int, resolved: [String: JSONValue], includeMemory: Bool
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
        let entries = tree.stack(stackID)?.entries ?? []
        var next: ScreenID?
        if index + 1 < entries.count {
            next = entries[index + 1].id
        } else if let presented = tree.presentation(presentedBy: entry.id) {
            next = tree.stack(presented)?.entries.first?.id
        }
        return ScreenResource(
            id: entry.id, index: index, name: entry.element, role: context.role,
            previous: index > 0 ? entries[index - 1].id : tree.presenter(of: stackID), next: next,
            values: context.localNamedValues, resolved: resolved, preferences: context.receivedNamedPreferences,
            handlers: handlers)
    }

    /// The screens of one stack, root first. `start` is what its root inherits (the presenter's
    /// resolved values for a presentation); `presenters` collects what each presenting screen
    /// resolves to, for the stacks it presents.
    private func screens(
        of stackID: StackID, from start: [String: JSONValue], includeMemory: Bool,
        presenters: inout [ScreenID: [String: JSONValue]]
    ) -> [ScreenResource] {
        let entries = tree.stack(stackID)?.entries ?? []
        var resolved = start
        var screens: [ScreenResource] = []
        screens.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            // Each screen inherits from the one below it, so `resolved` builds up root to top.
            for (name, value) in entry.context.localNamedValues { resolved[name] = value }
            screens.append(
                resource(of: entry, on: stackID, index: index, resolved: resolved, includeMemory: includeMemory))
        }
        if let top = entries.last, tree.presentation(presentedBy: top.id) != nil { presenters[top.id] = resolved }
        return screens
    }

    /// The whole session as docs/API.md's session resource, with the stacks of docs/Stacks.md.
    /// `includeMemory` adds each handler's memory, which snapshots need for exact replay.
    func resource(includeMemory: Bool = false) -> SessionResource {
        let defaults: [String: JSONValue] = schema.values.mapValues(\.defaultValue)
        var presenters: [ScreenID: [String: JSONValue]] = [:]
        let screens = screens(of: .main, from: defaults, includeMemory: includeMemory, presenters: &presenters)
        var stacks: [StackResource] = []
        // Tabs, then presentations in the order they came: a presenter is rendered before what it presents.
        for id in tree.stackIDs.dropFirst() {
            let presenter = tree.presenter(of: id)
            let start = presenter.flatMap { presenters[$0] } ?? defaults
            stacks.append(
                StackResource(
                    id: id, kind: tree.kind(of: id) ?? .tab, presenter: presenter,
                    screens: self.screens(of: id, from: start, includeMemory: includeMemory, presenters: &presenters)))
        }
        return SessionResource(
            id: record.id, version: record.version, state: record.state, createdAt: record.createdAt,
            updatedAt: record.updatedAt, schema: schema.json, screens: screens, selectedStack: tree.selectedStackID,
            visibleScreen: visibleScreenID, stacks: stacks,
            origin: record.origin)
    }

    /// One stack as docs/Stacks.md's STACK.
    func stackResource(_ id: StackID) -> StackResource {
        let presenter = tree.presenter(of: id)
        var start: [String: JSONValue] = schema.values.mapValues(\.defaultValue)
        if let presenter, let entry = tree.screen(id: presenter) {
            for (name, value) in entry.context.resolvedNamedValues { start[name] = value }
        }
        var presenters: [ScreenID: [String: JSONValue]] = [:]
        return StackResource(
            id: id, kind: tree.kind(of: id) ?? .tab, presenter: presenter,
            screens: screens(of: id, from: start, includeMemory: false, presenters: &presenters))
    }

    /// Every stack, the main one first, as `GET …/stacks` answers.
    func stackList() -> StackList {
        let session = resource()
        let main = StackResource(id: .main, kind: .main, screens: session.screens)
        return StackList(
            stacks: [main] + session.stacks, selectedStack: session.selectedStack,
            visibleScreen: session.visibleScreen, version: record.version)
    }
}

extension LiveSession: ChangedSession {
    package func screenResource(_ id: ScreenID) -> ScreenResource? {
        tree.screen(id: id).map { resource(of: $0) }
    }

    package var visibleScreenID: ScreenID? { tree.visibleStack.entries.last?.id }
}
