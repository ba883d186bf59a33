import NavigationValues
import NavigationValuesWire

// Commands on a session's stacks (docs/Stacks.md): tabs, presentations, and push, pop and path on
// any stack. As for every command, an operation returned here always applies.

extension CommandValidator {
    // MARK: - Push, pop and path on any stack

    func push(_ body: JSONValue, onto reference: String) throws(SessionError) -> SessionOperation {
        let (stackID, stack) = try stack(reference)
        let fields = try object(body, allowed: ["name", "values"])
        try checkRoom(adding: 1)
        try checkUncovered(stack, stackID)
        return .push(stackID, try seed(fields, pointer: ""))
    }

    /// The screens a pop removes from a stack, topmost first.
    func pop(_ body: JSONValue, from reference: String) throws(SessionError) -> SessionOperation {
        let (stackID, stack) = try stack(reference)
        let fields = try object(body, allowed: ["count", "to"])
        let above = max(stack.count - 1, 0)  // the screens above the root
        let ids: [ScreenID]
        switch (fields["count"], fields["to"]) {
        case (.some, .some):
            throw SessionError(.invalid, "give either count or to, not both", pointer: "/to")
        case (.some(let count), nil):
            guard let count = count.integerValue, count >= 1 else {
                throw SessionError(.invalid, "expected an integer of at least 1", pointer: "/count")
            }
            guard count <= above else {
                throw SessionError(
                    .conflict, "cannot pop \(count) screen(s): only \(above) above the root; the root stays")
            }
            ids = stack.topIDs(Int(count))
        case (nil, .some(let to)):
            guard let reference = to.stringValue else {
                throw SessionError(.invalid, "expected a screen id, root or top", pointer: "/to")
            }
            let target = try screen(reference, on: stack)
            guard let index = stack.index(of: target.id) else {
                throw SessionError(.notFound, "no screen '\(reference)' on stack '\(stackID)'")
            }
            ids = stack.topIDs(stack.count - 1 - index)
        case (nil, nil):
            // An empty body pops the topmost screen, like a back button.
            guard above > 0, let top = stack.lastEntry else {
                throw SessionError(.conflict, "only the root is left; the root cannot be popped")
            }
            ids = [top.id]
        }
        return .pop(stackID, ids)
    }

    func replacePath(_ body: JSONValue, of reference: String) throws(SessionError) -> SessionOperation {
        let (stackID, stack) = try stack(reference)
        let fields = try object(body, allowed: ["screens"])
        guard let list = fields["screens"]?.arrayValue else {
            throw SessionError(.invalid, "expected an array of screens", pointer: "/screens")
        }
        try checkRoom(adding: list.count, removing: stack.count - 1, pointer: "/screens")
        if !list.isEmpty, stack.count == 1 { try checkUncovered(stack, stackID) }
        let seeds = try seeds(list, pointer: "/screens")
        return .replacePath(stackID, popped: stack.ids.dropFirst().reversed(), pushed: seeds)
    }

    // MARK: - Tabs

    func createStack(_ body: JSONValue) throws(SessionError) -> SessionOperation {
        let fields = try object(body, allowed: ["id", "root"])
        guard let name = fields["id"]?.stringValue else {
            throw SessionError(.invalid, "expected the stack's name, a string", pointer: "/id")
        }
        if let problem = StackName.problem(with: name) {
            throw SessionError(.invalid, problem, pointer: "/id")
        }
        guard session.tree.stack(StackID(name)) == nil else {
            throw SessionError(.conflict, "session \(session.id.rawValue) already has a stack '\(name)'")
        }
        try checkStackRoom()
        try checkRoom(adding: 1)
        return .createStack(StackID(name), root: try rootSeed(fields["root"]))
    }

    func selectStack(_ body: JSONValue) throws(SessionError) -> SessionOperation {
        let fields = try object(body, allowed: ["stack"])
        guard let reference = fields["stack"]?.stringValue else {
            throw SessionError(.invalid, "expected a stack: main, a tab's name, selected or top", pointer: "/stack")
        }
        let (id, _) = try stack(reference)
        guard session.tree.kind(of: id)?.isPresentation != true else {
            throw SessionError(
                .conflict, "stack '\(id)' is a presentation, shown over its presenter: select its presenter's stack")
        }
        return .selectStack(id)
    }

    func removeStack(_ reference: String) throws(SessionError) -> SessionOperation {
        let (id, _) = try stack(reference)
        switch session.tree.kind(of: id) {
        case .tab: return .removeStack(id)
        case .sheet, .fullScreenCover: return .dismiss(id)
        case .main, nil: throw SessionError(.conflict, "the main stack cannot be removed")
        }
    }

