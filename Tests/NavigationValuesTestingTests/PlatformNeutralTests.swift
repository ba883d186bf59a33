import Foundation
import NavigationValues
import TestSupport
import Testing

/// The in-memory server must build for iOS and macOS, which this Linux toolchain cannot: these
/// checks, and `#if canImport` wherever a module differs, are what stands for that build. The
/// product `NavigationValuesTesting` depends on no target that links SQLite, libpq or epoll, on no
/// system library or C source at all on Apple platforms (libcrypto is a dependency on Linux only,
/// where CryptoKit is missing), and no source of its targets imports a Linux-only module, or calls
/// into Glibc, unconditionally.
@Suite struct PlatformNeutralTests {
    /// Targets (and system libraries) that must stay out of the product's closure.
    static let linuxOnlyTargets: Set<String> = [
        "CSQLite", "CLibPQ", "CHTTPSystem", "CSpawn", "HTTPServer", "NavigationValuesSQLite",
        "NavigationValuesPostgres",
        "NavigationValuesAPI",
    ]
    /// Modules a source may import only under `#if canImport(…)` or `#if os(…)`.
    static let conditionalModules: Set<String> = [
        "Glibc", "Musl", "FoundationNetworking", "CSQLite", "CLibPQ", "CHTTPSystem", "CSpawn", "CLibCrypto",
    ]

