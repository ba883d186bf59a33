import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// One screen of a live session: its id and name beside its core context. A value stored inline
/// in the session's array (no object of its own per screen).
struct ScreenEntry {
    let id: ScreenID
    let name: String
    let context: ScreenContext
}

/// A screen as an operation carries it: id, name and the values it is pushed with.
struct ScreenSeed: Equatable {
    var id: ScreenID
    var name: String
    var values: [String: JSONValue]
}

/// What a session can go through. Live requests become operations after validation; replay turns
/// stored events back into the same operations, so both paths share one `apply`.
enum Operation {
    case push(ScreenSeed)
    case pop([ScreenID])
    case replacePath(popped: [ScreenID], pushed: [ScreenSeed])
    case updateValues(screen: ScreenID, set: [String: JSONValue], removed: [String])
    case setHandler(screen: ScreenID, key: String, passBack: Bool)
    case removeHandler(screen: ScreenID, key: String)
    case publish(screen: ScreenID, key: String, value: JSONValue)
    case end(purge: Bool)

    var isPurge: Bool {
        if case .end(purge: true) = self { true } else { false }
    }
}

/// What applying an operation did: the event's type and fields, and the rows to store.
struct Applied {
    var eventType: String
    var eventFields: [String: JSONValue]
    var changes: [StateChange]
}

