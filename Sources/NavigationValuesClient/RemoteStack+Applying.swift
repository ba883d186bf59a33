import Foundation
import NavigationValues
import NavigationValuesWire

// Applying the server's events to the mirror's contexts, with the core's own rules: values through
// `setValue`/`removeValue` (so observers of exactly the screens whose resolved value changed are
// told, docs/SEMANTICS.md §2), handlers with their decision, and each delivery of a publish recorded as
// the server made it (docs/SEMANTICS.md §3: the walk happened on the server; it is not walked again).

extension RemoteStack {
    /// Replaces the whole mirror with a snapshot.
    func rebuild(from session: SessionResource) {
        for entry in stack.entries.reversed() { entry.context.detach() }
        stack = ScreenStack<String>()
        schemaJSON = session.schema
        schema = (try? SchemaResource(json: session.schema)) ?? SchemaResource()
        for screen in session.screens {
            let context = stack.push(screen.name, id: screen.id)
            restore(screen, into: context)
        }
        otherScreens = Set(session.stacks.filter { $0.id != .main }.flatMap { $0.screens.map(\.id) })
        version = session.version
        state = session.state
        createdAt = session.createdAt
        updatedAt = session.updatedAt
        refreshScreens()
    }

    /// Applies the event after `version`; false when it does not fit the mirror (a screen it names
    /// is not there), which then starts again from a snapshot.
    func apply(_ recorded: RecordedEvent) -> Bool {
        guard apply(recorded.event, seq: recorded.seq, at: recorded.at) else { return false }
        version = recorded.seq
        updatedAt = recorded.at
        return true
    }

    /// Applies one change of an event (a batch applies each of its changes in turn).
    func apply(_ event: SessionEvent, seq: Int64, at: Date) -> Bool {
        switch event {
        case .sessionCreated(let root, let schema):
            rebuild(
                from: SessionResource(
                    id: session.id, version: seq, state: .active, createdAt: at, updatedAt: at, schema: schema,
                    screens: [root]))
        case .screenPushed(let screen):
            guard stack.screen(id: screen.id) == nil else { return false }
            restore(screen, into: stack.push(screen.name, id: screen.id))
            refreshScreens()
        case .screensPopped(let ids):
            guard pop(ids) else { return false }
            refreshScreens()
        case .pathReplaced(let popped, let pushed):
            guard pop(popped) else { return false }
            for screen in pushed {
                guard stack.screen(id: screen.id) == nil else { return false }
                restore(screen, into: stack.push(screen.name, id: screen.id))
            }
            refreshScreens()
        case .valuesUpdated(let id, let set, let removed, let affected):
            // A write on another stack changes nothing here (docs/Stacks.md §2).
            if otherScreens.contains(id) { return true }
            guard let context = stack[id: id] else { return false }
            // Screens of presentations that inherit from the written one are not mirrored.
            let affected = affected.filter { !otherScreens.contains($0.screen) }
            var changed: [(ScreenContext, String)] = []
            for name in set.keys.sorted() {
                if let value = set[name] { changed += context.setValue(value, for: valueKey(name)).map { ($0, name) } }
            }
            for name in removed.sorted() { changed += context.removeValue(for: valueKey(name)).map { ($0, name) } }
            // The core told exactly the screens the server listed, or the mirror has drifted.
            guard
                Set(changed.compactMap { changed in stack.id(of: changed.0).map { "\($0.rawValue)/\(changed.1)" } })
                    == Set(affected.map { "\($0.screen.rawValue)/\($0.key)" })
            else { return false }
        case .handlerSet(let id, _, _) where otherScreens.contains(id):
            break
        case .handlerRemoved(let id, _) where otherScreens.contains(id):
            break
        case .handlerSet(let id, let key, let passBack):
            guard let context = stack[id: id] else { return false }
            context.setPreferenceHandler(named: key, passBack: passBack)
        case .handlerRemoved(let id, let key):
            guard let context = stack[id: id] else { return false }
            context.removePreferenceHandler(named: key)
        case .preferencePublished(_, let key, _, let deliveries, _):
            return record(deliveries, of: key)
        case .sessionEnded:
            state = .ended
        default:
            return applyStackEvent(event, seq: seq, at: at)
        }
        return true
    }

    /// Records a publish's deliveries as the server made them; those to screens of other stacks
    /// (a presentation's own screens) are not mirrored. False when one names an unknown screen.
    func record(_ deliveries: [PreferenceDelivery], of key: String) -> Bool {
        let mirrored = deliveries.filter { !otherScreens.contains($0.screen) }
        let contexts = mirrored.map { stack[id: $0.screen] }
        guard !contexts.contains(where: { $0 == nil }) else { return false }
        for (context, delivery) in zip(contexts, mirrored) {
            context?.recordReceivedPreference(named: key, value: delivery.value)
        }
        return true
    }

    /// Pops the given screens, which must be the topmost ones above the root, topmost first.
    func pop(_ ids: [ScreenID]) -> Bool {
        guard ids.count < stack.count, ids.elementsEqual(stack.ids.reversed().prefix(ids.count)) else { return false }
        stack.pop(count: ids.count)
        return true
    }

    /// Gives a new context a screen's own values, handlers and received preferences.
    func restore(_ screen: ScreenResource, into context: ScreenContext) {
        for name in screen.values.keys.sorted() {
            if let value = screen.values[name], value != .null { context.setValue(value, for: valueKey(name)) }
        }
        for (name, handler) in screen.handlers {
            context.setPreferenceHandler(named: name, passBack: handler.passBack)
        }
        for (name, value) in screen.preferences {
            context.recordReceivedPreference(named: name, value: value)
        }
    }

    /// The named key for a value name, with the schema's default and observation flag, as the
    /// server's own session uses it.
    func valueKey(_ name: String) -> NamedValueKey {
        guard let entry = schema.values[name] else { return NamedValueKey(name) }
        return NamedValueKey(name, defaultValue: entry.defaultValue, isObservationIgnored: entry.isObservationIgnored)
    }

    /// `screens` from the stack, when its screens changed.
    func refreshScreens() {
        let keys = ValueKeys(schema: schema)
        screens = stack.entries.map {
            Screen(id: $0.id, name: $0.element, context: $0.context, keys: keys, session: session)
        }
    }
}

/// The schema's value keys, shared by a mirror's screens for their reads.
struct ValueKeys: Sendable {
    let schema: SchemaResource

    func key(_ name: String) -> NamedValueKey {
        guard let entry = schema.values[name] else { return NamedValueKey(name) }
        return NamedValueKey(name, defaultValue: entry.defaultValue, isObservationIgnored: entry.isObservationIgnored)
    }
}
