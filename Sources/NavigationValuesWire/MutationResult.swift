import NavigationValues

/// What a mutation of a session answers (docs/API.md, Endpoints), one case per kind of mutation.
/// Every case carries the session's new `version`.
///
/// ```swift
/// case .pushed(let screen, let version)   // {"screen": SCREEN, "version": 5}
/// ```
public enum MutationResult: Sendable, Equatable {
    case pushed(screen: ScreenResource, version: Int64)
    /// The popped ids, topmost first.
    case popped([ScreenID], version: Int64)
    case pathReplaced(popped: [ScreenID], pushed: [ScreenResource], version: Int64)
    case valuesUpdated(screen: ScreenResource, affected: [AffectedValue], version: Int64)
    case handlerSet(screen: ScreenResource, version: Int64)
    case handlerRemoved(version: Int64)
    case published(deliveries: [PreferenceDelivery], stoppedAt: ScreenID?, version: Int64)
    /// The session was ended (or purged); the answer has no body.
    case ended(version: Int64)

    // MARK: Several stacks (docs/Stacks.md)

    /// A tab added, with its root (201).
    case stackCreated(stack: StackResource, version: Int64)
    /// The selected stack and the screen a user now sees.
    case stackSelected(stack: StackID, visibleScreen: ScreenID?, version: Int64)
    /// A tab removed: its screens, topmost first, what they presented, and the stack selected after.
    case stackRemoved(stack: StackID, screens: [ScreenID], dismissed: [StackID], selected: StackID, version: Int64)
    /// A stack presented, with its root (201).
    case stackPresented(stack: StackResource, version: Int64)
    /// A presentation dismissed: its screens, topmost first, and the presentations inside it.
    case stackDismissed(stack: StackID, screens: [ScreenID], dismissed: [StackID], version: Int64)
    /// Screens popped from a stack, topmost first, and the presentations dismissed with them.
    case stackPopped(stack: StackID, popped: [ScreenID], dismissed: [StackID], version: Int64)
    /// Every screen above a stack's root replaced, and the presentations dismissed with them.
    case stackPathReplaced(
        stack: StackID, popped: [ScreenID], pushed: [ScreenResource], dismissed: [StackID], version: Int64)
    /// A tab moved to `position` among the tabs.
    case stackMoved(stack: StackID, position: Int, version: Int64)
    /// The screens above `screen` replaced; `screen` as it is now.
    case screensReplaced(
        screen: ScreenResource, popped: [ScreenID], pushed: [ScreenResource], dismissed: [StackID], version: Int64)
    /// A preference published, then its screen popped (or its presentation dismissed).
    case returned(
        deliveries: [PreferenceDelivery], stoppedAt: ScreenID?, stack: StackID, popped: [ScreenID],
        dismissed: [StackID], version: Int64)
    /// What each operation of a batch answered, in order (each without a version: the batch has one).
    case batchApplied(results: [MutationResult], version: Int64)

    /// The session's version after the mutation.
    public var version: Int64 {
        switch self {
        case .pushed(_, let version), .popped(_, let version), .pathReplaced(_, _, let version),
            .valuesUpdated(_, _, let version), .handlerSet(_, let version), .handlerRemoved(let version),
            .published(_, _, let version), .ended(let version), .stackCreated(_, let version),
            .stackSelected(_, _, let version), .stackRemoved(_, _, _, _, let version), .stackPresented(_, let version),
            .stackDismissed(_, _, _, let version), .stackPopped(_, _, _, let version),
            .stackPathReplaced(_, _, _, _, let version), .stackMoved(_, _, let version),
            .screensReplaced(_, _, _, _, let version),
            .returned(_, _, _, _, _, let version), .batchApplied(_, let version):
            version
        }
    }

