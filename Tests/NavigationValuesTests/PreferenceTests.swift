import NavigationValues
import Testing

/// A handler whose passing can be switched, and which logs what it received.
final class SwitchableHandler {
    var passes = true
    var received: [String] = []

    func install(on screen: ScreenContext) {
        screen.onPreferenceChange(Selection.self) { [unowned self] value, passBack in
            received.append(value)
            if passes { passBack(value) }
        }
    }
}

@Suite struct PreferenceTests {
    /// docs/SEMANTICS.md §3, the worked example.
    @Test func workedExample() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        let handlers = (a: SwitchableHandler(), b: SwitchableHandler(), c: SwitchableHandler())
        handlers.a.install(on: a)
        handlers.b.install(on: b)
        handlers.c.install(on: c)

        var walk = c.updatePreference(Selection.self, value: "p")
        #expect([a, b, c].map { $0.preference(Selection.self) } == ["p", "p", "p"])
        #expect(walk.deliveries.map { ObjectIdentifier($0.screen) } == [c, b, a].map(ObjectIdentifier.init))
        #expect(walk.stoppedAt == nil)

        handlers.b.passes = false
        walk = c.updatePreference(Selection.self, value: "q")
        #expect(c.preference(Selection.self) == "q")
        #expect(b.preference(Selection.self) == "q")
        #expect(a.preference(Selection.self) == "p")
        #expect(walk.stoppedAt === b)

        walk = c.updatePreference(Selection.self, value: "q")
        #expect(walk.deliveries.isEmpty)
        #expect(handlers.c.received == ["p", "q"])
        // C's remembered decision (passed) applies, then B's (stopped).
        #expect(walk.stoppedAt === b)

        b.removePreferenceHandler(Selection.self)
        walk = c.updatePreference(Selection.self, value: "r")
        #expect(c.preference(Selection.self) == "r")
        #expect(b.preference(Selection.self) == "q")
        #expect(a.preference(Selection.self) == "r")
        #expect(walk.deliveries.map { ObjectIdentifier($0.screen) } == [c, a].map(ObjectIdentifier.init))
        #expect(handlers.a.received == ["p", "r"])
    }

    @Test func aScreenWithoutHandlersIsTransparentAndTheDefaultIsRead() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        a.onPreferenceChange(Selection.self) { value, passBack in passBack(value) }
        let walk = c.updatePreference(Selection.self, value: "v")
        #expect(b.preference(Selection.self) == "")
        #expect(c.preference(Selection.self) == "")
        #expect(a.preference(Selection.self) == "v")
        #expect(walk.deliveries.count == 1)
    }

    @Test func aHandlerMayPassBackAnotherValue() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        a.onPreferenceChange(Selection.self) { value, passBack in passBack(value) }
        b.onPreferenceChange(Selection.self) { value, passBack in passBack(value.uppercased()) }
        c.updatePreference(Selection.self, value: "low")
        #expect(b.preference(Selection.self) == "low")
        #expect(a.preference(Selection.self) == "LOW")
    }

    @Test func aRepeatedValueUsesTheRememberedPassedValue() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        var calls = 0
        a.onPreferenceChange(Selection.self) { value, passBack in passBack(value) }
        b.onPreferenceChange(Selection.self) { value, passBack in
            calls += 1
            passBack(value + "!")
        }
        c.updatePreference(Selection.self, value: "v")
        a.updatePreference(Selection.self, value: "other")
        #expect(a.preference(Selection.self) == "other")
        let walk = c.updatePreference(Selection.self, value: "v")
        #expect(calls == 1)
        // A's handler last saw "other", so "v!" (B's remembered pass) is new to it.
        #expect(a.preference(Selection.self) == "v!")
        #expect(walk.deliveries.count == 1)
    }

    @Test func replacingAHandlerForgetsItsMemoryButKeepsTheReceivedValue() {
        let (stack, a, _, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        var calls = 0
        a.onPreferenceChange(Selection.self) { _, _ in calls += 1 }
        c.updatePreference(Selection.self, value: "v")
        a.onPreferenceChange(Selection.self) { _, _ in calls += 1 }
        #expect(a.preference(Selection.self) == "v")
        c.updatePreference(Selection.self, value: "v")
        #expect(calls == 2)
        a.removePreferenceHandler(Selection.self)
        #expect(!a.hasPreferenceHandler(Selection.self))
        #expect(a.preference(Selection.self) == "v")
        a.cleanup()
        #expect(a.preference(Selection.self) == "")
    }

    @Test func aLatePassBackContinuesTheWalk() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        a.onPreferenceChange(Selection.self) { value, passBack in passBack(value) }
        var pending: ((String) -> Void)?
        b.onPreferenceChange(Selection.self) { _, passBack in pending = passBack }
        let walk = c.updatePreference(Selection.self, value: "later")
        #expect(walk.stoppedAt === b)
        #expect(a.preference(Selection.self) == "")
        pending?("later")
        #expect(a.preference(Selection.self) == "later")
        // B now remembers that it passed the value on.
        let again = c.updatePreference(Selection.self, value: "later")
        #expect(again.stoppedAt == nil)
    }

    @Test func receivingAPreferenceNotifiesItsObservers() {
        let (stack, a, _, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        a.onPreferenceChange(Selection.self) { value, passBack in passBack(value) }
        let notified = notifiedScreens(["A": a, "C": c], reading: { _ = $0.preference(Selection.self) }) {
            c.updatePreference(Selection.self, value: "v")
        }
        #expect(notified == ["A"])
    }

    @Test func namedHandlersPassOrStopAndCanBeRestored() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        a.setPreferenceHandler(named: "selection", passBack: true)
        b.setPreferenceHandler(named: "selection", passBack: false)
        c.setPreferenceHandler(named: "selection", passBack: true)
        let walk = c.updatePreference(named: "selection", value: "x")
        #expect(walk.deliveries.map { $0.value as? JSONValue } == ["x", "x"])
        #expect(walk.stoppedAt === b)
        #expect(b.receivedPreference(named: "selection") == "x")
        #expect(a.receivedPreference(named: "selection") == nil)
        #expect(b.preferenceMemory(named: "selection")?.decision == .stopped)
        #expect(c.preferenceMemory(named: "selection")?.decision == .passedBack("x"))
        #expect(c.receivedNamedPreferences == ["selection": "x"])

        // A fresh graph restored from that state behaves the same.
        let (stack2, a2, b2, c2) = makeStackABC()
        defer { withExtendedLifetime(stack2) {} }
        for (screen, passBack) in [(a2, true), (b2, false), (c2, true)] {
            screen.setPreferenceHandler(named: "selection", passBack: passBack)
        }
        b2.restorePreference(named: "selection", received: "x", memory: ("x", .stopped))
        c2.restorePreference(named: "selection", received: "x", memory: ("x", .passedBack("x")))
        let again = c2.updatePreference(named: "selection", value: "x")
        #expect(again.deliveries.isEmpty)
        #expect(again.stoppedAt === b2)
        #expect(a2.receivedPreference(named: "selection") == nil)
    }
}
