import NavigationValues
import Observation
import Synchronization
import Testing

// The seed README's example, verbatim.
extension ScreenContext {
    @ValueEntry var title: String = ""
    @ValueEntry var counter: Int = 0
}

// The same entries as hand-written keys, to compare the two spellings.
struct KeyedTitleKey: ValueKey { static let defaultValue = "" }
struct KeyedDraftKey: ValueKey {
    static let defaultValue = ""
    static let isObservationIgnored = true
}

extension ScreenContext {
    var keyedTitle: String {
        get { self[KeyedTitleKey.self] }
        set { self[KeyedTitleKey.self] = newValue }
    }
    var keyedDraft: String {
        get { self[KeyedDraftKey.self] }
        set { self[KeyedDraftKey.self] = newValue }
    }

    @ValueEntry(.observationIgnored) var draft: String = ""
    @ValueEntry var tags: [String] = ["inbox"]
    @ValueEntry var selection: Int?
}

/// `@ValueEntry` properties behave exactly as the key-based API they expand to (docs/SEMANTICS.md §2).
@Suite struct ValueEntryTests {
    @Test func readmeEntriesReadTheirDefaultsOnARootScreen() {
        let stack = ScreenStack()
        let root = stack.push()
        #expect(root.title == "")
        #expect(root.counter == 0)
        #expect(root.tags == ["inbox"])
        #expect(root.selection == nil)
    }

    @Test func macroPropertyAndItsKeyReadAndWriteTheSameStorage() {
        let stack = ScreenStack()
        let root = stack.push()
        let detail = stack.push()

        root.title = "Inbox"
        #expect(root[ScreenContext.__Key_title.self] == "Inbox")
        #expect(root.hasValue(ScreenContext.__Key_title.self))
        #expect(!detail.hasValue(ScreenContext.__Key_title.self))

        detail[ScreenContext.__Key_counter.self] = 3
        #expect(detail.counter == 3)
        #expect(root.counter == 0)

        detail.title = "Detail"
        detail.removeValue(ScreenContext.__Key_title.self)
        #expect(detail.title == "Inbox")
    }

    @Test func bothSpellingsFollowTheWorkedExampleIdentically() {
        let expected = [
            Step(reads: ["x", "x", "x"], notified: ["A", "B", "C"]),
            Step(reads: ["x", "y", "y"], notified: ["B", "C"]),
            Step(reads: ["z", "y", "y"], notified: ["A"]),
            Step(reads: ["z", "z", "z"], notified: ["B", "C"]),
            Step(reads: ["z", "z", "z"], notified: []),  // an equal write notifies no one
        ]
        #expect(workedExample(\.title, removing: ScreenContext.__Key_title.self) == expected)
        #expect(workedExample(\.keyedTitle, removing: KeyedTitleKey.self) == expected)
    }

    @Test func observationIgnoredEntryIsStoredAndInheritedButNotifiesNoOneInBothSpellings() {
        let expected = [
            Step(reads: ["x", "x", "x"], notified: []),
            Step(reads: ["x", "y", "y"], notified: []),
            Step(reads: ["z", "y", "y"], notified: []),
            Step(reads: ["z", "z", "z"], notified: []),
            Step(reads: ["z", "z", "z"], notified: []),
        ]
        #expect(ScreenContext.__Key_draft.isObservationIgnored)
        #expect(!ScreenContext.__Key_title.isObservationIgnored)
        #expect(workedExample(\.draft, removing: ScreenContext.__Key_draft.self) == expected)
        #expect(workedExample(\.keyedDraft, removing: KeyedDraftKey.self) == expected)
    }

    @Test func pushedScreenInheritsWhatItsPreviousScreenResolves() {
        let stack = ScreenStack()
        let root = stack.push()
        root.title = "Inbox"
        root.draft = "unsent"
        let detail = stack.push()
        #expect(detail.title == "Inbox")
        #expect(detail.draft == "unsent")
    }
}

/// What each screen of A → B → C reads after one step, and which screens' observations fired.
struct Step: Equatable {
    var reads: [String]
    var notified: Set<String>
}

/// docs/SEMANTICS.md §2's worked example on a fresh stack A → B → C, through `entry`:
/// A writes "x", B writes "y", A writes "z", B removes its override, A writes "z" again.
func workedExample<K: ValueKey>(
    _ entry: ReferenceWritableKeyPath<ScreenContext, String>,
    removing key: K.Type
) -> [Step] {
    let stack = ScreenStack()
    let screens = [("A", stack.push()), ("B", stack.push()), ("C", stack.push())]
    let (a, b) = (screens[0].1, screens[1].1)
    let changes: [() -> Void] = [
        { a[keyPath: entry] = "x" },
        { b[keyPath: entry] = "y" },
        { a[keyPath: entry] = "z" },
        { b.removeValue(key) },
        { a[keyPath: entry] = "z" },
    ]
    return changes.map { change in
        let log = NotificationLog()
        for (name, screen) in screens {
            withObservationTracking {
                _ = screen[keyPath: entry]
            } onChange: {
                log.record(name)
            }
        }
        change()
        return Step(reads: screens.map { $0.1[keyPath: entry] }, notified: log.names)
    }
}

/// The names of the screens whose observation fired; `onChange` may run on any thread.
final class NotificationLog: Sendable {
    private let recorded = Mutex<Set<String>>([])
    func record(_ name: String) { recorded.withLock { _ = $0.insert(name) } }
    var names: Set<String> { recorded.withLock { $0 } }
}
