import NavigationValues
import Testing

/// Why a screen reads a value and how a received preference got there, computed by the same code
/// that resolves values and walks preferences, checked against the worked examples.
@Suite struct ExplanationTests {
    // MARK: - Forward values

    /// SEMANTICS.md §2, the worked example: after each step, the screen each one reads `title` from.
    @Test func valueSourcesFollowSemanticsWorkedExample() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        func sources() -> [ScreenContext?] { [a, b, c].map { $0.valueSource(TitleKey.self) } }

        #expect(sources().allSatisfy { $0 == nil })  // every screen reads the default
        a.title = "x"
        #expect(sources().map { $0 === a } == [true, true, true])
        b.title = "y"
        #expect(sources().map { $0.map(ObjectIdentifier.init) } == [a, b, b].map(ObjectIdentifier.init))
        a.title = "z"
        #expect(sources().map { $0.map(ObjectIdentifier.init) } == [a, b, b].map(ObjectIdentifier.init))
        b.removeValue(TitleKey.self)
        #expect(sources().map { $0 === a } == [true, true, true])
        // Pop C, then push D: D reads what B resolves to, from the same screen.
        stack.pop()
        let d = stack.push()
        #expect(d.valueSource(TitleKey.self) === b.valueSource(TitleKey.self))
        #expect(d.title == "z")
    }

    /// docs/Stacks.md §2, the worked example: a presentation's screens read from their presenter's
    /// chain; a tab's root reads the default.
    @Test func valueSourcesCrossAPresentation() throws {
        let example = try StacksWorkedExampleTests.Sheet()
        let (tree, a, b, s1, s2) = (example.tree, example.a, example.b, example.s1, example.s2)
        let title = NamedValueKey("title", defaultValue: "")
        func sources() -> [ScreenID?] { [a, b, s1, s2].map { $0.valueSource(for: title)?.screenID } }

        a.setValue("x", for: title)
        #expect(sources() == Array(repeating: ScreenID("c0"), count: 4))
        s1.setValue("s", for: title)
        #expect(sources() == [ScreenID("c0"), ScreenID("c0"), ScreenID("c2"), ScreenID("c2")])
        b.setValue("b", for: title)
        #expect(sources() == [ScreenID("c0"), ScreenID("c1"), ScreenID("c2"), ScreenID("c2")])
        s1.removeValue(for: title)
        #expect(sources() == [ScreenID("c0"), ScreenID("c1"), ScreenID("c1"), ScreenID("c1")])
        // The same walk answers `resolvedNamedValues` and its sources.
        let explained = s2.resolvedNamedValueSources
        #expect(explained["title"]?.value == "b" && explained["title"]?.source === b)
        #expect(s2.resolvedNamedValues == ["title": "b"])

        try tree.dismiss(StackID("s"))
        let again = try tree.present(.fullScreenCover, from: ScreenID("c1"), id: StackID("t"), root: "T1")
        #expect(again.root?.valueSource(for: title) === b)

        let search = try tree.addStack(StackID("search"), root: "R")
        let r = try #require(search.root)
        #expect(r.valueSource(for: title) == nil)  // the default: tabs share nothing
        r.setValue("r", for: title)
        #expect(r.valueSource(for: title) === r)
    }

    // MARK: - Preferences

    /// SEMANTICS.md §3, the worked example: each received value keeps the walk that brought it.
    @Test func arrivalsFollowSemanticsWorkedExample() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        let handlers = SwitchableHandler.installed(on: a, b, c)
        func describe(_ hops: [PreferenceHop]) -> [String] {
            hops.map { hop in
                let name = [(a, "A"), (b, "B"), (c, "C")].first { $0.0 === hop.screen }?.1 ?? "?"
                return "\(name) \(hop.handling.rawValue) \(hop.received) -> \(hop.passed.map { "\($0)" } ?? "stop")"
            }
        }

        // C publishes "p", every handler passing: the one walk reaches A through B.
        var walk = c.updatePreference(Selection.self, value: "p")
        #expect(describe(walk.hops) == ["C called p -> p", "B called p -> p", "A called p -> p"])
        let first = a.preferenceArrival(Selection.self)
        #expect(first?.publisher.screen === c && first?.index == 2)
        #expect(b.preferenceArrival(Selection.self)?.index == 1)
        #expect(c.preferenceArrival(Selection.self)?.index == 0)

        // B stops, C publishes "q": B's arrival shows it stopped; A keeps "p" and the walk of "p".
        handlers.b.passes = false
        walk = c.updatePreference(Selection.self, value: "q")
        #expect(describe(walk.hops) == ["C called q -> q", "B called q -> stop"])
        #expect(describe(b.preferenceArrival(Selection.self)?.hops ?? []) == ["C called q -> q", "B called q -> stop"])
        #expect(describe(a.preferenceArrival(Selection.self)?.hops ?? []) == describe(first?.hops ?? []))

        // C publishes "q" again: nothing is delivered; C's remembered decision is the only hop
        // that passes, B's remembered decision stops it; no arrival changes.
        walk = c.updatePreference(Selection.self, value: "q")
        #expect(describe(walk.hops) == ["C remembered q -> q", "B remembered q -> stop"])
        #expect(walk.deliveries.isEmpty && walk.stoppedAt === b)
        #expect(c.preferenceArrival(Selection.self)?.hops.first?.handling == .called)

        // B has no handler, C publishes "r": B is transparent, A receives "r".
        b.removePreferenceHandler(Selection.self)
        walk = c.updatePreference(Selection.self, value: "r")
        #expect(describe(walk.hops) == ["C called r -> r", "B transparent r -> r", "A called r -> r"])
        let arrival = a.preferenceArrival(Selection.self)
        #expect(arrival?.index == 2 && arrival?.hops[1].handling == .transparent)
        // B kept what it last received, with the walk that brought it then.
        #expect(b.preference(Selection.self) == "q")
        #expect(b.preferenceArrival(Selection.self)?.hops.last?.passed == nil)

        // A popped screen forgets; the ids stay in the walks that name it.
        stack.pop()
        #expect(c.preferenceArrival(Selection.self) == nil)
        #expect(a.preferenceArrival(Selection.self)?.publisher.screenID == ScreenID("2"))
    }

    /// docs/Stacks.md §3, the worked example: a walk leaves the sheet at its root and continues at
    /// the presenter; the returned result keeps its publisher's id after the sheet is gone.
    @Test func arrivalsCrossAPresentation() throws {
        let example = try StacksWorkedExampleTests.Sheet()
        let (tree, a, b, s1, s2) = (example.tree, example.a, example.b, example.s1, example.s2)
        for screen in [a, b, s1, s2] { screen.setPreferenceHandler(named: "selection", passBack: true) }
        func ids(_ hops: [PreferenceHop]?) -> [String] {
            (hops ?? []).map { "\($0.screenID?.rawValue ?? "?") \($0.handling.rawValue)" }
        }

        s2.updatePreference(named: "selection", value: "p")
        #expect(ids(a.preferenceArrival(named: "selection")?.hops) == ["c3 called", "c2 called", "c1 called", "c0 called"])

        b.setPreferenceHandler(named: "selection", passBack: false)
        s2.updatePreference(named: "selection", value: "q")
        let stopped = b.preferenceArrival(named: "selection")
        #expect(ids(stopped?.hops) == ["c3 called", "c2 called", "c1 called"])
        #expect(stopped?.hops.last?.passed == nil)
        #expect(a.receivedPreference(named: "selection") == "p")

        s1.removePreferenceHandler(named: "selection")
        s2.updatePreference(named: "selection", value: "r")
        #expect(ids(b.preferenceArrival(named: "selection")?.hops) == ["c3 called", "c2 transparent", "c1 called"])

        // The sheet returns a result, then goes: B's arrival still names S1 as the publisher.
        s1.updatePreference(named: "selection", value: "done")
        try tree.dismiss(StackID("s"))
        let returned = try #require(b.preferenceArrival(named: "selection"))
        #expect(returned.publisher.screenID == ScreenID("c2") && returned.index == 1)
        #expect(returned.hops[1].received as? JSONValue == "done")
    }

    /// A `passBack` made after the handler returned continues the walk; the screens it reaches
    /// then see that screen as the hop before them.
    @Test func latePassBackArrivalsStartAtTheLateScreen() {
        let (stack, a, b, c) = makeStackABC()
        defer { withExtendedLifetime(stack) {} }
        var later: ((String) -> Void)?
        a.onPreferenceChange(Selection.self) { value, passBack in passBack(value) }
        b.onPreferenceChange(Selection.self) { _, passBack in later = passBack }
        let walk = c.updatePreference(Selection.self, value: "v")
        #expect(walk.stoppedAt === b)
        later?("w")
        let arrival = a.preferenceArrival(Selection.self)
        #expect(arrival?.hops.map { $0.screen.map(ObjectIdentifier.init) } == [b, a].map(ObjectIdentifier.init))
        #expect(arrival?.hops.first?.passed as? String == "w" && arrival?.index == 1)
    }
}
