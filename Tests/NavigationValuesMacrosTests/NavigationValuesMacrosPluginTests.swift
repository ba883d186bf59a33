import SwiftSyntaxMacros
import Testing

@testable import NavigationValuesMacros

/// The plugin resolves the macro types named by `#externalMacro` and refuses any other.
@Suite struct NavigationValuesMacrosPluginTests {
    @Test func resolvesValueEntryMacroByItsTypeName() throws {
        let macro = try NavigationValuesMacrosPlugin()
            .resolveMacro(moduleName: "NavigationValuesMacros", typeName: "ValueEntryMacro")
        #expect(ObjectIdentifier(macro) == ObjectIdentifier(ValueEntryMacro.self))
    }

    // The hand-written entry point's own error (the toolchain's host libraries); with the swift-syntax
    // package, `CompilerPlugin` reports unknown types itself.
    #if !canImport(SwiftCompilerPlugin)
        @Test func unknownMacroTypeIsAnErrorNamingIt() {
            #expect {
                try NavigationValuesMacrosPlugin().resolveMacro(moduleName: "Screens", typeName: "EntryMacro")
            } throws: { error in
                (error as? UnknownMacroError)?.description
                    == "NavigationValuesMacros provides no macro type 'EntryMacro' (asked for by module 'Screens')"
            }
        }
    #endif
}
