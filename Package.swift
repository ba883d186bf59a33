// swift-tools-version:6.0
import CompilerPluginSupport
import Foundation
import PackageDescription

/// The toolchain's own swift-syntax host libraries and module interfaces (issue 8): the `@ValueEntry`
/// macro builds against them, since the swift-syntax package cannot be fetched. They sit beside the
/// manifest API this manifest was loaded from (`<toolchain>/usr/lib/swift/pm/ManifestAPI/` →
/// `<toolchain>/usr/lib/swift/host`: `/opt/swift/usr/...` here, `/usr/...` in the `swift:6.x` images).
/// `NAVIGATION_VALUES_SWIFT_HOST_LIB` overrides the derived folder.
let swiftHostLibrary: String = {
    if let path = ProcessInfo.processInfo.environment["NAVIGATION_VALUES_SWIFT_HOST_LIB"], !path.isEmpty {
        return path
    }
    // FileHandle reads to the end; `String(contentsOfFile:)` stops at 4 KiB on /proc files, which report size 0.
    let maps = String(
        decoding: FileHandle(forReadingAtPath: "/proc/self/maps")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
    for line in maps.split(separator: "\n") {
        guard let start = line.firstIndex(of: "/"), line.hasSuffix("/pm/ManifestAPI/libPackageDescription.so") else {
            continue
        }
        let libraryPath = line[start...].dropLast("/pm/ManifestAPI/libPackageDescription.so".count)
        return libraryPath + "/host"
    }
    return "/usr/lib/swift/host"  // the swift:6.x images' layout, when /proc is unavailable
}()
let swiftHostSettings: [SwiftSetting] = [.unsafeFlags(["-I", swiftHostLibrary])]
let swiftHostLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(["-L", swiftHostLibrary, "-Xlinker", "-rpath", "-Xlinker", swiftHostLibrary])
]

let package = Package(
    name: "NavigationValues",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "NavigationValues", targets: ["NavigationValues"]),
        .library(name: "NavigationValuesWire", targets: ["NavigationValuesWire"]),
        .library(name: "NavigationValuesStore", targets: ["NavigationValuesStore"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "NavigationValuesSessions", targets: ["NavigationValuesSessions"]),
        .library(name: "NavigationValuesAPI", targets: ["NavigationValuesAPI"]),
        .executable(name: "navigation-values", targets: ["NavigationValuesCLI"]),
    ],
    targets: [
        // MARK: - What tests share: loopback clients, child processes, waiting with a timeout
        // Black-box clients only: it imports the core (for JSONValue) and nothing else of ours.
        .target(name: "TestSupport", dependencies: ["NavigationValues"], path: "Tests/TestSupport"),
        // Children the kill -9 tests run (test-only executables, not products). Commits in a loop
        // and prints each acknowledged seq:
        .executableTarget(
            name: "store-crash-helper", dependencies: ["NavigationValuesStore", "NavigationValuesWire"],
            path: "Tests/Helpers/StoreCrashHelper"),
        // Serves the API on port 0 until killed:
        .executableTarget(
            name: "api-crash-server", dependencies: ["NavigationValuesAPI", "NavigationValuesWire", "HTTPServer"],
            path: "Tests/Helpers/APICrashServer"),

        // MARK: - Core model (imports nothing of ours)
        .target(name: "NavigationValues", dependencies: ["NavigationValuesMacros"]),
        .testTarget(name: "NavigationValuesTests", dependencies: ["NavigationValues"]),

        // MARK: - @ValueEntry macro (toolchain's swift-syntax host libraries, no package dependency)
        .macro(
            name: "NavigationValuesMacros",
            swiftSettings: swiftHostSettings,
            linkerSettings: swiftHostLinkerSettings
        ),
        .testTarget(
            name: "NavigationValuesMacrosTests",
            dependencies: ["NavigationValuesMacros", "NavigationValues", "TestSupport"],
            swiftSettings: swiftHostSettings,
            linkerSettings: swiftHostLinkerSettings
        ),

        // MARK: - The JSON shapes server and clients share: ids, resources, events (core only)
        .target(name: "NavigationValuesWire", dependencies: ["NavigationValues"]),
        .testTarget(name: "NavigationValuesWireTests", dependencies: ["NavigationValuesWire", "TestSupport"]),

        // MARK: - Persistence
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(name: "NavigationValuesStore", dependencies: ["NavigationValues", "NavigationValuesWire", "CSQLite"]),
        .testTarget(
            name: "NavigationValuesStoreTests",
            dependencies: [
                "NavigationValuesStore", "NavigationValuesWire", "NavigationValues", "store-crash-helper", "TestSupport",
            ]),

        // MARK: - HTTP/1.1 server (knows nothing of sessions)
        .systemLibrary(name: "CHTTPSystem"),  // epoll and eventfd headers, absent from Glibc's module
        .target(name: "HTTPServer", dependencies: ["CHTTPSystem"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"]),

        // MARK: - Sessions: live state, commands, validation, events, replay (knows no HTTP)
        .target(
            name: "NavigationValuesSessions",
            dependencies: ["NavigationValues", "NavigationValuesWire", "NavigationValuesStore"]),
        .testTarget(
            name: "NavigationValuesSessionsTests",
            dependencies: ["NavigationValuesSessions", "NavigationValuesWire", "NavigationValuesStore", "NavigationValues", "TestSupport"]),

        // MARK: - The HTTP API: routes, middleware, metrics, OpenAPI, errors as problem+json
        .target(
            name: "NavigationValuesAPI",
            dependencies: [
                "NavigationValues", "NavigationValuesWire", "NavigationValuesStore", "NavigationValuesSessions", "HTTPServer",
            ]),
        .testTarget(
            name: "NavigationValuesAPITests",
            dependencies: [
                "NavigationValuesAPI", "NavigationValuesSessions", "NavigationValuesWire", "NavigationValuesStore",
                "api-crash-server", "TestSupport",
            ]),

        // MARK: - The executable `navigation-values` (serve, migrate, replay, healthcheck)
        .executableTarget(
            name: "NavigationValuesCLI",
            dependencies: ["NavigationValuesAPI", "NavigationValuesSessions", "NavigationValuesWire", "HTTPServer"],
            path: "Sources/NavigationValuesCLI"),
        .testTarget(name: "NavigationValuesCLITests", dependencies: ["NavigationValuesCLI", "TestSupport"]),
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
