/// A tree of navigation stacks, as a real app holds them (docs/Stacks.md): the main stack, named
/// stacks beside it (the tabs of a `TabView`), one of which is selected, and stacks presented by a
/// screen of any of them (sheets and full-screen covers), which may present further ones.
///
/// ```swift
/// let tree = ScreenTree<String>()
/// tree.main.push("Inbox")
/// try tree.addStack(StackID("search"), root: "Search")
/// try tree.select(StackID("search"))                  // the main stack keeps its screens
/// let compose = try tree.present(.sheet, from: tree.main.ids[0], id: StackID("compose"), root: "Compose")
/// compose.root?[TitleKey.self]                        // what the presenter resolves to
/// try tree.dismiss(StackID("compose"))                // pops and cleans up everything in it
/// ```
///
/// As contexts (docs/SEMANTICS.md §1): the tree's own `context` (`.tabView`) has the main stack and the
/// tabs as children, the selected one last; a presented stack (`.sheet`, `.fullScreenCover`) is a
/// child of the screen presenting it, its root's `previous` that screen and that screen's `next`
/// its root. So `top()` of the tree's context is the screen a user sees (`visibleScreen`), forward
/// values and preferences cross a presentation, and separate tabs share nothing.
///
/// A screen presents at most one stack at a time, and only while it is the topmost screen of its
/// own stack: pushing above it is refused until the presentation is dismissed, and popping it
/// dismisses what it presents first. Screen ids are unique across the whole tree.
///
/// Change the tree through its methods, or through its stacks' own `push` and `pop` (which keep
/// these rules too); never attach or detach their contexts by hand. Like `ScreenStack`, a tree
/// belongs to one isolation domain.
public final class ScreenTree<Element> {
    struct Node {
        let stack: ScreenStack<Element>
        let kind: StackKind
        /// For a presentation: the screen that presents it, by id and by context.
        let presenter: ScreenID?
        let presenterContext: ObjectIdentifier?
    }

    /// The tree's own context (`.tabView`, role `.screen`): the main stack and the tabs are its
    /// children, the selected one last.
    public let context: ScreenContext
    /// The main stack, which every tree has and which is never removed.
    public let main: ScreenStack<Element>
    /// The selected stack: the main stack or a tab (initially the main stack).
    public private(set) var selectedStackID: StackID = .main
    /// The main stack and the tabs, in the order they were added (the main stack first). Starts
    /// as one array every tree shares (copied on its first change), so a tree without tabs
    /// allocates none.
    public private(set) var tabIDs: [StackID] = mainStackOnly
    /// The presentations, in the order they were presented (a presenter's stack comes before).
    public private(set) var presentationIDs: [StackID] = []

    private var nodes: Nodes
    private var presentedBy: [ScreenID: StackID] = [:]
    private var presentedByContext: [ObjectIdentifier: StackID] = [:]
    private let generator: ScreenIDGenerator
    /// What the changes in progress removed, innermost last, while a public change runs. An
    /// array rather than an optional: empty between changes, it takes one word in every tree
    /// instead of the six of an inline `TreeRemoval?`.
    private var removals: [TreeRemoval] = []

    /// Creates a tree with an empty main stack; screens pushed without an id get one from `ids`,
    /// shared by every stack of the tree.
    public init(ids: ScreenIDGenerator = .incrementing()) {
        generator = ids
        context = ScreenContext(.tabView)
        main = ScreenStack(ids: ids)
        nodes = Nodes(main: main)
        adopt(main)
        main.context.attach(to: context)
    }

    // MARK: - Stacks

    /// Every stack: the main stack and the tabs, then the presentations, each in the order it came.
    public var stackIDs: [StackID] { tabIDs + presentationIDs }

    /// The stack with this id, nil when the tree has none.
    public func stack(_ id: StackID) -> ScreenStack<Element>? { nodes[id]?.stack }

    /// What the stack with this id is, nil when the tree has none.
    public func kind(of id: StackID) -> StackKind? { nodes[id]?.kind }

    /// The screen presenting the stack with this id; nil for the main stack, a tab or an unknown id.
    public func presenter(of id: StackID) -> ScreenID? { nodes[id]?.presenter }

    /// The stack the screen with this id presents, nil when it presents none.
    public func presentation(presentedBy screen: ScreenID) -> StackID? { presentedBy[screen] }

    /// How many presentations lead to the stack with this id: 0 for the main stack and the tabs, 1
    /// for a sheet presented from one of their screens, and so on; nil for an unknown id.
    public func presentationDepth(of id: StackID) -> Int? {
        guard var node = nodes[id] else { return nil }
        var depth = 0
        while let presenter = node.presenter, let stack = stackID(containing: presenter), let next = nodes[stack] {
            depth += 1
            node = next
        }
        return depth
    }

