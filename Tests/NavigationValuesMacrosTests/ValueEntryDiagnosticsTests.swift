import Testing

/// Misuse of `@ValueEntry` is a compile error at the offending syntax, reported once, never a crash.
@Suite struct ValueEntryDiagnosticsTests {
    @Test func missingTypeAnnotationIsReportedAtTheName() {
        let expansion = MacroExpansion(
            """
            extension ScreenContext {
                @ValueEntry var title = ""
            }
            """
        )
        #expect(
            expansion.diagnostics == [
                ExpansionDiagnostic(
                    line: 2,
                    column: 21,
                    id: "missingTypeAnnotation",
                    message: "'@ValueEntry' property 'title' needs an explicit type, as in 'var title: String = \"\"'"
                )
            ]
        )
        #expect(expansion.source.contains("var title = \"\"\n"))  // left as written, no half expansion
    }

    @Test func missingDefaultValueIsReported() {
        let expansion = MacroExpansion(
            """
            extension ScreenContext {
                @ValueEntry var counter: Int
            }
            """
        )
        #expect(
            expansion.diagnostics == [
                ExpansionDiagnostic(
                    line: 2,
                    column: 21,
                    id: "missingDefaultValue",
                    message: "'@ValueEntry' property 'counter' needs a default value (what screens read before any "
                        + "writes), as in 'var counter: String = \"\"'"
                )
            ]
        )
    }

    @Test func letIsReportedWithAFixItToVar() {
        let expansion = MacroExpansion(
            """
            extension ScreenContext {
                @ValueEntry let title: String = ""
            }
            """
        )
        #expect(
            expansion.diagnostics == [
                ExpansionDiagnostic(
                    line: 2,
                    column: 17,
                    id: "constant",
                    message: "'@ValueEntry' property must be declared with 'var': screens write the value, so it "
                        + "cannot be 'let'",
                    fixIts: ["replace 'let' with 'var'"]
                )
            ]
        )
    }

    @Test(
        arguments: [
            ("struct Settings {\n    @ValueEntry var title: String = \"\"\n}", 2, 5),
            ("extension Settings {\n    @ValueEntry var title: String = \"\"\n}", 2, 5),
            ("@ValueEntry var title: String = \"\"", 1, 1),
            ("extension ScreenContext {\n    struct Nested {\n        @ValueEntry var title: Int = 0\n    }\n}", 3, 9),
            ("extension ScreenContext {\n    func make() {\n        @ValueEntry var title: Int = 0\n    }\n}", 3, 9),
        ]
    )
    func entryOutsideAScreenContextExtensionIsReportedAtTheAttribute(source: String, line: Int, column: Int) {
        let expansion = MacroExpansion(source)
        #expect(
            expansion.diagnostics == [
                ExpansionDiagnostic(
                    line: line,
                    column: column,
                    id: "outsideScreenContextExtension",
                    message: "'@ValueEntry' declares a value of a screen: write it directly inside "
                        + "'extension ScreenContext { }'"
                )
            ]
        )
    }

    @Test(arguments: ["static", "class", "lazy", "weak"])
    func modifiersThatDoNotFitAPerScreenValueAreReported(modifier: String) {
        let expansion = MacroExpansion(
            """
            extension ScreenContext {
                @ValueEntry \(modifier) var title: String? = nil
            }
            """
        )
        #expect(
            expansion.diagnostics == [
                ExpansionDiagnostic(
                    line: 2,
                    column: 17,
                    id: "unsupportedModifier",
                    message: "'@ValueEntry' cannot be combined with '\(modifier)': the value is stored per screen"
                )
            ]
        )
    }

    @Test(
        arguments: [
            ("@ValueEntry var title: String = \"\" { didSet {} }", 40),
            ("@ValueEntry var count: Int { 1 }", 32),
        ]
    )
    func accessorsAndObserversAreReportedOnceEvenWithoutADefault(declaration: String, column: Int) {
        let expansion = MacroExpansion("extension ScreenContext {\n    \(declaration)\n}")
        #expect(
            expansion.diagnostics == [
                ExpansionDiagnostic(
                    line: 2,
                    column: column,
                    id: "hasAccessors",
                    message: "'@ValueEntry' provides the property's 'get' and 'set': remove its accessors and observers"
                )
            ]
        )
    }

    @Test func tuplePatternIsReported() {
        let expansion = MacroExpansion(
            """
            extension ScreenContext {
                @ValueEntry var (a, b): (Int, Int) = (0, 0)
            }
            """
        )
        #expect(
            expansion.diagnostics == [
                ExpansionDiagnostic(
                    line: 2,
                    column: 21,
                    id: "notAnIdentifier",
                    message: "'@ValueEntry' property must be a single name, not a tuple or other pattern"
                )
            ]
        )
    }

    @Test func severalNamesInOneDeclarationAreReportedAndLeftUnexpanded() {
        // The expander (in the compiler too) refuses before asking the macro; the macro checks again.
        let expansion = MacroExpansion(
            """
            extension ScreenContext {
                @ValueEntry var c: Int = 0, d: Int = 0
            }
            """
        )
        #expect(!expansion.diagnostics.isEmpty)
        #expect(expansion.diagnostics.allSatisfy { $0.line == 2 })
        #expect(!expansion.source.contains("__Key_"))
    }

    @Test func optionGivenThroughAVariableIsReported() {
        let expansion = MacroExpansion(
            """
            extension ScreenContext {
                @ValueEntry(option) var draft: String = ""
            }
            """
        )
        #expect(
            expansion.diagnostics == [
                ExpansionDiagnostic(
                    line: 2,
                    column: 17,
                    id: "unknownOption",
                    message: "'@ValueEntry' options must be written literally, as in '@ValueEntry(.observationIgnored)'"
                )
            ]
        )
    }

    @Test func everyIndependentProblemIsReportedTogether() {
        let expansion = MacroExpansion(
            """
            struct Settings {
                @ValueEntry let title
            }
            """
        )
        #expect(
            expansion.diagnostics.map(\.id) == [
                "outsideScreenContextExtension", "constant", "missingTypeAnnotation", "missingDefaultValue",
            ]
        )
    }
}