    @Test func theProductDependsOnNoTargetThatLinksALinuxOnlyLibrary() async throws {
        let closure = try await Self.productClosure("NavigationValuesTesting")
        #expect(closure.contains("NavigationValuesRoutes") && closure.contains("HTTPCore"), "\(closure.sorted())")
        #expect(closure.intersection(Self.linuxOnlyTargets).sorted() == [], "\(closure.sorted())")
        // The check itself: the server's product does link them.
        #expect(
            try await Self.productClosure("NavigationValuesAPI").isSuperset(of: ["CSQLite", "CLibPQ", "CHTTPSystem"]))
    }

    /// Beyond names: no target of the closure is a system library or holds C, C++ or Objective-C
    /// sources or a module map (each would be a library that has to be there at link time), and the
    /// only other package's product in it is swift-log's `Logging` (the client's logging hook,
    /// built for every platform).
    @Test func theProductIsSwiftOnlyWithSwiftLogAlone() async throws {
        let manifest = try await Manifest.read()
        let closure = try manifest.closure(of: "NavigationValuesTesting")
        let ours = closure.filter { manifest.types[$0] != nil }
        #expect(closure.subtracting(ours).sorted() == ["Logging"], "\(closure.sorted())")
        #expect(ours.filter { !["regular", "macro"].contains(manifest.types[$0]) }.sorted() == [], "\(ours.sorted())")
        var files = 0
        for target in ours.sorted() {
            let folder = repositoryRoot.appendingPathComponent("Sources/\(target)")
            guard let enumerator = FileManager.default.enumerator(atPath: folder.path) else {
                Issue.record("no Sources/\(target)")
                continue
            }
            for case let file as String in enumerator {
                files += 1
                let name = (file as NSString).lastPathComponent
                let isNative = ["c", "h", "cc", "cpp", "m", "mm", "s", "S"].contains((name as NSString).pathExtension)
                #expect(!isNative && name != "module.modulemap", "Sources/\(target)/\(file)")
            }
        }
        #expect(files > 100, "the closure's sources were found")
        // The check itself: the server's product has system libraries in its closure, libcrypto
        // among them on Linux, where the product's closure has it too (CryptoKit stands for it elsewhere),
        // and libssl for HTTPS.
        let server = try manifest.closure(of: "NavigationValuesAPI", on: "linux")
        #expect(
            server.filter { manifest.types[$0] == "system" }.sorted() == [
                "CHTTPSystem", "CLibCrypto", "CLibPQ", "CLibSSL", "CSQLite",
            ])
        #expect(try !manifest.closure(of: "NavigationValuesTesting", on: "linux").contains("CLibSSL"))
        #expect(try manifest.closure(of: "NavigationValuesTesting", on: "linux").contains("CLibCrypto"))
        #expect(try manifest.closure(of: "NavigationValuesTesting", on: "macos") == closure)
    }

    @Test func noSourceOfTheProductImportsALinuxOnlyModuleUnconditionally() async throws {
        let closure = try await Self.productClosure("NavigationValuesTesting")
        var scanned = 0
        for target in closure.sorted() {
            let folder = repositoryRoot.appendingPathComponent("Sources/\(target)")
            guard let files = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                scanned += 1
                #expect(Self.unconditionalUses(in: text) == [], "Sources/\(target)/\(file)")
            }
        }
        #expect(scanned > 100, "the closure's sources were found")
        // The check itself: the socket server's sources are not neutral.
        let socket = try String(
            contentsOf: repositoryRoot.appendingPathComponent("Sources/HTTPServer/EventLoop.swift"), encoding: .utf8)
        let socketUses = Self.unconditionalUses(in: socket)
        #expect(socketUses.contains("import CHTTPSystem"), "\(socketUses)")
        #expect(socketUses.contains("Glibc.close(epollFD)"), "\(socketUses)")
    }

    @Test func theScannerTellsConditionalFromUnconditional() {
        let source = """
            import Foundation
            #if canImport(Glibc)
                import Glibc
                let a = Glibc.write(1, nil, 0)
            #elseif os(Linux)
                import Musl
            #endif
            #if DEBUG
                import FoundationNetworking
            #endif
            @_exported import CSQLite
            func f() { _ = Glibc.close(3) }  // not under canImport
            /* import CLibPQ */
            // import CHTTPSystem
            """
        #expect(
            Self.unconditionalUses(in: source) == [
                "import FoundationNetworking", "import CSQLite", "Glibc.close(3) }  // not under canImport",
            ])
    }

    // MARK: - Checks

    /// Lines of `source` that import a Linux-only module, or call into `Glibc.`, outside every
    /// `#if canImport(…)` / `#if os(…)` block (comments ignored).
    static func unconditionalUses(in source: String) -> [String] {
        var found: [String] = []
        // For each open `#if`: whether it (or its `#elseif`/`#else` branches) names a platform.
        var blocks: [Bool] = []
        var isInBlockComment = false
        for rawLine in source.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = rawLine.trimmingCharacters(in: .whitespaces)
            if isInBlockComment {
                guard let end = line.range(of: "*/") else { continue }
                line = String(line[end.upperBound...]).trimmingCharacters(in: .whitespaces)
                isInBlockComment = false
            }
            if line.hasPrefix("/*") {
                isInBlockComment = !line.contains("*/")
                continue
            }
            if let comment = line.range(of: "//") { line = String(line[..<comment.lowerBound]) }
            let namesPlatform = line.contains("canImport(") || line.contains("os(")
            if line.hasPrefix("#if ") {
                blocks.append(namesPlatform)
            } else if line.hasPrefix("#elseif ") || line.hasPrefix("#else") {
                if let last = blocks.indices.last { blocks[last] = blocks[last] || namesPlatform }
            } else if line.hasPrefix("#endif") {
                _ = blocks.popLast()
            }
            guard !blocks.contains(true) else { continue }
            let words = line.split(separator: " ").map(String.init)
            if let position = words.firstIndex(of: "import"), position + 1 < words.count,
                words[..<position].allSatisfy({ $0.hasPrefix("@") }),
                conditionalModules.contains(words[position + 1])
            {
                found.append("import \(words[position + 1])")
            } else if let call = rawLine.range(of: "Glibc."), !line.hasPrefix("import") {
                found.append(String(rawLine[call.lowerBound...]).trimmingCharacters(in: .whitespaces))
            }
        }
        return found
    }

    /// The targets a library product of this package depends on, transitively, as the manifest
    /// declares them, and the products of other packages among them.
    static func productClosure(_ product: String) async throws -> Set<String> {
        try await Manifest.read().closure(of: product)
    }

    /// The manifest as `swift package dump-package` prints it: each target's type and dependencies.
    struct Manifest {
        /// Each target's type (`regular`, `system`, `macro`, `test`, `executable`).
        var types: [String: String] = [:]
        /// Each target's dependencies: targets of this package by name, products of others.
        var dependencies: [String: [String]] = [:]
        /// Each target's dependencies that only some platforms have (`.when(platforms:)`), with them.
        var conditions: [String: [String: Set<String>]] = [:]
        /// Each library product's targets.
        var products: [String: [String]] = [:]

        /// The targets `product` depends on, transitively (with the products of other packages),
        /// when built for `platform` (nil: any, every conditional dependency included).
        func closure(of product: String, on platform: String? = "ios") throws -> Set<String> {
            guard let roots = products[product] else {
                throw ChildProcessError("no product \(product) in the manifest")
            }
            var closure: Set<String> = []
            var pending = roots
            while let target = pending.popLast() {
                guard closure.insert(target).inserted else { continue }
                pending += (dependencies[target] ?? []).filter { dependency in
                    guard let platform, let platforms = conditions[target]?[dependency] else { return true }
                    return platforms.contains(platform)
                }
            }
            return closure
        }

        /// This package's manifest, dumped in a scratch folder of its own so that it does not wait
        /// for the build this test runs in. SwiftPM puts its lock files in the temporary directory,
        /// named after the scratch path, so the child's `TMPDIR` is that folder too: removing it
        /// leaves nothing behind in /tmp.
        static func read() async throws -> Manifest {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("nv-dump-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: scratch) }
            var environment = ProcessInfo.processInfo.environment
            environment["TMPDIR"] = scratch.path
            let output = try await ChildProcess.output(
                of: try ChildProcess.toolchain("swift", overriddenBy: "SWIFT"),
                arguments: [
                    "package", "--package-path", repositoryRoot.path,
                    "--scratch-path", scratch.appendingPathComponent("build").path, "dump-package",
                ],
                environment: environment)
            let json = try JSONValue(parsing: output)
            var manifest = Manifest()
            for target in json["targets"]?.arrayValue ?? [] {
                guard let name = target["name"]?.stringValue else { continue }
                manifest.types[name] = target["type"]?.stringValue
                for dependency in target["dependencies"]?.arrayValue ?? [] {
                    // ["name", condition] for a target, ["name", "package", …, condition] for a product.
                    guard
                        let parts = (dependency["byName"] ?? dependency["target"] ?? dependency["product"])?.arrayValue,
                        let dependencyName = parts.first?.stringValue
                    else { continue }
                    manifest.dependencies[name, default: []].append(dependencyName)
                    if let platforms = parts.last?["platformNames"]?.arrayValue {
                        manifest.conditions[name, default: [:]][dependencyName] = Set(
                            platforms.compactMap(\.stringValue))
                    }
                }
            }
            for product in json["products"]?.arrayValue ?? [] {
                guard let name = product["name"]?.stringValue else { continue }
                manifest.products[name] = (product["targets"]?.arrayValue ?? []).compactMap(\.stringValue)
            }
            return manifest
        }
    }
}
