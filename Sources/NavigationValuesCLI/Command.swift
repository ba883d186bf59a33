import ArgumentParser
import Foundation

/// One subcommand: swift-argument-parser declares its flags (each an
/// `@Option(.flag("name", "VALUE", "What it does.")) var name: String?`) and parses the command line; `run(_:)` reads them, with their variables,
/// from `ParsedArguments`, checks them first (bad usage throws `UsageError`, exit 2), then does the
/// work (failures throw `CommandFailure`, exit 1).
protocol Command: AsyncParsableCommand, FlagValues {
    /// Does the work with the flags given on the command line, else in the environment.
    /// - Throws: `UsageError` for a bad value, before any work; `CommandFailure` (or any error)
    ///   when the work fails.
    func run(_ arguments: ParsedArguments) async throws
}

extension Command {
    /// What swift-argument-parser would call: the flags with the process's own environment.
    /// The executable calls `run(_:)` itself (`NavigationValuesCLI.main`), for its exit codes.
    mutating func run() async throws {
        try await run(ParsedArguments(self, environment: ProcessInfo.processInfo.environment))
    }
}
