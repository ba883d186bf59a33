// swift-tools-version:6.0
// The benchmarks: a package of their own that depends on the root by path (as swift-nio and
// Hummingbird keep theirs), so they use only what the root's library products make public and
// never ship in, or slow down, the product's build. Release builds that print figures and
// compare them with `Thresholds/<name>.json`:
//
//     swift run --package-path Benchmarks -c release core-bench
import PackageDescription

/// A library product of the root package, `NavigationValues`.
func root(_ product: String) -> Target.Dependency {
    .product(name: product, package: "NavigationValues")
}

let package = Package(
    name: "NavigationValuesBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "core-bench", targets: ["CoreBench"]),
        .executable(name: "store-bench", targets: ["StoreBench"]),
        .executable(name: "api-bench", targets: ["APIBench"]),
        .executable(name: "events-bench", targets: ["EventsBench"]),
        .executable(name: "postgres-bench", targets: ["PostgresBench"]),
        .executable(name: "client-bench", targets: ["ClientBench"]),
        .executable(name: "floor-server", targets: ["FloorServer"]),
    ],
    dependencies: [
        .package(name: "NavigationValues", path: "..")
    ],
    targets: [
        // What the benchmarks share: a keep-alive loopback HTTP client, process figures, statistics,
        // and the threshold files' verdicts.
        .target(name: "BenchmarkSupport", dependencies: [root("NavigationValues")]),
        // The core model: reads, writes and preference walks through 100 screens.
        .executableTarget(name: "CoreBench", dependencies: ["BenchmarkSupport", root("NavigationValues")]),
        // The store: events/s with group commit against one commit per event; read-back speed.
        .executableTarget(
            name: "StoreBench",
            dependencies: [
                "BenchmarkSupport", root("NavigationValues"), root("NavigationValuesStore"),
                root("NavigationValuesSQLite"), root("NavigationValuesWire"),
            ]),
        // The API over HTTP: push+pop pairs/s, durable against :memory:; memory of many sessions.
        .executableTarget(
            name: "APIBench",
            dependencies: [
                "BenchmarkSupport", root("NavigationValues"), root("NavigationValuesAPI"),
                root("NavigationValuesSessions"),
            ]),
        // Event streams: fan-out latency, idle subscribers' memory, replay speed.
        .executableTarget(
            name: "EventsBench",
            dependencies: [
                "BenchmarkSupport", "HeapFigures", root("NavigationValues"), root("NavigationValuesWire"),
                root("NavigationValuesStore"), root("NavigationValuesSQLite"),
                root("NavigationValuesSessions"), root("NavigationValuesAPI"),
            ]),
        // PostgreSQL: durable mutations/s with one and two instances against SQLite; the event
        // latency from a write on one instance to a subscriber on the other.
        .executableTarget(
            name: "PostgresBench",
            dependencies: [
                "BenchmarkSupport", root("NavigationValues"), root("NavigationValuesAPI"), root("NavigationValuesStore"),
            ]),
        // The Swift client: CPU, time and allocations per mutation beside raw HTTP; events/s the
        // mirror applies. The server runs in a child process; a malloc hook counts allocations.
        .target(name: "MallocCounter"),
        // glibc's own heap figures (bytes in use, bytes from the system) beside VmRSS.
        .target(name: "HeapFigures"),
        .executableTarget(
            name: "ClientBench",
            dependencies: [
                "BenchmarkSupport", "MallocCounter", root("NavigationValues"), root("NavigationValuesWire"),
                root("NavigationValuesClient"), root("NavigationValuesAPI"),
            ]),
        // The floor under the durable write path: push and pop on the repository's HTTP stack, applied in memory and
        // appended to one log with group fdatasync (or, as a second anchor, committed in groups to a SQLite file);
        // `scripts/bench-table.sh` runs both in its table rounds.
        .executableTarget(
            name: "FloorServer",
            dependencies: [
                "BenchmarkSupport", root("NavigationValues"), root("HTTPServer"), root("NavigationValuesSQLite"),
                root("NavigationValuesStore"), root("NavigationValuesWire"),
            ]),
    ]
)

// Compiler settings for every Swift target, set once (as the root's manifest does); the C targets
// take none of them.
let cTargets: Set = ["MallocCounter", "HeapFigures"]
for target in package.targets where !cTargets.contains(target.name) {
    var settings = target.swiftSettings ?? []
    settings.append(.swiftLanguageMode(.v6))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
