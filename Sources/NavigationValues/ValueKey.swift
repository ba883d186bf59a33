/// A forward value: written on a screen, read there and on every screen pushed after it
/// (docs/SEMANTICS.md §2), like a SwiftUI environment value.
///
/// ```swift
/// struct TitleKey: ValueKey { static let defaultValue = "" }
/// extension ScreenContext {
///     var title: String { get { self[TitleKey.self] } set { self[TitleKey.self] = newValue } }
/// }
/// ```
public protocol ValueKey {
    /// The type of the value; any type. Equatable values notify only when they change.
    associatedtype Value
    /// What a screen reads when neither it nor an earlier screen wrote the key.
    static var defaultValue: Value { get }
    /// When true, the value is stored, readable and writable as usual, but its changes notify no one
    /// (the seed's `@ValueEntry(.observationIgnored)`).
    static var isObservationIgnored: Bool { get }
}

extension ValueKey {
    /// Values are observed unless the key says otherwise.
    public static var isObservationIgnored: Bool { false }
}

/// A backward value: published by a later screen and delivered to earlier screens' handlers,
/// each of which may pass it on or stop it (docs/SEMANTICS.md §3), like a SwiftUI preference.
///
/// ```swift
/// struct Selection: PreferenceKey { static let defaultValue = "" }
/// root.onPreferenceChange(Selection.self) { value, passBack in passBack(value) }
/// top.updatePreference(Selection.self, value: "chosen")
/// ```
public protocol PreferenceKey {
    /// Equatable, so that a value arriving again is not delivered twice.
    associatedtype Value: Equatable
    /// What `preference(_:)` reads before a handler received anything.
    static var defaultValue: Value { get }
}

/// How a stored entry is identified: by its key type (typed API) or by name (the server's JSON API).
/// Both live in the same storage and follow the same rules.
enum EntryID: Hashable {
    case type(ObjectIdentifier)
    case name(String)
}
