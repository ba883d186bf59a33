// navigation-values-demo [--url URL]
//
// The seed's Demo (docs/SEMANTICS.md §4, ten scenarios) on the client library, against a running
// server: each scenario creates a session with the Demo's schema, changes it through the client
// and reads what every screen shows from a live mirror (`RemoteStack`), as the Demo's views would.
// Prints one line per scenario and exits 0 when all ten hold, 1 when one does not, 2 on bad usage.
import Foundation
import NavigationValues
import NavigationValuesClient
import NavigationValuesWire
import Observation

/// The Demo's forward value (`text` on the server) and backward preference (`preference`).
struct Text: ValueKey { static let defaultValue = "initial value" }
struct Preference: PreferenceKey { static let defaultValue = "" }

let schema = SchemaResource(
    values: ["text": .init(type: .string, defaultValue: "initial value")],
    preferences: ["preference": .init(type: .string, defaultValue: "")])

func usage(_ message: String? = nil) -> Never {
    if let message { FileHandle.standardError.write(Data("navigation-values-demo: \(message)\n".utf8)) }
    FileHandle.standardError.write(
        Data(
            """
            usage: navigation-values-demo [--url URL]
              --url URL   the server (default: $NAVIGATION_VALUES_URL, else http://127.0.0.1:8080)

            """.utf8))
    exit(message == nil ? 0 : 2)
}

var address = ProcessInfo.processInfo.environment["NAVIGATION_VALUES_URL"] ?? "http://127.0.0.1:8080"
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--url":
        guard let value = arguments.popFirst() else { usage("--url needs a value") }
        address = value
    case "--help", "-h": usage()
    default: usage("unknown argument \(argument)")
    }
}
guard let baseURL = URL(string: address), baseURL.scheme != nil, baseURL.host != nil else {
    usage("not a URL: \(address)")
}
let client = NavigationValuesClient(baseURL: baseURL)

/// One screen of a scenario's stack, as the Demo's views see it: the mirror's screen, and the
/// same screen on the server, to change it.
@MainActor
struct Demo {
    let session: RemoteSession
    let mirror: RemoteStack

    static func start() async throws -> Demo {
        let session = try await client.createSession(root: ScreenSeed("Root"), schema: schema)
        return Demo(session: session, mirror: try await RemoteStack.connect(to: session))
    }

    /// Waits until the mirror shows a change the server answered with `version`.
    func shown(_ version: Int64) async throws { try await mirror.sync(to: version) }

    func push(_ name: String) async throws { try await shown(try await session.push(name).version) }
    func pop() async throws { try await shown(try await session.pop().version) }
    func type(_ text: String, on screen: RemoteStack.Screen?) async throws {
        guard let screen else { return }
        try await shown(try await screen.remote.set(Text.self, text).version)
    }
    func handle(on screen: RemoteStack.Screen?, passBack: Bool) async throws {
        guard let screen else { return }
        try await shown(try await screen.remote.setPreferenceHandler(Preference.self, passBack: passBack).version)
    }
    func publish(_ value: String, from screen: RemoteStack.Screen?) async throws {
        guard let screen else { return }
        try await shown(try await screen.remote.updatePreference(Preference.self, value: value).version)
    }
    var root: RemoteStack.Screen? { mirror.root }
    var top: RemoteStack.Screen? { mirror.top }
}

