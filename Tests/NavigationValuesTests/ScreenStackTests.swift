import NavigationValues
import Testing

@Suite struct ScreenStackTests {
    @Test func pushRunsConfigureOnceLinked() {
        let stack = ScreenStack()
        let root = stack.push { $0.title = "x" }
        var seen = ""
        let b = stack.push { seen = $0.title }
        #expect(seen == "x")
        #expect(stack.screens.count == 2)
        #expect(stack.root === root && stack.topScreen === b)
        #expect(stack.context.role == .navigationStack)
        #expect(b.role == .screen)
    }

    @Test func popNeverRemovesTheRoot() {
        let stack = ScreenStack()
        #expect(stack.pop() == nil)
        let root = stack.push()
        #expect(stack.pop() == nil)
        #expect(stack.pop(count: 5).isEmpty)
        #expect(stack.pop(from: root).isEmpty)
        #expect(stack.screens.count == 1)
    }

    @Test func popReturnsTheTopmostFirstAndCleansThemUp() {
        let stack = ScreenStack()
        let root = stack.push()
        let b = stack.push { $0.title = "b" }
        let c = stack.push { $0.title = "c" }
        c.onPreferenceChange(Selection.self) { _, _ in }
        c.updatePreference(Selection.self, value: "v")
        let popped = stack.pop(count: 2)
        #expect(popped.map(ObjectIdentifier.init) == [c, b].map(ObjectIdentifier.init))
        #expect(!b.hasValue(TitleKey.self) && !c.hasValue(TitleKey.self))
        #expect(!c.hasPreferenceHandler(Selection.self))
        #expect(c.preference(Selection.self) == "")
        #expect(root.next == nil)
        #expect(c.parent == nil && c.previous == nil)
    }

    @Test func popCountIsClampedAboveTheRoot() {
        let stack = ScreenStack()
        stack.push()
        stack.push()
        stack.push()
        #expect(stack.pop(count: 10).count == 2)
        #expect(stack.pop(count: -1).isEmpty)
    }

    @Test func popToKeepsTheScreenAndPopFromRemovesIt() {
        let stack = ScreenStack()
        let root = stack.push()
        let b = stack.push()
        let c = stack.push()
        let d = stack.push()
        #expect(stack.pop(to: b).map(ObjectIdentifier.init) == [d, c].map(ObjectIdentifier.init))
        #expect(stack.topScreen === b)
        #expect(stack.pop(from: b).map(ObjectIdentifier.init) == [ObjectIdentifier(b)])
        #expect(stack.topScreen === root)
        #expect(stack.pop(to: c).isEmpty)
    }

    @Test func tenThousandPushedAndPoppedScreensLeaveNoContextAlive() {
        let stack = ScreenStack()
        let root = stack.push { $0.title = "root" }
        var weakScreens: [WeakBox] = []
        for round in 0..<100 {
            for index in 0..<100 {
                let screen = stack.push { $0.counter = index }
                screen.onPreferenceChange(Selection.self) { value, passBack in passBack(value) }
                weakScreens.append(WeakBox(screen))
            }
            stack.topScreen?.updatePreference(Selection.self, value: "round \(round)")
            #expect(stack.pop(to: root).count == 100)
        }
        #expect(weakScreens.count == 10_000)
        #expect(weakScreens.allSatisfy { $0.value == nil })
        #expect(root.preference(Selection.self) == "")
        #expect(stack.screens.count == 1)
    }

    @Test func pushAndPopNotifyObserversOfTheLinksTheyChangeOnly() {
        let stack = ScreenStack()
        let root = stack.push()
        let middle = stack.push()
        let links: (ScreenContext) -> Void = { _ = ($0.parent, $0.children, $0.previous, $0.next) }
        var top: ScreenContext?
        let pushed = notifiedScreens(["stack": stack.context, "root": root, "middle": middle], reading: links) {
            top = stack.push()
        }
        // The stack's children and the middle screen's `next` changed; nothing of the root did.
        #expect(pushed == ["stack", "middle"])
        guard let top else { return }
        let popped = notifiedScreens(
            ["stack": stack.context, "root": root, "middle": middle, "top": top], reading: links
        ) {
            stack.pop()
        }
        #expect(popped == ["stack", "middle", "top"])
        #expect(top.parent == nil && top.previous == nil && middle.next == nil && middle.previous === root)
        // Observed contexts link as unobserved ones do: a pushed screen inherits again.
        middle[TitleKey.self] = "middle"
        let again = stack.push()
        #expect(again.previous === middle && middle.next === again && again[TitleKey.self] == "middle")
    }

    @Test func aDroppedStackFreesEveryScreen() {
        var boxes: [WeakBox] = []
        do {
            let stack = ScreenStack()
            for _ in 0..<10 { boxes.append(WeakBox(stack.push())) }
            boxes.append(WeakBox(stack.context))
        }
        #expect(boxes.allSatisfy { $0.value == nil })
    }
}

struct WeakBox {
    weak var value: ScreenContext?
    init(_ value: ScreenContext) { self.value = value }
}

