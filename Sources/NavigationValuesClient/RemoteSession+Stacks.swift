import Foundation
import NavigationValues
import NavigationValuesWire

// Several stacks per session (docs/Stacks.md): tabs, presentations, any stack's path, changes made
// as one step.

extension StackID {
    /// The selected stack (`main` or a tab), as a reference in a path or a body.
    public static let selected = StackID("selected")
    /// The stack of the screen a user sees, as a reference in a path or a body.
    public static let top = StackID("top")
}

extension RemoteSession {
    // MARK: - Reading stacks

    /// Every stack, which one is selected and the screen a user sees (`GET …/stacks`).
    public func stacks() async throws -> StackList {
        try await read(path("stacks")) { json throws(WireDecodingError) in try StackList(json: json) }
    }

    /// One stack (`GET …/stacks/{stack}`): `main`, a tab, a presentation, `.selected` or `.top`.
    public func stack(_ stack: StackID) async throws -> StackResource {
        try await read(path("stacks", stack.rawValue)) { json throws(WireDecodingError) in
            try StackResource(json: json)
        }
    }

    // MARK: - Tabs

    /// Adds a tab named `id` (1-64 characters of `[A-Za-z0-9_.-]`, not `main`, `selected` or `top`,
    /// not starting with `p_`), with a root screen (`POST …/stacks`); the selection stays.
    @discardableResult
    public func createStack(
        _ id: StackID, root: ScreenSeed? = nil, ifMatch: Int64? = nil, idempotencyKey: String? = nil
    ) async throws -> StackResult {
        var body: [String: JSONValue] = ["id": .string(id.rawValue)]
        if let root { body["root"] = root.json }
        return try await mutate("POST", path("stacks"), .object(body), .stackCreated, ifMatch, idempotencyKey) {
            $0.stackResult
        }
    }

    /// Selects `main` or a tab (`POST …/select`).
    @discardableResult
    public func selectStack(_ stack: StackID, ifMatch: Int64? = nil, idempotencyKey: String? = nil) async throws
        -> SelectResult
    {
        try await mutate(
            "POST", path("select"), ["stack": .string(stack.rawValue)], .stackSelected, ifMatch, idempotencyKey
        ) { $0.selectResult }
    }

    /// Removes a tab, or dismisses a presentation (`DELETE …/stacks/{stack}`); `main` is
    /// `RemoteError.conflict`.
    @discardableResult
    public func removeStack(_ stack: StackID, ifMatch: Int64? = nil, idempotencyKey: String? = nil) async throws
        -> StackRemovalResult
    {
        try await mutate("DELETE", path("stacks", stack.rawValue), nil, .removal, ifMatch, idempotencyKey) {
            $0.stackRemovalResult
        }
    }

    // MARK: - Any stack's path

    /// Pushes a screen onto `stack` (`POST …/stacks/{stack}/push`).
    @discardableResult
    public func push(_ seed: ScreenSeed, onto stack: StackID, ifMatch: Int64? = nil, idempotencyKey: String? = nil)
        async throws -> PushResult
    {
        try await mutate("POST", path("stacks", stack.rawValue, "push"), seed.json, .pushed, ifMatch, idempotencyKey) {
            $0.pushResult
        }
    }

    /// Pops `count` screens from the top of `stack` (`POST …/stacks/{stack}/pop {"count"}`), never
    /// its root; presentations made by popped screens are dismissed with them.
    @discardableResult
    public func pop(count: Int = 1, from stack: StackID, ifMatch: Int64? = nil, idempotencyKey: String? = nil)
        async throws -> StackPopResult
    {
        try await mutate(
            "POST", path("stacks", stack.rawValue, "pop"), ["count": .integer(Int64(count))], .pop, ifMatch,
            idempotencyKey
        ) { $0.stackPopResult }
    }

    /// Pops every screen of `stack` above `screen`, keeping it (`POST …/stacks/{stack}/pop {"to"}`;
    /// `.root` and `.top` are the ends of that stack).
    @discardableResult
    public func pop(
        to screen: ScreenReference, from stack: StackID, ifMatch: Int64? = nil, idempotencyKey: String? = nil
    ) async throws -> StackPopResult {
        try await mutate(
            "POST", path("stacks", stack.rawValue, "pop"), ["to": .string(screen.description)], .pop, ifMatch,
            idempotencyKey
        ) { $0.stackPopResult }
    }

    /// Replaces every screen of `stack` above its root in one step (`PUT …/stacks/{stack}/path`).
    @discardableResult
    public func replacePath(
        _ screens: [ScreenSeed], of stack: StackID, ifMatch: Int64? = nil, idempotencyKey: String? = nil
    ) async throws -> StackPathResult {
        let body: JSONValue = ["screens": .array(screens.map(\.json))]
        return try await mutate(
            "PUT", path("stacks", stack.rawValue, "path"), body, .path, ifMatch, idempotencyKey
        ) { $0.stackPathResult }
    }

