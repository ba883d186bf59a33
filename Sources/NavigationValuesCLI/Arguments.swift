import ArgumentParser
import Foundation

/// A flag's name as swift-argument-parser derives it from its property (`maxStacks` is
/// `--max-stacks`), and its environment variable: `NAVIGATION_VALUES_` + the name in capitals with
/// `_` for `-` (docs/Operations.md, "The executable").
enum FlagName {
    static func variable(_ name: String) -> String {
        "NAVIGATION_VALUES_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// `maxStacks` → `max-stacks`: a dash before each capital, lower-cased (the names here have
    /// no acronyms, which swift-argument-parser would keep together).
    static func flag(property: String) -> String {
        var name = ""
        for character in property {
            if character.isUppercase, !name.isEmpty { name.append("-") }
            name += character.lowercased()
        }
        return name
    }
}

extension ArgumentHelp {
    /// The help of a flag `--name VALUE`: what it does, and its variable on a line of its own.
    static func flag(_ name: String, _ valueName: String, _ abstract: String) -> ArgumentHelp {
        ArgumentHelp(abstract, discussion: "env: \(FlagName.variable(name))", valueName: valueName)
    }
}

extension Option where Value == String? {
    /// A flag of this CLI, `--name VALUE`, named after its property: it takes the next argument
    /// as its value whatever it looks like (`--max-copied-events -1` is a bad value, not an
    /// unknown option `-1`), and leaves checking it to `ParsedArguments`.
    init(_ help: ArgumentHelp, completion: CompletionKind? = nil) {
        self.init(name: .long, parsing: .unconditional, help: help, completion: completion)
    }
}

/// The flags of a parsed command (and of its option groups), each taken from the command line,
/// else from its environment variable, where an empty value counts as unset. Every flag is an
/// `@Option(.flag(...)) var name: String?`: the values are checked here, not by swift-argument-parser, so that
/// a bad value's message names where it came from, the flag or the variable.
protocol FlagValues {
    /// Adds each `String?` option of `self`, by flag name, to `values` (nil when not given).
    func collect(into values: inout [String: String?])
}

extension FlagValues {
    func collect(into values: inout [String: String?]) {
        for child in Mirror(reflecting: self).children {
            guard let label = child.label, label.hasPrefix("_") else { continue }
            if let option = child.value as? Option<String?> {
                values[FlagName.flag(property: String(label.dropFirst()))] = option.wrappedValue
            } else if let toggle = child.value as? Flag<Bool> {
                // A switch (`--as-test`): "true" when given, else read from its variable.
                let given: String? = toggle.wrappedValue ? "true" : nil
                values[FlagName.flag(property: String(label.dropFirst()))] = .some(given)
            } else if let group = child.value as? any FlagValues {
                group.collect(into: &values)
            } else {
                // Any other option would be parsed but never read, nor read from its variable.
                assert(
                    !String(describing: type(of: child.value)).hasPrefix("Option<"),
                    "\(label): a flag of this CLI is an `@Option(.flag(...)) var name: String?`")
            }
        }
    }
}

/// An option group's flags are its wrapped value's.
extension OptionGroup: FlagValues where Value: FlagValues {
    func collect(into values: inout [String: String?]) { wrappedValue.collect(into: &values) }
}

/// What a subcommand was given: flag values (from the command line, else the environment).
struct ParsedArguments: Sendable {
    var values: [String: String] = [:]
    /// Where each value came from, for error messages: `--port` or `NAVIGATION_VALUES_PORT`.
    var sources: [String: String] = [:]
    /// Every flag the command has, given or not.
    var names: Set<String> = []

    init(_ command: some FlagValues, environment: [String: String]) {
        var given: [String: String?] = [:]
        command.collect(into: &given)
        for (name, value) in given {
            names.insert(name)
            if let value {
                values[name] = value
                sources[name] = "--\(name)"
            } else if let value = environment[FlagName.variable(name)], !value.isEmpty {
                values[name] = value
                sources[name] = FlagName.variable(name)
            }
        }
    }

    subscript(name: String) -> String? { values[name] }

    /// Whether the switch `--name` is on: given on the command line, or its variable set to 1,
    /// true or yes (0, false or no: off).
    /// - Throws: `UsageError` naming the variable for any other value.
    func isOn(_ name: String) throws(UsageError) -> Bool {
        guard let text = values[name] else { return false }
        switch text.lowercased() {
        case "1", "true", "yes": return true
        case "0", "false", "no": return false
        default:
            throw UsageError("\(sources[name] ?? "--\(name)") must be 1, true or yes (0, false or no for off), not '\(text)'")
        }
    }

    /// The value of `--name` as an integer in `range`.
    /// - Throws: `UsageError` naming the flag (or variable) and the range.
    func integer(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = values[name] else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                "\(sources[name] ?? "--\(name)") must be an integer from \(range.lowerBound) to \(range.upperBound), not '\(text)'"
            )
        }
        return number
    }

    /// The value of `--name` as a number in `range` (such as a rate per second).
    /// - Throws: `UsageError` naming the flag (or variable) and the range.
    func number(_ name: String, in range: ClosedRange<Double>) throws(UsageError) -> Double? {
        guard let text = values[name] else { return nil }
        guard let number = Double(text), number.isFinite, range.contains(number) else {
            throw UsageError(
                "\(sources[name] ?? "--\(name)") must be a number from \(range.lowerBound) to \(range.upperBound), not '\(text)'"
            )
        }
        return number
    }

    /// The value of `--name` as a duration: a whole number with an optional unit, `s` (the
    /// default), `m`, `h` or `d`, such as `90s`, `12h` or `30d`. `0` is nil, for "never".
    /// - Throws: `UsageError` naming the flag (or variable).
    func duration(_ name: String) throws(UsageError) -> Duration?? {
        guard let text = values[name] else { return nil }
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = text.last, let seconds = units[last] {
            unit = seconds
            digits = digits.dropLast()
        }
        guard let count = Int64(digits), count >= 0, count <= Int64.max / 86_400 / 1_000 else {
            throw UsageError(
                "\(sources[name] ?? "--\(name)") must be a duration such as 90s, 30m, 12h or 30d (0 for never), not '\(text)'"
            )
        }
        return .some(count == 0 ? nil : .seconds(count * unit))
    }

    /// The value of `--name`, which must be one of `choices`.
    func choice(_ name: String, _ choices: [String]) throws(UsageError) -> String? {
        guard let text = values[name] else { return nil }
        guard choices.contains(text) else {
            throw UsageError(
                "\(sources[name] ?? "--\(name)") must be \(choices.joined(separator: " or ")), not '\(text)'")
        }
        return text
    }
}

/// Bad usage: the message goes to stderr and the process exits with status 2.
struct UsageError: Error, Equatable {
    var message: String
    init(_ message: String) { self.message = message }
}

/// A runtime failure (the database cannot be opened, the port is taken): exit status 1.
struct CommandFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
