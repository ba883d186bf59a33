// core-bench: micro-benchmarks of the core model. Run a release build:
//
//     swift run --package-path Benchmarks -c release core-bench
//
// Prints nanoseconds per operation, the median of several rounds, and compares each with its
// ceiling in Benchmarks/Thresholds/core.json (exit 1 when one is not met).
import BenchmarkSupport
import Foundation
import NavigationValues
import Observation
import Synchronization

struct TitleKey: ValueKey { static let defaultValue = "" }
struct Selection: PreferenceKey { static let defaultValue = 0 }

final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

let thresholds: Thresholds = {
    do {
        return try Thresholds.load("core")
    } catch {
        FileHandle.standardError.write(Data("core-bench: \(error)\n".utf8))
        exit(1)
    }
}()

/// Runs `body` `iterations` times per round, prints the median nanoseconds per iteration and
/// checks it against the threshold `key`.
func measure(_ name: String, _ key: String, iterations: Int, rounds: Int = 7, _ body: () -> Void) {
    var perOperation: [Double] = []
    for _ in 0..<rounds {
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<iterations { body() }
        let elapsed = clock.now - start
        let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        perOperation.append(nanoseconds / Double(iterations))
    }
    let median = Statistics.median(perOperation) ?? 0
    thresholds.check(key, median, "\(name) (median of \(rounds) rounds of \(iterations)):", unit: "ns/op")
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
    measure("typed read, value 100 screens back", "maxTypedReadHundredBackNanoseconds", iterations: 200_000) {
        sink &+= top[TitleKey.self].utf8.count
    }
    let key = NamedValueKey("title", defaultValue: "")
    stack.screens[0].setValue("root", for: key)
    measure("named read, value 100 screens back", "maxNamedReadHundredBackNanoseconds", iterations: 200_000) {
        if case .string(let text) = top.value(for: key) { sink &+= text.utf8.count }
    }
    measure("typed read, own value", "maxTypedReadOwnNanoseconds", iterations: 1_000_000) {
        sink &+= stack.screens[0][TitleKey.self].utf8.count
    }
    if sink == 42 { say("") }
}

// A write on the root that changes what 100 later screens inherit (101 notified screens).
do {
    let stack = makeStack(depth: 101)
    let root = stack.screens[0]
    var flip = false
    measure(
        "typed write notifying 101 screens (no observers armed)", "maxTypedWriteHundredOneScreensNanoseconds",
        iterations: 20_000
    ) {
        flip.toggle()
        root[TitleKey.self] = flip ? "a" : "b"
    }
    let key = NamedValueKey("title", defaultValue: "")
    var affected = 0
    measure(
        "named write returning 101 affected screens", "maxNamedWriteHundredOneScreensNanoseconds", iterations: 20_000
    ) {
        flip.toggle()
        affected = root.setValue(flip ? "a" : "b", for: key).count
    }
    precondition(affected == 101, "expected 101 affected screens")

    let fired = Counter()
    let screens = stack.screens
    measure(
        "typed write notifying 101 armed observers (includes re-arming them)",
        "maxTypedWriteHundredOneObserversNanoseconds", iterations: 2_000
    ) {
        for screen in screens {
            withObservationTracking {
                _ = screen[TitleKey.self]
            } onChange: {
                fired.value.add(1, ordering: .relaxed)
            }
        }
        flip.toggle()
        root[TitleKey.self] = flip ? "a" : "b"
    }
    say("observer callbacks fired: \(fired.value.load(ordering: .relaxed))")
}

// A preference published on the top of a 100-screen stack where every screen passes it on.
do {
    let stack = makeStack(depth: 100)
    for screen in stack.screens { screen.onPreferenceChange(Selection.self) { value, passBack in passBack(value) } }
    let top = stack.screens[99]
    var value = 0
    measure("preference walk through 100 handlers", "maxPreferenceWalkNanoseconds", iterations: 5_000) {
        value += 1
        top.updatePreference(Selection.self, value: value)
    }
}

// Push and pop.
do {
    let stack = makeStack(depth: 1)
    measure("push then pop", "maxPushThenPopNanoseconds", iterations: 200_000) {
        stack.push()
        stack.pop()
    }
}

thresholds.exitWithVerdict()
