extension JSONValue {
    /// The number of bytes `serialized()` would produce, counted without producing them: what the
    /// server uses to refuse an answer or event that would be too large before rendering it.
    ///
    /// ```swift
    /// (["a": "x"] as JSONValue).serializedByteCount   // 9, as {"a":"x"}
    /// ```
    public var serializedByteCount: Int {
        switch self {
        case .null: 4
        case .bool(let value): value ? 4 : 5
        case .integer(let value): JSONValue.digitCount(value)
        case .number(let value): JSONValue.numberByteCount(value)
        case .string(let value): JSONValue.stringByteCount(value)
        case .array(let items):
            items.reduce(2 + max(0, items.count - 1)) { $0 + $1.serializedByteCount }
        case .object(let members):
            members.reduce(2 + max(0, members.count - 1)) { total, member in
                total + JSONValue.stringByteCount(member.key) + 1 + member.value.serializedByteCount
            }
        }
    }

    /// The bytes of `value` as a JSON string literal, quotes and escapes included (as `writeString` writes it).
    public static func stringByteCount(_ value: String) -> Int {
        var count = 2
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09: count += 2
            case 0..<0x20: count += 6
            default: count += 1
            }
        }
        return count
    }

    /// The characters of an integer in decimal, its sign included.
    static func digitCount(_ value: Int64) -> Int {
        var count = value < 0 ? 2 : 1
        var rest = value.magnitude
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        return count
    }

    /// The bytes `writeNumber` writes for `value`.
    static func numberByteCount(_ value: Double) -> Int {
        guard value.isFinite else { return 4 }
        if value == value.rounded(), abs(value) < 1e15 { return digitCount(Int64(value)) }
        return value.description.utf8.count
    }
}