/// The ten scenarios: each returns whether it held and what the screens showed.
let scenarios: [(String, @MainActor () async throws -> (Bool, String))] = [
    (
        "The root screen reads a forward value's default",
        {
            let demo = try await Demo.start()
            let text = demo.root?.resolved(Text.self) ?? ""
            return (text == "initial value", "root shows \"\(text)\"")
        }
    ),
    (
        "A value typed on the root is read by a pushed screen",
        {
            let demo = try await Demo.start()
            try await demo.type("hello", on: demo.root)
            try await demo.push("Detail")
            let text = demo.top?.resolved(Text.self) ?? ""
            return (text == "hello", "pushed screen shows \"\(text)\"")
        }
    ),
    (
        "A value typed on a pushed screen does not change the root's value after pop",
        {
            let demo = try await Demo.start()
            try await demo.type("root text", on: demo.root)
            try await demo.push("Detail")
            try await demo.type("detail text", on: demo.top)
            try await demo.pop()
            let text = demo.root?.resolved(Text.self) ?? ""
            return (text == "root text", "root shows \"\(text)\"")
        }
    ),
    (
        "A value that changes over time on the root is observed",
        {
            let demo = try await Demo.start()
            guard let root = demo.root else { return (false, "no root") }
            var seen: [String] = []
            for tick in 1...3 {
                let changed = Changed()
                withObservationTracking {
                    _ = root.resolved(Text.self)
                } onChange: {
                    changed.mark()
                }
                try await demo.type("tick \(tick)", on: root)
                if changed.isMarked { seen.append(root.resolved(Text.self)) }
            }
            return (seen == ["tick 1", "tick 2", "tick 3"], "observed \(seen)")
        }
    ),
    (
        "A preference published on a pushed screen reaches the root after pop",
        {
            let demo = try await Demo.start()
            try await demo.handle(on: demo.root, passBack: true)
            try await demo.push("Detail")
            try await demo.publish("chosen", from: demo.top)
            try await demo.pop()
            let value = demo.root?.preference(Preference.self) ?? ""
            return (value == "chosen", "root shows \"\(value)\"")
        }
    ),
    (
        "A screen that blocks keeps the value it published; the root does not get it",
        {
            let demo = try await Demo.start()
            try await demo.handle(on: demo.root, passBack: true)
            try await demo.push("Detail")
            try await demo.handle(on: demo.top, passBack: false)
            try await demo.publish("kept", from: demo.top)
            let detail = demo.top?.preference(Preference.self) ?? ""
            let root = demo.root?.preference(Preference.self) ?? ""
            return (detail == "kept" && root == "", "detail shows \"\(detail)\", root shows \"\(root)\"")
        }
    ),
    (
        "A screen that does not block lets it through",
        {
            let demo = try await Demo.start()
            try await demo.handle(on: demo.root, passBack: true)
            try await demo.push("Detail")
            try await demo.handle(on: demo.top, passBack: true)
            try await demo.publish("through", from: demo.top)
            let detail = demo.top?.preference(Preference.self) ?? ""
            let root = demo.root?.preference(Preference.self) ?? ""
            return (detail == "through" && root == "through", "detail shows \"\(detail)\", root shows \"\(root)\"")
        }
    ),
    (
        "A forward value set on the root is read two pushes deep",
        {
            let demo = try await Demo.start()
            try await demo.type("deep", on: demo.root)
            try await demo.push("Middle")
            try await demo.push("Top")
            let text = demo.top?.resolved(Text.self) ?? ""
            return (text == "deep", "top shows \"\(text)\"")
        }
    ),
    (
        "A preference published two pushes deep reaches the root",
        {
            let demo = try await Demo.start()
            try await demo.handle(on: demo.root, passBack: true)
            try await demo.push("Middle")
            try await demo.handle(on: demo.top, passBack: true)
            try await demo.push("Top")
            try await demo.publish("far", from: demo.top)
            let root = demo.root?.preference(Preference.self) ?? ""
            return (root == "far", "root shows \"\(root)\"")
        }
    ),
    (
        "An intermediate screen that blocks stops a preference published above it",
        {
            let demo = try await Demo.start()
            try await demo.handle(on: demo.root, passBack: true)
            try await demo.push("Middle")
            try await demo.handle(on: demo.top, passBack: false)
            let middle = demo.top
            try await demo.push("Top")
            try await demo.publish("stopped", from: demo.top)
            let shown = middle?.preference(Preference.self) ?? ""
            let root = demo.root?.preference(Preference.self) ?? ""
            return (shown == "stopped" && root == "", "middle shows \"\(shown)\", root shows \"\(root)\"")
        }
    ),
]

/// Set by an observation callback.
final class Changed: @unchecked Sendable {
    // @unchecked: set and read on the main actor only (observation callbacks fire inside the change).
    private(set) var isMarked = false
    func mark() { isMarked = true }
}

var failures = 0
for (index, (title, run)) in scenarios.enumerated() {
    do {
        let (held, shown) = try await run()
        if !held { failures += 1 }
        print("\(held ? "ok" : "FAILED") \(index + 1). \(title): \(shown)")
    } catch let error as RemoteError where error.code == .connectionFailed {
        print("FAILED \(index + 1). \(title): \(error)")
        print("the server at \(baseURL) does not answer; start one with scripts/serve.sh")
        exit(1)
    } catch {
        failures += 1
        print("FAILED \(index + 1). \(title): \(error)")
    }
}
print(failures == 0 ? "all 10 scenarios hold" : "\(failures) of 10 scenarios failed")
exit(failures == 0 ? 0 : 1)
