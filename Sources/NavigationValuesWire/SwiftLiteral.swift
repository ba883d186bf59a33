import NavigationValues

/// Swift source text for values: string literals that mean exactly the given text, JSON values as
/// `JSONValue` expressions, and identifiers. The output is ASCII only, so that no character of the
/// input (a quote, a backslash, `"""`, `#`, a line break, a right-to-left override) can end a
/// literal early, start an interpolation or change how the source reads.
///
/// ```swift
/// SwiftLiteral.string("a \"b\"\n")                  // "a \"b\"\n"
/// SwiftLiteral.json(["k": .array([1, "é"])])       // .object(["k": .array([.integer(1), .string("\u{E9}")])])
/// ```
package enum SwiftLiteral {
    /// A double-quoted Swift string literal whose value is `text`: `\` and `"` escaped, tab, line
    /// feed, carriage return and NUL by their short escapes, and every other scalar outside printable
    /// ASCII as `\u{…}`.
    package static func string(_ text: String) -> String {
        var output = "\""
        output.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": output += "\\\\"
            case "\"": output += "\\\""
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\0": output += "\\0"
            default:
                if scalar.value >= 0x20, scalar.value < 0x7F {
                    output.unicodeScalars.append(scalar)
                } else {
                    output += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                }
            }
        }
        return output + "\""
    }

    /// An expression of type `JSONValue` equal to `value`: its cases spelled out (`.string("x")`,
    /// `.integer(2)`, `.object([…])`), an object's members sorted by name, so that the same value
    /// always gives the same text and the type checker never has to guess a literal's type.
    package static func json(_ value: JSONValue) -> String {
        var output = ""
        write(value, to: &output)
        return output
    }

    /// `[String: JSONValue]` as a dictionary literal sorted by key (`[:]` when empty).
    package static func members(_ members: [String: JSONValue]) -> String {
        var output = ""
        writeMembers(members, to: &output)
        return output
    }

    /// `[String]` as an array literal.
    package static func strings(_ items: [String]) -> String {
        "[" + items.map(string).joined(separator: ", ") + "]"
    }

    /// An identifier made of `text`'s ASCII letters and digits (anything else becomes `_`), never
    /// starting with a digit: for names built from ids.
    package static func identifier(_ text: String) -> String {
        var output = ""
        for scalar in text.unicodeScalars {
            let isLetter = ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
            let isDigit = ("0"..."9").contains(scalar)
            output.unicodeScalars.append(isLetter || isDigit ? scalar : "_")
        }
        if output.first.map({ $0.isNumber }) ?? true { output = "_" + output }
        return output
    }

    private static func write(_ value: JSONValue, to output: inout String) {
        switch value {
        case .null: output += ".null"
        case .bool(let flag): output += flag ? ".bool(true)" : ".bool(false)"
        case .integer(let number): output += ".integer(\(number))"
        case .number(let number):
            // Swift's shortest round-trip spelling ("0.1", "1e-07", "5.0") is a valid float literal;
            // JSON has no NaN or infinity, which have none.
            output += number.isFinite ? ".number(\(number))" : ".null"
        case .string(let text): output += ".string(" + string(text) + ")"
        case .array(let items):
            output += ".array(["
            for (index, item) in items.enumerated() {
                if index > 0 { output += ", " }
                write(item, to: &output)
            }
            output += "])"
        case .object(let members):
            output += ".object("
            writeMembers(members, to: &output)
            output += ")"
        }
    }

    private static func writeMembers(_ members: [String: JSONValue], to output: inout String) {
        guard !members.isEmpty else {
            output += "[:]"
            return
        }
        output += "["
        for (index, name) in members.keys.sorted().enumerated() {
            if index > 0 { output += ", " }
            output += string(name) + ": "
            if let value = members[name] { write(value, to: &output) }
        }
        output += "]"
    }
}
