/// A navigation stack: a `.navigationStack` context whose children are `.navigation` screens, the
/// first of them the root. Each screen has a stable id and an element (what the screen shows, such
/// as a route; `Void` when there is nothing to keep), as TCA's `StackState` keys its elements by
/// `StackElementID`.
///
/// ```swift
/// let stack = ScreenStack()
/// let root = stack.push { $0[TitleKey.self] = "Home" }
/// let detail = stack.push()
/// stack.pop()            // detail, cleaned up
/// ```
///
/// With elements and ids of your own:
///
/// ```swift
/// let stack = ScreenStack<Route>()
/// stack.push(.inbox, id: ScreenID("inbox"))
/// stack.push(.message(7))
/// stack[id: ScreenID("inbox")]?[TitleKey.self] = "Inbox"
/// stack.pop(to: ScreenID("inbox"))
/// ```
///
/// The stack owns its context's children: attach and detach its screens through the stack only.
public final class ScreenStack<Element> {
    /// One screen of the stack: its id, its element and its context.
    public struct Screen {
        public let id: ScreenID
        public let element: Element
        public let context: ScreenContext
    }

    /// The stack's own context (role `.navigationStack`).
    public let context: ScreenContext
    /// The screens, root first; the same order as `context`'s children. Made on each call from
    /// what the stack keeps (`firstEntry`, `lastEntry` and `entry(at:)` make one screen only).
    public var entries: [Screen] {
        var result: [Screen] = []
        result.reserveCapacity(contexts.count)
        for index in 0..<contexts.count { result.append(entry(at: index)) }
        return result
    }

    /// The screens' contexts, root first, and their elements, in the same order (changed together,
    /// in `push` and `removeTop` only). A screen's id is its context's `screenID`, which `push`
    /// sets, so it is kept once. Called from another module, this generic class's methods run
    /// unspecialised, and every use of an array of `Element` or of `Screen` looks up its metadata
    /// in the runtime's cache; `contexts` does not depend on `Element`, so lookups, counts and the
    /// top screen cost no such lookup (callgrind put them at about a fifth of a push and pop).
    private var contexts: [ScreenContext] = []
    private var elements: [Element] = []
    private let generator: ScreenIDGenerator

    /// The tree that owns this stack, if any: told of the screens about to leave, topmost first,
    /// before they are detached, it dismisses what they present (docs/Stacks.md §1). A weak
    /// reference rather than a closure capturing one, so a stack allocates no closure context.
    weak var tree: ScreenTree<Element>?

    /// Creates an empty stack; screens pushed without an id get one from `ids`.
    public init(ids: ScreenIDGenerator = .incrementing()) {
        context = ScreenContext(.navigationStack)
        generator = ids
    }

    /// Creates an empty stack whose own context has `behavior` (role `.navigationStack`), such as
    /// `.sheet` for a stack a screen presents; screens pushed without an id get one from `ids`.
    public init(ids: ScreenIDGenerator = .incrementing(), behavior: some ScreenContextBehavior) {
        context = ScreenContext(behavior)
        generator = ids
    }

    /// The screens' contexts, root first, topmost last.
    public var screens: [ScreenContext] { context.children }

    /// The screens' ids, root first.
    // Closures, not key paths, here and below: a key path into a generic type is instantiated at
    // run time on every evaluation, which measured 6% of a mutation's CPU through the server.
    public var ids: [ScreenID] { contexts.map { $0.stackScreenID } }

    /// The stack as a value: each screen's id and element, root first. `Sendable`, `Equatable` and
    /// `Codable` when the element is, so it can leave the stack's isolation domain.
    public var path: [StackEntry<Element>] {
        var result: [StackEntry<Element>] = []
        result.reserveCapacity(contexts.count)
        for index in 0..<contexts.count {
            result.append(StackEntry(id: contexts[index].stackScreenID, element: elements[index]))
        }
        return result
    }

    /// The ids of the topmost `count` screens (at most all of them), topmost first: one array, made
    /// from the contexts without the whole `ids`.
    package func topIDs(_ count: Int) -> [ScreenID] {
        let count = min(max(count, 0), contexts.count)
        var result: [ScreenID] = []
        result.reserveCapacity(count)
        var index = contexts.count - 1
        while result.count < count {
            result.append(contexts[index].stackScreenID)
            index -= 1
        }
        return result
    }

    /// Whether `ids` are the topmost screens' ids, topmost first (`topIDs(ids.count) == ids`,
    /// without making that array).
    package func hasTopIDs(_ ids: [ScreenID]) -> Bool {
        guard ids.count <= contexts.count else { return false }
        var index = contexts.count - 1
        for id in ids {
            guard contexts[index].stackScreenID == id else { return false }
            index -= 1
        }
        return true
    }