    /// Replaces every screen above `screen`, of whatever stack, in one step (`PUT
    /// …/screens/{screen}/above`), dismissing what the popped screens presented.
    @discardableResult
    public func replaceScreens(
        above screen: ScreenReference, with screens: [ScreenSeed], ifMatch: Int64? = nil,
        idempotencyKey: String? = nil
    ) async throws -> ReplaceAboveResult {
        let body: JSONValue = ["screens": .array(screens.map(\.json))]
        return try await mutate(
            "PUT", self.screen(screen).path("above"), body, .screensReplaced, ifMatch, idempotencyKey
        ) { $0.replaceAboveResult }
    }

    // MARK: - Presentations

    /// Presents a stack from `presenter` (the topmost screen of its stack; default `.top`, the
    /// screen a user sees) as a sheet or a full-screen cover, with a root screen (`POST …/present`).
    @discardableResult
    public func present(
        _ root: ScreenSeed? = nil, from presenter: ScreenReference? = nil, style: PresentationStyle = .sheet,
        ifMatch: Int64? = nil, idempotencyKey: String? = nil
    ) async throws -> StackResult {
        try await mutate(
            "POST", path("present"), Self.presentBody(root, presenter, style), .stackPresented, ifMatch,
            idempotencyKey
        ) { $0.stackResult }
    }

    /// Dismisses a presentation (`POST …/dismiss`; nil: the one a user sees), with what it presented.
    @discardableResult
    public func dismiss(_ stack: StackID? = nil, ifMatch: Int64? = nil, idempotencyKey: String? = nil) async throws
        -> StackRemovalResult
    {
        let body: JSONValue = .object(stack.map { ["stack": .string($0.rawValue)] } ?? [:])
        return try await mutate("POST", path("dismiss"), body, .stackDismissed, ifMatch, idempotencyKey) {
            $0.stackRemovalResult
        }
    }

    static func presentBody(_ root: ScreenSeed?, _ presenter: ScreenReference?, _ style: PresentationStyle)
        -> JSONValue
    {
        var body: [String: JSONValue] = ["style": .string(style.rawValue)]
        if let presenter { body["from"] = .string(presenter.description) }
        if let root { body["root"] = root.json }
        return .object(body)
    }

    // MARK: - Changes made as one step

    /// Applies `operations` in order, all or nothing, as one event (`POST …/batch`); a refusal
    /// points at `/operations/N/…`.
    ///
    /// ```swift
    /// try await session.batch([
    ///     .createStack(StackID("search"), root: ScreenSeed("Search")),
    ///     .selectStack(StackID("search")),
    ///     .push(ScreenSeed("Results"), onto: StackID("search")),
    /// ])
    /// ```
    @discardableResult
    public func batch(_ operations: [BatchOperation], ifMatch: Int64? = nil, idempotencyKey: String? = nil)
        async throws -> BatchResult
    {
        let body: JSONValue = ["operations": .array(operations.map(\.json))]
        return try await mutate(
            "POST", path("batch"), body, .batch(operations.map(\.answer)), ifMatch, idempotencyKey
        ) { $0.batchResult }
    }

    // MARK: - Pieces

    /// Reads `path` and decodes its JSON answer.
    func read<T>(
        _ path: String, query: [(name: String, value: String)] = [],
        _ decode: (JSONValue) throws(WireDecodingError) -> T
    ) async throws -> T {
        let request = APIRequest(method: "GET", path: path, query: query, credential: credential)
        let answer = try await transport.perform(request)
        return try transport.decode(answer, for: request, decode)
    }
}

/// One operation of a batch (`POST …/batch`): the members of that operation's own endpoint body,
/// plus what its path names (docs/Stacks.md, Batches).
public struct BatchOperation: Sendable, Equatable {
    /// The operation as the batch's body lists it (`{"op": "push", "stack": …, "name": …}`).
    public let json: JSONValue
    let answer: AnswerShape

    init(_ op: String, _ members: [String: JSONValue], _ answer: AnswerShape) {
        var body = members
        body["op"] = .string(op)
        json = .object(body)
        self.answer = answer
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.json == rhs.json }

    /// Pushes a screen onto `stack`.
    public static func push(_ seed: ScreenSeed, onto stack: StackID = .main) -> Self {
        Self(
            "push", ["stack": .string(stack.rawValue), "name": .string(seed.name), "values": .object(seed.values)],
            .fixed(.pushed))
    }

    /// Pops `count` screens from `stack`.
    public static func pop(count: Int = 1, from stack: StackID = .main) -> Self {
        Self("pop", ["stack": .string(stack.rawValue), "count": .integer(Int64(count))], .pop)
    }

    /// Pops every screen of `stack` above `screen`.
    public static func pop(to screen: ScreenReference, from stack: StackID = .main) -> Self {
        Self("pop", ["stack": .string(stack.rawValue), "to": .string(screen.description)], .pop)
    }

    /// Replaces every screen of `stack` above its root.
    public static func replacePath(_ screens: [ScreenSeed], of stack: StackID = .main) -> Self {
        Self("replacePath", ["stack": .string(stack.rawValue), "screens": .array(screens.map(\.json))], .path)
    }

