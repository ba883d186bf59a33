import SwiftDiagnostics
import SwiftParser
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros

@testable import NavigationValuesMacros

/// A diagnostic as the compiler would show it: where, what, and the fix-its offered.
struct ExpansionDiagnostic: Equatable, CustomStringConvertible {
    var line: Int
    var column: Int
    var id: String
    var message: String
    var fixIts: [String] = []

    var description: String { "\(line):\(column) [\(id)] \(message) \(fixIts)" }
}

/// Source after expanding `@ValueEntry` in place, and the diagnostics reported while doing so.
struct MacroExpansion {
    var source: String
    var diagnostics: [ExpansionDiagnostic]

    /// Expands every `@ValueEntry` in `source` with the macro type the plugin serves, giving each
    /// expansion the lexical context (enclosing declarations) the compiler would give it.
    init(_ source: String) {
        let file = Parser.parse(source: source)
        let context = BasicMacroExpansionContext(
            sourceFiles: [file: .init(moduleName: "Screens", fullFilePath: "Screens.swift")]
        )
        let expanded = file.expand(
            macroSpecs: ["ValueEntry": MacroSpec(type: ValueEntryMacro.self)],
            contextGenerator: { node in
                BasicMacroExpansionContext(sharingWith: context, lexicalContext: node.allMacroLexicalContexts())
            },
            indentationWidth: .spaces(4)
        )
        self.source = expanded.description
        self.diagnostics = context.diagnostics.map { diagnostic in
            let location = context.location(for: diagnostic.position, anchoredAt: diagnostic.node, fileName: "")
            return ExpansionDiagnostic(
                line: location.line,
                column: location.column,
                id: (diagnostic.diagMessage as? ValueEntryDiagnostic)?.id ?? "\(diagnostic.diagnosticID)",
                message: diagnostic.message,
                fixIts: diagnostic.fixIts.map(\.message.message)
            )
        }
    }
}