    /// A tab moved to `{"position": N}` among the tabs (0: the first one after the main stack).
    func moveStack(_ reference: String, _ body: JSONValue) throws(SessionError) -> SessionOperation {
        let (id, _) = try stack(reference)
        let fields = try object(body, allowed: ["position"])
        guard let position = fields["position"]?.integerValue, position >= 0 else {
            throw SessionError(
                .invalid, "expected the tab's new position, an integer of at least 0", pointer: "/position")
        }
        switch session.tree.kind(of: id) {
        case .tab: break
        case .sheet, .fullScreenCover:
            throw SessionError(.conflict, "stack '\(id)' is a presentation, shown over its presenter: only tabs move")
        case .main, nil: throw SessionError(.conflict, "the main stack stays first: only tabs move")
        }
        // Past the last tab depends on the session, as a pop past the root does: a conflict.
        let tabs = session.tree.tabIDs.count - 1
        guard position < tabs else {
            throw SessionError(
                .conflict,
                "cannot move tab '\(id)' to position \(position): the session has \(tabs) tab(s), 0 to \(tabs - 1)")
        }
        return .moveStack(id, position: Int(position))
    }

    // MARK: - Presentations

    func present(_ body: JSONValue) throws(SessionError) -> SessionOperation {
        let fields = try object(body, allowed: ["from", "style", "root"])
        var reference = "top"
        if let from = fields["from"] {
            guard let text = from.stringValue else {
                throw SessionError(.invalid, "expected a screen id, root or top", pointer: "/from")
            }
            reference = text
        }
        var style = PresentationStyle.sheet
        if let given = fields["style"] {
            guard let text = given.stringValue, let named = PresentationStyle(rawValue: text) else {
                throw SessionError(.invalid, "expected sheet or fullScreenCover", pointer: "/style")
            }
            style = named
        }
        let presenter = try screen(reference)
        let tree = session.tree
        let stackID = tree.stackID(containing: presenter.id) ?? .main
        if let presented = tree.presentation(presentedBy: presenter.id) {
            throw SessionError(.conflict, "screen \(presenter.id.rawValue) already presents '\(presented)'")
        }
        guard tree.stack(stackID)?.lastEntry?.id == presenter.id else {
            throw SessionError(
                .conflict,
                "screen \(presenter.id.rawValue) is not the topmost screen of stack '\(stackID)': only that one presents"
            )
        }
        try checkStackRoom()
        guard (tree.presentationDepth(of: stackID) ?? 0) < limits.maxPresentationDepth else {
            throw SessionError(
                .invalid, "presentations nest at most \(limits.maxPresentationDepth) deep", pointer: "/from")
        }
        try checkRoom(adding: 1)
        let root = try rootSeed(fields["root"])
        return .present(newPresentationID(), style: style, presenter: presenter.id, root: root)
    }

    func dismiss(_ body: JSONValue) throws(SessionError) -> SessionOperation {
        let fields = try object(body, allowed: ["stack"])
        let id: StackID
        if let given = fields["stack"] {
            guard let reference = given.stringValue else {
                throw SessionError(.invalid, "expected a presentation's id or top", pointer: "/stack")
            }
            id = try stack(reference).0
        } else {
            id = session.tree.visibleStackID
        }
        guard session.tree.kind(of: id)?.isPresentation == true else {
            throw SessionError(
                .conflict,
                fields["stack"] == nil
                    ? "nothing is presented: the stack a user sees is '\(id)'"
                    : "stack '\(id)' is not a presentation (a tab is removed with DELETE …/stacks/\(id))")
        }
        return .dismiss(id)
    }

    // MARK: - Compound changes

    func replaceAbove(_ reference: String, _ body: JSONValue) throws(SessionError) -> SessionOperation {
        let entry = try screen(reference)
        let fields = try object(body, allowed: ["screens"])
        guard let list = fields["screens"]?.arrayValue else {
            throw SessionError(.invalid, "expected an array of screens", pointer: "/screens")
        }
        guard let stackID = session.tree.stackID(containing: entry.id), let stack = session.tree.stack(stackID),
            let index = stack.index(of: entry.id)
        else { throw SessionError(.notFound, "no screen '\(reference)' in session \(session.id.rawValue)") }
        try checkRoom(adding: list.count, removing: stack.count - 1 - index, pointer: "/screens")
        if !list.isEmpty, let presented = session.tree.presentation(presentedBy: entry.id) {
            throw SessionError(.conflict, "screen \(entry.id.rawValue) presents '\(presented)': dismiss it first")
        }
        let seeds = try seeds(list, pointer: "/screens")
        return .replaceAbove(screen: entry.id, popped: stack.ids[(index + 1)...].reversed(), pushed: seeds)
    }

