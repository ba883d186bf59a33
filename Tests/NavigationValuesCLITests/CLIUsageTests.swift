import Foundation
import NavigationValuesWire
import TestSupport
import Testing

/// Help, version and bad usage: exact output and exit codes (argument-parser's `AssertExecuteCommand`).
/// Help is swift-argument-parser's; its messages for what it finds wrong (an unknown option, a
/// missing value, an extra argument) are its own, in this CLI's form.
@Suite struct CLIUsageTests {
    static let commands = ["serve", "migrate", "replay", "export", "prune", "healthcheck"]

    @Test func helpListsEveryCommandOnStdoutAndExitsZero() async throws {
        let outcome = try await run(["--help"])
        #expect(outcome.status == 0)
        #expect(outcome.stderr == "")
        #expect(outcome.stdout.hasPrefix("OVERVIEW: A NavigationValues session server, version 0.1.0.\n"))
        #expect(outcome.stdout.contains("USAGE: navigation-values [--version] <subcommand>"))
        for command in Self.commands { #expect(outcome.stdout.contains("\n  \(command) "), "\(command)") }
        #expect(try await run(["-h"]) == outcome)
    }

    @Test(arguments: commands)
    func everyCommandHasHelpNamingEachFlagAndItsVariable(command: String) async throws {
        let outcome = try await run([command, "--help"])
        #expect(outcome.status == 0)
        #expect(outcome.stderr == "")
        #expect(outcome.stdout.hasPrefix("OVERVIEW: "))
        #expect(outcome.stdout.contains("\nUSAGE: navigation-values \(command)"))
        let flags = outcome.stdout.matches(of: #/\n  --([a-z-]+) /#).map { String($0.output.1) }
        #expect(!flags.isEmpty)
        for flag in flags {
            let variable = "NAVIGATION_VALUES_" + flag.uppercased().replacingOccurrences(of: "-", with: "_")
            #expect(outcome.stdout.contains("env: \(variable)\n"), "\(command) --\(flag)")
        }
    }

    @Test func serveHelpNamesEveryFlagOfAPIMarkdown() async throws {
        let outcome = try await run(["serve", "--help"])
        for flag in [
            "host", "port", "db", "admin-token", "schema", "sync", "log-format", "log-level", "cors-origins",
            "ticket-lifetime", "max-observers", "max-copied-events", "wal-checkpoint-pages",
        ] {
            #expect(outcome.stdout.contains("\n  --\(flag) "), "--\(flag)")
        }
    }

    @Test func versionPrintsTheVersion() async throws {
        let expected = "navigation-values \(NavigationValuesVersion.current)\n"
        #expect(try await run(["--version"]) == Outcome(status: 0, stdout: expected, stderr: ""))
    }

    @Test func noCommandPrintsHelpOnStderrAndExitsTwo() async throws {
        let outcome = try await run([])
        #expect(outcome.status == 2)
        #expect(outcome.stdout == "")
        #expect(outcome.stderr.contains("USAGE: navigation-values [--version] <subcommand>"))
    }

    @Test func anUnknownCommandIsAUsageError() async throws {
        #expect(
            try await run(["frobnicate"])
                == Outcome(
                    status: 2, stdout: "",
                    stderr: "error: unknown command 'frobnicate'\nRun 'navigation-values --help' for the commands.\n"))
        #expect(try await run(["--bogus"]).stderr.hasPrefix("error: unknown option '--bogus'\n"))
    }

    @Test func anUnknownFlagIsAUsageErrorNamingIt() async throws {
        #expect(
            try await run(["serve", "--bogus=1"])
                == Outcome(
                    status: 2, stdout: "",
                    stderr: "error: unknown option '--bogus'\nRun 'navigation-values serve --help' for usage.\n"))
        #expect(try await run(["migrate", "-x"]).stderr.hasPrefix("error: unknown option '-x'\n"))
    }

    @Test(arguments: [
        (["serve", "--port", "70000"], "--port must be an integer from 0 to 65535, not '70000'"),
        (["serve", "--port"], "missing value for '--port <P>'"),
        (["serve", "--sync", "fast"], "--sync must be normal or full, not 'fast'"),
        (["serve", "--log-format", "xml"], "--log-format must be text or json, not 'xml'"),
        (["serve", "--log-level", "loud"], "--log-level must be debug or info or warning or error, not 'loud'"),
        (["serve", "--port", "1", "--port", "2"], "--port is given more than once"),
        (["serve", "extra"], "unexpected argument 'extra'"),
        (
            ["serve", "--cors-origins", "https://a.example,a.example"],
            "--cors-origins: 'a.example' is not an origin: write scheme://host[:port] (no path, no trailing slash), or *"
        ),
        (["serve", "--ticket-lifetime", "0"], "--ticket-lifetime must be an integer from 1 to 3600, not '0'"),
        (["serve", "--max-observers", "none"], "--max-observers must be an integer from 1 to 100000, not 'none'"),
        (
            ["serve", "--max-copied-events", "-1"],
            "--max-copied-events must be an integer from 1 to 10000000, not '-1'"
        ),
        (["serve", "--max-stacks", "0"], "--max-stacks must be an integer from 1 to 10000, not '0'"),
        (
            ["serve", "--wal-checkpoint-pages", "0"],
            "--wal-checkpoint-pages must be an integer from 1 to 1000000, not '0'"
        ),
        (
            ["serve", "--max-presentation-depth", "deep"],
            "--max-presentation-depth must be an integer from 0 to 1000, not 'deep'"
        ),
        (
            ["serve", "--max-batch-operations", "10001"],
            "--max-batch-operations must be an integer from 1 to 10000, not '10001'"
        ),
        (["migrate"], "migrate needs --db PATH"),
        (["replay", "s_1"], "replay needs --db PATH"),
        (["export", "s_1"], "export needs --db PATH"),
        (["export", "--db", "x.sqlite", "s_1", "--versions", "2"], "--versions needs --as-test"),
        (
            ["export", "--db", "x.sqlite", "s_1", "--as-test", "--versions", "0,2"],
            "--versions must list event numbers of at least 1, such as 1,5,9, not '0,2'"
        ),
        (["export", "--db", "x.sqlite", "s_1", "--as-test=yes"], "the option '--as-test' does not take any value, but 'yes' was specified."),
        (["replay", "--db", "x.sqlite"], "replay needs a SESSION id"),
        (
            ["replay", "--db", "x.sqlite", "s_1", "--at", "0"],
            "--at must be an integer from 1 to 9223372036854775807, not '0'"
        ),
    ])
    func badValuesAreUsageErrors(arguments: [String], message: String) async throws {
        let command = arguments[0]
        #expect(
            try await run(arguments)
                == Outcome(
                    status: 2, stdout: "",
                    stderr: "error: \(message)\nRun 'navigation-values \(command) --help' for usage.\n"))
    }

    @Test func aBadEnvironmentVariableIsAUsageErrorNamingTheVariable() async throws {
        let outcome = try await run(["serve"], environment: ["NAVIGATION_VALUES_PORT": "eighty"])
        #expect(outcome.status == 2)
        #expect(
            outcome.stderr.hasPrefix("error: NAVIGATION_VALUES_PORT must be an integer from 0 to 65535, not 'eighty'\n")
        )
    }
}
