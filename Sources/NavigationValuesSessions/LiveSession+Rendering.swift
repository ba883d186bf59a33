import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

// The session and its screens as API.md's resources.

extension LiveSession {
    /// One screen as API.md's SCREEN.
    func resource(of entry: Screen, includeMemory: Bool = false) -> ScreenResource {
        var resolved: [String: JSONValue] = schema.values.mapValues(\.defaultValue)
        for (name, value) in entry.context.resolvedNamedValues { resolved[name] = value }
        let index = stack.index(of: entry.id) ?? 0
        return resource(of: entry, index: index, resolved: resolved, includeMemory: includeMemory)
    }

    private func resource(
        of entry: Screen, index: Int, resolved: [String: JSONValue], includeMemory: Bool
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
        let entries = stack.entries
        return ScreenResource(
            id: entry.id, index: index, name: entry.element, role: context.role,
            previous: index > 0 ? entries[index - 1].id : nil,
            next: index + 1 < entries.count ? entries[index + 1].id : nil,
            values: context.localNamedValues, resolved: resolved, preferences: context.receivedNamedPreferences,
            handlers: handlers)
    }

    /// The whole session as API.md's session resource. `includeMemory` adds each handler's memory,
    /// which snapshots need for exact replay.
    func resource(includeMemory: Bool = false) -> SessionResource {
        var resolved: [String: JSONValue] = schema.values.mapValues(\.defaultValue)
        var screens: [ScreenResource] = []
        screens.reserveCapacity(stack.count)
        for (index, entry) in stack.entries.enumerated() {
            // Each screen inherits from the one below it, so `resolved` builds up root to top.
            for (name, value) in entry.context.localNamedValues { resolved[name] = value }
            screens.append(resource(of: entry, index: index, resolved: resolved, includeMemory: includeMemory))
        }
        return SessionResource(
            id: record.id, version: record.version, state: record.state, createdAt: record.createdAt,
            updatedAt: record.updatedAt, schema: schema.json, screens: screens, origin: record.origin)
    }
}
