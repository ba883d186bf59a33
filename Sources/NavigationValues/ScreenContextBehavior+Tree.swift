// The behaviours of a tree of stacks (docs/Stacks.md §1): a tab view holding stacks, and a stack
// presented by a screen. Like the seed's, their hooks are idempotent.

/// The behaviour of a stack presented by a screen (a sheet or a full-screen cover): it links its
/// children as `.navigationStack` does, and continues its presenter's chain. Its context is a child
/// of the presenting screen; its first screen's `previous` is that screen, and the presenter's
/// `next` is its first screen, so values flow from the presenter into the presentation and
/// preferences flow back out of it (docs/Stacks.md §2 and §3).
///
/// A presenter must stay the topmost screen of its own stack while it presents (`ScreenTree`
/// refuses a push above it), so that its `next` is free for the presentation.
public struct PresentationBehavior: ScreenContextBehavior {
    /// How the stack covers its presenter.
    public var style: PresentationStyle

    /// The behaviour of a stack presented with `style`.
    public init(style: PresentationStyle) {
        self.style = style
    }

    /// A presented stack is a navigation stack.
    public var role: ScreenContextRole { .navigationStack }

    /// Links the children already attached (none, usually) after the new presenter.
    public func context(_ context: ScreenContext, didAttachTo parent: ScreenContext) {
        self.context(context, didUpdateChildren: context.childrenUntracked)
    }

    /// Links adjacent children; the first one's `previous` is the presenter (the stack's parent),
    /// whose `next` becomes the first child (nil once the stack is empty).
    public func context(_ context: ScreenContext, didUpdateChildren children: [ScreenContext]) {
        let presenter = context.parentUntracked
        for (index, child) in children.enumerated() {
            child.previous = index > 0 ? children[index - 1] : presenter
            child.next = index + 1 < children.count ? children[index + 1] : nil
        }
        presenter?.next = children.first
    }
}

/// The behaviour of a tree's own context, a tab view: its children are the tree's main stack and
/// tabs, which it does not link (separate stacks share nothing, docs/SEMANTICS.md §1). The tree keeps
/// the selected stack last among them, so that `top()` follows what a user sees.
public struct TabViewBehavior: ScreenContextBehavior {
    /// The behaviour of a tab view.
    public init() {}
    /// A tab view is a view with a context of its own: a screen.
    public var role: ScreenContextRole { .screen }
}

extension ScreenContextBehavior where Self == PresentationBehavior {
    /// Put on a stack that a screen presents as a sheet.
    public static var sheet: PresentationBehavior { PresentationBehavior(style: .sheet) }
    /// Put on a stack that a screen presents as a full-screen cover.
    public static var fullScreenCover: PresentationBehavior { PresentationBehavior(style: .fullScreenCover) }
}

extension ScreenContextBehavior where Self == TabViewBehavior {
    /// Put on a container of stacks (a `TabView`): links nothing.
    public static var tabView: TabViewBehavior { TabViewBehavior() }
}
