import NavigationValues
import Observation
import Synchronization

struct TitleKey: ValueKey { static let defaultValue = "" }
struct CounterKey: ValueKey { static let defaultValue = 0 }
struct DraftKey: ValueKey {
    static let defaultValue = ""
    static let isObservationIgnored = true
}
/// A value type that is not Equatable: every write notifies.
struct Token { var raw: Int }
struct TokenKey: ValueKey { static let defaultValue = Token(raw: 0) }
struct Selection: PreferenceKey { static let defaultValue = "" }

extension ScreenContext {
    var title: String {
        get { self[TitleKey.self] }
        set { self[TitleKey.self] = newValue }
    }
    var counter: Int {
        get { self[CounterKey.self] }
        set { self[CounterKey.self] = newValue }
    }
}

/// Records which named screens' observations fired.
final class NotificationLog: Sendable {
    private let names = Mutex<[String]>([])
    func record(_ name: String) { names.withLock { $0.append(name) } }
    var all: Set<String> { names.withLock { Set($0) } }
    var count: Int { names.withLock { $0.count } }
}

/// Arms `withObservationTracking` on each screen for what `read` reads there, runs `change`, and
/// returns the names of the screens whose observation fired.
func notifiedScreens(
    _ screens: KeyValuePairs<String, ScreenContext>,
    reading read: (ScreenContext) -> Void = { _ = $0.title },
    during change: () -> Void
) -> Set<String> {
    let log = NotificationLog()
    for (name, screen) in screens {
        withObservationTracking { read(screen) } onChange: { log.record(name) }
    }
    change()
    return log.all
}

/// A stack A → B → C built with the public API.
func makeStackABC() -> (stack: ScreenStack<Void>, a: ScreenContext, b: ScreenContext, c: ScreenContext) {
    let stack = ScreenStack()
    let a = stack.push()
    let b = stack.push()
    let c = stack.push()
    return (stack, a, b, c)
}
