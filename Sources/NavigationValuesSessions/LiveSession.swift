import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// What applying an operation did: the event it appends and the state rows it writes.
struct Applied {
    var event: SessionEvent
    var changes: [StateChange]
}

/// The in-memory state of one session: its record, its schema and a core `ScreenStack` keyed by
/// the screens' ids, whose elements are the screens' names. Not Sendable: one `SessionActor` owns it.
package final class LiveSession {
    typealias Screen = ScreenStack<String>.Screen

    var record: SessionRecord
    let schema: SessionSchema
    let stack = ScreenStack<String>()

    init(record: SessionRecord, schema: SessionSchema) {
        self.record = record
        // The schema lives parsed in `schema`; its stored text is needed only when the row is
        // inserted, so a live session does not keep a second copy.
        self.record.schemaJSON = ""
        self.schema = schema
    }

    var id: SessionID { record.id }
    var depth: Int { stack.count }

    /// Resolves a `{screen}` path reference: an id, `root` or `top`.
    func screen(reference: String) -> Screen? {
        switch reference {
        case "root": stack.entries.first
        case "top": stack.entries.last
        default: stack.screen(id: ScreenID(reference))
        }
    }

    // MARK: - Applying operations

    /// Applies an operation at version `seq`, returning its event and the rows it writes.
    ///
    /// A validated operation always applies. One read back from storage may not (a damaged or
    /// hand-edited file): then this throws, and the session must be dropped, since it may be half
    /// changed.
    func apply(_ operation: SessionOperation, seq: Int64, at date: Date) throws(CorruptSessionError) -> Applied {
        var applied: Applied
        switch operation {
        case .push(let seed):
            let entry = try pushScreen(seed)
            applied = Applied(event: .screenPushed(resource(of: entry)), changes: insertChanges(for: entry, seed: seed))
        case .pop(let ids):
            try popScreens(ids)
            applied = Applied(event: .screensPopped(ids), changes: ids.isEmpty ? [] : [.deleteScreens(ids)])
        case .replacePath(let popped, let pushed):
            try popScreens(popped)
            var changes: [StateChange] = popped.isEmpty ? [] : [.deleteScreens(popped)]
            var resources: [ScreenResource] = []
            for seed in pushed {
                let entry = try pushScreen(seed)
                resources.append(resource(of: entry))
                changes += insertChanges(for: entry, seed: seed)
            }
            applied = Applied(event: .pathReplaced(popped: popped, pushed: resources), changes: changes)
        case .updateValues(let screenID, let set, let removed):
            applied = try updateValues(screenID, set: set, removed: removed)
        case .setHandler(let screenID, let key, let passBack):
            try existing(screenID).context.setPreferenceHandler(named: key, passBack: passBack)
            applied = Applied(
                event: .handlerSet(screen: screenID, key: key, passBack: passBack),
                changes: [.setHandler(screenID, key: key, passBack: passBack)])
        case .removeHandler(let screenID, let key):
            try existing(screenID).context.removePreferenceHandler(named: key)
            applied = Applied(
                event: .handlerRemoved(screen: screenID, key: key), changes: [.removeHandler(screenID, key: key)])
        case .publish(let screenID, let key, let value):
            applied = try publish(screenID, key: key, value: value)
        case .end(let purge):
            record.state = .ended
            applied = Applied(event: .sessionEnded, changes: purge ? [.purgeSession(record.id)] : [])
        }
        record.version = seq
        record.updatedAt = date
        if operation.isPurge { return applied }
        applied.changes.append(.updateSession(record.id, version: seq, state: record.state, updatedAt: date))
        return applied
    }

    /// Pushes a screen with its values; a screen id already on the stack is refused.
    @discardableResult
    func pushScreen(_ seed: ScreenSeed) throws(CorruptSessionError) -> Screen {
        guard stack.screen(id: seed.id) == nil else { throw corrupt("screen \(seed.id.rawValue) is pushed twice") }
        let context = stack.push(seed.name, id: seed.id)
        for (name, value) in seed.values {
            context.setValue(value, for: valueKey(name))
        }
        return stack.entries[stack.count - 1]  // the screen just pushed
    }

    private func insertChanges(for entry: Screen, seed: ScreenSeed) -> [StateChange] {
        let index = stack.count - 1
        let previous = index > 0 ? stack.entries[index - 1].id : nil
        var changes: [StateChange] = [
            .insertScreen(
                ScreenRecord(
                    id: entry.id, session: record.id, index: index, name: entry.element,
                    role: entry.context.role.rawValue, previous: previous))
        ]
        for name in seed.values.keys.sorted() {
            if let value = seed.values[name] {
                changes.append(.setValue(entry.id, key: name, json: value.serialized()))
            }
        }
        return changes
    }

    /// Pops the given screens, topmost first; they must be the topmost ones, above the root.
    private func popScreens(_ ids: [ScreenID]) throws(CorruptSessionError) {
        guard ids.count < stack.count, ids.elementsEqual(stack.ids.reversed().prefix(ids.count)) else {
            throw corrupt("popped screens \(ids.map(\.rawValue)) are not the topmost ones above the root")
        }
        stack.pop(count: ids.count)
    }

    private func updateValues(
        _ screenID: ScreenID, set: [String: JSONValue], removed: [String]
    ) throws(CorruptSessionError) -> Applied {
        let entry = try existing(screenID)
        var changedScreens: [(ScreenContext, String)] = []
        var changes: [StateChange] = []
        for name in set.keys.sorted() {
            guard let value = set[name] else { continue }
            let key = valueKey(name)
            changedScreens += entry.context.setValue(value, for: key).map { ($0, name) }
            changes.append(.setValue(screenID, key: name, json: value.serialized()))
        }
        let removed = removed.sorted()
        for name in removed {
            let key = valueKey(name)
            changedScreens += entry.context.removeValue(for: key).map { ($0, name) }
            changes.append(.removeValue(screenID, key: name))
        }
        var affected: [AffectedValue] = []
        var seen: Set<String> = []
        let ids = self.ids(of: changedScreens.map(\.0))
        for ((context, name), id) in zip(changedScreens, ids) {
            guard let id, seen.insert("\(id.rawValue)\u{0}\(name)").inserted else { continue }
            affected.append(AffectedValue(screen: id, key: name, value: context.untrackedValue(for: valueKey(name))))
        }
        return Applied(
            event: .valuesUpdated(screen: screenID, set: set, removed: removed, affected: affected), changes: changes)
    }

    private func publish(_ screenID: ScreenID, key: String, value: JSONValue) throws(CorruptSessionError) -> Applied {
        let walk = try existing(screenID).context.updatePreference(named: key, value: value)
        var deliveries: [PreferenceDelivery] = []
        var changes: [StateChange] = []
        for (delivery, id) in zip(walk.deliveries, ids(of: walk.deliveries.map(\.screen))) {
            guard let id, let received = delivery.value as? JSONValue else { continue }
            deliveries.append(PreferenceDelivery(screen: id, value: received))
            let receivedJSON = received.serialized()
            changes.append(.setReceivedPreference(id, key: key, json: receivedJSON))
            var passed: String?
            if case .passedBack(let value) = delivery.screen.preferenceMemory(named: key)?.decision {
                passed = value.serialized()
            }
            changes.append(.rememberDelivery(id, key: key, valueJSON: receivedJSON, passedJSON: passed))
        }
        let stoppedAt = walk.stoppedAt.flatMap { stack.id(of: $0) }
        return Applied(
            event: .preferencePublished(
                screen: screenID, key: key, value: value, deliveries: deliveries, stoppedAt: stoppedAt),
            changes: changes)
    }

    // MARK: - Pieces

    /// The screen with this id, which an operation names.
    private func existing(_ id: ScreenID) throws(CorruptSessionError) -> Screen {
        guard let entry = stack.screen(id: id) else { throw corrupt("no screen \(id.rawValue)") }
        return entry
    }

    /// The ids of contexts of this stack, in order (nil for a context that is not one of its screens).
    /// Few contexts are looked up one by one from the top; many through one map of the stack.
    private func ids(of contexts: [ScreenContext]) -> [ScreenID?] {
        guard contexts.count > 8 else { return contexts.map { stack.id(of: $0) } }
        let byContext = Dictionary(uniqueKeysWithValues: stack.entries.map { (ObjectIdentifier($0.context), $0.id) })
        return contexts.map { byContext[ObjectIdentifier($0)] }
    }

    private func corrupt(_ reason: String) -> CorruptSessionError {
        CorruptSessionError(session: id, reason: reason)
    }

    /// The named key for a value name, with the schema's default and observation flag.
    func valueKey(_ name: String) -> NamedValueKey {
        if let entry = schema.values[name] {
            return NamedValueKey(
                name, defaultValue: entry.defaultValue, isObservationIgnored: entry.isObservationIgnored)
        }
        return NamedValueKey(name)
    }
}
