// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "NavigationValues",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "NavigationValues", targets: ["NavigationValues"]),
        .library(name: "NavigationValuesStore", targets: ["NavigationValuesStore"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "NavigationValuesAPI", targets: ["NavigationValuesAPI"]),
        .executable(name: "navigation-values-bench", targets: ["NavigationValuesBench"]),
        .executable(name: "http-bench-server", targets: ["HTTPBench"]),
    ],
    targets: [
        // MARK: - Core model (imports nothing of ours)
        .target(name: "NavigationValues"),
        .testTarget(name: "NavigationValuesTests", dependencies: ["NavigationValues"]),
        .executableTarget(name: "NavigationValuesBench", dependencies: ["NavigationValues"]),

        // MARK: - Persistence
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(name: "NavigationValuesStore", dependencies: ["CSQLite"]),
        // Commits in a loop and prints each acknowledged seq; the kill -9 test runs it.
        .executableTarget(
            name: "store-crash-helper", dependencies: ["NavigationValuesStore"], path: "Sources/StoreCrashHelper"),
        .executableTarget(name: "store-bench", dependencies: ["NavigationValuesStore"], path: "Sources/StoreBench"),
        .testTarget(
            name: "NavigationValuesStoreTests", dependencies: ["NavigationValuesStore", "store-crash-helper"]),

        // MARK: - HTTP/1.1 server (knows nothing of sessions)
        .systemLibrary(name: "CHTTPSystem"),  // epoll and eventfd headers, absent from Glibc's module
        .target(name: "HTTPServer", dependencies: ["CHTTPSystem"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"]),
        .executableTarget(name: "HTTPBench", dependencies: ["HTTPServer"]),

        // MARK: - The session API (routes, auth, sessions, events)
        .target(name: "NavigationValuesAPI", dependencies: ["NavigationValues", "NavigationValuesStore", "HTTPServer"]),
        .testTarget(name: "NavigationValuesAPITests", dependencies: ["NavigationValuesAPI"]),
    ]
)

// Compiler settings for every target, set once (as swift-log does).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.swiftLanguageMode(.v6))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
