// Micro-benchmarks of the core model. Run a release build:
//   swift run -c release navigation-values-bench
// Prints nanoseconds per operation, the median of several rounds.
import NavigationValues
import Observation
import Synchronization

struct TitleKey: ValueKey { static let defaultValue = "" }
struct Selection: PreferenceKey { static let defaultValue = 0 }

final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

/// Runs `body` `iterations` times per round and returns the median nanoseconds per iteration.
func measure(_ name: String, iterations: Int, rounds: Int = 7, _ body: () -> Void) {
    var perOperation: [Double] = []
    for _ in 0..<rounds {
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<iterations { body() }
        let elapsed = clock.now - start
        let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        perOperation.append(nanoseconds / Double(iterations))
    }
    perOperation.sort()
    let median = perOperation[perOperation.count / 2]
    print("\(name): \(String(format2: median)) ns/op  (median of \(rounds) rounds of \(iterations))")
}

extension String {
    init(format2 value: Double) {
        let scaled = (value * 10).rounded() / 10
        self = "\(scaled)"
    }
}

func makeStack(depth: Int) -> ScreenStack<Void> {
    let stack = ScreenStack()
    for _ in 0..<depth { stack.push() }
    return stack
}

// A read 100 screens deep: the root writes, the 101st screen reads (100 hops along `previous`).
do {
    let stack = makeStack(depth: 101)
    stack.screens[0][TitleKey.self] = "root"
    let top = stack.screens[100]
    var sink = 0
    measure("typed read, value 100 screens back", iterations: 200_000) {
        sink &+= top[TitleKey.self].utf8.count
    }
    let key = NamedValueKey("title", defaultValue: "")
    stack.screens[0].setValue("root", for: key)
    measure("named read, value 100 screens back", iterations: 200_000) {
        if case .string(let text) = top.value(for: key) { sink &+= text.utf8.count }
    }
    measure("typed read, own value", iterations: 1_000_000) {
        sink &+= stack.screens[0][TitleKey.self].utf8.count
    }
    if sink == 42 { print("") }
}

// A write on the root that changes what 100 later screens inherit (101 notified screens).
do {
    let stack = makeStack(depth: 101)
    let root = stack.screens[0]
    var flip = false
    measure("typed write notifying 101 screens (no observers armed)", iterations: 20_000) {
        flip.toggle()
        root[TitleKey.self] = flip ? "a" : "b"
    }
    let key = NamedValueKey("title", defaultValue: "")
    var affected = 0
    measure("named write returning 101 affected screens", iterations: 20_000) {
        flip.toggle()
        affected = root.setValue(flip ? "a" : "b", for: key).count
    }
    precondition(affected == 101, "expected 101 affected screens")

    let fired = Counter()
    let screens = stack.screens
    measure("typed write notifying 101 armed observers (includes re-arming them)", iterations: 2_000) {
        for screen in screens {
            withObservationTracking { _ = screen[TitleKey.self] } onChange: { fired.value.add(1, ordering: .relaxed) }
        }
        flip.toggle()
        root[TitleKey.self] = flip ? "a" : "b"
    }
    print("observer callbacks fired: \(fired.value.load(ordering: .relaxed))")
}

// A preference published on the top of a 100-screen stack where every screen passes it on.
do {
    let stack = makeStack(depth: 100)
    for screen in stack.screens { screen.onPreferenceChange(Selection.self) { value, passBack in passBack(value) } }
    let top = stack.screens[99]
    var value = 0
    measure("preference walk through 100 handlers", iterations: 5_000) {
        value += 1
        top.updatePreference(Selection.self, value: value)
    }
}

// Push and pop.
do {
    let stack = makeStack(depth: 1)
    measure("push then pop", iterations: 200_000) {
        stack.push()
        stack.pop()
    }
}