    /// Replaces every screen above `screen`.
    public static func replaceScreens(above screen: ScreenReference, with screens: [ScreenSeed]) -> Self {
        Self(
            "replaceAbove", ["screen": .string(screen.description), "screens": .array(screens.map(\.json))],
            .fixed(.screensReplaced))
    }

    /// Sets and removes a screen's own values (nil removes the override).
    public static func setValues(_ values: [String: JSONValue?], on screen: ScreenReference) -> Self {
        Self(
            "setValues", ["screen": .string(screen.description), "values": .object(values.mapValues { $0 ?? .null })],
            .fixed(.valuesUpdated))
    }

    /// Installs a screen's handler for the named key.
    public static func setPreferenceHandler(named key: String, passBack: Bool, on screen: ScreenReference) -> Self {
        Self(
            "setHandler", ["screen": .string(screen.description), "key": .string(key), "passBack": .bool(passBack)],
            .fixed(.handlerSet))
    }

    /// Removes a screen's handler for the named key.
    public static func removePreferenceHandler(named key: String, on screen: ScreenReference) -> Self {
        Self("removeHandler", ["screen": .string(screen.description), "key": .string(key)], .fixed(.handlerRemoved))
    }

    /// Publishes a value for the named key from a screen.
    public static func updatePreference(named key: String, value: JSONValue, from screen: ScreenReference) -> Self {
        Self(
            "publish", ["screen": .string(screen.description), "key": .string(key), "value": value],
            .fixed(.published))
    }

    /// Publishes a value from a screen, then pops it (or dismisses the presentation it is the root of).
    public static func returnResult(named key: String, value: JSONValue, from screen: ScreenReference) -> Self {
        Self(
            "return", ["screen": .string(screen.description), "key": .string(key), "value": value],
            .fixed(.returned))
    }

    /// Adds a tab.
    public static func createStack(_ id: StackID, root: ScreenSeed? = nil) -> Self {
        var members: [String: JSONValue] = ["id": .string(id.rawValue)]
        if let root { members["root"] = root.json }
        return Self("createStack", members, .fixed(.stackCreated))
    }

    /// Selects `main` or a tab.
    public static func selectStack(_ stack: StackID) -> Self {
        Self("selectStack", ["stack": .string(stack.rawValue)], .fixed(.stackSelected))
    }

    /// Removes a tab or dismisses a presentation.
    public static func removeStack(_ stack: StackID) -> Self {
        Self("removeStack", ["stack": .string(stack.rawValue)], .removal)
    }

    /// Moves a tab among the tabs.
    public static func moveStack(_ stack: StackID, to position: Int) -> Self {
        Self(
            "moveStack", ["stack": .string(stack.rawValue), "position": .integer(Int64(position))], .fixed(.stackMoved))
    }

    /// Presents a stack from `presenter` (default: the screen a user sees).
    public static func present(
        _ root: ScreenSeed? = nil, from presenter: ScreenReference? = nil, style: PresentationStyle = .sheet
    ) -> Self {
        guard case .object(let members) = RemoteSession.presentBody(root, presenter, style) else {
            return Self("present", [:], .fixed(.stackPresented))
        }
        return Self("present", members, .fixed(.stackPresented))
    }

    /// Dismisses a presentation (nil: the one a user sees).
    public static func dismiss(_ stack: StackID? = nil) -> Self {
        Self("dismiss", stack.map { ["stack": .string($0.rawValue)] } ?? [:], .fixed(.stackDismissed))
    }
}

/// How a mutation's answer is decoded: as one kind, or by its members where one endpoint answers
/// in two shapes (a pop or a path of the main stack answers as docs/API.md's endpoints do; removing a
/// tab names the stack selected after, dismissing a presentation does not).
indirect enum AnswerShape: Sendable, Equatable {
    case fixed(MutationResult.Kind)
    /// `stackPopped`, or `popped` without `stack`.
    case pop
    /// `stackPathReplaced`, or `pathReplaced` without `stack`.
    case path
    /// `stackRemoved` with `selectedStack`, else `stackDismissed`.
    case removal
    /// Each operation's shape, in order.
    case batch([AnswerShape])

    /// The kind of `json`, and for a batch the kinds of its results.
    func kinds(of json: JSONValue?) -> (kind: MutationResult.Kind, operations: [MutationResult.Kind]) {
        switch self {
        case .fixed(let kind): return (kind, [])
        case .pop: return (json?["stack"] == nil ? .popped : .stackPopped, [])
        case .path: return (json?["stack"] == nil ? .pathReplaced : .stackPathReplaced, [])
        case .removal: return (json?["selectedStack"] == nil ? .stackDismissed : .stackRemoved, [])
        case .batch(let shapes):
            var results: [JSONValue] = []
            if case .array(let items) = json?["results"] { results = items }
            let kinds = shapes.enumerated().map { index, shape in
                shape.kinds(of: index < results.count ? results[index] : nil).kind
            }
            return (.batchApplied, kinds)
        }
    }
}
