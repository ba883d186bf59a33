import NavigationValues
import Testing

@Suite struct ForwardValueTests {
    @Test func aScreenReadsTheDefaultWhenNothingWasWritten() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        #expect([a, b, c].map(\.title) == ["", "", ""])
        #expect([a, b, c].map(\.counter) == [0, 0, 0])
        #expect(!a.hasValue(TitleKey.self))
    }

    /// docs/SEMANTICS.md §2, the worked example, step by step with its notifications.
    @Test func workedExample() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        let screens: KeyValuePairs = ["A": a, "B": b, "C": c]

        var notified = notifiedScreens(screens) { a.title = "x" }
        #expect([a, b, c].map(\.title) == ["x", "x", "x"])
        #expect(notified == ["A", "B", "C"])

        notified = notifiedScreens(screens) { b.title = "y" }
        #expect([a, b, c].map(\.title) == ["x", "y", "y"])
        #expect(notified == ["B", "C"])

        notified = notifiedScreens(screens) { a.title = "z" }
        #expect([a, b, c].map(\.title) == ["z", "y", "y"])
        #expect(notified == ["A"])

        notified = notifiedScreens(screens) { b.removeValue(TitleKey.self) }
        #expect([a, b, c].map(\.title) == ["z", "z", "z"])
        #expect(notified == ["B", "C"])

        b.title = "b"
        notified = notifiedScreens(screens) {
            stack.pop()
            let d = stack.push()
            #expect(d.title == "b")
        }
        #expect(notified.isEmpty)
    }

    @Test func writingAnEqualValueNotifiesNoOneButStillShields() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        a.title = "x"
        let notified = notifiedScreens(["A": a, "B": b, "C": c]) { b.title = "x" }
        #expect(notified.isEmpty)
        #expect(b.hasValue(TitleKey.self))
        // B's override now shields C from A's writes.
        let later = notifiedScreens(["A": a, "B": b, "C": c]) { a.title = "new" }
        #expect(later == ["A"])
        #expect(c.title == "x")
    }

    @Test func removingAnOverrideEqualToWhatPreviousResolvesNotifiesNoOne() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        a.title = "x"
        b.title = "x"
        let notified = notifiedScreens(["A": a, "B": b, "C": c]) { b.removeValue(TitleKey.self) }
        #expect(notified.isEmpty)
        #expect(!b.hasValue(TitleKey.self))
        // Removing a value a screen never had changes nothing either.
        #expect(notifiedScreens(["A": a, "B": b, "C": c]) { c.removeValue(TitleKey.self) }.isEmpty)
    }

    @Test func nonEquatableValuesNotifyOnEveryWrite() {
        let (stack, a, b, _) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        a[TokenKey.self] = Token(raw: 1)
        let notified = notifiedScreens(["A": a, "B": b], reading: { _ = $0[TokenKey.self] }) {
            a[TokenKey.self] = Token(raw: 1)
        }
        #expect(notified == ["A", "B"])
    }

    @Test func observationIgnoredValuesAreStoredButNotifyNoOne() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        let notified = notifiedScreens(["A": a, "B": b, "C": c], reading: { _ = $0[DraftKey.self] }) {
            a[DraftKey.self] = "draft"
        }
        #expect(notified.isEmpty)
        #expect(c[DraftKey.self] == "draft")
        #expect(a.hasValue(DraftKey.self))
        a.removeValue(DraftKey.self)
        #expect(c[DraftKey.self] == "")
    }

    @Test func aWriteNotifiesOnlyObserversOfThatKey() {
        let (stack, a, b, _) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        let notified = notifiedScreens(["A": a, "B": b], reading: { _ = $0.counter }) { a.title = "x" }
        #expect(notified.isEmpty)
    }

    @Test func earlierScreensNeverChange() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        c.title = "c"
        #expect(a.title == "" && b.title == "" && c.title == "c")
    }

    @Test func notificationsFollowPreviousLinksUnderANonStackParent() {
        let parent = ScreenContext(.screen)
        let first = ScreenContext(.navigation)
        let second = ScreenContext(.navigation)
        first.attach(to: parent)
        second.attach(to: parent)
        #expect(first.next == nil)
        let notified = notifiedScreens(["first": first, "second": second]) { first.title = "x" }
        #expect(notified == ["first", "second"])
        #expect(second.title == "x")
    }

    @Test func pushAndPopNotifyNoValueObservers() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        a.title = "x"
        let notified = notifiedScreens(["A": a, "B": b, "C": c]) {
            stack.pop()
            stack.push()
        }
        #expect(notified.isEmpty)
    }

    @Test func namedValuesReportTheScreensWhoseResolvedValueChanged() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        let title = NamedValueKey("title", defaultValue: "")
        #expect(a.setValue("x", for: title).map(ObjectIdentifier.init) == [a, b, c].map(ObjectIdentifier.init))
        #expect(b.setValue("y", for: title).map(ObjectIdentifier.init) == [b, c].map(ObjectIdentifier.init))
        #expect(a.setValue("z", for: title).map(ObjectIdentifier.init) == [ObjectIdentifier(a)])
        #expect(a.setValue("z", for: title).isEmpty)
        #expect(b.removeValue(for: title).map(ObjectIdentifier.init) == [b, c].map(ObjectIdentifier.init))
        #expect(c.value(for: title) == "z")
        #expect(b.localValue(for: title) == nil)
        #expect(a.localNamedValues == ["title": "z"])
        #expect(c.resolvedNamedValues == ["title": "z"])
    }

    @Test func namedObservationIgnoredValuesAreNeverAffected() {
        let (stack, a, _, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        let draft = NamedValueKey("draft", defaultValue: "", isObservationIgnored: true)
        #expect(a.setValue("d", for: draft).isEmpty)
        #expect(c.value(for: draft) == "d")
        #expect(a.removeValue(for: draft).isEmpty)
        #expect(c.value(for: draft) == "")
    }

    @Test func namedAndTypedKeysShareTheRulesButNotTheEntries() {
        let (stack, a, b, _) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        let title = NamedValueKey("title", defaultValue: .null)
        a.title = "typed"
        #expect(b.value(for: title) == .null)
        a.setValue(1, for: title)
        #expect(b.value(for: title) == 1)
        #expect(b.title == "typed")
    }

    @Test func aScreenWithManyValuesKeepsEveryOneAndStillInherits() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        let keys = (0..<20).map { NamedValueKey("k\($0)", defaultValue: -1) }
        for (index, key) in keys.enumerated() { a.setValue(.integer(Int64(index)), for: key) }
        b.setValue(100, for: keys[3])
        #expect(keys.map { c.value(for: $0) } == keys.indices.map { $0 == 3 ? 100 : .integer(Int64($0)) })
        for key in keys[10...] { a.removeValue(for: key) }
        #expect(a.localNamedValues.count == 10)
        #expect(c.value(for: keys[15]) == -1)
        #expect(a.setValue(7, for: keys[0]).map(ObjectIdentifier.init) == [a, b, c].map(ObjectIdentifier.init))
        #expect(c.resolvedNamedValues.count == 10)
    }
}
