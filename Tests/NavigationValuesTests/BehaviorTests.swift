import NavigationValues
import Testing

/// A pager: its pages form a ring-less chain like a stack, but in reverse attach order (the newest
/// page first), to prove that a custom behaviour decides the links.
struct ReversePagerBehavior: ScreenContextBehavior {
    var role: ScreenContextRole { .navigationStack }
    func context(_ context: ScreenContext, didUpdateChildren children: [ScreenContext]) {
        let pages = Array(children.reversed())
        for (index, page) in pages.enumerated() {
            page.previous = index > 0 ? pages[index - 1] : nil
            page.next = index + 1 < pages.count ? pages[index + 1] : nil
        }
    }
}

@Suite struct BehaviorTests {
    @Test func rolesAreStampedByTheBehaviour() {
        #expect(ScreenContext(.navigationStack).role == .navigationStack)
        #expect(ScreenContext(.navigation).role == .screen)
        #expect(ScreenContext(.screen).role == .screen)
        #expect(ScreenContext().role == .screen)
        #expect(ReversePagerBehavior().role == .navigationStack)
    }

    @Test func navigationStackLinksAdjacentChildrenAndLeavesChainEndsNil() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        #expect(stack.screens.map(ObjectIdentifier.init) == [a, b, c].map(ObjectIdentifier.init))
        #expect(a.previous == nil)
        #expect(a.next === b)
        #expect(b.previous === a)
        #expect(b.next === c)
        #expect(c.previous === b)
        #expect(c.next == nil)
        #expect([a, b, c].allSatisfy { $0.parent === stack.context })
    }

    @Test func navigationLinksToTheParentsLastChildUnderANonStackParent() {
        let parent = ScreenContext(.screen)
        let first = ScreenContext(.navigation)
        let second = ScreenContext(.navigation)
        first.attach(to: parent)
        second.attach(to: parent)
        #expect(first.previous == nil)
        #expect(second.previous === first)
        // A non-stack parent links nothing forward.
        #expect(first.next == nil)
        #expect(second.next == nil)
    }

    @Test func attachingTwiceIsIdempotentAndNeverLinksToItself() {
        let parent = ScreenContext(.screen)
        let first = ScreenContext(.navigation)
        let second = ScreenContext(.navigation)
        first.attach(to: parent)
        second.attach(to: parent)
        second.attach(to: parent)
        first.attach(to: parent)
        #expect(parent.children.count == 2)
        #expect(first.previous == nil)
        #expect(second.previous === first)
        NavigationBehavior().context(second, didAttachTo: parent)
        #expect(second.previous === first)
    }

    @Test func stackHookRunTwiceChangesNothing() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        NavigationStackBehavior().context(stack.context, didUpdateChildren: stack.context.children)
        NavigationStackBehavior().context(stack.context, didUpdateChildren: stack.context.children)
        #expect(a.previous == nil && a.next === b && b.next === c && c.previous === b && c.next == nil)
    }

    @Test func screenBehaviourLinksNothing() {
        let parent = ScreenContext(.screen)
        let child = ScreenContext(.screen)
        let other = ScreenContext(.screen)
        child.attach(to: parent)
        other.attach(to: parent)
        #expect(child.previous == nil && child.next == nil && other.previous == nil && other.next == nil)
        #expect(parent.children.count == 2)
        #expect(other.parent === parent)
    }

    @Test func customBehaviourDecidesTheChain() {
        let pager = ScreenContext(ReversePagerBehavior())
        let first = ScreenContext(.screen)
        let second = ScreenContext(.screen)
        let third = ScreenContext(.screen)
        for page in [first, second, third] { page.attach(to: pager) }
        #expect(third.previous == nil)
        #expect(second.previous === third)
        #expect(first.previous === second)
        #expect(third.next === second)
        // Values flow along the chain the behaviour built: the newest page is the head.
        third[TitleKey.self] = "newest"
        #expect(first[TitleKey.self] == "newest")
        #expect(first.head() === third)
        #expect(third.tail() === first)
    }

    @Test func traversalFindsHeadTailAndTop() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        #expect(c.head() === a)
        #expect(a.tail() === c)
        #expect(b.head() === a && b.tail() === c)
        #expect(stack.context.top() === c)
        let nested = ScreenContext(.screen)
        nested.attach(to: c)
        #expect(stack.context.top() === nested)
        #expect(a.top() === a)
    }

    @Test func detachLeavesTheParentRelinksAndCleansUp() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        b[TitleKey.self] = "b"
        b.detach()
        #expect(stack.screens.count == 2)
        #expect(b.parent == nil && b.previous == nil && b.next == nil)
        #expect(!b.hasValue(TitleKey.self))
        #expect(a.next === c && c.previous === a)
    }

    @Test func configureClosureRunsAtCreation() {
        let context = ScreenContext(.navigation) { $0.title = "x" }
        #expect(context.title == "x")
        #expect(context.hasValue(TitleKey.self))
    }
}
