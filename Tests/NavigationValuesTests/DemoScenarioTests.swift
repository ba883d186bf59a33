import NavigationValues
import Testing

/// docs/SEMANTICS.md §4: the seed's Demo UI tests, restated on the core library.
@Suite struct DemoScenarioTests {
    /// The Demo's screens: a forward `title` (default "initial value") and a `selection` preference
    /// that each screen shows, with a switch to block it.
    struct DemoTitle: ValueKey { static let defaultValue = "initial value" }
    struct DemoSelection: PreferenceKey { static let defaultValue = "" }

    final class DemoScreen {
        let context: ScreenContext
        var blocks = false
        var shown: String { context.preference(DemoSelection.self) }

        init(_ context: ScreenContext) {
            self.context = context
            context.onPreferenceChange(DemoSelection.self) { [unowned self] value, passBack in
                if !blocks { passBack(value) }
            }
        }
    }

    /// Keeps every pushed Demo screen alive, as SwiftUI keeps the views on the stack.
    final class Demo {
        let stack = ScreenStack()
        var screens: [DemoScreen] = []

        func push() -> DemoScreen {
            let screen = DemoScreen(stack.push())
            screens.append(screen)
            return screen
        }

        func pop() {
            stack.pop()
            screens.removeLast()
        }
    }

    @Test func scenario1RootReadsTheDefault() {
        let stack = Demo()
        #expect(stack.push().context[DemoTitle.self] == "initial value")
    }

    @Test func scenario2ValueTypedOnRootIsReadByPushedScreen() {
        let stack = Demo()
        let root = stack.push()
        root.context[DemoTitle.self] = "typed"
        #expect(stack.push().context[DemoTitle.self] == "typed")
    }

    @Test func scenario3ValueTypedOnPushedScreenDoesNotChangeRootAfterPop() {
        let stack = Demo()
        let root = stack.push()
        stack.push().context[DemoTitle.self] = "pushed"
        stack.pop()
        #expect(root.context[DemoTitle.self] == "initial value")
    }

    @Test func scenario4ValueChangingOverTimeOnRootIsObserved() {
        let stack = Demo()
        let root = stack.push()
        let pushed = stack.push()
        for step in 1...3 {
            let notified = notifiedScreens(["root": root.context, "pushed": pushed.context],
                                           reading: { _ = $0[DemoTitle.self] }) {
                root.context[DemoTitle.self] = "tick \(step)"
            }
            #expect(notified == ["root", "pushed"])
            #expect(pushed.context[DemoTitle.self] == "tick \(step)")
        }
    }

    @Test func scenario5PreferenceFromPushedScreenReachesRootAfterPop() {
        let stack = Demo()
        let root = stack.push()
        stack.push().context.updatePreference(DemoSelection.self, value: "chosen")
        stack.pop()
        #expect(root.shown == "chosen")
    }

    @Test func scenario6BlockingScreenKeepsItsValueAndRootDoesNotGetIt() {
        let stack = Demo()
        let root = stack.push()
        let pushed = stack.push()
        pushed.blocks = true
        pushed.context.updatePreference(DemoSelection.self, value: "kept")
        #expect(pushed.shown == "kept")
        #expect(root.shown == "")
    }

    @Test func scenario7NonBlockingScreenLetsItThrough() {
        let stack = Demo()
        let root = stack.push()
        let pushed = stack.push()
        pushed.context.updatePreference(DemoSelection.self, value: "through")
        #expect(pushed.shown == "through")
        #expect(root.shown == "through")
    }

    @Test func scenario8ForwardValueOnRootIsReadTwoPushesDeep() {
        let stack = Demo()
        stack.push().context[DemoTitle.self] = "deep"
        _ = stack.push()
        #expect(stack.push().context[DemoTitle.self] == "deep")
    }

    @Test func scenario9PreferenceTwoPushesDeepReachesRoot() {
        let stack = Demo()
        let root = stack.push()
        _ = stack.push()
        stack.push().context.updatePreference(DemoSelection.self, value: "from deep")
        #expect(root.shown == "from deep")
    }

    @Test func scenario10IntermediateBlockerStopsPreferenceFromAbove() {
        let stack = Demo()
        let root = stack.push()
        let middle = stack.push()
        let top = stack.push()
        middle.blocks = true
        top.context.updatePreference(DemoSelection.self, value: "blocked")
        #expect(top.shown == "blocked")
        #expect(middle.shown == "blocked")
        #expect(root.shown == "")
    }
}
