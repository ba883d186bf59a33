import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// Rebuilds a recorded history as a new session (an import of an exported file, a fork of another
/// session's first N events): each recorded event becomes the request that would have made it,
/// checked by the same `CommandValidator` and applied by the same `LiveSession.apply` as live
/// requests, under fresh ids. The event each step appends must equal the recorded one (with the
/// new ids), so the copy replays exactly as the original did, or the copy fails saying where.
///
/// Screen ids are unique in a store, so every screen of the copy gets a new id; the copier keeps
/// the map from recorded ids to new ones. Times are kept as recorded.
struct HistoryCopier {
    /// Why a recorded history cannot be copied: the event (0-based position) and what is wrong,
    /// with a pointer into that event's JSON when one member is to blame.
    struct Failure: Error {
        var index: Int
        var pointer: String
        var reason: String
    }

    private let environment: ServiceEnvironment
    private let origin: SessionOrigin?
    private var new: ServiceEnvironment.NewSession?
    private var screenIDs: [ScreenID: ScreenID] = [:]
    /// Recorded presentation ids to the copy's (tabs keep their names).
    private var stackIDs: [StackID: StackID] = [:]
    private var mutations: [StoredMutation] = []
    private var last: RecordedEvent?
    private var isEnded = false

    init(environment: ServiceEnvironment, origin: SessionOrigin?) {
        self.environment = environment
        self.origin = origin
    }

    /// How many events are copied so far.
    var count: Int { mutations.count }

    /// Copies the next recorded event.
    mutating func append(_ recorded: RecordedEvent) throws(Failure) {
        let index = mutations.count
        func failure(_ reason: String, pointer: String = "") -> Failure {
            Failure(index: index, pointer: pointer, reason: reason)
        }
        guard recorded.seq == Int64(index) + 1 else {
            throw failure("expected event \(index + 1), found seq \(recorded.seq)", pointer: "/seq")
        }
        guard index < environment.configuration.maxCopiedEvents else {
            throw failure(
                "a copy holds at most \(environment.configuration.maxCopiedEvents) events (--max-copied-events)")
        }
        guard let session = new?.session else {
            try start(with: recorded)
            return
        }
        guard !isEnded else { throw failure("the session ended at event \(index); nothing may follow") }
        var applied: Applied
        if case .batchApplied(let steps) = recorded.event {
            // Each step is checked against the session as the steps before it left it, as a live
            // batch is, so a step may name what an earlier step made (with the copy's ids).
            var events: [SessionEvent] = []
            var changes: [StateChange] = []
            for (position, step) in steps.enumerated() {
                let stepApplied = try applyStep(step, to: session, index: index, pointer: "/events/\(position)")
                events.append(stepApplied.event)
                changes += stepApplied.changes
            }
            applied = Applied(event: .batchApplied(events), changes: changes)
        } else {
            applied = try applyStep(recorded.event, to: session, index: index, pointer: "")
        }
        session.finish(&applied, seq: recorded.seq, at: recorded.at, isPurge: false)
        let event = RecordedEvent(seq: recorded.seq, at: recorded.at, event: applied.event)
        let json = event.json
        try check(json, against: recorded, index: index)
        if case .sessionEnded = applied.event { isEnded = true }
        var mutation = StoredMutation(
            session: session.id, event: StoredEvent(event, json: json, session: session.id), changes: applied.changes)
        let interval = Int64(environment.configuration.snapshotInterval)
        do {
            // Each event's size, and the session's every 16 events (its footprint walks the whole
            // session) and at the end (`checkSession()`).
            let output = OutputLimits(limits: environment.configuration.limits)
            try output.check(eventBytes: mutation.event.json.utf8.count)
            if recorded.seq % 16 == 0 { try output.checkSession(bytes: SessionFootprint(session).sessionBytes) }
        } catch {
            throw failure(error.detail)
        }
        if interval > 0, recorded.seq % interval == 0 {
            mutation.snapshot = StoredSnapshot(
                session: session.id, seq: recorded.seq, json: session.resource(includeMemory: true).json.serialized())
        }
        mutations.append(mutation)
        last = event
    }

