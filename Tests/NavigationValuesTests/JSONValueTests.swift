import Foundation
import NavigationValues
import Testing

@Suite struct JSONValueTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONValue(
            parsing: #" {"a": [1, -2.5, 1e3, true, false, null, "s\u00e9\n\ud83d\ude00"], "b": {}} "#)
        #expect(value == ["a": [1, -2.5, 1000, true, false, .null, "sé\n😀"], "b": [:]])
    }

    @Test func serializesCompactlyWithSortedMembers() {
        let value: JSONValue = ["b": [1, 2.5, "q\"\\\u{01}"], "a": .null, "c": true]
        #expect(value.serialized() == #"{"a":null,"b":[1,2.5,"q\"\\\u0001"],"c":true}"#)
    }

    /// Members come out in `String` order at every size: the in-place sort of small objects
    /// (up to 16 members) and the sort of larger ones, against sorting the names as a whole.
    @Test(arguments: [0, 1, 2, 3, 7, 15, 16, 17, 40])
    func membersAreSortedByNameAtEverySize(count: Int) {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &* UInt64(count + 1)
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let alphabet = ["a", "b", "Z", "é", "e\u{301}", "_", "0", "😀", "ab", "a\u{0}"]
        var members: [String: JSONValue] = [:]
        while members.count < count {
            let name = (0..<(1 + Int(next() % 3))).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] }.joined()
            members[name + String(next() % 1000)] = .integer(Int64(next() % 100))
        }
        let expected =
            "{"
            + members.keys.sorted().map { name in
                JSONValue.string(name).serialized() + ":" + (members[name] ?? .null).serialized()
            }.joined(separator: ",") + "}"
        #expect(JSONValue.object(members).serialized() == expected)
        #expect(JSONValue.object(members).serialized().utf8.count == JSONValue.object(members).serializedByteCount)
    }

    @Test func roundTripsThroughTextAndFoundation() throws {
        let value: JSONValue = ["n": 9_007_199_254_740_993, "x": -0.125, "s": "ü", "l": [[], [:]]]
        #expect(try JSONValue(parsing: value.serialized()) == value)
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
    }

    @Test func integersAndEqualNumbersAreEqual() {
        #expect(JSONValue.integer(1) == .number(1.0))
        #expect(JSONValue.integer(1).hashValue == JSONValue.number(1.0).hashValue)
        #expect(JSONValue.integer(1) != .string("1"))
        #expect(JSONValue.integer(1).typeName == "integer")
    }

    @Test(arguments: [
        ("", "unexpected end of input"),
        ("{", "expected a member name"),
        ("[1,]", "unexpected character"),
        ("{\"a\" 1}", "expected ':'"),
        ("01", "unexpected data after the JSON value"),
        ("1.", "invalid number"),
        ("\"a", "unterminated string"),
        ("\"\u{01}\"", "control character in string"),
        ("\"\\x\"", "invalid escape"),
        ("\"\\ud800\"", "unpaired surrogate"),
        ("1e999", "number out of range"),
        ("tru", "unexpected end of input"),
        ("nul!", "invalid literal"),
        ("[1] [2]", "unexpected data after the JSON value"),
    ])
    func rejectsMalformedText(text: String, reason: String) {
        #expect(throws: JSONParsingError.self) { try JSONValue(parsing: text) }
        do {
            _ = try JSONValue(parsing: text)
        } catch {
            #expect(error.reason == reason)
        }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParsingError.self) { try JSONValue(parsing: [0x22, 0xFF, 0x22]) }
    }

    @Test func limitsNestingDepth() throws {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONParsingError.self) { try JSONValue(parsing: deep, maxDepth: 64) }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(try JSONValue(parsing: ok, maxDepth: 64).depth == 64)
    }

    @Test func accessorsReadTheirKindOnly() {
        let value: JSONValue = ["s": "x", "i": 3, "b": true, "a": [1]]
        #expect(value["s"]?.stringValue == "x")
        #expect(value["i"]?.integerValue == 3)
        #expect(value["b"]?.boolValue == true)
        #expect(value["a"]?.arrayValue == [1])
        #expect(value["s"]?.integerValue == nil)
        #expect(value.objectValue?.count == 4)
        #expect(JSONValue.string("x")["s"] == nil)
    }
}
