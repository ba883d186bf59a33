import NavigationValues
import NavigationValuesWire
import TestSupport
import Testing

@Suite struct JSONPatchTests {
    private func parse(_ text: String) throws -> JSONValue { try JSONValue(parsing: text) }

    /// RFC 6902, Appendix A: each example's document, patch and result (A.1-A.10, A.14, A.16).
    @Test(arguments: [
        (#"{"foo": "bar"}"#, #"[{"op": "add", "path": "/baz", "value": "qux"}]"#, #"{"baz": "qux", "foo": "bar"}"#),
        (
            #"{"foo": ["bar", "baz"]}"#, #"[{"op": "add", "path": "/foo/1", "value": "qux"}]"#,
            #"{"foo": ["bar", "qux", "baz"]}"#
        ),
        (#"{"baz": "qux", "foo": "bar"}"#, #"[{"op": "remove", "path": "/baz"}]"#, #"{"foo": "bar"}"#),
        (#"{"foo": ["bar", "qux", "baz"]}"#, #"[{"op": "remove", "path": "/foo/1"}]"#, #"{"foo": ["bar", "baz"]}"#),
        (
            #"{"baz": "qux", "foo": "bar"}"#, #"[{"op": "replace", "path": "/baz", "value": "boo"}]"#,
            #"{"baz": "boo", "foo": "bar"}"#
        ),
        (
            #"{"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}}"#,
            #"[{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}]"#,
            #"{"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}"#
        ),
        (
            #"{"foo": ["all", "grass", "cows", "eat"]}"#, #"[{"op": "move", "from": "/foo/1", "path": "/foo/3"}]"#,
            #"{"foo": ["all", "cows", "eat", "grass"]}"#
        ),
        (
            #"{"baz": "qux", "foo": ["a", 2, "c"]}"#,
            #"[{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}]"#,
            #"{"baz": "qux", "foo": ["a", 2, "c"]}"#
        ),
        (
            #"{"foo": "bar"}"#, #"[{"op": "add", "path": "/child", "value": {"grandchild": {}}}]"#,
            #"{"foo": "bar", "child": {"grandchild": {}}}"#
        ),
        (#"{"/": 9, "~1": 10}"#, #"[{"op": "test", "path": "/~01", "value": 10}]"#, #"{"/": 9, "~1": 10}"#),
        (
            #"{"foo": ["bar"]}"#, #"[{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}]"#,
            #"{"foo": ["bar", ["abc", "def"]]}"#
        ),
    ])
    func theRFCExamplesApply(document: String, patch: String, result: String) throws {
        let decoded = try JSONPatch(json: try parse(patch))
        #expect(try decoded.applied(to: try parse(document)) == (try parse(result)))
        #expect(try JSONPatch(json: decoded.json) == decoded)
    }

    /// RFC 6902, Appendix A: examples whose patch must fail (A.9, A.12, A.15), and more misuse.
    @Test(arguments: [
        (#"{"baz": "qux"}"#, #"[{"op": "test", "path": "/baz", "value": "bar"}]"#),
        (#"{"foo": "bar"}"#, #"[{"op": "add", "path": "/baz/bat", "value": "qux"}]"#),
        (#"{"/": 9, "~1": 10}"#, #"[{"op": "test", "path": "/~01", "value": "10"}]"#),
        (#"{"a": [1]}"#, #"[{"op": "add", "path": "/a/2", "value": 3}]"#),
        (#"{"a": [1]}"#, #"[{"op": "remove", "path": "/a/01"}]"#),
        (#"{"a": {"b": 1}}"#, #"[{"op": "move", "from": "/a", "path": "/a/b/c"}]"#),
        (#"{"a": 1}"#, #"[{"op": "replace", "path": "/b", "value": 2}]"#),
        (#"{"a": 1}"#, #"[{"op": "remove", "path": "a"}]"#),
    ])
    func patchesThatDoNotFitFail(document: String, patch: String) throws {
        let decoded = try JSONPatch(json: try parse(patch))
        #expect(throws: JSONPatchError.self) { try decoded.applied(to: try parse(document)) }
    }

    @Test func unknownOperationsDoNotDecode() throws {
        #expect(throws: WireDecodingError(pointer: "/0/op", reason: "unknown operation 'merge'")) {
            try JSONPatch(json: try parse(#"[{"op": "merge", "path": "/a"}]"#))
        }
    }

    @Test func aPushIsOneAddAndAPopOneRemove() throws {
        let one: JSONValue = ["version": 1, "screens": [["id": "a", "next": .null]]]
        let two: JSONValue = ["version": 2, "screens": [["id": "a", "next": "b"], ["id": "b", "next": .null]]]
        #expect(
            JSONPatch.difference(from: one, to: two)
                == JSONPatch([
                    .replace(path: "/screens/0/next", value: "b"),
                    .add(path: "/screens/1", value: ["id": "b", "next": .null]),
                    .replace(path: "/version", value: 2),
                ]))
        #expect(
            JSONPatch.difference(from: two, to: one)
                == JSONPatch([
                    .replace(path: "/screens/0/next", value: .null), .remove(path: "/screens/1"),
                    .replace(path: "/version", value: 1),
                ]))
        #expect(JSONPatch.difference(from: two, to: two).isEmpty)
    }

    /// Random documents: the difference from one to the other, applied to the first, gives the
    /// second, with member names that need escaping.
    @Test func theDifferenceOfRandomDocumentsAppliesToTheFirstAndGivesTheSecond() throws {
        var random = SplitMix64(state: 7)
        for _ in 0..<500 {
            let source = Self.randomValue(depth: 3, &random)
            let target = Self.randomValue(depth: 3, &random)
            let patch = JSONPatch.difference(from: source, to: target)
            #expect(try patch.applied(to: source) == target, "\(source.serialized()) → \(target.serialized())")
        }
    }

    private static func randomValue(depth: Int, _ random: inout SplitMix64) -> JSONValue {
        let names = ["a", "b", "c/d", "e~f", ""]
        switch Int.random(in: 0..<(depth > 0 ? 7 : 4), using: &random) {
        case 0: return .null
        case 1: return .integer(Int64.random(in: 0..<3, using: &random))
        case 2: return .string(["x", "y"][Int.random(in: 0..<2, using: &random)])
        case 3: return .bool(Bool.random(using: &random))
        case 4, 5:
            var members: [String: JSONValue] = [:]
            for name in names where Bool.random(using: &random) {
                members[name] = randomValue(depth: depth - 1, &random)
            }
            return .object(members)
        default:
            return .array(
                (0..<Int.random(in: 0..<4, using: &random)).map { _ in randomValue(depth: depth - 1, &random) })
        }
    }
}