    /// Turns one recorded change (an event, or a step of a batch) into the request that made it,
    /// checks it against the copy as it stands and applies it without moving the version;
    /// learns the ids the copy gave what it made.
    private mutating func applyStep(_ event: SessionEvent, to session: LiveSession, index: Int, pointer: String)
        throws(Failure) -> Applied
    {
        func failure(_ reason: String) -> Failure { Failure(index: index, pointer: pointer, reason: reason) }
        let command = try self.command(for: event, index: index, pointer: pointer)
        let validator = CommandValidator(
            session: session, limits: environment.configuration.limits, newScreenID: environment.newScreenID)
        let operation: SessionOperation
        do {
            operation = try validator.operation(for: command)
            // A copy obeys the limits a live request does.
            try OutputLimits(limits: environment.configuration.limits).preflight(operation, on: session)
        } catch {
            // The error's pointers are into the request made of the event, not into the event.
            let details = error.fieldErrors.map(\.detail).filter { $0 != error.detail }
            throw failure(([error.detail] + details).joined(separator: "; "))
        }
        let applied: Applied
        do {
            applied = try session.applyStep(operation)
        } catch {
            throw failure(error.reason)
        }
        learnIDs(recorded: event, copied: applied.event)
        return applied
    }

    /// Refuses a copy whose session renders past `maxSessionBytes`, as a live change
    /// that grew it so would be.
    func checkSession() throws(Failure) {
        guard let session = new?.session else { return }
        do {
            try OutputLimits(limits: environment.configuration.limits).checkSession(
                bytes: SessionFootprint(session).sessionBytes)
        } catch {
            throw Failure(index: max(0, mutations.count - 1), pointer: "", reason: error.detail)
        }
    }

    /// The copy: the new session, its token, and every mutation to commit at once. Nil before
    /// the first event.
    func finish() -> (session: LiveSession, created: CreatedSession, mutations: [StoredMutation], last: RecordedEvent)?
    {
        guard let new, let last else { return nil }
        let created = CreatedSession(session: new.session.resource(), token: new.created.token)
        return (new.session, created, mutations, last)
    }

    // MARK: - Steps

    private mutating func start(with recorded: RecordedEvent) throws(Failure) {
        func failure(_ reason: String, pointer: String = "") -> Failure {
            Failure(index: 0, pointer: pointer, reason: reason)
        }
        guard case .sessionCreated(let root, let schemaJSON) = recorded.event else {
            throw failure("the first event must be session.created", pointer: "/type")
        }
        let schema: SessionSchema
        do {
            schema = try SessionSchema(json: schemaJSON)
            try OutputLimits(limits: environment.configuration.limits).check(schema)
        } catch {
            throw failure(error.detail, pointer: "/schema" + (error.fieldErrors.first?.pointer ?? ""))
        }
        let created: ServiceEnvironment.NewSession
        do {
            created = try environment.newSession(
                schema: schema, root: ["name": .string(root.name), "values": .object(root.values)], at: recorded.at,
                origin: origin)
        } catch let error as SessionError {
            throw failure(error.detail, pointer: error.fieldErrors.first?.pointer ?? "/root")
        } catch {
            throw failure("\(error)", pointer: "/root")
        }
        guard case .sessionCreated(let copiedRoot, _) = created.event.event else {
            throw failure("the copy did not start with session.created")
        }
        screenIDs[root.id] = copiedRoot.id
        try check(created.event.json, against: recorded, index: 0)
        new = created
        mutations.append(created.mutation)
        last = created.event
    }