    /// The number of screens, root included.
    public var count: Int { contexts.count }

    /// The topmost screen's id, nil while the stack is empty.
    var topID: ScreenID? { contexts.last?.stackScreenID }

    /// The root screen, nil while the stack is empty.
    public var root: ScreenContext? { context.children.first }

    /// The topmost screen, nil while the stack is empty.
    public var topScreen: ScreenContext? { context.children.last }

    /// Whether the topmost screen presents a stack (a child with `PresentationBehavior`): nothing
    /// may be pushed above it until that presentation is dismissed (docs/Stacks.md §1).
    public var isCoveredByPresentation: Bool {
        guard let top = contexts.last else { return false }
        return top.childrenUntracked.contains { $0.isPresentation }
    }

    // MARK: - Lookup

    /// The context of the screen with this id, nil when no screen of the stack has it.
    public subscript(id id: ScreenID) -> ScreenContext? { screen(id: id)?.context }

    /// The screen with this id. Searched from the top: most lookups name a screen near the top,
    /// and stacks are short, so no index is kept beside the array.
    public func screen(id: ScreenID) -> Screen? { index(of: id).map { entry(at: $0) } }

    /// The screen at `index` (0 for the root), as `entries[index]` without making every screen.
    ///
    /// - Precondition: `index` is in `0..<count`.
    public func entry(at index: Int) -> Screen {
        let context = contexts[index]
        return Screen(id: context.stackScreenID, element: elements[index], context: context)
    }

    /// The root screen, as `entries.first` without making every screen.
    public var firstEntry: Screen? { contexts.isEmpty ? nil : entry(at: 0) }

    /// The topmost screen, as `entries.last` without making every screen.
    public var lastEntry: Screen? { contexts.isEmpty ? nil : entry(at: contexts.count - 1) }

    /// The position of the screen with this id, 0 for the root.
    public func index(of id: ScreenID) -> Int? {
        // Loops over indexes rather than `lastIndex(where:)`: called from outside this module,
        // a generic class's methods run unspecialised, and the collection adaptors would look up
        // their generic metadata at every call (most of a push's and a pop's time, by perf).
        var index = contexts.count - 1
        while index >= 0 {
            if contexts[index].screenID == id { return index }
            index -= 1
        }
        return nil
    }

    /// The position of a context of this stack, nil when it is not one of its screens.
    private func index(of screen: ScreenContext) -> Int? {
        var index = contexts.count - 1
        while index >= 0 {
            if contexts[index] === screen { return index }
            index -= 1
        }
        return nil
    }

    /// The id of a context of this stack, nil when it is not one of its screens.
    public func id(of screen: ScreenContext) -> ScreenID? { index(of: screen).map { contexts[$0].stackScreenID } }

    // MARK: - Pushing

    /// Pushes a new screen (behaviour `.navigation` unless given) with `element` and `id` (a new id
    /// from the stack's generator when nil), and runs `configure` on it once it is linked, so that
    /// reads inside `configure` already see earlier screens' values.
    ///
    /// - Precondition: no screen of the stack has `id`, and the topmost screen presents nothing
    ///   (`isCoveredByPresentation` is false; `ScreenTree.push(_:onto:id:configure:)` throws instead).
    @discardableResult
    public func push(
        _ element: Element,
        id: ScreenID? = nil,
        behavior: some ScreenContextBehavior = .navigation,
        configure: (ScreenContext) -> Void = { _ in }
    ) -> ScreenContext {
        let id = id ?? generator.next()
        precondition(index(of: id) == nil, "screen id \(id) is already on this stack")
        precondition(!isCoveredByPresentation, "the topmost screen presents a stack: dismiss it before pushing")
        let screen = ScreenContext(behavior)
        screen.screenID = id
        screen.attach(to: context)
        contexts.append(screen)
        elements.append(element)
        configure(screen)
        return screen
    }

    // MARK: - Popping

    /// Pops the topmost screen and cleans it up; nil when only the root (or nothing) is left.
    @discardableResult
    public func pop() -> ScreenContext? {
        pop(count: 1).first
    }

    /// Pops up to `count` screens, topmost first, never the root. In a `ScreenTree`, what a popped
    /// screen presents is dismissed first (and cleaned up with everything in it).
    @discardableResult
    public func pop(count: Int) -> [ScreenContext] {
        let available = max(contexts.count - 1, 0)
        let count = min(max(count, 0), available)
        guard count > 0 else { return [] }
        return removeTop(count)
    }

