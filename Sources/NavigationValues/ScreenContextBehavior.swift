/// What a context is in the navigation structure, stamped on it by its behaviour.
public enum ScreenContextRole: String, Sendable, Hashable, Codable {
    /// A screen (or any view with a context).
    case screen
    /// The context of a navigation stack, whose children are its screens.
    case navigationStack
}

/// Decides how a context links itself into the tree and the screen chain (docs/SEMANTICS.md §1).
///
/// Hooks must be idempotent: they may run again for the same state and must then change nothing.
/// A custom container (a pager, say) implements this protocol:
///
/// ```swift
/// struct PagerBehavior: ScreenContextBehavior {
///     var role: ScreenContextRole { .navigationStack }
///     func context(_ context: ScreenContext, didUpdateChildren children: [ScreenContext]) { … }
/// }
/// ```
public protocol ScreenContextBehavior {
    /// The role stamped on contexts created with this behaviour.
    var role: ScreenContextRole { get }
    /// Called after `context` took `parent` as its parent, before it joins `parent.children`.
    func context(_ context: ScreenContext, didAttachTo parent: ScreenContext)
    /// Called on a parent after its children changed (a child attached or detached).
    func context(_ context: ScreenContext, didUpdateChildren children: [ScreenContext])
}

extension ScreenContextBehavior {
    /// Does nothing by default.
    public func context(_ context: ScreenContext, didAttachTo parent: ScreenContext) {}
    /// Does nothing by default.
    public func context(_ context: ScreenContext, didUpdateChildren children: [ScreenContext]) {}
}

/// The behaviour of a navigation stack: links its children into a chain of screens.
public struct NavigationStackBehavior: ScreenContextBehavior {
    public init() {}
    public var role: ScreenContextRole { .navigationStack }

    /// Links adjacent children (`c[i].next = c[i+1]`, `c[i+1].previous = c[i]`); the chain's ends stay nil.
    public func context(_ context: ScreenContext, didUpdateChildren children: [ScreenContext]) {
        for (index, child) in children.enumerated() {
            child.previous = index > 0 ? children[index - 1] : nil
            child.next = index + 1 < children.count ? children[index + 1] : nil
        }
    }
}

/// The behaviour of one screen of a navigation stack, root included.
public struct NavigationBehavior: ScreenContextBehavior {
    public init() {}
    public var role: ScreenContextRole { .screen }

    /// `previous = parent.children.last`, unless the context already is one of the parent's children
    /// (a screen never links to itself).
    public func context(_ context: ScreenContext, didAttachTo parent: ScreenContext) {
        let siblings = parent.childrenUntracked
        guard !siblings.contains(where: { $0 === context }) else { return }
        if let last = siblings.last, last !== context {
            context.previous = last
        }
    }
}

/// A local context with no stack linking: the default.
public struct ScreenBehavior: ScreenContextBehavior {
    public init() {}
    public var role: ScreenContextRole { .screen }
}

extension ScreenContextBehavior where Self == NavigationStackBehavior {
    /// Put on a navigation stack: connects the screens pushed onto it.
    public static var navigationStack: NavigationStackBehavior { NavigationStackBehavior() }
}

extension ScreenContextBehavior where Self == NavigationBehavior {
    /// Put on every screen of a stack, root included.
    public static var navigation: NavigationBehavior { NavigationBehavior() }
}

extension ScreenContextBehavior where Self == ScreenBehavior {
    /// A context of its own, not linked to any stack.
    public static var screen: ScreenBehavior { ScreenBehavior() }
}
