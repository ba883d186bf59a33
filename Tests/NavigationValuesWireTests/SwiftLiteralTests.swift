import NavigationValues
import Testing

@testable import NavigationValuesWire

/// Swift source for values (the test an export writes): every string means exactly its text.
/// scripts/check-exported-tests.sh compiles and runs such literals; these pin the spelling.
@Suite struct SwiftLiteralTests {
    @Test(arguments: [
        ("plain", #""plain""#),
        (#"a "quote""#, #""a \"quote\"""#),
        (#"back\slash \(x)"#, #""back\\slash \\(x)""#),
        (#"""""#, #""\"\"\"""#),
        (##"#"raw"#"##, ##""#\"raw\"#""##),
        ("line\nfeed\r\ttab\0nul\u{1}", #""line\nfeed\r\ttab\0nul\u{1}""#),
        ("café \u{202E} 😀 e\u{301}", #""caf\u{E9} \u{202E} \u{1F600} e\u{301}""#),
        ("\u{7F}", #""\u{7F}""#),
        ("", #""""#),
    ])
    func stringsAreEscapedIntoASCII(text: String, literal: String) {
        #expect(SwiftLiteral.string(text) == literal)
        #expect(Self.unescaped(SwiftLiteral.string(text)) == text)
    }

    @Test func jsonValuesSpellTheirCasesWithMembersSorted() {
        let value: JSONValue = [
            "z": .array([1, 2.5, true, .null]), "a\"": ["n": .number(1e-7)], "e": [:], "m": .integer(Int64.min),
        ]
        #expect(
            SwiftLiteral.json(value)
                == #".object(["a\"": .object(["n": .number(1e-07)]), "e": .object([:]), "m": .integer(-9223372036854775808), "z": .array([.integer(1), .number(2.5), .bool(true), .null])])"#
        )
        #expect(SwiftLiteral.members([:]) == "[:]")
        #expect(SwiftLiteral.strings(["a", "\\"]) == #"["a", "\\"]"#)
    }

    @Test func identifiersKeepLettersAndDigitsOnly() {
        #expect(SwiftLiteral.identifier("s_Ab-9") == "s_Ab_9")
        #expect(SwiftLiteral.identifier("9lives") == "_9lives")
        #expect(SwiftLiteral.identifier("") == "_")
        #expect(SwiftLiteral.identifier("é") == "_")
    }

    /// The text a literal `string` wrote means, read back by Swift's rules for the escapes it uses.
    static func unescaped(_ literal: String) -> String? {
        var scalars = Array(literal.unicodeScalars)
        guard scalars.count >= 2, scalars.first == "\"", scalars.last == "\"" else { return nil }
        scalars = Array(scalars.dropFirst().dropLast())
        var output = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            guard scalar == "\\" else {
                guard scalar != "\"", scalar.value >= 0x20, scalar.value < 0x7F else { return nil }
                output.append(scalar)
                continue
            }
            guard index < scalars.count else { return nil }
            let escape = scalars[index]
            index += 1
            switch escape {
            case "\\", "\"": output.append(escape)
            case "n": output.append("\n")
            case "r": output.append("\r")
            case "t": output.append("\t")
            case "0": output.append("\0")
            case "u":
                guard index < scalars.count, scalars[index] == "{",
                    let close = scalars[index...].firstIndex(of: "}"),
                    let value = UInt32(String(String.UnicodeScalarView(scalars[(index + 1)..<close])), radix: 16),
                    let decoded = Unicode.Scalar(value)
                else { return nil }
                output.append(decoded)
                index = close + 1
            default: return nil
            }
        }
        return String(output)
    }
}