    /// The answer's body; nil for `.ended` (204).
    public var json: JSONValue? {
        let version = JSONValue.integer(version)
        func ids(_ ids: [ScreenID]) -> JSONValue { .array(ids.map { .string($0.rawValue) }) }
        func stacks(_ ids: [StackID]) -> JSONValue { .array(ids.map { .string($0.rawValue) }) }
        func id(_ id: StackID) -> JSONValue { .string(id.rawValue) }
        switch self {
        case .pushed(let screen, _):
            return ["screen": screen.json, "version": version]
        case .popped(let popped, _):
            return ["popped": ids(popped), "version": version]
        case .pathReplaced(let popped, let pushed, _):
            return ["popped": ids(popped), "pushed": .array(pushed.map(\.json)), "version": version]
        case .valuesUpdated(let screen, let affected, _):
            return ["screen": screen.json, "affected": .array(affected.map(\.json)), "version": version]
        case .handlerSet(let screen, _):
            return ["screen": screen.json, "version": version]
        case .handlerRemoved:
            return ["version": version]
        case .published(let deliveries, let stoppedAt, _):
            return [
                "deliveries": .array(deliveries.map(\.json)),
                "stoppedAt": stoppedAt.map { .string($0.rawValue) } ?? .null, "version": version,
            ]
        case .ended:
            return nil
        case .stackCreated(let stack, _), .stackPresented(let stack, _):
            return ["stack": stack.json, "version": version]
        case .stackSelected(let stack, let visible, _):
            return [
                "selectedStack": id(stack), "visibleScreen": visible.map { .string($0.rawValue) } ?? .null,
                "version": version,
            ]
        case .stackRemoved(let stack, let screens, let dismissed, let selected, _):
            return [
                "stack": id(stack), "screens": ids(screens), "dismissed": stacks(dismissed),
                "selectedStack": id(selected), "version": version,
            ]
        case .stackDismissed(let stack, let screens, let dismissed, _):
            return ["stack": id(stack), "screens": ids(screens), "dismissed": stacks(dismissed), "version": version]
        case .stackPopped(let stack, let popped, let dismissed, _):
            return ["stack": id(stack), "popped": ids(popped), "dismissed": stacks(dismissed), "version": version]
        case .stackPathReplaced(let stack, let popped, let pushed, let dismissed, _):
            return [
                "stack": id(stack), "popped": ids(popped), "pushed": .array(pushed.map(\.json)),
                "dismissed": stacks(dismissed), "version": version,
            ]
        case .stackMoved(let stack, let position, _):
            return ["stack": id(stack), "position": .integer(Int64(position)), "version": version]
        case .screensReplaced(let screen, let popped, let pushed, let dismissed, _):
            return [
                "screen": screen.json, "popped": ids(popped), "pushed": .array(pushed.map(\.json)),
                "dismissed": stacks(dismissed), "version": version,
            ]
        case .returned(let deliveries, let stoppedAt, let stack, let popped, let dismissed, _):
            return [
                "deliveries": .array(deliveries.map(\.json)),
                "stoppedAt": stoppedAt.map { .string($0.rawValue) } ?? .null, "stack": id(stack),
                "popped": ids(popped), "dismissed": stacks(dismissed), "version": version,
            ]
        case .batchApplied(let results, _):
            let answers: [JSONValue] = results.map { result in
                guard case .object(var members) = result.json ?? [:] else { return [:] }
                members["version"] = nil
                return .object(members)
            }
            return ["results": .array(answers), "version": version]
        }
    }
}

// MARK: - Decoding

extension MutationResult {
    /// The kinds of mutation answer. An answer does not name its kind (a push answers
    /// `{"screen", "version"}`, as a handler does), so a client decodes it as the kind it asked for.
    public enum Kind: String, Sendable, CaseIterable {
        case pushed, popped, pathReplaced, valuesUpdated, handlerSet, handlerRemoved, published, ended
        // Several stacks (docs/Stacks.md).
        case stackCreated, stackSelected, stackRemoved, stackPresented, stackDismissed, stackPopped
        case stackPathReplaced, stackMoved, screensReplaced, returned, batchApplied
    }

    /// This answer's kind.
    public var kind: Kind {
        switch self {
        case .pushed: .pushed
        case .popped: .popped
        case .pathReplaced: .pathReplaced
        case .valuesUpdated: .valuesUpdated
        case .handlerSet: .handlerSet
        case .handlerRemoved: .handlerRemoved
        case .published: .published
        case .ended: .ended
        case .stackCreated: .stackCreated
        case .stackSelected: .stackSelected
        case .stackRemoved: .stackRemoved
        case .stackPresented: .stackPresented
        case .stackDismissed: .stackDismissed
        case .stackPopped: .stackPopped
        case .stackPathReplaced: .stackPathReplaced
        case .stackMoved: .stackMoved
        case .screensReplaced: .screensReplaced
        case .returned: .returned
        case .batchApplied: .batchApplied
        }
    }

    /// The kinds of a batch's results, in order (what a client passes to decode its answer).
    public var operationKinds: [Kind] {
        guard case .batchApplied(let results, _) = self else { return [] }
        return results.map(\.kind)
    }