    func returnResult(_ reference: String, _ body: JSONValue) throws(SessionError) -> SessionOperation {
        let entry = try screen(reference)
        let fields = try object(body, allowed: ["key", "value"])
        guard let key = fields["key"]?.stringValue else {
            throw SessionError(.invalid, "expected a preference key", pointer: "/key")
        }
        do {
            try checkPreferenceKey(key)
        } catch {
            throw SessionError(.invalid, error.detail, pointer: "/key")
        }
        guard let value = fields["value"] else {
            throw SessionError(.invalid, "a preference needs a value", pointer: "/value")
        }
        if let problem = session.schema.checkPreference(value, for: key, pointer: "/value") {
            throw SessionError(.invalid, problem.detail, fieldErrors: [problem])
        }
        try checkSize(value, pointer: "/value")
        let tree = session.tree
        if let stackID = tree.stackID(containing: entry.id), tree.stack(stackID)?.index(of: entry.id) == 0,
            tree.kind(of: stackID)?.isPresentation != true
        {
            throw SessionError(
                .conflict, "screen \(entry.id.rawValue) is the root of stack '\(stackID)', which stays: it cannot pop")
        }
        return .returnResult(screen: entry.id, key: key, value: value)
    }

    // MARK: - Pieces

    /// The stack a `{stack}` reference names.
    func stack(_ reference: String) throws(SessionError) -> (StackID, ScreenStack<String>) {
        guard let id = session.stackID(reference: reference), let stack = session.tree.stack(id) else {
            throw SessionError(.notFound, "no stack '\(reference)' in session \(session.id.rawValue)")
        }
        return (id, stack)
    }

    /// A screen named within one stack: `root` and `top` are that stack's ends.
    private func screen(_ reference: String, on stack: ScreenStack<String>) throws(SessionError) -> LiveSession.Screen {
        let entry: LiveSession.Screen?
        switch reference {
        case "root": entry = stack.firstEntry
        case "top": entry = stack.lastEntry
        default: entry = session.screen(reference: reference)
        }
        guard let entry else { throw SessionError(.notFound, "no screen '\(reference)'") }
        return entry
    }

    private func seeds(_ list: [JSONValue], pointer: String) throws(SessionError) -> [ScreenSeed] {
        var seeds: [ScreenSeed] = []
        for (index, item) in list.enumerated() {
            let itemFields = try object(item, allowed: ["name", "values"], pointer: "\(pointer)/\(index)")
            seeds.append(try seed(itemFields, pointer: "\(pointer)/\(index)"))
        }
        return seeds
    }

    /// A new stack's root, from `{"name", "values"}` at `/root` (an empty root when absent).
    private func rootSeed(_ body: JSONValue?) throws(SessionError) -> ScreenSeed {
        try seed(try object(body ?? [:], allowed: ["name", "values"], pointer: "/root"), pointer: "/root")
    }

    /// Refuses a push onto a stack whose topmost screen presents (docs/Stacks.md §1).
    private func checkUncovered(_ stack: ScreenStack<String>, _ id: StackID) throws(SessionError) {
        if let top = stack.lastEntry?.id, let presented = session.tree.presentation(presentedBy: top) {
            throw SessionError(
                .conflict,
                "the topmost screen of stack '\(id)', \(top.rawValue), presents '\(presented)': dismiss it first")
        }
    }

    /// The screen limit counts every stack's screens.
    private func checkRoom(adding added: Int, removing removed: Int = 0, pointer: String? = nil) throws(SessionError) {
        guard session.screenCount - removed + added <= limits.maxScreens else {
            let detail = "a session holds at most \(limits.maxScreens) screens"
            throw pointer.map { SessionError(.invalid, detail, pointer: $0) } ?? SessionError(.invalid, detail)
        }
    }

    private func checkStackRoom() throws(SessionError) {
        guard session.tree.stackIDs.count < limits.maxStacks else {
            throw SessionError(
                .invalid, "a session holds at most \(limits.maxStacks) stacks (the main stack, tabs and presentations)")
        }
    }

    /// `p_` and the random part of a new screen id: unique, and from the service's generator.
    private func newPresentationID() -> StackID {
        let base = "p_" + newScreenID().rawValue.dropFirst(2)
        var candidate = StackID(base)
        var attempt = 1
        while session.tree.stack(candidate) != nil {
            attempt += 1
            candidate = StackID("\(base)-\(attempt)")
        }
        return candidate
    }
}

/// A tab's name (docs/Stacks.md): 1-64 characters of `[A-Za-z0-9_.-]`, not `main`, `selected` or
/// `top` (stack references), not starting with `p_` (presentations' ids).
enum StackName {
    static func problem(with name: String) -> String? {
        let isAllowed = name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F
        }
        guard (1...64).contains(name.utf8.count), isAllowed else {
            return "a stack's name is 1-64 characters of [A-Za-z0-9_.-]"
        }
        guard !["main", "selected", "top"].contains(name) else {
            return "'\(name)' is reserved (main, selected and top name stacks already)"
        }
        guard !name.hasPrefix("p_") else { return "names starting with p_ are presentations' ids" }
        return nil
    }
}
