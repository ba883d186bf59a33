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

    /// The session's version after the mutation.
    public var version: Int64 {
        switch self {
        case .pushed(_, let version), .popped(_, let version), .pathReplaced(_, _, let version),
            .valuesUpdated(_, _, let version), .handlerSet(_, let version), .handlerRemoved(let version),
            .published(_, _, let version), .ended(let version):
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
        }
    }
}
