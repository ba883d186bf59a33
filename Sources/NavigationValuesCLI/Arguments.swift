import Foundation

/// One `--flag` of a subcommand: its name, the value it takes, and its help line. Its environment
/// variable is `NAVIGATION_VALUES_` + the name in capitals with `_` for `-` (docs/API.md, The executable).
struct Flag: Sendable {
    var name: String
    /// The placeholder shown in help, such as `PATH`.
    var valueName: String
    var help: String
    /// A switch (`--as-test`): takes no value, and reads as `true` when given.
    var isSwitch = false

    var environmentVariable: String {
        "NAVIGATION_VALUES_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }
}

/// What a subcommand was given: flag values (from the command line, else the environment) and
/// positional arguments, or a request for help.
struct ParsedArguments: Sendable {
    var values: [String: String] = [:]
    /// Where each value came from, for error messages: `--port` or `NAVIGATION_VALUES_PORT`.
    var sources: [String: String] = [:]
    var positionals: [String] = []
    var isHelpRequested = false

    subscript(name: String) -> String? { values[name] }

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

    /// `--db PATH|URL` and the one positional SESSION id of a command that reads a session from a database.
    func databaseAndSession(of command: String) throws(UsageError) -> (databasePath: String, session: String) {
        guard let path = values["db"] else { throw UsageError("\(command) needs --db PATH") }
        guard let session = positionals.first else { throw UsageError("\(command) needs a SESSION id") }
        if positionals.count > 1 { throw UsageError("unexpected argument '\(positionals[1])'") }
        return (path, session)
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

enum ArgumentParser {
    /// Parses `arguments` (after the subcommand's name) against `flags`; a flag not given on the
    /// command line is read from its environment variable, where an empty value counts as unset.
    ///
    /// Accepts `--flag value` and `--flag=value` (a switch: `--flag` alone); `--` ends the flags;
    /// `-h`/`--help` asks for help.
    /// - Throws: `UsageError` for an unknown flag, a missing value or a repeated flag.
    static func parse(
        _ arguments: [String], flags: [Flag], environment: [String: String]
    ) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var flagsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if flagsEnded || !argument.hasPrefix("-") || argument == "-" {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                flagsEnded = true
                continue
            }
            if argument == "--help" || argument == "-h" {
                parsed.isHelpRequested = true
                continue
            }
            let body = argument.hasPrefix("--") ? argument.dropFirst(2) : argument.dropFirst()
            let name = String(body.prefix { $0 != "=" })
            guard argument.hasPrefix("--"), let flag = flags.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '\(argument.prefix { $0 != "=" })'")
            }
            guard parsed.values[name] == nil else { throw UsageError("--\(name) is given more than once") }
            let value: String
            if flag.isSwitch {
                guard !body.contains("=") else { throw UsageError("--\(name) takes no value") }
                value = "true"
            } else if let equals = body.firstIndex(of: "=") {
                value = String(body[body.index(after: equals)...])
            } else {
                guard index < arguments.count else { throw UsageError("--\(name) needs a value (\(flag.valueName))") }
                value = arguments[index]
                index += 1
            }
            parsed.values[name] = value
            parsed.sources[name] = "--\(name)"
        }
        for flag in flags where parsed.values[flag.name] == nil {
            if let value = environment[flag.environmentVariable], !value.isEmpty {
                parsed.values[flag.name] = value
                parsed.sources[flag.name] = flag.environmentVariable
            }
        }
        return parsed
    }
}
