import Foundation
import NavigationValues
import Synchronization

/// Gives a key its name on the server when the name derived from its type is not the one wanted.
///
/// A `ValueKey` or `PreferenceKey` type is named on the server after its type: the type's name with
/// its first word lowercased and a trailing `Key` dropped (`Title` → `title`, `SelectedItemKey` →
/// `selectedItem`, `URLFilter` → `urlFilter`); the key `@ValueEntry var title` generates is named
/// `title`. Conform to this protocol to choose another name:
///
/// ```swift
/// struct Draft: ValueKey, RemotelyNamedKey {
///     static let defaultValue = ""
///     static let remoteName = "draft-text"
/// }
/// ```
public protocol RemotelyNamedKey {
    /// The key's name on the server: 1-128 characters of `[A-Za-z0-9_.-]` (docs/API.md, Limits).
    static var remoteName: String { get }
}

extension ValueKey {
    /// This key's name on the server (see ``RemotelyNamedKey``).
    public static var remoteName: String { RemoteKeyName.of(Self.self) }
}

extension PreferenceKey {
    /// This key's name on the server (see ``RemotelyNamedKey``).
    public static var remoteName: String { RemoteKeyName.of(Self.self) }
}

/// How a key type's server name is found.
enum RemoteKeyName {
    /// The prefix of the keys `@ValueEntry` generates (`ScreenContext.__Key_title`).
    static let macroKeyPrefix = "__Key_"

    static func of(_ type: Any.Type) -> String {
        if let named = type as? any RemotelyNamedKey.Type { return named.remoteName }
        // A type's name never changes: derive it once (`String(describing:)` and the walk over its
        // characters cost a few µs on every call that names a key).
        let id = ObjectIdentifier(type)
        if let known = derivedNames.withLock({ $0[id] }) { return known }
        let name = derived(from: String(describing: type))
        derivedNames.withLock { $0[id] = name }
        return name
    }

    /// The names `derived(from:)` gave each key type so far (a program has a few dozen key types).
    private static let derivedNames = Mutex<[ObjectIdentifier: String]>([:])

    /// `Title` → `title`, `SelectedItemKey` → `selectedItem`, `URLFilter` → `urlFilter`,
    /// `__Key_title` → `title`.
    static func derived(from typeName: String) -> String {
        var name = Substring(typeName)
        if let dot = name.lastIndex(of: ".") { name = name[name.index(after: dot)...] }
        if name.hasPrefix(macroKeyPrefix), name.count > macroKeyPrefix.count {
            return String(name.dropFirst(macroKeyPrefix.count))
        }
        if name.hasSuffix("Key"), name.count > 3 { name = name.dropLast(3) }
        let characters = Array(name)
        // Lowercase the leading capitals; of a run followed by a lowercase letter, keep the last
        // capital, which starts the next word ("URLFilter" → "urlFilter").
        var leading = 0
        while leading < characters.count, characters[leading].isUppercase { leading += 1 }
        if leading > 1, leading < characters.count, characters[leading].isLowercase { leading -= 1 }
        return String(characters[..<leading]).lowercased() + String(characters[leading...])
    }
}

// MARK: - Typed values as JSON

extension JSONValue {
    /// `value` as JSON: strings, numbers, booleans and `JSONValue` directly; anything else through
    /// `JSONEncoder` (its default strategies).
    ///
    /// - Throws: `EncodingError` when `value` cannot be encoded.
    init(encoding value: some Encodable) throws {
        switch value {
        case let json as JSONValue: self = json
        case let text as String: self = .string(text)
        case let flag as Bool: self = .bool(flag)
        case let number as Int: self = .integer(Int64(number))
        case let number as Int64: self = .integer(number)
        case let number as Double where number.isFinite: self = .number(number)
        default:
            let data = try JSONEncoder().encode(value)
            self = try JSONValue(parsing: Array(data))
        }
    }

    /// This JSON as a `T`: strings, numbers, booleans and `JSONValue` directly; anything else
    /// through `JSONDecoder` (its default strategies).
    ///
    /// - Throws: `DecodingError` when the JSON does not decode as `T`.
    func decoded<T: Decodable>(as type: T.Type) throws -> T {
        switch type {
        case is JSONValue.Type: if let value = self as? T { return value }
        case is String.Type: if let text = stringValue as? T { return text }
        case is Bool.Type: if let flag = boolValue as? T { return flag }
        case is Int64.Type: if let number = integerValue as? T { return number }
        case is Int.Type: if let number = integerValue.flatMap({ Int(exactly: $0) }) as? T { return number }
        default: break
        }
        return try JSONDecoder().decode(T.self, from: Data(serialized().utf8))
    }
}
