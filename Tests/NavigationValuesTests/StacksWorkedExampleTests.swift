import NavigationValues
import Testing

/// The worked examples of docs/Stacks.md, one test each, in the core (the same examples run over
/// HTTP in Tests/NavigationValuesAPITests/StacksOverHTTPTests.swift).
@Suite struct StacksWorkedExampleTests {
    /// Main stack A → B; B presents sheet `s` holding S1 → S2.
    struct Sheet {
        let tree = ScreenTree<String>(ids: .incrementing(prefix: "c"))
        let a: ScreenContext
        let b: ScreenContext
        let s1: ScreenContext
        let s2: ScreenContext

        init() throws {
            a = tree.main.push("A")
            b = tree.main.push("B")
            let sheet = try tree.present(.sheet, from: ScreenID("c1"), id: StackID("s"), root: "S1")
            s1 = try #require(sheet.root)
            s2 = try tree.push("S2", onto: StackID("s"))
        }
    }

    // MARK: - §1 The tree

    /// docs/Stacks.md §1, worked example: what head, tail, top and role are over the tree, and
    /// what a pop of a presenter does.
    @Test func theTreeWorkedExample() throws {
        let example = try Sheet()
        let tree = example.tree
        let cover = try tree.present(.fullScreenCover, from: ScreenID("c3"), id: StackID("c"), root: "C1")
        let c1 = try #require(cover.root)

        // What a user sees: C1, the top of the deepest presentation; top() of the tree's context.
        #expect(tree.visibleScreen === c1)
        #expect(tree.context.top() === c1)
        #expect(tree.visibleStackID == StackID("c"))
        // The previous/next chain crosses presentations: head() is the main root, tail() the visible screen.
        #expect(c1.head() === example.a)
        #expect(example.s1.head() === example.a)
        #expect(example.a.tail() === c1)
        #expect(example.s1.previous === example.b && example.b.next === example.s1)
        #expect(c1.previous === example.s2 && example.s2.next === c1)
        // Roles: the tree's context is a screen (a tab view), every stack a navigationStack.
        #expect(tree.context.role == .screen)
        #expect(tree.main.context.role == .navigationStack)
        #expect(cover.context.role == .navigationStack)
        #expect(c1.role == .screen)
        #expect(tree.presentationDepth(of: StackID("c")) == 2)

        // B presents: nothing is pushed above it.
        #expect(throws: NavigationError(.conflict, "the topmost screen of stack 'main' presents 's': dismiss it first"))
        {
            try tree.push("D", onto: .main)
        }

        // Pop B: the cover, then the sheet are dismissed; their screens are cleaned up.
        example.s2[TitleKey.self] = "s2"
        let removal = try tree.pop(count: 1, from: .main)
        #expect(removal.screens == [ScreenID("c1")])
        #expect(removal.dismissed == [StackID("c"), StackID("s")])
        #expect(removal.dismissedScreens == [ScreenID("c4"), ScreenID("c3"), ScreenID("c2")])
        #expect(!example.s2.hasValue(TitleKey.self))
        #expect(example.s1.parent == nil && example.s1.previous == nil && c1.parent == nil)
        #expect(tree.stackIDs == [.main])
        #expect(tree.visibleScreen === example.a && tree.context.top() === example.a)
        #expect(example.a.next == nil)
    }

    // MARK: - §2 Forward values