    /// Removes the topmost `count` screens (at most all of them) and cleans them up; returns their
    /// contexts, topmost first. Only `elements` is touched generically (see `contexts`).
    @discardableResult
    private func removeTop(_ count: Int) -> [ScreenContext] {
        let end = contexts.count
        let start = max(0, end - count)
        guard start < end else { return [] }
        let removed = Array(contexts[start..<end].reversed())
        tree?.dismissPresentations(of: removed)
        // One screen at a time (removeLast(_:) goes through replaceSubrange, several times dearer
        // for the usual one screen), and for `elements` Array's own remove(at:): unspecialised,
        // removeLast() is the generic RangeReplaceableCollection default, which looks up Array's
        // conformances' witness tables at every call.
        for _ in start..<end {
            elements.remove(at: elements.count - 1)
            contexts.removeLast()
        }
        for screen in removed { screen.detach() }
        return removed
    }

    /// Pops every screen, the root too, topmost first (a dismissed presentation, a removed tab).
    func removeAll() {
        removeTop(contexts.count)
    }

    /// Pops every screen above `screen`, keeping it; topmost first. Nothing when `screen` is not on
    /// this stack.
    @discardableResult
    public func pop(to screen: ScreenContext) -> [ScreenContext] {
        guard let index = index(of: screen) else { return [] }
        return pop(count: contexts.count - 1 - index)
    }

    /// Pops `screen` and every screen above it, topmost first. Never the root: popping from the root
    /// pops everything above it.
    @discardableResult
    public func pop(from screen: ScreenContext) -> [ScreenContext] {
        guard let index = index(of: screen) else { return [] }
        return pop(count: contexts.count - max(index, 1))
    }

    /// Pops every screen above the one with `id`, keeping it; returns the popped ids, topmost first.
    /// Nothing when no screen has `id`.
    @discardableResult
    public func pop(to id: ScreenID) -> [ScreenID] {
        guard let index = index(of: id) else { return [] }
        return popIDs(count: contexts.count - 1 - index)
    }

    /// Pops the screen with `id` and every screen above it (never the root); returns the popped ids,
    /// topmost first. Nothing when no screen has `id`.
    @discardableResult
    public func pop(from id: ScreenID) -> [ScreenID] {
        guard let index = index(of: id) else { return [] }
        return popIDs(count: contexts.count - max(index, 1))
    }

    private func popIDs(count: Int) -> [ScreenID] {
        let ids = topIDs(min(count, contexts.count - 1))
        pop(count: ids.count)
        return ids
    }
}

extension ScreenStack where Element == Void {
    /// Creates an empty stack whose screens carry no element.
    public convenience init() {
        self.init(ids: .incrementing())
    }

    /// Pushes a new screen with a new id (behaviour `.navigation` unless given) and runs `configure`
    /// on it once it is linked.
    @discardableResult
    public func push(
        _ behavior: some ScreenContextBehavior = .navigation,
        configure: (ScreenContext) -> Void = { _ in }
    ) -> ScreenContext {
        push((), id: nil, behavior: behavior, configure: configure)
    }
}

/// A screen of a stack as a value: its id and element (`ScreenStack.path`).
public struct StackEntry<Element> {
    public var id: ScreenID
    public var element: Element

    public init(id: ScreenID, element: Element) {
        self.id = id
        self.element = element
    }
}

extension StackEntry: Sendable where Element: Sendable {}
extension StackEntry: Equatable where Element: Equatable {}
extension StackEntry: Hashable where Element: Hashable {}
extension StackEntry: Codable where Element: Codable {}

/// Makes the ids of screens pushed without one. Each stack calls its generator from its own
/// isolation domain only.
///
/// ```swift
/// let stack = ScreenStack<String>(ids: .incrementing(prefix: "screen-"))
/// stack.push("Home")     // id "screen-0"
/// ```
public struct ScreenIDGenerator {
    private let make: () -> ScreenID

    /// A generator that calls `make` for each id.
    public init(_ make: @escaping () -> ScreenID) {
        self.make = make
    }

    /// The next id.
    public func next() -> ScreenID { make() }

    /// Numbers screens from 0 in push order (`prefix` + the number): predictable, for tests and for
    /// stacks that live on one device.
    public static func incrementing(prefix: String = "") -> ScreenIDGenerator {
        final class Counter {
            var next = 0
        }
        let counter = Counter()
        return ScreenIDGenerator {
            defer { counter.next += 1 }
            // The same text as "\(prefix)\(counter.next)", without interpolation's generic path.
            return ScreenID(prefix.isEmpty ? String(counter.next) : prefix + String(counter.next))
        }
    }
}

extension ScreenContext {
    /// The id of a screen of a stack, which `ScreenStack.push` set before the stack kept it.
    fileprivate var stackScreenID: ScreenID { screenID ?? ScreenID("") }
}