    /// The selected stack (the main stack or a tab).
    public var selectedStack: ScreenStack<Element> { nodes[selectedStackID]?.stack ?? main }

    /// The stack a user sees: the selected one, or what its topmost screen presents, and so on.
    public var visibleStackID: StackID {
        var current = selectedStackID
        while let top = nodes[current]?.stack.topID, let presented = presentedBy[top] {
            current = presented
        }
        return current
    }

    /// The stack of the screen a user sees.
    public var visibleStack: ScreenStack<Element> { nodes[visibleStackID]?.stack ?? main }

    /// The screen a user sees: the topmost screen of `visibleStack`; the same context as
    /// `context.top()` once the main stack has a root.
    public var visibleScreen: ScreenContext? { visibleStack.topScreen }

    /// The id of the screen a user sees (`visibleScreen`).
    public var visibleScreenID: ScreenID? { visibleStack.topID }

    // MARK: - Screens across the tree

    /// The number of screens in every stack.
    public var screenCount: Int { nodes.reduce(0) { $0 + $1.stack.count } }

    /// The id of the stack holding the screen with this id.
    public func stackID(containing screen: ScreenID) -> StackID? {
        for id in tabIDs where nodes[id]?.stack.index(of: screen) != nil { return id }
        for id in presentationIDs where nodes[id]?.stack.index(of: screen) != nil { return id }
        return nil
    }

    /// The screen with this id, in whichever stack holds it.
    public func screen(id: ScreenID) -> ScreenStack<Element>.Screen? {
        guard let stack = stackID(containing: id) else { return nil }
        return nodes[stack]?.stack.screen(id: id)
    }

    /// The context of the screen with this id, in whichever stack holds it.
    public subscript(id id: ScreenID) -> ScreenContext? { screen(id: id)?.context }

    /// The id of a screen of the tree, nil when the context is not one of its screens.
    public func id(of screen: ScreenContext) -> ScreenID? {
        for id in stackIDs {
            if let found = nodes[id]?.stack.id(of: screen) { return found }
        }
        return nil
    }

    // MARK: - Tabs

    /// Adds a named stack (a tab) after the others, with its root, and leaves the selection as it
    /// is. Its root reads nothing from other stacks (docs/SEMANTICS.md §1: separate stacks share nothing).
    ///
    /// - Throws: `NavigationError` `.conflict` when a stack has this id or a screen `rootID`.
    @discardableResult
    public func addStack(
        _ id: StackID, root: Element, rootID: ScreenID? = nil, configure: (ScreenContext) -> Void = { _ in }
    ) throws(NavigationError) -> ScreenStack<Element> {
        guard nodes[id] == nil else { throw NavigationError(.conflict, "the tree already has a stack '\(id)'") }
        let rootID = rootID ?? generator.next()
        try checkUnused(rootID)
        let stack = ScreenStack<Element>(ids: generator)
        adopt(stack)
        nodes[id] = Node(stack: stack, kind: .tab, presenter: nil, presenterContext: nil)
        tabIDs.append(id)
        stack.context.attach(to: context)
        context.moveChildToEnd(selectedStack.context)
        stack.push(root, id: rootID, configure: configure)
        return stack
    }

    /// Selects the main stack or a tab; every stack keeps its screens and presentations.
    ///
    /// - Throws: `NavigationError` `.notFound` for an unknown id; `.conflict` for a presentation,
    ///   which shows over its presenter rather than being selected.
    public func select(_ id: StackID) throws(NavigationError) {
        let node = try node(id)
        guard !node.kind.isPresentation else {
            throw NavigationError(.conflict, "stack '\(id)' is a presentation: select the stack of its presenter")
        }
        selectedStackID = id
        context.moveChildToEnd(node.stack.context)
    }

    /// Removes a tab with all its screens, dismissing what they present; when it was selected, the
    /// main stack is selected instead.
    ///
    /// - Throws: `NavigationError` `.notFound` for an unknown id; `.conflict` for the main stack
    ///   (never removed) or a presentation (dismiss it instead).
    @discardableResult
    public func removeStack(_ id: StackID) throws(NavigationError) -> TreeRemoval {
        let node = try node(id)
        switch node.kind {
        case .main: throw NavigationError(.conflict, "the main stack cannot be removed")
        case .sheet, .fullScreenCover:
            throw NavigationError(.conflict, "stack '\(id)' is a presentation: dismiss it instead")
        case .tab: break
        }
        var result = recording(id) {
            let screens = node.stack.topIDs(node.stack.count)
            node.stack.removeAll()
            return screens
        }
        node.stack.context.detach()
        nodes[id] = nil
        tabIDs.removeAll { $0 == id }
        if selectedStackID == id {
            selectedStackID = .main
            context.moveChildToEnd(main.context)
        }
        result.isStackRemoved = true
        return result
    }

