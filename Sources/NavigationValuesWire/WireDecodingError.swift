import Foundation
import NavigationValues

/// JSON that does not have the shape a wire type expects: where (an RFC 6901 pointer into the
/// document) and what was wrong.
///
/// ```swift
/// do { _ = try ScreenResource(json: ["id": 1]) } catch { print(error) }   // "/id: expected a string"
/// ```
public struct WireDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where in the document the problem is (`""` for the document itself).
    public var pointer: String
    /// What was expected there.
    public var reason: String

    public init(pointer: String, reason: String) {
        self.pointer = pointer
        self.reason = reason
    }

    public var description: String { pointer.isEmpty ? reason : "\(pointer): \(reason)" }
}

/// The members of a JSON object being decoded, with typed accessors that throw
/// `WireDecodingError` naming the member's pointer.
struct JSONObjectReader {
    let members: [String: JSONValue]
    let pointer: String

    init(_ value: JSONValue, at pointer: String = "") throws(WireDecodingError) {
        guard case .object(let members) = value else {
            throw WireDecodingError(pointer: pointer, reason: "expected an object")
        }
        self.members = members
        self.pointer = pointer
    }

    func at(_ name: String) -> String { "\(pointer)/\(JSONPointer.escaped(name))" }

    func value(_ name: String) throws(WireDecodingError) -> JSONValue {
        guard let value = members[name] else { throw WireDecodingError(pointer: at(name), reason: "missing") }
        return value
    }

    func string(_ name: String) throws(WireDecodingError) -> String {
        guard let text = try value(name).stringValue else { throw mistyped(name, "a string") }
        return text
    }

    func integer(_ name: String) throws(WireDecodingError) -> Int64 {
        guard let number = try value(name).integerValue else { throw mistyped(name, "an integer") }
        return number
    }

    func bool(_ name: String) throws(WireDecodingError) -> Bool {
        guard let flag = try value(name).boolValue else { throw mistyped(name, "a boolean") }
        return flag
    }

    func object(_ name: String) throws(WireDecodingError) -> [String: JSONValue] {
        guard case .object(let members) = try value(name) else { throw mistyped(name, "an object") }
        return members
    }

    func array(_ name: String) throws(WireDecodingError) -> [JSONValue] {
        guard case .array(let items) = try value(name) else { throw mistyped(name, "an array") }
        return items
    }

    func reader(_ name: String) throws(WireDecodingError) -> JSONObjectReader {
        try JSONObjectReader(try value(name), at: at(name))
    }

    func date(_ name: String) throws(WireDecodingError) -> Date {
        guard let date = Timestamp.date(from: try string(name)) else { throw mistyped(name, "an RFC 3339 timestamp") }
        return date
    }

    func screenID(_ name: String) throws(WireDecodingError) -> ScreenID { ScreenID(try string(name)) }

    /// A screen id, or nil when the member is `null`.
    func optionalScreenID(_ name: String) throws(WireDecodingError) -> ScreenID? {
        if try value(name) == .null { return nil }
        return try screenID(name)
    }

    func screenIDs(_ name: String) throws(WireDecodingError) -> [ScreenID] {
        var ids: [ScreenID] = []
        for (index, item) in try array(name).enumerated() {
            guard let text = item.stringValue else {
                throw WireDecodingError(pointer: "\(at(name))/\(index)", reason: "expected a screen id")
            }
            ids.append(ScreenID(text))
        }
        return ids
    }

    func strings(_ name: String) throws(WireDecodingError) -> [String] {
        var texts: [String] = []
        for (index, item) in try array(name).enumerated() {
            guard let text = item.stringValue else {
                throw WireDecodingError(pointer: "\(at(name))/\(index)", reason: "expected a string")
            }
            texts.append(text)
        }
        return texts
    }

    /// Decodes each element of an array member with `decode`, which gets the element's pointer.
    func list<T>(
        _ name: String, _ decode: (JSONValue, String) throws(WireDecodingError) -> T
    ) throws(WireDecodingError) -> [T] {
        var result: [T] = []
        for (index, item) in try array(name).enumerated() {
            result.append(try decode(item, "\(at(name))/\(index)"))
        }
        return result
    }

    private func mistyped(_ name: String, _ expected: String) -> WireDecodingError {
        WireDecodingError(pointer: at(name), reason: "expected \(expected)")
    }
}

/// JSON pointers (RFC 6901).
public enum JSONPointer {
    /// A member name escaped for use as one reference token (RFC 6901 §3: `~` → `~0`, `/` → `~1`).
    public static func escaped(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return name }
        var result = ""
        for character in name {
            switch character {
            case "~": result += "~0"
            case "/": result += "~1"
            default: result.append(character)
            }
        }
        return result
    }
}