/// The in-memory state of one session: its record, schema and a core `ScreenStack` whose screens
/// carry their ids. Not Sendable: one `SessionActor` owns it.
package final class LiveSession {
    var record: SessionRecord
    let schema: SessionSchema
    let stack = ScreenStack()
    private(set) var screens: [ScreenEntry] = []

    init(record: SessionRecord, schema: SessionSchema) {
        self.record = record
        // The schema lives parsed in `schema`; its stored text is needed only when the row is
        // inserted, so a live session does not keep a second copy.
        self.record.schemaJSON = ""
        self.schema = schema
    }

    var id: SessionID { record.id }
    var depth: Int { screens.count }

    /// The screen with this id. A linear search from the top: stacks are short, most requests name
    /// a screen near the top, and no per-session index is kept in memory.
    func screen(_ id: ScreenID) -> ScreenEntry? { screens.last { $0.id == id } }

    /// Resolves a `{screen}` path reference: an id, `root` or `top`.
    func screen(reference: String) -> ScreenEntry? {
        switch reference {
        case "root": screens.first
        case "top": screens.last
        default: screen(ScreenID(reference))
        }
    }

    // MARK: - Applying operations

    /// Applies an operation at version `seq`, returning the event and the rows it writes.
    /// The caller has validated it; a precondition failing here is our bug.
    func apply(_ operation: Operation, seq: Int64, at date: Date) -> Applied {
        var applied: Applied
        switch operation {
        case .push(let seed):
            let entry = pushScreen(seed)
            applied = Applied(
                eventType: "screen.pushed", eventFields: ["screen": render(entry)],
                changes: insertChanges(for: entry, seed: seed))
        case .pop(let ids):
            popScreens(ids)
            applied = Applied(
                eventType: "screens.popped", eventFields: ["screens": .array(ids.map { .string($0.rawValue) })],
                changes: ids.isEmpty ? [] : [.deleteScreens(ids)])
        case .replacePath(let popped, let pushed):
            popScreens(popped)
            var changes: [StateChange] = popped.isEmpty ? [] : [.deleteScreens(popped)]
            var rendered: [JSONValue] = []
            for seed in pushed {
                let entry = pushScreen(seed)
                rendered.append(render(entry))
                changes += insertChanges(for: entry, seed: seed)
            }
            applied = Applied(
                eventType: "path.replaced",
                eventFields: ["popped": .array(popped.map { .string($0.rawValue) }), "pushed": .array(rendered)],
                changes: changes)
        case .updateValues(let screenID, let set, let removed):
            applied = updateValues(screenID, set: set, removed: removed)
        case .setHandler(let screenID, let key, let passBack):
            guard let entry = screen(screenID) else { preconditionFailure("handler on an unknown screen") }
            entry.context.setPreferenceHandler(named: key, passBack: passBack)
            applied = Applied(
                eventType: "handler.set",
                eventFields: ["screen": .string(screenID.rawValue), "key": .string(key), "passBack": .bool(passBack)],
                changes: [.setHandler(screenID, key: key, passBack: passBack)])
        case .removeHandler(let screenID, let key):
            guard let entry = screen(screenID) else { preconditionFailure("handler on an unknown screen") }
            entry.context.removePreferenceHandler(named: key)
            applied = Applied(
                eventType: "handler.removed", eventFields: ["screen": .string(screenID.rawValue), "key": .string(key)],
                changes: [.removeHandler(screenID, key: key)])
        case .publish(let screenID, let key, let value):
            applied = publish(screenID, key: key, value: value)
        case .end(let purge):
            record.state = .ended
            applied = Applied(
                eventType: "session.ended", eventFields: [:], changes: purge ? [.purgeSession(record.id)] : [])
        }
        record.version = seq
        record.updatedAt = date
        if operation.isPurge { return applied }
        applied.changes.append(.updateSession(record.id, version: seq, state: record.state, updatedAt: date))
        return applied
    }

    @discardableResult
    func pushScreen(_ seed: ScreenSeed) -> ScreenEntry {
        let context = stack.push()
        let entry = ScreenEntry(id: seed.id, name: seed.name, context: context)
        screens.append(entry)
        for (name, value) in seed.values {
            context.setValue(value, for: valueKey(name))
        }
        return entry
    }

    private func insertChanges(for entry: ScreenEntry, seed: ScreenSeed) -> [StateChange] {
        let index = screens.count - 1
        let previous = index > 0 ? screens[index - 1].id : nil
        var changes: [StateChange] = [
            .insertScreen(
                ScreenRecord(
                    id: entry.id, session: record.id, index: index, name: entry.name, role: entry.context.role.rawValue,
                    previous: previous))
        ]
        for name in seed.values.keys.sorted() {
            if let value = seed.values[name] {
                changes.append(.setValue(entry.id, key: name, json: value.serialized()))
            }
        }
        return changes
    }

    /// Pops the given screens, which must be the topmost ones.
    private func popScreens(_ ids: [ScreenID]) {
        for id in ids {
            guard let last = screens.last, last.id == id else { preconditionFailure("popped screens must be on top") }
            stack.pop()
            screens.removeLast()
        }
    }

    private func updateValues(_ screenID: ScreenID, set: [String: JSONValue], removed: [String]) -> Applied {
        guard let entry = screen(screenID) else { preconditionFailure("values of an unknown screen") }
        var changedScreens: [(ScreenContext, String)] = []
        var changes: [StateChange] = []
        for name in set.keys.sorted() {
            guard let value = set[name] else { continue }
            let key = valueKey(name)
            changedScreens += entry.context.setValue(value, for: key).map { ($0, name) }
            changes.append(.setValue(screenID, key: name, json: value.serialized()))
        }
        for name in removed.sorted() {
            let key = valueKey(name)
            changedScreens += entry.context.removeValue(for: key).map { ($0, name) }
            changes.append(.removeValue(screenID, key: name))
        }
        var affected: [JSONValue] = []
        var seen: Set<String> = []
        let ids = screenIDsByContext()
        for (context, name) in changedScreens {
            guard let id = ids[ObjectIdentifier(context)], seen.insert("\(id.rawValue)\u{0}\(name)").inserted else {
                continue
            }
            affected.append([
                "screen": .string(id.rawValue), "key": .string(name),
                "value": context.untrackedValue(for: valueKey(name)),
            ])
        }
        return Applied(
            eventType: "values.updated",
            eventFields: [
                "screen": .string(screenID.rawValue), "set": .object(set),
                "removed": .array(removed.sorted().map { .string($0) }), "affected": .array(affected),
            ],
            changes: changes)
    }

    private func publish(_ screenID: ScreenID, key: String, value: JSONValue) -> Applied {
        guard let entry = screen(screenID) else { preconditionFailure("publish on an unknown screen") }
        let walk = entry.context.updatePreference(named: key, value: value)
        let ids = screenIDsByContext()
        var deliveries: [JSONValue] = []
        var changes: [StateChange] = []
        for delivery in walk.deliveries {
            guard let id = ids[ObjectIdentifier(delivery.screen)], let received = delivery.value as? JSONValue else {
                continue
            }
            deliveries.append(["screen": .string(id.rawValue), "value": received])
            changes.append(.setReceivedPreference(id, key: key, json: received.serialized()))
            let memory = delivery.screen.preferenceMemory(named: key)
            var passed: String?
            if case .passedBack(let value) = memory?.decision { passed = value.serialized() }
            changes.append(.rememberDelivery(id, key: key, valueJSON: received.serialized(), passedJSON: passed))
        }
        let stoppedAt: JSONValue = walk.stoppedAt.flatMap { ids[ObjectIdentifier($0)] }.map { .string($0.rawValue) } ?? .null
        return Applied(
            eventType: "preference.published",
            eventFields: [
                "screen": .string(screenID.rawValue), "key": .string(key), "value": value,
                "deliveries": .array(deliveries), "stoppedAt": stoppedAt,
            ],
            changes: changes)
    }

    /// Each screen's id, by its context's identity: for turning the core's contexts back into ids.
    private func screenIDsByContext() -> [ObjectIdentifier: ScreenID] {
        Dictionary(uniqueKeysWithValues: screens.map { (ObjectIdentifier($0.context), $0.id) })
    }

    /// The named key for a value name, with the schema's default and observation flag.
    func valueKey(_ name: String) -> NamedValueKey {
        if let entry = schema.values[name] {
            return NamedValueKey(name, defaultValue: entry.defaultValue, isObservationIgnored: entry.isObservationIgnored)
        }
        return NamedValueKey(name)
    }
}