    /// Moves a tab to `position` among the tabs (0: the first one after the main stack, which
    /// stays first). Only the order of `tabIDs` changes: the selection, every stack's screens and
    /// presentations, and what any screen reads, stay as they are (separate tabs share nothing).
    ///
    /// - Throws: `NavigationError` `.notFound` for an unknown id; `.conflict` for the main stack, a
    ///   presentation, or a position past the last tab.
    public func moveTab(_ id: StackID, to position: Int) throws(NavigationError) {
        guard let index = tabIDs.firstIndex(of: id), index > 0 else {
            let isMain = try node(id).kind == .main  // .notFound for an unknown id
            throw NavigationError(
                .conflict,
                isMain
                    ? "the main stack stays first: it is not moved"
                    : "stack '\(id)' is a presentation: it has no place among the tabs")
        }
        let tabs = tabIDs.count - 1
        guard position >= 0, position < tabs else {
            throw NavigationError(
                .conflict, "cannot move tab '\(id)' to position \(position): the positions are 0 to \(tabs - 1)")
        }
        tabIDs.remove(at: index)
        tabIDs.insert(id, at: position + 1)
    }

    // MARK: - Pushing and popping

    /// Pushes a screen onto the stack with id `stack` (see `ScreenStack.push`).
    ///
    /// - Throws: `NavigationError` `.notFound` for an unknown stack; `.conflict` when its topmost
    ///   screen presents a stack (dismiss that first) or a screen of the tree has `id`.
    @discardableResult
    public func push(
        _ element: Element, onto stack: StackID, id: ScreenID? = nil, configure: (ScreenContext) -> Void = { _ in }
    ) throws(NavigationError) -> ScreenContext {
        let node = try node(stack)
        try checkUncovered(node, stack)
        let id = id ?? generator.next()
        try checkUnused(id)
        return node.stack.push(element, id: id, configure: configure)
    }

    /// Pops `count` screens from the stack with id `stack`, topmost first, dismissing what they
    /// present; the root stays.
    ///
    /// - Throws: `NavigationError` `.notFound` for an unknown stack; `.conflict` when fewer than
    ///   `count` screens are above its root (nothing is popped then).
    @discardableResult
    public func pop(count: Int, from stack: StackID) throws(NavigationError) -> TreeRemoval {
        let node = try node(stack)
        let above = node.stack.count - 1
        guard count >= 0, count <= above else {
            throw NavigationError(
                .conflict, "cannot pop \(count) screen(s) from stack '\(stack)': \(max(above, 0)) above its root")
        }
        return recording(stack) {
            let ids = node.stack.topIDs(count)
            node.stack.pop(count: count)
            return ids
        }
    }

    /// Pops every screen above the one with this id, in its stack, keeping it.
    ///
    /// - Throws: `NavigationError` `.notFound` when no screen of the tree has this id.
    @discardableResult
    public func pop(to screen: ScreenID) throws(NavigationError) -> TreeRemoval {
        let (stack, index) = try position(of: screen)
        return try pop(count: (nodes[stack]?.stack.count ?? 0) - 1 - index, from: stack)
    }

    /// Dismisses a screen as SwiftUI's `dismiss` action does: a pushed screen is popped with every
    /// screen above it; the root of a presentation dismisses the presentation.
    ///
    /// - Throws: `NavigationError` `.notFound` for an unknown screen; `.conflict` for the root of
    ///   the main stack or of a tab, which stays.
    @discardableResult
    public func dismiss(screen: ScreenID) throws(NavigationError) -> TreeRemoval {
        let (stack, index) = try position(of: screen)
        if index > 0 { return try pop(count: (nodes[stack]?.stack.count ?? 0) - index, from: stack) }
        guard nodes[stack]?.kind.isPresentation == true else {
            throw NavigationError(.conflict, "screen \(screen) is the root of stack '\(stack)', which stays")
        }
        return try dismiss(stack)
    }

