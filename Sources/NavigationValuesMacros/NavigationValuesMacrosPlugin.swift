import SwiftSyntaxMacros

#if canImport(SwiftCompilerPlugin)
    // Built against the swift-syntax package (macOS, Xcode: see Package.swift): the usual entry point.
    // NOT BUILT HERE: this project's machines have no macOS host and cannot fetch the package.
    import SwiftCompilerPlugin

    /// The compiler plugin executable, providing the macro types named in `#externalMacro`.
    @main
    struct NavigationValuesMacrosPlugin: CompilerPlugin {
        let providingMacros: [any Macro.Type] = [ValueEntryMacro.self]
    }
#else
    // `SwiftCompilerPlugin` is not shipped with the toolchain's host libraries, so this plugin serves the
    // compiler itself, through the same message handling that `SwiftCompilerPlugin` wraps.
    @_spi(PluginMessage) import SwiftCompilerPluginMessageHandling

    /// The compiler plugin executable: answers the compiler's requests over standard input and output.
    @main
    struct NavigationValuesMacrosPlugin: PluginProvider {
        /// The macro type named in `#externalMacro(module: "NavigationValuesMacros", type:)`.
        func resolveMacro(moduleName: String, typeName: String) throws -> any Macro.Type {
            switch typeName {
            case "ValueEntryMacro": ValueEntryMacro.self
            default: throw UnknownMacroError(moduleName: moduleName, typeName: typeName)
            }
        }

        static func main() throws {
            let connection = try StandardIOMessageConnection()
            let listener = CompilerPluginMessageListener(connection: connection, provider: Self())
            try listener.main()
        }
    }

    /// The compiler asked for a macro type this plugin does not provide; reported as a compile error.
    struct UnknownMacroError: Error, CustomStringConvertible {
        var moduleName: String
        var typeName: String

        var description: String {
            "NavigationValuesMacros provides no macro type '\(typeName)' (asked for by module '\(moduleName)')"
        }
    }
#endif
