import Foundation

/// One subcommand: its static description, a validating initialiser (bad usage throws
/// `UsageError`, exit 2) kept apart from `run()` (failures throw `CommandFailure`, exit 1).
protocol Command: Sendable {
    static var name: String { get }
    /// One line for the command list.
    static var abstract: String { get }
    /// The synopsis after `navigation-values`, such as `migrate --db PATH`.
    static var synopsis: String { get }
    /// A paragraph or two for `COMMAND --help`.
    static var discussion: String { get }
    static var flags: [Flag] { get }

    /// Checks the arguments.
    /// - Throws: `UsageError` when they are wrong.
    init(_ arguments: ParsedArguments) throws(UsageError)

    /// Does the work and returns the exit status.
    /// - Throws: `CommandFailure` (or any error) when it fails; the CLI exits with status 1.
    func run() async throws -> Int32
}

extension Command {
    /// The text of `COMMAND --help`.
    static var help: String {
        var lines = ["USAGE: navigation-values \(synopsis)", "", discussion, "", "OPTIONS:"]
        let labels = flags.map { $0.isSwitch ? "--\($0.name)" : "--\($0.name) \($0.valueName)" } + ["-h, --help"]
        let width = (labels.map(\.count).max() ?? 0) + 2
        for (flag, label) in zip(flags, labels) {
            lines.append("  " + label.padding(toLength: width, withPad: " ", startingAt: 0) + flag.help)
            lines.append("  " + String(repeating: " ", count: width) + "env: \(flag.environmentVariable)")
        }
        lines.append("  " + "-h, --help".padding(toLength: width, withPad: " ", startingAt: 0) + "Show this help.")
        return lines.joined(separator: "\n")
    }
}
