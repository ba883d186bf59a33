/// Options for ``ValueEntry(_:)``.
public enum ValueEntryOption: Sendable, Hashable {
    /// The value is stored, readable and writable as usual, but its changes notify no observer
    /// (docs/SEMANTICS.md §2): the generated key's `isObservationIgnored` is `true`.
    case observationIgnored
}

/// Declares a forward value on ``ScreenContext``: a property backed by a generated ``ValueKey``.
///
/// ```swift
/// extension ScreenContext {
///     @ValueEntry var title: String = ""
///     @ValueEntry(.observationIgnored) var draft: String = ""
/// }
/// ```
///
/// The property reads and writes `self[__Key_title.self]`, and the peer key `__Key_title` (nested in
/// `ScreenContext`, with the property's access level) carries the default value, so the macro spelling
/// and a hand-written key behave the same. The type annotation and default value are required
/// (an optional type may omit its default: it is `nil`); the property must be a `var` written
/// directly inside `extension ScreenContext`.
@attached(accessor)
@attached(peer, names: prefixed(__Key_))
public macro ValueEntry(_ options: ValueEntryOption...) =
    #externalMacro(module: "NavigationValuesMacros", type: "ValueEntryMacro")