    /// The request that makes `event`, with the copy's screen and presentation ids; `pointer`
    /// is where the event sits in the line (a batch's step: `/events/N`).
    private func command(for event: SessionEvent, index: Int, pointer base: String) throws(Failure) -> SessionCommand {
        func failure(_ reason: String, _ pointer: String) -> Failure {
            Failure(index: index, pointer: base + pointer, reason: reason)
        }
        func id(_ recorded: ScreenID, _ pointer: String) throws(Failure) -> String {
            guard let copied = screenIDs[recorded] else {
                throw failure("no screen \(recorded.rawValue) is in the session here", pointer)
            }
            return copied.rawValue
        }
        func stack(_ recorded: StackID, _ pointer: String) throws(Failure) -> String {
            if let copied = stackIDs[recorded] { return copied.rawValue }
            // Tabs keep their names (and `main` is every session's); presentations get new ids.
            guard !recorded.rawValue.hasPrefix("p_") else {
                throw failure("no presentation \(recorded.rawValue) is in the session here", pointer)
            }
            return recorded.rawValue
        }
        func body(_ screen: ScreenResource) -> JSONValue {
            ["name": .string(screen.name), "values": .object(screen.values)]
        }
        func pop(_ ids: [ScreenID]) -> JSONValue {
            ids.isEmpty ? ["to": "top"] : ["count": .integer(Int64(ids.count))]
        }
        func root(_ resource: StackResource, _ pointer: String) throws(Failure) -> JSONValue {
            guard let root = resource.screens.first else { throw failure("a new stack needs its root", pointer) }
            return body(root)
        }
        switch event {
        case .sessionCreated:
            throw failure("session.created may only be the first event", "/type")
        case .screenPushed(let screen):
            return .push(stack: StackID.main.rawValue, body: body(screen))
        case .stackScreenPushed(let onto, let screen):
            return .push(stack: try stack(onto, "/stack"), body: body(screen))
        case .screensPopped(let ids):
            return .pop(stack: StackID.main.rawValue, body: pop(ids))
        case .stackScreensPopped(let from, let ids, _):
            return .pop(stack: try stack(from, "/stack"), body: pop(ids))
        case .pathReplaced(_, let pushed):
            return .replacePath(stack: StackID.main.rawValue, body: ["screens": .array(pushed.map(body))])
        case .stackPathReplaced(let of, _, let pushed, _):
            return .replacePath(stack: try stack(of, "/stack"), body: ["screens": .array(pushed.map(body))])
        case .valuesUpdated(let screen, let set, let removed, _):
            var members = set
            for name in removed {
                guard members[name] == nil else { throw failure("'\(name)' is both set and removed", "/removed") }
                members[name] = .null
            }
            return .patchValues(screen: try id(screen, "/screen"), body: .object(members))
        case .handlerSet(let screen, let key, let passBack):
            return .setHandler(screen: try id(screen, "/screen"), key: key, body: ["passBack": .bool(passBack)])
        case .handlerRemoved(let screen, let key):
            return .removeHandler(screen: try id(screen, "/screen"), key: key)
        case .preferencePublished(let screen, let key, let value, _, _):
            return .publish(screen: try id(screen, "/screen"), key: key, body: ["value": value])
        case .sessionEnded:
            guard base.isEmpty else { throw failure("a batch cannot end the session", "/type") }
            return .end(purge: false)
        case .stackCreated(let resource):
            return .createStack(
                ["id": .string(resource.id.rawValue), "root": try root(resource, "/stack/screens")])
        case .stackSelected(let selected):
            return .selectStack(["stack": .string(try stack(selected, "/stack"))])
        case .stackRemoved(let removed, _, _, _):
            return .removeStack(stack: try stack(removed, "/stack"))
        case .stackMoved(let moved, let position):
            return .moveStack(stack: try stack(moved, "/stack"), body: ["position": .integer(Int64(position))])
        case .stackPresented(let resource):
            guard let style = resource.kind.presentationStyle, let presenter = resource.presenter else {
                throw failure("a presentation needs a sheet or fullScreenCover kind and a presenter", "/stack")
            }
            return .present([
                "from": .string(try id(presenter, "/stack/presenter")), "style": .string(style.rawValue),
                "root": try root(resource, "/stack/screens"),
            ])
        case .stackDismissed(let dismissed, _, _):
            return .dismiss(["stack": .string(try stack(dismissed, "/stack"))])
        case .screensReplaced(_, let screen, _, let pushed, _):
            return .replaceAbove(screen: try id(screen, "/screen"), body: ["screens": .array(pushed.map(body))])
        case .screenReturned(let screen, let key, let value, _, _, _, _, _):
            return .returnResult(screen: try id(screen, "/screen"), body: ["key": .string(key), "value": value])
        case .batchApplied:
            // A whole batch is taken apart by `append`; one inside a batch cannot be made.
            throw failure("a batch cannot hold a batch", "/type")
        }
    }

