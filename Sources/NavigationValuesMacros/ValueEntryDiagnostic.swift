import SwiftDiagnostics

/// Why `@ValueEntry` cannot apply where it was written; each is a compile error at the misuse.
struct ValueEntryDiagnostic: DiagnosticMessage {
    /// Stable identifier, e.g. `missingDefaultValue`; tests match on it.
    let id: String
    let message: String

    var diagnosticID: MessageID { MessageID(domain: "NavigationValuesMacros", id: id) }
    var severity: DiagnosticSeverity { .error }

    static let notAVariable = ValueEntryDiagnostic(
        id: "notAVariable",
        message: "'@ValueEntry' can only be attached to a 'var' property"
    )

    static let outsideScreenContextExtension = ValueEntryDiagnostic(
        id: "outsideScreenContextExtension",
        message: "'@ValueEntry' declares a value of a screen: write it directly inside 'extension ScreenContext { }'"
    )

    static let constant = ValueEntryDiagnostic(
        id: "constant",
        message: "'@ValueEntry' property must be declared with 'var': screens write the value, so it cannot be 'let'"
    )

    static func unsupportedModifier(_ modifier: String) -> ValueEntryDiagnostic {
        ValueEntryDiagnostic(
            id: "unsupportedModifier",
            message: "'@ValueEntry' cannot be combined with '\(modifier)': the value is stored per screen"
        )
    }

    static let multipleBindings = ValueEntryDiagnostic(
        id: "multipleBindings",
        message: "'@ValueEntry' declares one property at a time: split this into one 'var' per value"
    )

    static let notAnIdentifier = ValueEntryDiagnostic(
        id: "notAnIdentifier",
        message: "'@ValueEntry' property must be a single name, not a tuple or other pattern"
    )

    static let hasAccessors = ValueEntryDiagnostic(
        id: "hasAccessors",
        message: "'@ValueEntry' provides the property's 'get' and 'set': remove its accessors and observers"
    )

    static func missingTypeAnnotation(_ name: String) -> ValueEntryDiagnostic {
        ValueEntryDiagnostic(
            id: "missingTypeAnnotation",
            message: "'@ValueEntry' property '\(name)' needs an explicit type, as in 'var \(name): String = \"\"'"
        )
    }

    static func missingDefaultValue(_ name: String) -> ValueEntryDiagnostic {
        ValueEntryDiagnostic(
            id: "missingDefaultValue",
            message: "'@ValueEntry' property '\(name)' needs a default value (what screens read before any writes), "
                + "as in 'var \(name): String = \"\"'"
        )
    }

    static let unknownOption = ValueEntryDiagnostic(
        id: "unknownOption",
        message: "'@ValueEntry' options must be written literally, as in '@ValueEntry(.observationIgnored)'"
    )
}

/// The fix-its offered with a ``ValueEntryDiagnostic``.
struct ValueEntryFixIt: FixItMessage {
    let id: String
    let message: String

    var fixItID: MessageID { MessageID(domain: "NavigationValuesMacros", id: id) }

    static let replaceLetWithVar = ValueEntryFixIt(id: "replaceLetWithVar", message: "replace 'let' with 'var'")
}