@Suite struct ScreenStackIDTests {
    @Test func screensAreKeyedByStableIDsFromAPredictableGenerator() {
        let stack = ScreenStack<String>(ids: .incrementing(prefix: "s"))
        let home = stack.push("Home")
        let detail = stack.push("Detail", id: ScreenID("detail"))
        let picker = stack.push("Picker")
        #expect(stack.ids == [ScreenID("s0"), ScreenID("detail"), ScreenID("s1")])
        #expect(stack[id: ScreenID("detail")] === detail)
        #expect(stack.screen(id: ScreenID("s1"))?.element == "Picker")
        #expect(stack.index(of: ScreenID("s0")) == 0 && stack.index(of: ScreenID("nope")) == nil)
        #expect(stack.id(of: home) == ScreenID("s0") && stack.id(of: picker) == ScreenID("s1"))
        #expect(stack.id(of: ScreenContext()) == nil)
        #expect(
            stack.path == [
                StackEntry(id: ScreenID("s0"), element: "Home"), StackEntry(id: ScreenID("detail"), element: "Detail"),
                StackEntry(id: ScreenID("s1"), element: "Picker"),
            ])
    }

    @Test func popByIDKeepsOrRemovesThatScreenButNeverTheRoot() {
        let stack = ScreenStack<Int>()
        for number in 0..<5 { stack.push(number) }
        #expect(stack.pop(to: ScreenID("2")) == [ScreenID("4"), ScreenID("3")])
        #expect(stack.pop(from: ScreenID("2")) == [ScreenID("2")])
        #expect(stack.pop(from: ScreenID("0")) == [ScreenID("1")])
        #expect(stack.pop(from: ScreenID("0")).isEmpty && stack.pop(to: ScreenID("9")).isEmpty)
        #expect(stack.path.map(\.element) == [0])
        let next = stack.push(5)
        #expect(stack.id(of: next) == ScreenID("5"))
        #expect(stack.screens.count == 2 && stack.count == 2)
    }

    @Test func popKeepsTheEntriesAndTheContextsChildrenInStep() {
        let stack = ScreenStack<String>()
        let root = stack.push("root")
        for name in ["a", "b", "c"] { stack.push(name) }
        let popped = stack.pop(count: 2)
        #expect(popped.count == 2 && popped.allSatisfy { $0.parent == nil })
        #expect(stack.entries.map(\.context).map(ObjectIdentifier.init) == stack.screens.map(ObjectIdentifier.init))
        #expect(stack.path.map(\.element) == ["root", "a"])
        #expect(stack.pop(to: root).count == 1 && stack.path.map(\.element) == ["root"])
    }

    @Test func lookupsFollowTheEntriesThroughPushesAndPops() {
        let stack = ScreenStack<String>(ids: .incrementing(prefix: "s"))
        for name in ["root", "a", "b", "c", "d"] { stack.push(name) }
        stack.pop(count: 2)
        stack.push("e", id: ScreenID("e"))
        #expect(stack.pop(to: ScreenID("s1")) == [ScreenID("e"), ScreenID("s2")])
        let f = stack.push("f")
        stack.push("g")
        stack.pop()
        #expect(stack.entries.map(\.element) == ["root", "a", "f"])
        #expect(stack.ids == [ScreenID("s0"), ScreenID("s1"), ScreenID("s5")])
        #expect(stack.ids == stack.entries.map(\.id) && stack.count == 3)
        for (offset, entry) in stack.entries.enumerated() {
            #expect(stack.index(of: entry.id) == offset && stack.id(of: entry.context) == entry.id)
        }
        #expect(stack.index(of: ScreenID("s4")) == nil && stack.index(of: ScreenID("e")) == nil)
        #expect(stack.id(of: f) == ScreenID("s5") && stack.topScreen === f)
        // An id that left the stack may be pushed again.
        stack.push("e again", id: ScreenID("e"))
        #expect(stack.index(of: ScreenID("e")) == 3)
    }

    @Test func onlyAPresentedStackCoversTheTopmostScreen() {
        let stack = ScreenStack<String>()
        #expect(!stack.isCoveredByPresentation)
        stack.push("root")
        let top = stack.push("top")
        // Contexts of other behaviours under the topmost screen, a navigation stack among them, do
        // not cover it.
        let nested = ScreenStack<String>()
        nested.context.attach(to: top)
        ScreenContext(.screen).attach(to: top)
        #expect(!stack.isCoveredByPresentation)
        let sheet = ScreenStack<String>(behavior: .sheet)
        sheet.context.attach(to: top)
        #expect(stack.isCoveredByPresentation)
        sheet.context.detach()
        #expect(!stack.isCoveredByPresentation)
        let cover = ScreenStack<String>(behavior: .fullScreenCover)
        cover.context.attach(to: top)
        #expect(stack.isCoveredByPresentation)
        // Only the topmost screen counts: a presentation under an earlier screen covers nothing.
        cover.context.detach()
        let root = stack.entries[0].context
        ScreenStack<String>(behavior: .sheet).context.attach(to: root)
        #expect(!stack.isCoveredByPresentation)
    }

    @Test func aPathIsASendableValue() async {
        let stack = ScreenStack<String>()
        stack.push("Home")
        stack.push("Detail")
        let path = stack.path
        let names = await Task.detached { path.map(\.element) }.value
        #expect(names == ["Home", "Detail"])
    }
}