    /// docs/Stacks.md §2, worked example: values cross a presentation, never back out of it.
    @Test func forwardValuesWorkedExample() throws {
        let example = try Sheet()
        let (a, b, s1, s2) = (example.a, example.b, example.s1, example.s2)
        let screens: KeyValuePairs = ["A": a, "B": b, "S1": s1, "S2": s2]
        func titles() -> [String] { [a, b, s1, s2].map(\.title) }

        // A sets title = "x": all four read "x"; all four are notified.
        #expect(notifiedScreens(screens) { a.title = "x" } == ["A", "B", "S1", "S2"])
        #expect(titles() == ["x", "x", "x", "x"])
        // S1 sets title = "s": A and B keep "x"; S1 and S2 read "s"; S1 and S2 are notified.
        #expect(notifiedScreens(screens) { s1.title = "s" } == ["S1", "S2"])
        #expect(titles() == ["x", "x", "s", "s"])
        // B sets title = "b": the sheet keeps "s"; only B is notified.
        #expect(notifiedScreens(screens) { b.title = "b" } == ["B"])
        #expect(titles() == ["x", "b", "s", "s"])
        // S1 removes its override: S1 and S2 read what B resolves to; S1 and S2 are notified.
        #expect(notifiedScreens(screens) { s1.removeValue(TitleKey.self) } == ["S1", "S2"])
        #expect(titles() == ["x", "b", "b", "b"])

        // Dismiss the sheet, present another from B: its root reads "b".
        try example.tree.dismiss(StackID("s"))
        #expect(!s1.hasValue(TitleKey.self) && s1.title == "")
        let again = try example.tree.present(.fullScreenCover, from: ScreenID("c1"), id: StackID("t"), root: "T1")
        #expect(again.root?.title == "b")
    }

    /// docs/Stacks.md §2: separate tabs share nothing.
    @Test func tabsShareNothing() throws {
        let example = try Sheet()
        let search = try example.tree.addStack(StackID("search"), root: "R")
        let r = try #require(search.root)
        let screens: KeyValuePairs = ["A": example.a, "R": r]
        #expect(notifiedScreens(screens) { example.a.title = "x" } == ["A"])
        #expect(r.title == "")
        #expect(notifiedScreens(screens) { r.title = "r" } == ["R"])
        #expect(example.a.title == "x" && example.s2.title == "x")
        #expect(r.previous == nil && r.head() === r)
    }

    // MARK: - §3 Preferences

    /// docs/Stacks.md §3, worked example: a preference published in a presentation continues to
    /// the presenter.
    @Test func preferencesWorkedExample() throws {
        let example = try Sheet()
        let (a, b, s1, s2) = (example.a, example.b, example.s1, example.s2)
        var decisions: [ObjectIdentifier: Bool] = [:]
        for screen in [a, b, s1, s2] {
            decisions[ObjectIdentifier(screen)] = true
            screen.onPreferenceChange(Selection.self) { [weak screen] value, passBack in
                if let screen, decisions[ObjectIdentifier(screen)] == true { passBack(value) }
            }
        }
        func received() -> [String] { [a, b, s1, s2].map { $0.preference(Selection.self) } }
        func receivers(_ walk: PreferenceWalk) -> [String] {
            walk.deliveries.map { delivery in
                ["A": a, "B": b, "S1": s1, "S2": s2].first { $0.value === delivery.screen }?.key ?? "?"
            }
        }

        // S2 publishes "p", every handler passing: S2, S1, B, A receive "p".
        var walk = s2.updatePreference(Selection.self, value: "p")
        #expect(receivers(walk) == ["S2", "S1", "B", "A"])
        #expect(received() == ["p", "p", "p", "p"])
        // B (the presenter) stops, S2 publishes "q": S2, S1, B receive "q"; A keeps "p".
        decisions[ObjectIdentifier(b)] = false
        walk = s2.updatePreference(Selection.self, value: "q")
        #expect(receivers(walk) == ["S2", "S1", "B"])
        #expect(walk.stoppedAt === b)
        #expect(received() == ["p", "q", "q", "q"])
        // S1 has no handler, S2 publishes "r": S2 receives, S1 is skipped, B receives and stops.
        s1.removePreferenceHandler(Selection.self)
        walk = s2.updatePreference(Selection.self, value: "r")
        #expect(receivers(walk) == ["S2", "B"])
        #expect(received() == ["p", "r", "q", "r"])

        // The sheet returns a result and is dismissed: B keeps it, the sheet is cleaned up.
        walk = s1.updatePreference(Selection.self, value: "done")
        #expect(receivers(walk) == ["B"])
        let removal = try example.tree.dismiss(screen: ScreenID("c2"))
        #expect(removal.isStackRemoved && removal.screens == [ScreenID("c3"), ScreenID("c2")])
        #expect(b.preference(Selection.self) == "done")
        #expect(s2.preference(Selection.self) == "" && !s2.hasPreferenceHandler(Selection.self))
        #expect(example.tree.visibleScreen === b)
    }

