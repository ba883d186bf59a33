/// A navigation stack: a `.navigationStack` context whose children are `.navigation` screens, the
/// first of them the root.
///
/// ```swift
/// let stack = ScreenStack()
/// let root = stack.push { $0[TitleKey.self] = "Home" }
/// let detail = stack.push()
/// stack.pop()            // detail, cleaned up
/// ```
public final class ScreenStack {
    /// The stack's own context (role `.navigationStack`).
    public let context: ScreenContext

    /// Creates an empty stack.
    public init() {
        context = ScreenContext(.navigationStack)
    }

    /// The screens, root first, topmost last.
    public var screens: [ScreenContext] { context.children }

    /// The root screen, nil while the stack is empty.
    public var root: ScreenContext? { context.children.first }

    /// The topmost screen, nil while the stack is empty.
    public var topScreen: ScreenContext? { context.children.last }

    /// Pushes a new screen (behaviour `.navigation` unless given) and runs `configure` on it once it
    /// is linked, so that reads inside `configure` already see earlier screens' values.
    @discardableResult
    public func push(
        _ behavior: some ScreenContextBehavior = .navigation,
        configure: (ScreenContext) -> Void = { _ in }
    ) -> ScreenContext {
        let screen = ScreenContext(behavior)
        screen.attach(to: context)
        configure(screen)
        return screen
    }

    /// Pops the topmost screen and cleans it up; nil when only the root (or nothing) is left.
    @discardableResult
    public func pop() -> ScreenContext? {
        pop(count: 1).first
    }

    /// Pops up to `count` screens, topmost first, never the root.
    @discardableResult
    public func pop(count: Int) -> [ScreenContext] {
        let children = context.childrenUntracked
        let available = max(children.count - 1, 0)
        let count = min(max(count, 0), available)
        guard count > 0 else { return [] }
        let popped = Array(children.suffix(count).reversed())
        for screen in popped { screen.detach() }
        return popped
    }

    /// Pops every screen above `screen`, keeping it; topmost first. Nothing when `screen` is not on
    /// this stack.
    @discardableResult
    public func pop(to screen: ScreenContext) -> [ScreenContext] {
        guard let index = context.children.firstIndex(where: { $0 === screen }) else { return [] }
        return pop(count: context.children.count - 1 - index)
    }

    /// Pops `screen` and every screen above it, topmost first. Never the root: popping from the root
    /// pops everything above it.
    @discardableResult
    public func pop(from screen: ScreenContext) -> [ScreenContext] {
        guard let index = context.children.firstIndex(where: { $0 === screen }) else { return [] }
        return pop(count: context.children.count - max(index, 1))
    }
}
