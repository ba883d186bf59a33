import ArgumentParser
import Foundation
import NavigationValuesCrypto
import NavigationValuesWire

/// The `navigation-values` executable (docs/Operations.md, "The executable"): its commands, help and
/// completion scripts from swift-argument-parser; its exit statuses its own: 0 success (help,
/// version and completion scripts included), 1 failure, 2 bad usage.
struct NavigationValuesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "navigation-values",
        abstract: "A NavigationValues session server, version \(NavigationValuesVersion.current).",
        discussion: """
            Every flag --NAME can also be set with NAVIGATION_VALUES_NAME (capitals, _ for -); the flag wins.
            Completion scripts: navigation-values --generate-completion-script bash|zsh|fish.
            """,
        subcommands: [
            Serve.self, Migrate.self, Replay.self, Export.self, Prune.self, Backup.self, Restore.self,
            HealthCheck.self,
        ])

    // The root's own flag, not swift-argument-parser's `version:` (which every subcommand's help
    // would list too, though only the root takes it).
    @Flag(help: "Print the version.") var version = false

    func run() throws {
        guard version else { throw CleanExit.helpRequest(self) }
        Console.out("navigation-values \(NavigationValuesVersion.current)")
    }
}

enum NavigationValuesCLI {
    static func main(_ arguments: [String], environment: [String: String]) async -> Int32 {
        guard let first = arguments.first else {
            Console.error(NavigationValuesCommand.helpMessage())
            return 2
        }
        let names = NavigationValuesCommand.configuration.subcommands.map { $0._commandName } + ["help"]
        let subcommand = names.contains(first) ? first : nil
        let command: any ParsableCommand
        do throws(UsageError) {
            if subcommand == nil, !first.hasPrefix("-") { throw UsageError("unknown command '\(first)'") }
            try rejectRepeatedFlags(arguments)
            do {
                command = try NavigationValuesCommand.parseAsRoot(splittingEmptyValues(arguments))
            } catch {
                if NavigationValuesCommand.exitCode(for: error) == .success {
                    Console.out(NavigationValuesCommand.fullMessage(for: error))
                    return 0
                }
                // swift-argument-parser's message ("Unknown option '--bogus'") in this CLI's form.
                let message = NavigationValuesCommand.message(for: error)
                throw UsageError(message.prefix(1).lowercased() + message.dropFirst())
            }
        } catch {
            usage(error, subcommand)
            return 2
        }
        // Every command hashes (tokens, migration checksums): a libcrypto without its algorithms
        // is a clear error here, before any work, not a trap on the first hash. (The root's
        // `--version` and `help` need none.)
        if command is any Command {
            do throws(CryptoError) {
                try CryptoAvailability.check()
            } catch {
                Console.error("error: \(error)")
                return 1
            }
        }
        do {
            if let command = command as? any Command {
                try await command.run(ParsedArguments(command, environment: environment))
            } else {
                // The root (`--version`), or `help COMMAND`, whose run throws the help it prints.
                var command = command
                try command.run()
            }
            return 0
        } catch let error as UsageError {
            usage(error, subcommand)
            return 2
        } catch let failure as CommandFailure {
            Console.error("error: \(failure.message)")
            return 1
        } catch {
            let status = NavigationValuesCommand.exitCode(for: error)
            if status == .success {
                Console.out(NavigationValuesCommand.fullMessage(for: error))
            } else {
                Console.error("error: \(error)")
            }
            return status.rawValue
        }
    }

    /// Writes a usage error and where to read the usage.
    static func usage(_ error: UsageError, _ subcommand: String?) {
        if let subcommand, subcommand != "help" {
            Console.error("error: \(error.message)\nRun 'navigation-values \(subcommand) --help' for usage.")
        } else {
            Console.error("error: \(error.message)\nRun 'navigation-values --help' for the commands.")
        }
    }

    /// `--name=` as `--name ""`: swift-argument-parser reads the first as a flag without its
    /// value, while it is an empty one, which the command then names (`--admin-token is empty`).
    static func splittingEmptyValues(_ arguments: [String]) -> [String] {
        let flags = arguments.prefix { $0 != "--" }
        return flags.flatMap { $0.hasPrefix("--") && $0.hasSuffix("=") ? [String($0.dropLast()), ""] : [$0] }
            + arguments.dropFirst(flags.count)
    }

    /// A flag given twice is an error, not the last one winning: in a long command line or a
    /// script, which of two `--db` was meant is better asked than guessed.
    /// - Throws: `UsageError` naming the flag.
    static func rejectRepeatedFlags(_ arguments: [String]) throws(UsageError) {
        var seen: Set<Substring> = []
        for argument in arguments.prefix(while: { $0 != "--" }) where argument.hasPrefix("--") {
            let name = argument.dropFirst(2).prefix { $0 != "=" }
            guard seen.insert(name).inserted else { throw UsageError("--\(name) is given more than once") }
        }
    }
}

exit(
    await NavigationValuesCLI.main(
        Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
