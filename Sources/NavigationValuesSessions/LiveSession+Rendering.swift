import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

// The JSON shapes of API.md, Resources: a session and its screens.

extension LiveSession {
    /// One screen as API.md's SCREEN.
    func render(_ entry: ScreenEntry, includeMemory: Bool = false) -> JSONValue {
        var resolved: [String: JSONValue] = schema.values.mapValues(\.defaultValue)
        for (name, value) in entry.context.resolvedNamedValues { resolved[name] = value }
        let index = screens.firstIndex { $0.id == entry.id } ?? 0
        return renderScreen(entry, index: index, resolved: resolved, includeMemory: includeMemory)
    }

    private func renderScreen(
        _ entry: ScreenEntry, index: Int, resolved: [String: JSONValue], includeMemory: Bool
    ) -> JSONValue {
        let context = entry.context
        var handlers: [String: JSONValue] = [:]
        for name in context.namedPreferenceHandlerKeys {
            var fields: [String: JSONValue] = ["passBack": .bool(context.preferenceHandlerPassesBack(named: name) ?? false)]
            if includeMemory, let memory = context.preferenceMemory(named: name) {
                fields["lastReceived"] = memory.received
                if case .passedBack(let passed) = memory.decision {
                    fields["lastDecision"] = "passed"
                    fields["lastPassed"] = passed
                } else {
                    fields["lastDecision"] = "stopped"
                }
            }
            handlers[name] = .object(fields)
        }
        let previous: JSONValue = index > 0 ? .string(screens[index - 1].id.rawValue) : .null
        let next: JSONValue = index + 1 < screens.count ? .string(screens[index + 1].id.rawValue) : .null
        return [
            "id": .string(entry.id.rawValue),
            "index": .integer(Int64(index)),
            "name": .string(entry.name),
            "role": .string(context.role.rawValue),
            "previous": previous,
            "next": next,
            "values": .object(context.localNamedValues),
            "resolved": .object(resolved),
            "preferences": .object(context.receivedNamedPreferences),
            "handlers": .object(handlers),
        ]
    }

    /// The whole session as API.md's session resource. `includeMemory` adds each handler's memory
    /// (`lastReceived`, `lastDecision`, `lastPassed`), which snapshots need for exact replay.
    package func renderSession(includeMemory: Bool = false) -> JSONValue {
        var resolved: [String: JSONValue] = schema.values.mapValues(\.defaultValue)
        var rendered: [JSONValue] = []
        rendered.reserveCapacity(screens.count)
        for (index, entry) in screens.enumerated() {
            // Each screen inherits from the one below it, so `resolved` builds up root to top.
            for (name, value) in entry.context.localNamedValues { resolved[name] = value }
            rendered.append(renderScreen(entry, index: index, resolved: resolved, includeMemory: includeMemory))
        }
        return [
            "id": .string(record.id.rawValue),
            "version": .integer(record.version),
            "state": .string(record.state.rawValue),
            "createdAt": .string(Timestamp.string(from: record.createdAt)),
            "updatedAt": .string(Timestamp.string(from: record.updatedAt)),
            "schema": schema.json,
            "screens": .array(rendered),
        ]
    }

    /// A line of the admin session list.
    var summary: JSONValue {
        [
            "id": .string(record.id.rawValue), "version": .integer(record.version),
            "state": .string(record.state.rawValue), "depth": .integer(Int64(depth)),
            "updatedAt": .string(Timestamp.string(from: record.updatedAt)),
        ]
    }
}