    /// Records the ids the copy gave the screens and presentations an event made.
    private mutating func learnIDs(recorded: SessionEvent, copied: SessionEvent) {
        func learn(_ old: [ScreenResource], _ new: [ScreenResource]) {
            for (before, after) in zip(old, new) { screenIDs[before.id] = after.id }
        }
        switch (recorded, copied) {
        case (.screenPushed(let old), .screenPushed(let new)),
            (.stackScreenPushed(_, let old), .stackScreenPushed(_, let new)):
            screenIDs[old.id] = new.id
        case (.pathReplaced(_, let old), .pathReplaced(_, let new)),
            (.stackPathReplaced(_, _, let old, _), .stackPathReplaced(_, _, let new, _)),
            (.screensReplaced(_, _, _, let old, _), .screensReplaced(_, _, _, let new, _)):
            learn(old, new)
        case (.stackCreated(let old), .stackCreated(let new)), (.stackPresented(let old), .stackPresented(let new)):
            stackIDs[old.id] = new.id
            learn(old.screens, new.screens)
        default:
            break
        }
    }

    /// Checks that the copy appended the recorded event, `copied` being its JSON: the same JSON
    /// but for the ids the copy gave what it made. A failure points at the first difference.
    private func check(_ copied: JSONValue, against recorded: RecordedEvent, index: Int) throws(Failure) {
        let recordedJSON = recorded.json
        guard !matches(recordedJSON, copied) else { return }
        let expected = withCopiedIDs(recordedJSON, as: copied)
        let first = JSONPatch.difference(from: expected, to: copied).operations.first
        var pointer = ""
        switch first {
        case .add(let path, _), .remove(let path), .replace(let path, _), .test(let path, _): pointer = path
        case .move(_, let path), .copy(_, let path): pointer = path
        case nil: break
        }
        throw Failure(
            index: index, pointer: pointer,
            reason:
                "this event does not replay as recorded: replaying it gives another \(pointer.isEmpty ? "event" : pointer)"
        )
    }

    /// Whether `copied` is `recorded` but for the ids the copy gave (as `withCopiedIDs` has it),
    /// compared in place.
    private func matches(_ recorded: JSONValue, _ copied: JSONValue) -> Bool {
        switch (recorded, copied) {
        case (.string(let old), .string(let new)):
            return old == new || isCopiedID(old, new)
        case (.array(let old), .array(let new)):
            return old.count == new.count && zip(old, new).allSatisfy { matches($0, $1) }
        case (.object(let old), .object(let new)):
            return old.count == new.count
                && old.allSatisfy { key, value in new[key].map { matches(value, $0) } ?? false }
        default:
            return recorded == copied
        }
    }

    /// Whether `new` is the id the copy gave what the recorded history calls `old`.
    private func isCopiedID(_ old: String, _ new: String) -> Bool {
        screenIDs[ScreenID(old)]?.rawValue == new || stackIDs[StackID(old)]?.rawValue == new
    }

    /// `recorded` with each text that names a screen or a presentation the copy made by its
    /// recorded id replaced by the copy's id, where `copied` has that id in the same place. So
    /// the encoding of events says where ids are, for every type at once; a value's text is
    /// copied as it is, so it stays equal even when it spells an id.
    private func withCopiedIDs(_ recorded: JSONValue, as copied: JSONValue) -> JSONValue {
        switch (recorded, copied) {
        case (.string(let old), .string(let new)):
            return old != new && isCopiedID(old, new) ? copied : recorded
        case (.array(let old), .array(let new)):
            return .array(old.indices.map { $0 < new.count ? withCopiedIDs(old[$0], as: new[$0]) : old[$0] })
        case (.object(var members), .object(let new)):
            for (key, value) in members {
                if let other = new[key] { members[key] = withCopiedIDs(value, as: other) }
            }
            return .object(members)
        default:
            return recorded
        }
    }
}
