import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// What applying an operation did: the event it appends and the state rows it writes.
struct Applied {
    var event: SessionEvent
    var changes: [StateChange]
}

/// The in-memory state of one session: its record, its schema and a core `ScreenTree` whose
/// stacks are keyed by the screens' ids, with the screens' names as elements (the main stack is
/// the one stack of docs/API.md; docs/Stacks.md has the others). Not Sendable: one `SessionActor` owns it.
package final class LiveSession {
    typealias Screen = ScreenStack<String>.Screen

    var record: SessionRecord
    /// The SHA-256 of the session's token, which `record.tokenHash` holds as 64 hex characters on
    /// the heap: kept here in 32 bytes instead (the record's copy is emptied). Nil when the stored
    /// hash is not one (a snapshot's stand-in record, a damaged row): then no token matches.
    let tokenDigest: TokenDigest?
    /// The schema and what is derived from it, in one shared object (see `SchemaInfo`).
    let schemaInfo: SchemaInfo
    var schema: SessionSchema { schemaInfo.schema }
    /// The schema's value keys (defaults, observation flags), for every write and rendering.
    var keys: SchemaValueKeys { schemaInfo.keys }
    /// What the schema adds to the session's rendered size, measured once (the schema never
    /// changes): its JSON's bytes, and what its defaults put in every root's `resolved`.
    var schemaFootprint: SchemaFootprint { schemaInfo.footprint }
    /// Every screen is pushed with the id its operation carries, so the generator is never asked;
    /// it captures nothing, so a session allocates nothing for it (an incrementing one allocates a
    /// counter and a closure context per session).
    let tree = ScreenTree<String>(ids: ScreenIDGenerator { IdentifierGenerator.live.screenID() })
    /// The `position` the next tab or presentation is stored with (creation order).
    var nextStackPosition = 1
    /// Each tab's stored `position`: ascending in the order of the tabs (`ScreenTree.tabIDs`),
    /// which a move keeps by handing the tabs' positions out again in their new order.
    var tabPositions: [StackID: Int] = [:]
    /// At least the bytes the session renders as, at one version: measured exactly by
    /// `OutputLimits.checkApplied`, then grown by what each push can add, so that a push checks
    /// the session's limit against it without measuring the whole session (`OutputLimits`).
    var renderedBytesBound: RenderedBytesBound?

    /// The main stack.
    var stack: ScreenStack<String> { tree.main }

    convenience init(record: SessionRecord, schema: SessionSchema) {
        self.init(record: record, schemaInfo: schema == .empty ? SchemaInfo.empty : SchemaInfo(schema))
    }

    /// A session with a schema already derived (a compact session's, rebuilt: `DormantSession`).
    init(record: SessionRecord, schemaInfo: SchemaInfo) {
        self.record = record
        // The schema lives parsed in `schema`; its stored text is needed only when the row is
        // inserted, so a live session does not keep a second copy.
        self.record.schemaJSON = ""
        self.tokenDigest = TokenDigest(hex: record.tokenHash)
        self.record.tokenHash = ""
        self.schemaInfo = schemaInfo
    }

    var id: SessionID { record.id }
    /// The main stack's screens, root included.
    var depth: Int { stack.count }
    /// Every stack's screens: what the screen limit counts.
    var screenCount: Int { tree.screenCount }

    /// Resolves a `{screen}` path reference (docs/Stacks.md, Screen and stack references): an id of
    /// a screen of any stack, `root` (the main stack's root), `top` (the screen a user sees), or
    /// `STACK:root` and `STACK:top` (the ends of the stack `STACK` names).
    func screen(reference: String) -> Screen? {
        switch reference {
        case "root": return stack.firstEntry
        case "top": return tree.visibleStack.lastEntry
        default:
            if let colon = reference.firstIndex(of: ":") {
                guard let stackID = stackID(reference: String(reference[..<colon])), let named = tree.stack(stackID)
                else { return nil }
                switch reference[reference.index(after: colon)...] {
                case "root": return named.firstEntry
                case "top": return named.lastEntry
                default: return nil
                }
            }
            return tree.screen(id: ScreenID(reference))
        }
    }

    /// Resolves a `{stack}` reference: a stack's id (`main`, a tab's name, a presentation's id),
    /// `selected` (the selected stack) or `top` (the stack a user sees).
    func stackID(reference: String) -> StackID? {
        switch reference {
        case "selected": return tree.selectedStackID
        case "top": return tree.visibleStackID
        default:
            let id = StackID(reference)
            return tree.stack(id) == nil ? nil : id
        }
    }

    // MARK: - Applying operations

    /// Applies an operation at version `seq`, returning its event and the rows it writes.
    ///
    /// A validated operation always applies. One read back from storage may not (a damaged or
    /// hand-edited file): then this throws, and the session must be dropped, since it may be half
    /// changed.
    func apply(_ operation: SessionOperation, seq: Int64, at date: Date) throws(CorruptSessionError) -> Applied {
        var applied = try applyStep(operation)
        finish(&applied, seq: seq, at: date, isPurge: operation.isPurge)
        return applied
    }

    /// Applies an operation without moving the version: one step of a batch (or the whole of any
    /// other change, which `finish` then completes).
    func applyStep(_ operation: SessionOperation) throws(CorruptSessionError) -> Applied {
        switch operation {
        case .push(let stack, let seed):
            return try applyPush(seed, onto: stack)
        case .pop(let stack, let ids):
            return try applyPop(ids, from: stack)
        case .replacePath(let stack, let popped, let pushed):
            return try applyReplacePath(popped: popped, pushed: pushed, of: stack)
        case .updateValues(let screenID, let set, let removed):
            return try updateValues(screenID, set: set, removed: removed)
        case .setHandler(let screenID, let key, let passBack):
            try existing(screenID).context.setPreferenceHandler(named: key, passBack: passBack)
            return Applied(
                event: .handlerSet(screen: screenID, key: key, passBack: passBack),
                changes: [.setHandler(screenID, key: key, passBack: passBack)])
        case .removeHandler(let screenID, let key):
            try existing(screenID).context.removePreferenceHandler(named: key)
            return Applied(
                event: .handlerRemoved(screen: screenID, key: key), changes: [.removeHandler(screenID, key: key)])
        case .publish(let screenID, let key, let value):
            return try publish(screenID, key: key, value: value)
        case .end(let purge):
            record.state = .ended
            return Applied(event: .sessionEnded, changes: purge ? [.purgeSession(record.id)] : [])
        case .createStack(let id, let root):
            return try applyCreateStack(id, root: root)
        case .selectStack(let id):
            return try applySelect(id)
        case .removeStack(let id):
            return try applyRemoveStack(id)
        case .moveStack(let id, let position):
            return try applyMoveStack(id, to: position)
        case .present(let id, let style, let presenter, let root):
            return try applyPresent(id, style: style, presenter: presenter, root: root)
        case .dismiss(let id):
            return try applyDismiss(id)
        case .replaceAbove(let screen, let popped, let pushed):
            return try applyReplaceAbove(screen, popped: popped, pushed: pushed)
        case .returnResult(let screen, let key, let value):
            return try applyReturn(screen, key: key, value: value)
        case .batch(let operations):
            var events: [SessionEvent] = []
            var changes: [StateChange] = []
            for operation in operations {
                let step = try applyStep(operation)
                events.append(step.event)
                changes += step.changes
            }
            return Applied(event: .batchApplied(events), changes: changes)
        }
    }

    /// What the mutation that appended `event` answers, leaving the session at `version`
    /// (`MutationResult(answering:…)`); a batch's, from its steps' answers.
    func answer(
        to event: SessionEvent, version: Int64, steps: [MutationResult] = []
    ) throws(CorruptSessionError) -> MutationResult {
        guard let result = MutationResult(answering: event, version: version, steps: steps, in: self) else {
            throw corrupt("a \(event.kind.rawValue) event has no answer here")
        }
        return result
    }

    /// Completes a change at version `seq`: the session's row follows (unless it was purged).
    func finish(_ applied: inout Applied, seq: Int64, at date: Date, isPurge: Bool) {
        record.version = seq
        record.updatedAt = date
        if isPurge { return }
        applied.changes.append(.updateSession(record.id, version: seq, state: record.state, updatedAt: date))
    }

    /// Pushes a screen with its values onto a stack (the main one by default); a screen id already
    /// in the session is refused.
    @discardableResult
    func pushScreen(_ seed: ScreenSeed, onto stackID: StackID = .main) throws(CorruptSessionError) -> Screen {
        let context: ScreenContext
        do {
            context = try tree.push(seed.name, onto: stackID, id: seed.id)
        } catch {
            throw corrupt("screen \(seed.id.rawValue) cannot be pushed onto stack '\(stackID)': \(error.message)")
        }
        for (name, value) in seed.values {
            context.setValue(value, for: valueKey(name))
        }
        guard let entry = tree.stack(stackID)?.lastEntry else { throw corrupt("stack '\(stackID)' lost its top") }
        return entry
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

    func publish(_ screenID: ScreenID, key: String, value: JSONValue) throws(CorruptSessionError) -> Applied {
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
        let stoppedAt = walk.stoppedAt.flatMap { tree.id(of: $0) }
        return Applied(
            event: .preferencePublished(
                screen: screenID, key: key, value: value, deliveries: deliveries, stoppedAt: stoppedAt),
            changes: changes)
    }

    // MARK: - Pieces

    /// The screen with this id, which an operation names.
    func existing(_ id: ScreenID) throws(CorruptSessionError) -> Screen {
        guard let entry = tree.screen(id: id) else { throw corrupt("no screen \(id.rawValue)") }
        return entry
    }

    /// The ids of contexts of the session's screens, in order (nil for a context that is not one).
    /// Few contexts are looked up one by one from the top; many through one map of every stack.
    func ids(of contexts: [ScreenContext]) -> [ScreenID?] {
        guard contexts.count > 8 else { return contexts.map { tree.id(of: $0) } }
        var byContext: [ObjectIdentifier: ScreenID] = [:]
        for stackID in tree.stackIDs {
            for entry in tree.stack(stackID)?.entries ?? [] { byContext[ObjectIdentifier(entry.context)] = entry.id }
        }
        return contexts.map { byContext[ObjectIdentifier($0)] }
    }

    func corrupt(_ reason: String) -> CorruptSessionError {
        CorruptSessionError(session: id, reason: reason)
    }

    /// The named key for a value name, with the schema's default and observation flag.
    func valueKey(_ name: String) -> NamedValueKey { keys.key(name) }
}

/// A session's schema with its keys and footprint, derived once. Immutable, so sessions without
/// a schema (most) share one: each holds a reference instead of eight words of its own.
final class SchemaInfo: Sendable {
    let schema: SessionSchema
    let keys: SchemaValueKeys
    let footprint: SchemaFootprint

    init(_ schema: SessionSchema) {
        self.schema = schema
        keys = SchemaValueKeys(schema.values.map { ($0.key, $0.value.defaultValue, $0.value.isObservationIgnored) })
        footprint = SchemaFootprint(schema)
    }

    /// What every session without a schema shares.
    static let empty = SchemaInfo(.empty)
}
