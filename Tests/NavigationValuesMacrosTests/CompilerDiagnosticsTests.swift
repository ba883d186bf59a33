import Foundation
import TestSupport
import Testing

/// The built plugin, run by the real compiler: misuse comes back as compile errors at the right lines.
///
/// The snippet declares its own minimal `ValueKey` and `ScreenContext`, so the check needs only the
/// macro's declaration (`Sources/NavigationValues/ValueEntry.swift`) and the plugin executable that
/// SwiftPM builds beside this test binary.
@Suite struct CompilerDiagnosticsTests {
    @Test func compilerReportsEachMisuseAtItsLineAndAcceptsTheValidSpellings() async throws {
        let source = """
            public protocol ValueKey {
                associatedtype Value
                static var defaultValue: Value { get }
                static var isObservationIgnored: Bool { get }
            }
            extension ValueKey { public static var isObservationIgnored: Bool { false } }
            public final class ScreenContext {
                public subscript<K: ValueKey>(key: K.Type) -> K.Value { get { K.defaultValue } set {} }
            }
            extension ScreenContext {
                @ValueEntry var title: String = ""
                @ValueEntry(.observationIgnored) var draft: String = ""
                @ValueEntry public var counter: Int = 0
                @ValueEntry var selection: Int?
            }
            func readKeys(_ context: ScreenContext) -> Bool {
                ScreenContext.__Key_draft.isObservationIgnored
                    && context.title == context[ScreenContext.__Key_title.self]
            }
            extension ScreenContext {
                @ValueEntry var untyped = ""
                @ValueEntry var undefaulted: String
                @ValueEntry let constant: String = ""
            }
            struct Settings {
                @ValueEntry var misplaced: String = ""
            }
            """
        let output = try await Compiler.typecheck(source)
        let errors = output.split(separator: "\n").filter { $0.contains(": error: ") && $0.contains("@ValueEntry") }
        #expect(
            errors.map { $0.split(separator: ":").dropFirst().prefix(1).joined() } == ["21", "22", "23", "26"],
            "\(output)"
        )
        #expect(errors.count == 4 && errors[0].contains("'untyped' needs an explicit type"), "\(output)")
        #expect(errors.count == 4 && errors[1].contains("'undefaulted' needs a default value"), "\(output)")
        #expect(errors.count == 4 && errors[2].contains("must be declared with 'var'"), "\(output)")
        #expect(errors.count == 4 && errors[3].contains("inside 'extension ScreenContext { }'"), "\(output)")
        #expect(!output.contains("readKeys"), "the valid declarations and their keys type-check: \(output)")
    }
}

/// Runs the toolchain's `swiftc` with the built `@ValueEntry` plugin.
enum Compiler {
    /// Type-checks `source` with the macro declaration and returns the compiler's diagnostics.
    static func typecheck(_ source: String) async throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ValueEntry-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let snippet = folder.appendingPathComponent("Snippet.swift")
        try source.write(to: snippet, atomically: true, encoding: .utf8)

        let compiler = try ChildProcess(
            ChildProcess.toolchain("swiftc", overriddenBy: "SWIFTC"),
            arguments: [
                "-typecheck", "-swift-version", "6", "-parse-as-library", "-module-name", "NavigationValues",
                "-diagnostic-style", "llvm",
                "-load-plugin-executable", try plugin().path + "#NavigationValuesMacros",
                macroDeclaration().path, snippet.path,
            ])
        return try await compiler.outcome(timeout: .seconds(120)).stderr
    }

    /// SwiftPM builds the plugin as `NavigationValuesMacros-tool` beside the test binary.
    private static func plugin() throws -> URL {
        try ChildProcess.builtProduct(named: "NavigationValuesMacros-tool")
    }

    private static func macroDeclaration() -> URL {
        repositoryRoot.appendingPathComponent("Sources/NavigationValues/ValueEntry.swift")
    }
}