    /// Replaces every screen above the one with this id, in its stack: it keeps its id, values and
    /// handlers; the screens above it are popped (dismissing what they present) and `elements` are
    /// pushed in order, with `ids` when given (one per element).
    ///
    /// - Throws: `NavigationError` `.notFound` for an unknown screen; `.conflict` when it presents
    ///   a stack and `elements` is not empty, or an id is taken. Nothing changes when it throws.
    @discardableResult
    public func replaceScreens(
        above screen: ScreenID, with elements: [Element], ids: [ScreenID]? = nil
    ) throws(NavigationError) -> (removal: TreeRemoval, pushed: [ScreenContext]) {
        precondition(ids == nil || ids?.count == elements.count, "give one id per element")
        let (stack, _) = try position(of: screen)
        if !elements.isEmpty, let presented = presentedBy[screen] {
            throw NavigationError(.conflict, "screen \(screen) presents '\(presented)': dismiss it first")
        }
        var seen: Set<ScreenID> = []
        for id in ids ?? [] {
            try checkUnused(id)
            guard seen.insert(id).inserted else { throw NavigationError(.conflict, "screen id \(id) is given twice") }
        }
        let removal = try pop(to: screen)
        var pushed: [ScreenContext] = []
        for (offset, element) in elements.enumerated() {
            pushed.append(try push(element, onto: stack, id: ids?[offset]))
        }
        return (removal, pushed)
    }

    // MARK: - Pieces

    private func node(_ id: StackID) throws(NavigationError) -> Node {
        guard let node = nodes[id] else { throw NavigationError(.notFound, "no stack '\(id)'") }
        return node
    }

    private func position(of screen: ScreenID) throws(NavigationError) -> (StackID, Int) {
        guard let stack = stackID(containing: screen), let index = nodes[stack]?.stack.index(of: screen) else {
            throw NavigationError(.notFound, "no screen \(screen)")
        }
        return (stack, index)
    }

    func checkUnused(_ id: ScreenID) throws(NavigationError) {
        guard stackID(containing: id) == nil else {
            throw NavigationError(.conflict, "screen id \(id) is already in the tree")
        }
    }

    func checkUncovered(_ node: Node, _ id: StackID) throws(NavigationError) {
        if let top = node.stack.topID, let presented = presentedBy[top] {
            throw NavigationError(
                .conflict, "the topmost screen of stack '\(id)' presents '\(presented)': dismiss it first")
        }
    }

    /// Makes the tree dismiss what a screen presents whenever its stack pops it.
    private func adopt(_ stack: ScreenStack<Element>) {
        stack.tree = self
    }

    /// Runs a change that removes screens from `stack`, and returns them with the presentations
    /// dismissed on the way.
    private func recording(_ stack: StackID, _ change: () -> [ScreenID]) -> TreeRemoval {
        removals.append(TreeRemoval(stack: stack))
        let screens = change()
        var result = removals.popLast() ?? TreeRemoval(stack: stack)
        // Give the buffer back between changes, so a tree that popped keeps none.
        if removals.isEmpty { removals = [] }
        result.screens = screens
        return result
    }
}

// MARK: - Presentations

extension ScreenTree {
    /// Presents a new stack from a screen: its root reads what the presenter resolves to, and its
    /// preferences continue to the presenter (docs/Stacks.md §2 and §3).
    ///
    /// - Throws: `NavigationError` `.notFound` for an unknown presenter; `.conflict` when the
    ///   presenter is not the topmost screen of its stack or already presents a stack, or a stack
    ///   has `id`, or a screen `rootID`.
    @discardableResult
    public func present(
        _ style: PresentationStyle, from presenter: ScreenID, id: StackID, root: Element, rootID: ScreenID? = nil,
        configure: (ScreenContext) -> Void = { _ in }
    ) throws(NavigationError) -> ScreenStack<Element> {
        guard nodes[id] == nil else { throw NavigationError(.conflict, "the tree already has a stack '\(id)'") }
        let (stackID, index) = try position(of: presenter)
        if let presented = presentedBy[presenter] {
            throw NavigationError(.conflict, "screen \(presenter) already presents '\(presented)'")
        }
        guard let owner = nodes[stackID], index == owner.stack.count - 1, let presenterEntry = owner.stack.lastEntry
        else {
            throw NavigationError(
                .conflict, "screen \(presenter) is not the topmost screen of stack '\(stackID)': only that one presents"
            )
        }
        let rootID = rootID ?? generator.next()
        try checkUnused(rootID)
        let stack = ScreenStack<Element>(ids: generator, behavior: PresentationBehavior(style: style))
        adopt(stack)
        let key = ObjectIdentifier(presenterEntry.context)
        nodes[id] = Node(stack: stack, kind: StackKind(style), presenter: presenter, presenterContext: key)
        presentationIDs.append(id)
        presentedBy[presenter] = id
        presentedByContext[key] = id
        stack.context.attach(to: presenterEntry.context)
        stack.push(root, id: rootID, configure: configure)
        return stack
    }