    // MARK: - §4 Tabs

    /// docs/Stacks.md §4, worked example: three tabs; switching keeps each stack and what it presents.
    @Test func tabsWorkedExample() throws {
        let tree = ScreenTree<String>(ids: .incrementing(prefix: "c"))
        tree.main.push("Home")
        let detail = tree.main.push("Detail")
        let search = try tree.addStack(StackID("search"), root: "Search")
        let results = try tree.push("Results", onto: StackID("search"))
        let profile = try tree.addStack(StackID("profile"), root: "Profile")
        #expect(tree.tabIDs == [.main, StackID("search"), StackID("profile")])
        #expect(tree.visibleScreen === detail)

        try tree.select(StackID("search"))
        #expect(tree.visibleScreen === results && tree.context.top() === results)
        #expect(tree.main.path.map(\.element) == ["Home", "Detail"])

        try tree.select(StackID("profile"))
        let sheet = try tree.present(.sheet, from: try #require(profile.ids.first), id: StackID("edit"), root: "Edit")
        #expect(tree.visibleScreen === sheet.root)
        try tree.select(.main)
        #expect(tree.visibleScreen === detail && tree.context.top() === detail)
        try tree.select(StackID("profile"))
        #expect(tree.visibleScreen === sheet.root)
        try tree.select(StackID("search"))
        #expect(search.path.map(\.element) == ["Search", "Results"])

        // Removing a tab dismisses what it presents; the selection stays where it is.
        let removal = try tree.removeStack(StackID("profile"))
        #expect(removal.screens == [ScreenID("c4")] && removal.dismissed == [StackID("edit")])
        #expect(tree.stackIDs == [.main, StackID("search")])
        #expect(tree.selectedStackID == StackID("search"))
        // Removing the selected tab selects the main stack.
        try tree.removeStack(StackID("search"))
        #expect(tree.selectedStackID == .main && tree.visibleScreen === detail)
    }

    // MARK: - §5 Compound changes

    /// docs/Stacks.md §5, worked example: replace the screens above X; publish, then pop.
    @Test func compoundChangesWorkedExample() throws {
        let tree = ScreenTree<String>(ids: .incrementing(prefix: "c"))
        let x = tree.main.push("X")
        x.onPreferenceChange(Selection.self) { _, _ in }
        x.updatePreference(Selection.self, value: "seen")
        x.title = "x"
        tree.main.push("Y")
        tree.main.push("Z")
        let (removal, pushed) = try tree.replaceScreens(above: ScreenID("c0"), with: ["P", "Q"])
        #expect(removal.screens == [ScreenID("c2"), ScreenID("c1")])
        #expect(tree.main.path.map(\.element) == ["X", "P", "Q"])
        #expect(tree.main.ids.first == ScreenID("c0") && tree.main.root === x)
        #expect(x.title == "x" && pushed.map(\.title) == ["x", "x"])
        // X keeps its handler's memory: the same value again is not delivered.
        #expect(x.updatePreference(Selection.self, value: "seen").deliveries.isEmpty)

        // Publish, then pop: Q publishes "picked" and is popped; X received it.
        let q = try #require(tree.main.topScreen)
        let walk = q.updatePreference(Selection.self, value: "picked")
        #expect(walk.deliveries.count == 1 && walk.stoppedAt === x)
        try tree.dismiss(screen: ScreenID("c4"))
        #expect(tree.main.path.map(\.element) == ["X", "P"])
        #expect(x.preference(Selection.self) == "picked")
        // The root of the main stack is never dismissed.
        #expect(throws: NavigationError.self) { try tree.dismiss(screen: ScreenID("c0")) }
    }
}
