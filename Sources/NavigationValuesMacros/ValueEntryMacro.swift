import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@ValueEntry var title: String = ""` inside `extension ScreenContext` becomes
///
/// ```swift
/// var title: String {
///     get { self[__Key_title.self] }
///     set { self[__Key_title.self] = newValue }
/// }
/// struct __Key_title: NavigationValues.ValueKey {
///     static var defaultValue: String { "" }
/// }
/// ```
///
/// with `static var isObservationIgnored: Bool { true }` in the key for `@ValueEntry(.observationIgnored)`.
/// Misuse is reported by the accessor role only, so each problem appears once.
enum ValueEntryMacro: AccessorMacro, PeerMacro {
    static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        let property = try ValueEntryProperty(
            attribute: node,
            declaration: declaration,
            lexicalContext: context.lexicalContext
        )
        return [
            "get { self[\(raw: property.keyTypeName).self] }",
            "set { self[\(raw: property.keyTypeName).self] = newValue }",
        ]
    }

    static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        // The accessor role reports misuse; reporting it here too would show every error twice.
        guard
            let property = try? ValueEntryProperty(
                attribute: node,
                declaration: declaration,
                lexicalContext: context.lexicalContext
            )
        else {
            return []
        }
        return [keyDeclaration(for: property)]
    }

    /// The peer key type: the entry's identity in storage, carrying its default.
    static func keyDeclaration(for property: ValueEntryProperty) -> DeclSyntax {
        // A public or package key must witness the public `ValueKey` requirements at its own level.
        let typeAccess = property.accessLevel.map { "\(TokenSyntax.keyword($0).text) " } ?? ""
        let memberAccess = property.accessLevel == .public || property.accessLevel == .package ? typeAccess : ""
        var members = ["\(memberAccess)static var defaultValue: \(property.type) { \(property.defaultValue) }"]
        if property.isObservationIgnored {
            members.append("\(memberAccess)static var isObservationIgnored: Bool { true }")
        }
        return """
            \(raw: typeAccess)struct \(raw: property.keyTypeName): NavigationValues.ValueKey {
                \(raw: members.joined(separator: "\n"))
            }
            """
    }
}
