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

// MARK: - Decoding

extension MutationResult {
    /// The kinds of mutation answer. An answer does not name its kind (a push answers
    /// `{"screen", "version"}`, as a handler does), so a client decodes it as the kind it asked for.
    public enum Kind: String, Sendable, CaseIterable {
        case pushed, popped, pathReplaced, valuesUpdated, handlerSet, handlerRemoved, published, ended
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
        }
    }

    /// Decodes what `json` writes for a mutation of `kind`. `.ended` has no body: pass nil and the
    /// version from the answer's `ETag`. Members it does not know are ignored.
    ///
    /// ```swift
    /// let result = try MutationResult(json: body, kind: .pushed)   // .pushed(screen:version:)
    /// ```
    ///
    /// - Throws: `WireDecodingError` naming the first member that is missing or mistyped.
    public init(json: JSONValue?, kind: Kind, version etagVersion: Int64? = nil) throws(WireDecodingError) {
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
        switch kind {
        case .pushed:
            self = .pushed(screen: try screen(), version: version)
        case .popped:
            self = .popped(try fields.screenIDs("popped"), version: version)
        case .pathReplaced:
            self = .pathReplaced(
                popped: try fields.screenIDs("popped"),
                pushed: try fields.list("pushed") { item, pointer throws(WireDecodingError) in
                    try ScreenResource(json: item, pointer: pointer)
                },
                version: version)
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
                deliveries: try fields.list("deliveries") { item, pointer throws(WireDecodingError) in
                    try PreferenceDelivery(json: item, pointer: pointer)
                },
                stoppedAt: try fields.optionalScreenID("stoppedAt"), version: version)
        case .ended:
            self = .ended(version: version)
        }
    }
}
