import NavigationValues

/// What a mutation of a session answers (API.md, Endpoints), one case per kind of mutation.
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
            .stackPathReplaced(_, _, _, _, let version), .screensReplaced(_, _, _, _, let version),
            .returned(_, _, _, _, _, let version), .batchApplied(_, let version):
            version
        }
    }

    /// The answer's body; nil for `.ended` (204).
    public var json: JSONValue? {
        let version = JSONValue.integer(version)
        func ids(_ ids: [ScreenID]) -> JSONValue { .array(ids.map { .string($0.rawValue) }) }
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
        default:
            return stackJSON(version: version)
        }
    }

    private func stackJSON(version: JSONValue) -> JSONValue? {
        func ids(_ ids: [ScreenID]) -> JSONValue { .array(ids.map { .string($0.rawValue) }) }
        func stacks(_ ids: [StackID]) -> JSONValue { .array(ids.map { .string($0.rawValue) }) }
        func id(_ id: StackID) -> JSONValue { .string(id.rawValue) }
        switch self {
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
        default:
            return nil
        }
    }
}
