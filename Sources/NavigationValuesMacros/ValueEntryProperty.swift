import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder

/// A property that `@ValueEntry` turns into a forward value, as read from its declaration.
struct ValueEntryProperty {
    /// The property's name without backticks, e.g. `title`.
    var name: String
    /// The declared type, e.g. `String`.
    var type: TypeSyntax
    /// The initial value expression, moved into the key's `defaultValue`.
    var defaultValue: ExprSyntax
    /// The property's own access level, if written (`public`, `package`, `fileprivate`, `private`).
    /// The key gets the same, so code that sees the property can also reach it by key.
    var accessLevel: Keyword?
    /// Whether `.observationIgnored` was given.
    var isObservationIgnored: Bool

    /// The peer key type, declared as `prefixed(__Key_)` in the macro's declaration.
    var keyTypeName: String { "__Key_" + name }
}

// MARK: - Reading the declaration

extension ValueEntryProperty {
    /// Reads the property `@ValueEntry` is attached to.
    ///
    /// - Parameter lexicalContext: The enclosing declarations, innermost first, as the compiler reports them.
    /// - Throws: `DiagnosticsError` with every misuse found, each pointing at the offending syntax.
    init(
        attribute: AttributeSyntax,
        declaration: some DeclSyntaxProtocol,
        lexicalContext: [Syntax]
    ) throws(DiagnosticsError) {
        guard let variable = declaration.as(VariableDeclSyntax.self) else {
            throw DiagnosticsError(diagnostics: [
                Diagnostic(node: attribute, message: ValueEntryDiagnostic.notAVariable)
            ])
        }
        var problems: [Diagnostic] = []
        if !Self.isInsideScreenContextExtension(lexicalContext) {
            problems.append(Diagnostic(node: attribute, message: ValueEntryDiagnostic.outsideScreenContextExtension))
        }
        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            problems.append(Self.constantDiagnostic(variable.bindingSpecifier))
        }
        for modifier in variable.modifiers where Self.unsupportedModifiers.contains(modifier.name.tokenKind) {
            problems.append(
                Diagnostic(node: modifier, message: ValueEntryDiagnostic.unsupportedModifier(modifier.name.text))
            )
        }
        let options = Self.options(of: attribute, problems: &problems)

        guard let binding = variable.bindings.first, variable.bindings.count == 1 else {
            problems.append(Diagnostic(node: variable.bindings, message: ValueEntryDiagnostic.multipleBindings))
            throw DiagnosticsError(diagnostics: problems)
        }
        guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else {
            problems.append(Diagnostic(node: binding.pattern, message: ValueEntryDiagnostic.notAnIdentifier))
            throw DiagnosticsError(diagnostics: problems)
        }
        let name = pattern.identifier.trimmed.text.trimmingBackticks()
        if let accessors = binding.accessorBlock {
            problems.append(Diagnostic(node: accessors, message: ValueEntryDiagnostic.hasAccessors))
        }
        let type = binding.typeAnnotation?.type.trimmed
        if type == nil {
            problems.append(Diagnostic(node: pattern, message: ValueEntryDiagnostic.missingTypeAnnotation(name)))
        }
        // A stored optional without an initial value starts as nil; the entry keeps that reading.
        var defaultValue = binding.initializer?.value.trimmed
        if defaultValue == nil, type?.isOptional == true {
            defaultValue = ExprSyntax(NilLiteralExprSyntax())
        }
        if defaultValue == nil, binding.accessorBlock == nil {  // a computed property's problem is its accessors
            problems.append(Diagnostic(node: binding, message: ValueEntryDiagnostic.missingDefaultValue(name)))
        }
        guard problems.isEmpty, let type, let defaultValue else {
            throw DiagnosticsError(diagnostics: problems)
        }
        self.init(
            name: name,
            type: type,
            defaultValue: defaultValue,
            accessLevel: Self.accessLevel(of: variable.modifiers),
            isObservationIgnored: options.contains("observationIgnored")
        )
    }

    /// Modifiers that make no sense for a value stored per screen.
    private static let unsupportedModifiers: [TokenKind] = [
        .keyword(.static), .keyword(.class), .keyword(.lazy), .keyword(.weak), .keyword(.unowned),
    ]

    /// True when the innermost enclosing declaration is `extension ScreenContext`.
    private static func isInsideScreenContextExtension(_ lexicalContext: [Syntax]) -> Bool {
        guard let extensionDecl = lexicalContext.first?.as(ExtensionDeclSyntax.self) else {
            return false
        }
        let extendedType = extensionDecl.extendedType.trimmedDescription
        return extendedType == "ScreenContext" || extendedType == "NavigationValues.ScreenContext"
    }

    private static func constantDiagnostic(_ letKeyword: TokenSyntax) -> Diagnostic {
        Diagnostic(
            node: letKeyword,
            message: ValueEntryDiagnostic.constant,
            fixIt: FixIt(
                message: ValueEntryFixIt.replaceLetWithVar,
                changes: [
                    .replace(oldNode: Syntax(letKeyword), newNode: Syntax(letKeyword.with(\.tokenKind, .keyword(.var))))
                ]
            )
        )
    }

    /// The names of the options written in the attribute, e.g. `["observationIgnored"]`.
    private static func options(of attribute: AttributeSyntax, problems: inout [Diagnostic]) -> Set<String> {
        guard case .argumentList(let arguments) = attribute.arguments else {
            return []
        }
        var names: Set<String> = []
        for argument in arguments {
            guard let member = argument.expression.as(MemberAccessExprSyntax.self),
                member.base == nil || member.base?.trimmedDescription.hasSuffix("ValueEntryOption") == true,
                member.declName.baseName.text == "observationIgnored"
            else {
                problems.append(Diagnostic(node: argument, message: ValueEntryDiagnostic.unknownOption))
                continue
            }
            names.insert(member.declName.baseName.text)
        }
        return names
    }

    private static func accessLevel(of modifiers: DeclModifierListSyntax) -> Keyword? {
        for modifier in modifiers where modifier.detail == nil {  // `private(set)` concerns the setter only
            switch modifier.name.tokenKind {
            case .keyword(.open), .keyword(.public): return .public
            case .keyword(.package): return .package
            case .keyword(.internal): return .internal
            case .keyword(.fileprivate): return .fileprivate
            case .keyword(.private): return .private
            default: continue
            }
        }
        return nil
    }
}

extension TypeSyntax {
    /// `T?`, `T!` or `Optional<T>`.
    fileprivate var isOptional: Bool {
        if self.is(OptionalTypeSyntax.self) || self.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            return true
        }
        let name = self.as(IdentifierTypeSyntax.self)?.name.text ?? self.as(MemberTypeSyntax.self)?.name.text
        return name == "Optional"
    }
}

extension String {
    /// `default` for `` `default` ``; the compiler names the peer after the unescaped identifier.
    fileprivate func trimmingBackticks() -> String {
        hasPrefix("`") && hasSuffix("`") && count >= 2 ? String(dropFirst().dropLast()) : self
    }
}