    /// Decodes what `json` writes for a mutation of `kind`. `.ended` has no body: pass nil and the
    /// version from the answer's `ETag`. Members it does not know are ignored.
    ///
    /// ```swift
    /// let result = try MutationResult(json: body, kind: .pushed)   // .pushed(screen:version:)
    /// ```
    ///
    /// A batch's answer does not name its operations' kinds either: pass them, in order, as
    /// `operations` (`.batchApplied` only; each result gets the batch's version).
    ///
    /// - Throws: `WireDecodingError` naming the first member that is missing or mistyped.
    public init(
        json: JSONValue?, kind: Kind, version etagVersion: Int64? = nil, operations: [Kind] = []
    ) throws(WireDecodingError) {
        if kind == .ended, json == nil {
            guard let etagVersion else {
                throw WireDecodingError(pointer: "", reason: "an ended session's answer needs its version")
            }
            self = .ended(version: etagVersion)
            return
        }
        guard let json else { throw WireDecodingError(pointer: "", reason: "expected an object") }
        let fields = try JSONObjectReader(json)
        let version = try fields.integer("version")
        func screen() throws(WireDecodingError) -> ScreenResource {
            try ScreenResource(json: try fields.value("screen"), pointer: fields.at("screen"))
        }
        func screens(_ name: String) throws(WireDecodingError) -> [ScreenResource] {
            try fields.list(name) { item, pointer throws(WireDecodingError) in
                try ScreenResource(json: item, pointer: pointer)
            }
        }
        func stack() throws(WireDecodingError) -> StackResource {
            try StackResource(json: try fields.value("stack"), pointer: fields.at("stack"))
        }
        func deliveries() throws(WireDecodingError) -> [PreferenceDelivery] {
            try fields.list("deliveries") { item, pointer throws(WireDecodingError) in
                try PreferenceDelivery(json: item, pointer: pointer)
            }
        }
        switch kind {
        case .pushed:
            self = .pushed(screen: try screen(), version: version)
        case .popped:
            self = .popped(try fields.screenIDs("popped"), version: version)
        case .pathReplaced:
            self = .pathReplaced(
                popped: try fields.screenIDs("popped"), pushed: try screens("pushed"), version: version)
        case .valuesUpdated:
            self = .valuesUpdated(
                screen: try screen(),
                affected: try fields.list("affected") { item, pointer throws(WireDecodingError) in
                    try AffectedValue(json: item, pointer: pointer)
                },
                version: version)
        case .handlerSet:
            self = .handlerSet(screen: try screen(), version: version)
        case .handlerRemoved:
            self = .handlerRemoved(version: version)
        case .published:
            self = .published(
                deliveries: try deliveries(), stoppedAt: try fields.optionalScreenID("stoppedAt"), version: version)
        case .ended:
            self = .ended(version: version)
        case .stackCreated:
            self = .stackCreated(stack: try stack(), version: version)
        case .stackPresented:
            self = .stackPresented(stack: try stack(), version: version)
        case .stackSelected:
            self = .stackSelected(
                stack: try fields.stackID("selectedStack"), visibleScreen: try fields.optionalScreenID("visibleScreen"),
                version: version)
        case .stackRemoved:
            self = .stackRemoved(
                stack: try fields.stackID("stack"), screens: try fields.screenIDs("screens"),
                dismissed: try fields.stackIDs("dismissed"), selected: try fields.stackID("selectedStack"),
                version: version)
        case .stackDismissed:
            self = .stackDismissed(
                stack: try fields.stackID("stack"), screens: try fields.screenIDs("screens"),
                dismissed: try fields.stackIDs("dismissed"), version: version)
        case .stackPopped:
            self = .stackPopped(
                stack: try fields.stackID("stack"), popped: try fields.screenIDs("popped"),
                dismissed: try fields.stackIDs("dismissed"), version: version)
        case .stackPathReplaced:
            self = .stackPathReplaced(
                stack: try fields.stackID("stack"), popped: try fields.screenIDs("popped"),
                pushed: try screens("pushed"), dismissed: try fields.stackIDs("dismissed"), version: version)
        case .stackMoved:
            self = .stackMoved(
                stack: try fields.stackID("stack"), position: try fields.position("position"), version: version)
        case .screensReplaced:
            self = .screensReplaced(
                screen: try screen(), popped: try fields.screenIDs("popped"), pushed: try screens("pushed"),
                dismissed: try fields.stackIDs("dismissed"), version: version)
        case .returned:
            self = .returned(
                deliveries: try deliveries(), stoppedAt: try fields.optionalScreenID("stoppedAt"),
                stack: try fields.stackID("stack"), popped: try fields.screenIDs("popped"),
                dismissed: try fields.stackIDs("dismissed"), version: version)
        case .batchApplied:
            self = .batchApplied(
                results: try Self.batchResults(fields, version: version, operations: operations), version: version)
        }
    }

