import Foundation
import NavigationValuesCrypto
import NavigationValuesWire

/// The `navigation-values` executable (docs/API.md, The executable). Exit status: 0 success, 1 failure,
/// 2 bad usage.
enum NavigationValuesCLI {
    static let version = NavigationValuesVersion.current
    static let commands: [any Command.Type] = [Serve.self, Migrate.self, Replay.self, Prune.self, HealthCheck.self]

    static var help: String {
        let width = (commands.map { $0.name.count }.max() ?? 0) + 2
        var lines = [
            "navigation-values \(version): a NavigationValues session server", "",
            "USAGE: navigation-values COMMAND [OPTIONS]", "", "COMMANDS:",
        ]
        for command in commands {
            lines.append("  " + command.name.padding(toLength: width, withPad: " ", startingAt: 0) + command.abstract)
        }
        lines += [
            "", "OPTIONS:", "  -h, --help    Show this help.", "  --version     Print the version.", "",
            "Every flag --NAME can also be set with NAVIGATION_VALUES_NAME (capitals, _ for -); the flag wins.",
            "See 'navigation-values COMMAND --help'.",
        ]
        return lines.joined(separator: "\n")
    }

    static func main(_ arguments: [String], environment: [String: String]) async -> Int32 {
        guard let first = arguments.first else {
            Console.error(help)
            return 2
        }
        switch first {
        case "-h", "--help", "help":
            Console.out(help)
            return 0
        case "--version":
            Console.out("navigation-values \(version)")
            return 0
        default:
            break
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            let what = first.hasPrefix("-") ? "unknown option" : "unknown command"
            Console.error("error: \(what) '\(first)'\nRun 'navigation-values --help' for the commands.")
            return 2
        }
        return await run(command, Array(arguments.dropFirst()), environment: environment)
    }

    static func run(_ command: any Command.Type, _ arguments: [String], environment: [String: String]) async -> Int32 {
        let instance: any Command
        do throws(UsageError) {
            let parsed = try ArgumentParser.parse(arguments, flags: command.flags, environment: environment)
            if parsed.isHelpRequested {
                Console.out(command.help)
                return 0
            }
            instance = try command.init(parsed)
        } catch {
            Console.error("error: \(error.message)\nRun 'navigation-values \(command.name) --help' for usage.")
            return 2
        }
        // Every command hashes (tokens, migration checksums): a libcrypto without its algorithms
        // is a clear error here, before any work, not a trap on the first hash.
        do throws(CryptoError) {
            try CryptoAvailability.check()
        } catch {
            Console.error("error: \(error)")
            return 1
        }
        do {
            return try await instance.run()
        } catch let failure as CommandFailure {
            Console.error("error: \(failure.message)")
            return 1
        } catch {
            Console.error("error: \(error)")
            return 1
        }
    }
}

exit(
    await NavigationValuesCLI.main(
        Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
