import NavigationValues
import TestSupport
import Testing

/// `serializedByteCount` is what the server refuses answers by: it must equal what `serialized()`
/// writes, byte for byte, for every kind of value.
@Suite struct JSONValueSizeTests {
    @Test(arguments: [
        JSONValue.null, true, false, 0, -1, 9_223_372_036_854_775_807, -9_223_372_036_854_775_808, 1.5, -0.125, 1e300,
        .number(.infinity), .number(123_456_789_012_345), .number(1e15), "", "a\"b\\c\n\r\t\u{01}\u{1F}é😀", [], [:],
        [1, [2, [3]], ["k": "v"]], ["b": 1, "a": [true, .null], "é": ["x": ""]],
    ])
    func countsWhatSerializationWrites(value: JSONValue) {
        #expect(value.serializedByteCount == value.serialized().utf8.count, "\(value.serialized())")
    }

    @Test func countsRandomValuesExactly() {
        var random = SplitMix64(state: 13)
        for _ in 0..<500 {
            let value = Self.randomValue(depth: 0, using: &random)
            #expect(value.serializedByteCount == value.serialized().utf8.count, "\(value.serialized())")
        }
    }

    static func randomValue(depth: Int, using random: inout SplitMix64) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .integer(Int64.random(in: Int64.min...Int64.max, using: &random) >> Int64.random(in: 0..<63, using: &random))
        case 3: return .number(Double.random(in: -1e20...1e20, using: &random) / Double(Int.random(in: 1...1_000, using: &random)))
        case 4: return .string(randomString(using: &random))
        case 5:
            return .array((0..<Int.random(in: 0..<5, using: &random)).map { _ in randomValue(depth: depth + 1, using: &random) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0..<5, using: &random) {
                members[randomString(using: &random)] = randomValue(depth: depth + 1, using: &random)
            }
            return .object(members)
        }
    }

    static func randomString(using random: inout SplitMix64) -> String {
        let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "\n", "\r", "\t", "\u{01}", "\u{7F}", "é", "😀", "/"]
        return String((0..<Int.random(in: 0..<8, using: &random)).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] })
    }
}