    /// A batch's results, each decoded as the kind of its operation, with the batch's version.
    private static func batchResults(
        _ fields: JSONObjectReader, version: Int64, operations: [Kind]
    ) throws(WireDecodingError) -> [MutationResult] {
        guard case .array(let items) = try fields.value("results") else {
            throw WireDecodingError(pointer: fields.at("results"), reason: "expected an array")
        }
        guard items.count == operations.count else {
            throw WireDecodingError(
                pointer: fields.at("results"),
                reason: "expected \(operations.count) results (one per operation), found \(items.count)")
        }
        var results: [MutationResult] = []
        for (index, (item, operation)) in zip(items, operations).enumerated() {
            guard operation != .batchApplied else {
                throw WireDecodingError(pointer: fields.at("results") + "/\(index)", reason: "a batch cannot nest")
            }
            // Each result is written without a version: the batch has one.
            var itemJSON = item
            if case .object(var members) = item {
                members["version"] = .integer(version)
                itemJSON = .object(members)
            }
            do {
                results.append(try MutationResult(json: itemJSON, kind: operation, version: version))
            } catch {
                throw WireDecodingError(
                    pointer: fields.at("results") + "/\(index)" + error.pointer, reason: error.reason)
            }
        }
        return results
    }
}

// MARK: - From its event

/// What a mutation's answer reads of the session after the change, besides the event it appended.
package protocol ChangedSession {
    /// The screen with this id as it is now; nil when the session has none.
    func screenResource(_ id: ScreenID) -> ScreenResource?
    /// The screen a user sees now.
    var visibleScreenID: ScreenID? { get }
}

extension MutationResult {
    /// The answer to the mutation that appended `event`, leaving the session at `version`: the
    /// event's fields in the shape docs/API.md and docs/Stacks.md give the answer, with the screen a
    /// change of values, handlers or `above` names as it is now, and the screen a user sees after a
    /// selection. A batch answers its steps' answers, `steps`, each made so when its step applied.
    ///
    /// Nil for an event no mutation answers with (`session.created`), a batch whose `steps` do not
    /// match its events, or a screen `session` does not have (a change that did not apply as its
    /// event says).
    package init?(
        answering event: SessionEvent, version: Int64, steps: [MutationResult] = [], in session: some ChangedSession
    ) {
        switch event {
        case .sessionCreated:
            return nil
        case .screenPushed(let screen), .stackScreenPushed(_, let screen):
            self = .pushed(screen: screen, version: version)
        case .screensPopped(let popped):
            self = .popped(popped, version: version)
        case .pathReplaced(let popped, let pushed):
            self = .pathReplaced(popped: popped, pushed: pushed, version: version)
        case .valuesUpdated(let id, _, _, let affected):
            guard let screen = session.screenResource(id) else { return nil }
            self = .valuesUpdated(screen: screen, affected: affected, version: version)
        case .handlerSet(let id, _, _):
            guard let screen = session.screenResource(id) else { return nil }
            self = .handlerSet(screen: screen, version: version)
        case .handlerRemoved:
            self = .handlerRemoved(version: version)
        case .preferencePublished(_, _, _, let deliveries, let stoppedAt):
            self = .published(deliveries: deliveries, stoppedAt: stoppedAt, version: version)
        case .sessionEnded:
            self = .ended(version: version)
        case .stackCreated(let stack):
            self = .stackCreated(stack: stack, version: version)
        case .stackSelected(let stack):
            self = .stackSelected(stack: stack, visibleScreen: session.visibleScreenID, version: version)
        case .stackRemoved(let stack, let screens, let dismissed, let selected):
            self = .stackRemoved(
                stack: stack, screens: screens, dismissed: dismissed, selected: selected, version: version)
        case .stackPresented(let stack):
            self = .stackPresented(stack: stack, version: version)
        case .stackDismissed(let stack, let screens, let dismissed):
            self = .stackDismissed(stack: stack, screens: screens, dismissed: dismissed, version: version)
        case .stackScreensPopped(let stack, let popped, let dismissed):
            self = .stackPopped(stack: stack, popped: popped, dismissed: dismissed, version: version)
        case .stackPathReplaced(let stack, let popped, let pushed, let dismissed):
            self = .stackPathReplaced(
                stack: stack, popped: popped, pushed: pushed, dismissed: dismissed, version: version)
        case .stackMoved(let stack, let position):
            self = .stackMoved(stack: stack, position: position, version: version)
        case .screensReplaced(_, let id, let popped, let pushed, let dismissed):
            guard let screen = session.screenResource(id) else { return nil }
            self = .screensReplaced(
                screen: screen, popped: popped, pushed: pushed, dismissed: dismissed, version: version)
        case .screenReturned(_, _, _, let deliveries, let stoppedAt, let stack, let popped, let dismissed):
            self = .returned(
                deliveries: deliveries, stoppedAt: stoppedAt, stack: stack, popped: popped, dismissed: dismissed,
                version: version)
        case .batchApplied(let events):
            guard steps.count == events.count else { return nil }
            self = .batchApplied(results: steps, version: version)
        }
    }
}
