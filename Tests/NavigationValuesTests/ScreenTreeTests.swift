import NavigationValues
import Testing

/// The rules of `ScreenTree` (docs/Stacks.md §1) one by one.
@Suite struct ScreenTreeTests {
    @Test func aNewTreeHoldsOnlyTheMainStackSelected() {
        let tree = ScreenTree<String>()
        #expect(tree.stackIDs == [.main] && tree.tabIDs == [.main] && tree.presentationIDs.isEmpty)
        #expect(tree.selectedStackID == .main && tree.visibleStackID == .main)
        #expect(tree.visibleScreen == nil)
        #expect(tree.kind(of: .main) == .main)
        let root = tree.main.push("Home")
        #expect(tree.visibleScreen === root && tree.context.top() === root)
        #expect(tree.main.context.parent === tree.context)
        #expect(tree.screenCount == 1)
    }

    @Test func screenIDsAreUniqueAcrossTheTree() throws {
        let tree = ScreenTree<String>(ids: .incrementing(prefix: "c"))
        tree.main.push("A", id: ScreenID("a"))
        #expect(throws: NavigationError(.conflict, "screen id a is already in the tree")) {
            try tree.addStack(StackID("t"), root: "T", rootID: ScreenID("a"))
        }
        #expect(tree.stackIDs == [.main])
        try tree.addStack(StackID("t"), root: "T", rootID: ScreenID("t0"))
        #expect(throws: NavigationError.self) { try tree.push("B", onto: .main, id: ScreenID("t0")) }
        #expect(throws: NavigationError.self) {
            try tree.present(.sheet, from: ScreenID("a"), id: StackID("p"), root: "P", rootID: ScreenID("t0"))
        }
        #expect(tree.stackID(containing: ScreenID("t0")) == StackID("t"))
        #expect(tree.screen(id: ScreenID("t0"))?.element == "T")
        #expect(tree[id: ScreenID("a")] === tree.main.root)
        #expect(tree.id(of: try #require(tree.stack(StackID("t"))?.root)) == ScreenID("t0"))
    }

    @Test func stackIDsAreUniqueAndTheMainStackStays() throws {
        let tree = ScreenTree<String>()
        tree.main.push("A")
        #expect(throws: NavigationError.self) { try tree.addStack(.main, root: "M") }
        try tree.addStack(StackID("t"), root: "T")
        #expect(throws: NavigationError.self) { try tree.addStack(StackID("t"), root: "T") }
        #expect(throws: NavigationError.self) {
            try tree.present(.sheet, from: ScreenID("0"), id: StackID("t"), root: "P")
        }
        #expect(throws: NavigationError(.conflict, "the main stack cannot be removed")) { try tree.removeStack(.main) }
        #expect(throws: NavigationError(.notFound, "no stack 'nope'")) { try tree.select(StackID("nope")) }
        #expect(throws: NavigationError.self) { try tree.push("X", onto: StackID("nope")) }
    }

    @Test func onlyTheTopmostScreenPresentsAndOnlyOneStackAtATime() throws {
        let tree = ScreenTree<String>(ids: .incrementing(prefix: "c"))
        tree.main.push("A")
        tree.main.push("B")
        #expect(throws: NavigationError.self) {
            try tree.present(.sheet, from: ScreenID("c0"), id: StackID("p"), root: "P")
        }
        #expect(throws: NavigationError.self) {
            try tree.present(.sheet, from: ScreenID("nope"), id: StackID("p"), root: "P")
        }
        try tree.present(.sheet, from: ScreenID("c1"), id: StackID("p"), root: "P")
        #expect(throws: NavigationError(.conflict, "screen c1 already presents 'p'")) {
            try tree.present(.fullScreenCover, from: ScreenID("c1"), id: StackID("q"), root: "Q")
        }
        #expect(tree.presentation(presentedBy: ScreenID("c1")) == StackID("p"))
        #expect(tree.presenter(of: StackID("p")) == ScreenID("c1"))
        #expect(tree.kind(of: StackID("p")) == .sheet)
        #expect(tree.main.isCoveredByPresentation)
        #expect(throws: NavigationError.self) { try tree.select(StackID("p")) }
        #expect(throws: NavigationError.self) { try tree.removeStack(StackID("p")) }
        #expect(throws: NavigationError.self) { try tree.dismiss(.main) }
        #expect(throws: NavigationError.self) { try tree.replaceScreens(above: ScreenID("c1"), with: ["C"]) }
        // Replacing nothing above a presenter is no change and allowed.
        #expect(try tree.replaceScreens(above: ScreenID("c1"), with: []).removal.screens.isEmpty)
    }

    @Test func popRefusesMoreThanIsAboveTheRootAndChangesNothing() throws {
        let tree = ScreenTree<String>()
        tree.main.push("A")
        tree.main.push("B")
        #expect(throws: NavigationError.self) { try tree.pop(count: 2, from: .main) }
        #expect(throws: NavigationError.self) { try tree.pop(count: -1, from: .main) }
        #expect(tree.main.count == 2)
        #expect(try tree.pop(count: 0, from: .main).screens.isEmpty)
        #expect(try tree.pop(to: ScreenID("0")).screens == [ScreenID("1")])
    }

    @Test func poppingAPresenterThroughItsStackAlsoDismisses() throws {
        let tree = ScreenTree<String>(ids: .incrementing(prefix: "c"))
        tree.main.push("A")
        tree.main.push("B")
        let sheet = try tree.present(.sheet, from: ScreenID("c1"), id: StackID("p"), root: "P")
        let p = try #require(sheet.root)
        p[TitleKey.self] = "p"
        tree.main.pop()  // the stack's own pop, not the tree's
        #expect(tree.stackIDs == [.main])
        #expect(!p.hasValue(TitleKey.self) && p.parent == nil)
        #expect(tree.visibleScreen === tree.main.root)
        // The root of a dismissed presentation no longer links to its old presenter.
        #expect(p.previous == nil)
    }

    @Test func aDismissedPresentationLeavesNoContextAlive() throws {
        let tree = ScreenTree<String>(ids: .incrementing(prefix: "c"))
        let root = tree.main.push("A")
        var weak: [WeakBox] = []
        for round in 0..<50 {
            let id = StackID("p\(round)")
            let sheet = try tree.present(.sheet, from: ScreenID("c0"), id: id, root: "S")
            try tree.push("S2", onto: id)
            let nested = try tree.present(
                .fullScreenCover, from: try #require(sheet.ids.last), id: StackID("n"), root: "N")
            weak += (sheet.screens + nested.screens).map(WeakBox.init)
            weak.append(WeakBox(sheet.context))
            try tree.dismiss(id)
        }
        #expect(weak.count == 200)
        #expect(weak.allSatisfy { $0.value == nil })
        #expect(root.children.isEmpty && root.next == nil)
    }

    @Test func theTreesOwnContextKeepsTheSelectedStackLast() throws {
        let tree = ScreenTree<String>()
        tree.main.push("A")
        let one = try tree.addStack(StackID("one"), root: "1")
        let two = try tree.addStack(StackID("two"), root: "2")
        #expect(tree.context.children.last === tree.main.context)
        try tree.select(StackID("one"))
        #expect(tree.context.children.last === one.context && tree.context.top() === one.root)
        try tree.select(StackID("two"))
        #expect(tree.context.top() === two.root)
        #expect(tree.tabIDs == [.main, StackID("one"), StackID("two")])
        #expect(Set(tree.context.children.map(ObjectIdentifier.init)).count == 3)
    }

    @Test func movingATabChangesTheOrderOfTheTabsAndNothingElse() throws {
        let tree = ScreenTree<String>()
        tree.main.push("A", id: ScreenID("a"))
        let one = try tree.addStack(StackID("one"), root: "1")
        try tree.addStack(StackID("two"), root: "2")
        try tree.addStack(StackID("three"), root: "3")
        let sheet = try tree.present(.sheet, from: try #require(one.ids.last), id: StackID("p"), root: "P")
        try tree.select(StackID("one"))
        let children = tree.context.children.map(ObjectIdentifier.init)
        try tree.moveTab(StackID("one"), to: 2)
        #expect(tree.tabIDs == [.main, StackID("two"), StackID("three"), StackID("one")])
        #expect(tree.stackIDs == [.main, StackID("two"), StackID("three"), StackID("one"), StackID("p")])
        #expect(tree.selectedStackID == StackID("one") && tree.visibleStackID == StackID("p"))
        #expect(tree.context.top() === sheet.root && tree.context.children.map(ObjectIdentifier.init) == children)
        try tree.moveTab(StackID("one"), to: 0)
        #expect(tree.tabIDs == [.main, StackID("one"), StackID("two"), StackID("three")])
        try tree.moveTab(StackID("two"), to: 1)
        #expect(tree.tabIDs == [.main, StackID("one"), StackID("two"), StackID("three")])

        #expect(throws: NavigationError(.conflict, "the main stack stays first: it is not moved")) {
            try tree.moveTab(.main, to: 0)
        }
        #expect(throws: NavigationError(.conflict, "stack 'p' is a presentation: it has no place among the tabs")) {
            try tree.moveTab(StackID("p"), to: 0)
        }
        #expect(
            throws: NavigationError(.conflict, "cannot move tab 'two' to position 3: the positions are 0 to 2")
        ) { try tree.moveTab(StackID("two"), to: 3) }
        #expect(throws: NavigationError.self) { try tree.moveTab(StackID("two"), to: -1) }
        #expect(throws: NavigationError(.notFound, "no stack 'nope'")) { try tree.moveTab(StackID("nope"), to: 0) }
        #expect(tree.tabIDs == [.main, StackID("one"), StackID("two"), StackID("three")])
    }

    @Test func aPresentationsRootInheritsFromItsPresenterAcrossStacks() throws {
        // A sheet presented from a tab reads the tab's values, not the main stack's.
        let tree = ScreenTree<String>(ids: .incrementing(prefix: "c"))
        tree.main.push("A") { $0[TitleKey.self] = "main" }
        try tree.addStack(StackID("t"), root: "T") { $0[TitleKey.self] = "tab" }
        let sheet = try tree.present(.sheet, from: ScreenID("c1"), id: StackID("p"), root: "P")
        #expect(sheet.root?[TitleKey.self] == "tab")
        #expect(tree.presentationDepth(of: StackID("p")) == 1)
        #expect(sheet.root?.head() === tree.stack(StackID("t"))?.root)
    }

    @Test func dismissingAPushedScreenPopsItAndWhatIsAboveIt() throws {
        let tree = ScreenTree<String>(ids: .incrementing(prefix: "c"))
        tree.main.push("A")
        tree.main.push("B")
        tree.main.push("C")
        let removal = try tree.dismiss(screen: ScreenID("c1"))
        #expect(removal.screens == [ScreenID("c2"), ScreenID("c1")])
        #expect(!removal.isStackRemoved)
        #expect(tree.main.count == 1)
    }
}