    /// Dismisses a presentation: pops all its screens, root included, and cleans them up,
    /// dismissing first what they present.
    ///
    /// - Throws: `NavigationError` `.notFound` for an unknown id; `.conflict` for the main stack or
    ///   a tab (remove a tab with `removeStack`).
    @discardableResult
    public func dismiss(_ id: StackID) throws(NavigationError) -> TreeRemoval {
        let node = try node(id)
        guard node.kind.isPresentation else {
            throw NavigationError(.conflict, "stack '\(id)' is not a presentation")
        }
        var result = recording(id) { clear(presentation: id) }
        result.isStackRemoved = true
        return result
    }

    /// Dismisses what these screens present (the hook of every stack of the tree, run before they
    /// are popped), recording the presentations in the change in progress.
    func dismissPresentations(of screens: [ScreenContext]) {
        for screen in screens {
            guard let id = presentedByContext[ObjectIdentifier(screen)] else { continue }
            let cleared = clear(presentation: id)
            if !removals.isEmpty {
                removals[removals.count - 1].dismissed.append(id)
                removals[removals.count - 1].dismissedScreens += cleared
            }
        }
    }

    /// Empties a presentation and takes it out of the tree; returns its screens, topmost first.
    private func clear(presentation id: StackID) -> [ScreenID] {
        guard let node = nodes[id] else { return [] }
        let screens = node.stack.topIDs(node.stack.count)
        node.stack.removeAll()  // dismisses what its topmost screen presents first
        node.stack.context.detach()
        nodes[id] = nil
        presentationIDs.removeAll { $0 == id }
        if let presenter = node.presenter { presentedBy[presenter] = nil }
        if let key = node.presenterContext { presentedByContext[key] = nil }
        return screens
    }
}

/// What a change of a `ScreenTree` removed: the screens that left the stack it addressed, and the
/// presentations dismissed with them (each with everything in it).
public struct TreeRemoval: Sendable, Equatable {
    /// The stack the change addressed.
    public var stack: StackID
    /// Its screens that left, topmost first.
    public var screens: [ScreenID]
    /// The presentations dismissed because a screen presenting them left, innermost first; not
    /// the addressed stack itself.
    public var dismissed: [StackID]
    /// The screens of those presentations, in the order they left.
    public var dismissedScreens: [ScreenID]
    /// Whether the addressed stack itself left the tree (a dismissed presentation, a removed tab).
    public var isStackRemoved: Bool

    /// A removal from `stack`; empty unless given.
    public init(
        stack: StackID, screens: [ScreenID] = [], dismissed: [StackID] = [], dismissedScreens: [ScreenID] = [],
        isStackRemoved: Bool = false
    ) {
        self.stack = stack
        self.screens = screens
        self.dismissed = dismissed
        self.dismissedScreens = dismissedScreens
        self.isStackRemoved = isStackRemoved
    }

    /// Every screen that left the tree: the addressed stack's, then the dismissed presentations'.
    public var allScreens: [ScreenID] { screens + dismissedScreens }
}

/// The tab list of a tree that has none but the main stack, shared by every such tree.
private let mainStackOnly: [StackID] = [.main]

extension ScreenTree {
    /// The stacks' nodes by id. The main stack's is held apart, since every tree has it (and
    /// never loses it) and most trees have no other: a tree of one stack allocates no dictionary.
    struct Nodes {
        /// The main stack; its node is made on each read (it is always `.main`, presented by
        /// none), so a tree keeps one word for it rather than a whole node.
        private let mainStack: ScreenStack<Element>
        private var others: [StackID: Node] = [:]

        init(main: ScreenStack<Element>) {
            mainStack = main
        }

        private var main: Node { Node(stack: mainStack, kind: .main, presenter: nil, presenterContext: nil) }

        /// The node of the stack with this id. The main stack's is set once, at creation: the
        /// tree refuses to add another stack with its id or to remove it before it gets here.
        subscript(id: StackID) -> Node? {
            get { id == .main ? main : others[id] }
            set {
                precondition(id != .main, "the main stack's node is set once")
                others[id] = newValue
            }
        }

        /// `body`'s result over every node, the main stack's first.
        func reduce<Result>(_ initial: Result, _ body: (Result, Node) -> Result) -> Result {
            others.values.reduce(body(initial, main), body)
        }
    }
}
