// swift-tools-version:6.2
// 6.2: SwiftPM then accepts the macro's unsafe flags when this package is a dependency (it refuses
// them for manifests declaring an older tools version), so apps can depend on it by version.
import CompilerPluginSupport
import PackageDescription

#if os(Linux)
    import Foundation

    /// The toolchain's own swift-syntax host libraries and module interfaces: on Linux the
    /// `@ValueEntry` macro builds against them, since the swift-syntax package cannot be fetched here.
    /// They sit beside the manifest API this manifest was loaded from (`<toolchain>/usr/lib/swift/pm/ManifestAPI/`
    /// → `<toolchain>/usr/lib/swift/host`: `/opt/swift/usr/...` here, `/usr/...` in the `swift:6.x` images).
    /// `NAVIGATION_VALUES_SWIFT_HOST_LIB` overrides the derived folder.
    let swiftHostLibrary: String = {
        if let path = ProcessInfo.processInfo.environment["NAVIGATION_VALUES_SWIFT_HOST_LIB"], !path.isEmpty {
            return path
        }
        // FileHandle reads to the end; `String(contentsOfFile:)` stops at 4 KiB on /proc files, which report size 0.
        let maps = String(
            decoding: FileHandle(forReadingAtPath: "/proc/self/maps")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        for line in maps.split(separator: "\n") {
            guard let start = line.firstIndex(of: "/"), line.hasSuffix("/pm/ManifestAPI/libPackageDescription.so")
            else {
                continue
            }
            let libraryPath = line[start...].dropLast("/pm/ManifestAPI/libPackageDescription.so".count)
            return libraryPath + "/host"
        }
        return "/usr/lib/swift/host"  // the swift:6.x images' layout, when /proc is unavailable
    }()
    let macroDependencies: [Target.Dependency] = []
    let macroTestDependencies: [Target.Dependency] = []
    let macroSwiftSettings: [SwiftSetting] = [.unsafeFlags(["-I", swiftHostLibrary])]
    let macroLinkerSettings: [LinkerSetting] = [
        .unsafeFlags(["-L", swiftHostLibrary, "-Xlinker", "-rpath", "-Xlinker", swiftHostLibrary])
    ]
    /// On Linux the macro needs no package: only what every platform fetches.
    let platformDependencies: [Package.Dependency] = []
#else
    // Hosts whose toolchain ships no swift-syntax host libraries for packages (macOS, Xcode): the macro
    // builds against the swift-syntax package, the usual way. NOT BUILT HERE (no macOS host and no
    // network in this project's CI); see docs/Client.md, "Using the package in an app".
    let macroDependencies: [Target.Dependency] = [
        .product(name: "SwiftSyntax", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
        .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
        .product(name: "SwiftDiagnostics", package: "swift-syntax"),
        .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
    ]
    let macroTestDependencies: [Target.Dependency] = [
        .product(name: "SwiftSyntax", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
        .product(name: "SwiftDiagnostics", package: "swift-syntax"),
        .product(name: "SwiftParser", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
    ]
    let macroSwiftSettings: [SwiftSetting] = []
    let macroLinkerSettings: [LinkerSetting] = []
    let platformDependencies: [Package.Dependency] = [
        .package(url: "https://github.com/swiftlang/swift-syntax.git", "600.0.0"..<"700.0.0")
    ]
#endif

/// What every platform fetches: swift-log, the logging API of the client's hook
/// (`Configuration.logger`) and of the server (1.12: the `LogEvent` handler API with its `error`,
/// which the server's handler implements), and swift-argument-parser, the executable's command line
/// (an app that depends on the libraries does not build it). Where GitHub cannot be reached, `scripts/swiftpm-mirrors.sh` points SwiftPM at
/// local mirrors (CONTRIBUTING.md, "Dependencies and mirrors").
let packageDependencies: [Package.Dependency] =
    [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.12.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    ] + platformDependencies

let package = Package(
    name: "NavigationValues",
    // The seed's platforms, plus Linux (which needs no declaration).
    platforms: [.iOS(.v18), .macOS(.v15)],
    products: [
        .library(name: "NavigationValues", targets: ["NavigationValues"]),
        .library(name: "NavigationValuesWire", targets: ["NavigationValuesWire"]),
        .library(name: "NavigationValuesClient", targets: ["NavigationValuesClient"]),
        .library(name: "NavigationValuesTesting", targets: ["NavigationValuesTesting"]),
        .library(name: "NavigationValuesStore", targets: ["NavigationValuesStore"]),
        .library(name: "NavigationValuesSQLite", targets: ["NavigationValuesSQLite"]),
        .library(name: "NavigationValuesPostgres", targets: ["NavigationValuesPostgres"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "NavigationValuesSessions", targets: ["NavigationValuesSessions"]),
        .library(name: "NavigationValuesAPI", targets: ["NavigationValuesAPI"]),
        .executable(name: "navigation-values", targets: ["NavigationValuesCLI"]),
    ],
    dependencies: packageDependencies,
    targets: [
        // MARK: - What tests share: loopback clients, child processes, waiting with a timeout
        // Black-box clients only: it imports the core (for JSONValue) and nothing else of ours.
        .target(
            name: "TestSupport",
            dependencies: ["NavigationValues", "CSpawn", .target(name: "CLibSSL", condition: .when(platforms: [.linux]))],
            path: "Tests/TestSupport"),
        // The glibc calls ChildProcess spawns with that Swift's Glibc module hides behind _GNU_SOURCE.
        .systemLibrary(name: "CSpawn", path: "Tests/CSpawn"),
        .testTarget(name: "TestSupportTests", dependencies: ["TestSupport"]),
        // Children the kill -9 tests run (test-only executables, not products). Commits in a loop
        // and prints each acknowledged seq:
        .executableTarget(
            name: "store-crash-helper",
            dependencies: ["NavigationValuesStore", "NavigationValuesSQLite", "NavigationValuesWire"],
            path: "Tests/Helpers/StoreCrashHelper"),
        // Serves the API on port 0 until killed:
        .executableTarget(
            name: "api-crash-server",
            dependencies: ["NavigationValuesAPI", "NavigationValuesStore", "NavigationValuesWire", "HTTPServer"],
            path: "Tests/Helpers/APICrashServer"),

        // MARK: - Core model (imports nothing of ours)
        .target(name: "NavigationValues", dependencies: ["NavigationValuesMacros"]),
        .testTarget(name: "NavigationValuesTests", dependencies: ["NavigationValues"]),

        // MARK: - @ValueEntry macro (toolchain's swift-syntax host libraries, no package dependency)
        .macro(
            name: "NavigationValuesMacros",
            dependencies: macroDependencies,
            swiftSettings: macroSwiftSettings,
            linkerSettings: macroLinkerSettings
        ),
        .testTarget(
            name: "NavigationValuesMacrosTests",
            dependencies: ["NavigationValuesMacros", "NavigationValues", "TestSupport"] + macroTestDependencies,
            swiftSettings: macroSwiftSettings,
            linkerSettings: macroLinkerSettings
        ),

        // MARK: - The JSON shapes server and clients share: ids, resources, events (core only)
        .target(name: "NavigationValuesWire", dependencies: ["NavigationValues"]),
        .testTarget(name: "NavigationValuesWireTests", dependencies: ["NavigationValuesWire", "TestSupport"]),

        // MARK: - The Swift client: typed calls, retries, event streams, a live mirror (core, wire and swift-log only)
        .target(
            name: "NavigationValuesClient",
            dependencies: [
                "NavigationValues", "NavigationValuesWire", .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "NavigationValuesClientTests",
            dependencies: [
                "NavigationValuesClient", "NavigationValues", "NavigationValuesWire", "NavigationValuesAPI",
                "NavigationValuesTesting", "NavigationValuesStore", "NavigationValuesSQLite", "HTTPServer",
                "api-crash-server", "navigation-values-demo", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // MARK: - The server in memory, for an app's tests and previews: the API's own routes on an
        // in-memory store, through the client's transport seam (no socket, no database library, any
        // platform; PlatformNeutralTests checks what it imports).
        .target(
            name: "NavigationValuesTesting",
            dependencies: [
                "NavigationValuesClient", "NavigationValuesRoutes", "NavigationValuesSessions", "NavigationValuesStore",
                "NavigationValuesWire", "NavigationValues", "HTTPCore",
            ]),
        .testTarget(
            name: "NavigationValuesTestingTests",
            dependencies: [
                "NavigationValuesTesting", "NavigationValuesClient", "NavigationValuesAPI", "NavigationValuesRoutes",
                "NavigationValuesSessions", "NavigationValuesWire", "NavigationValues", "TestSupport",
            ]),
        // The seed's Demo (docs/SEMANTICS.md §4) as a command-line program on the client (an example, not a
        // product; its test runs it against a real server).
        .executableTarget(
            name: "navigation-values-demo", dependencies: ["NavigationValuesClient", "NavigationValues"],
            path: "Examples/Demo"),

        // MARK: - Cryptography: SHA-256, HMAC-SHA256, constant-time comparison, random bytes, AES-256-GCM
        // OpenSSL's libcrypto (Debian's libssl-dev), on Linux only; libssl, for HTTPServer's TLS, beside it.
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CLibSSL",
            pkgConfig: "libssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // The one module that calls it: libcrypto on Linux, CryptoKit on Apple platforms (which link no C library).
        .target(
            name: "NavigationValuesCrypto",
            dependencies: [.target(name: "CLibCrypto", condition: .when(platforms: [.linux]))]),
        .testTarget(name: "NavigationValuesCryptoTests", dependencies: ["NavigationValuesCrypto"]),

        // MARK: - Persistence
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // libpq, for the PostgreSQL store (Debian's libpq-dev).
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // The store: its contract, the write queue and one SQL store written once for every engine
        // (it links no database library)...
        .target(
            name: "NavigationValuesStore", dependencies: ["NavigationValues", "NavigationValuesWire", "NavigationValuesCrypto"]),
        // ...and a driver per engine, with only what differs: connections, batches, migrations.
        .target(
            name: "NavigationValuesSQLite", dependencies: ["NavigationValuesStore", "NavigationValuesWire", "CSQLite"]),
        .target(
            name: "NavigationValuesPostgres", dependencies: ["NavigationValuesStore", "NavigationValuesWire", "CLibPQ"]),
        .testTarget(
            name: "NavigationValuesStoreTests",
            dependencies: [
                "NavigationValuesStore", "NavigationValuesSQLite", "NavigationValuesPostgres", "NavigationValuesWire",
                "NavigationValues", "store-crash-helper", "TestSupport",
            ]),

        // MARK: - HTTP/1.1 (knows nothing of sessions)
        // Messages, their parser, the router, middleware and the response writer (SSE): no sockets,
        // any platform...
        .target(name: "HTTPCore"),
        // ...and the server on POSIX sockets and epoll (Linux), which re-exports them; HTTPS through
        // libssl. Linux only, as epoll is: NOT BUILT on Apple platforms, which use the client and
        // NavigationValuesTesting, not the server.
        .systemLibrary(name: "CHTTPSystem"),  // epoll and eventfd headers, absent from Glibc's module
        .target(
            name: "HTTPServer",
            dependencies: ["HTTPCore", "CHTTPSystem", .target(name: "CLibSSL", condition: .when(platforms: [.linux]))]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HTTPCore", "TestSupport"]),

        // MARK: - Sessions: live state, commands, validation, events, replay (knows no HTTP, links no database)
        .target(
            name: "NavigationValuesSessions",
            dependencies: [
                "NavigationValues", "NavigationValuesWire", "NavigationValuesStore", "NavigationValuesCrypto",
            ]),
        .testTarget(
            name: "NavigationValuesSessionsTests",
            dependencies: [
                "NavigationValuesSessions", "NavigationValuesWire", "NavigationValuesStore", "NavigationValuesSQLite",
                "NavigationValues", "TestSupport",
            ]),

        // MARK: - The HTTP API: routes, middleware, metrics, OpenAPI, errors as problem+json, wired
        // once on any store (no sockets, no database library, any platform)...
        .target(
            name: "NavigationValuesRoutes",
            dependencies: [
                "NavigationValues", "NavigationValuesWire", "NavigationValuesStore", "NavigationValuesSessions",
                "NavigationValuesCrypto", "HTTPCore", .product(name: "Logging", package: "swift-log"),
            ]),
        // ...and the server: that API on our HTTP server, over SQLite or PostgreSQL (Linux).
        .target(
            name: "NavigationValuesAPI",
            dependencies: [
                "NavigationValues", "NavigationValuesWire", "NavigationValuesStore", "NavigationValuesSQLite",
                "NavigationValuesPostgres", "NavigationValuesSessions", "NavigationValuesRoutes", "HTTPServer",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "NavigationValuesAPITests",
            dependencies: [
                "NavigationValuesAPI", "NavigationValuesRoutes", "NavigationValuesSessions", "NavigationValuesWire",
                "NavigationValuesStore", "NavigationValuesSQLite", "NavigationValuesPostgres", "api-crash-server",
                "TestSupport", .product(name: "Logging", package: "swift-log"),
            ],
            // A database written by an earlier release, which the tests open (found from #filePath).
            exclude: ["Fixtures"]),

        // MARK: - The executable `navigation-values` (serve, migrate, replay, prune, healthcheck), on swift-argument-parser
        .executableTarget(
            name: "NavigationValuesCLI",
            dependencies: [
                "NavigationValuesAPI", "NavigationValuesSessions", "NavigationValuesWire", "NavigationValuesStore",
                "NavigationValuesSQLite", "NavigationValuesPostgres", "NavigationValuesCrypto", "HTTPServer", "CHTTPSystem",
                .target(name: "CLibSSL", condition: .when(platforms: [.linux])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/NavigationValuesCLI"),
        .testTarget(
            name: "NavigationValuesCLITests", dependencies: ["NavigationValuesCLI", "NavigationValuesWire", "TestSupport"]),
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
