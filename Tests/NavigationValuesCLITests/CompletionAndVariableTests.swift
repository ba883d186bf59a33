import Foundation
import TestSupport
import Testing

/// What swift-argument-parser adds (completion scripts, `help COMMAND`) and what this CLI adds to
/// it (every flag from its variable).
@Suite struct CompletionAndVariableTests {
    /// The commands `--help` lists.
    static func commands() async throws -> [String] {
        let help = try await run(["--help"]).stdout
        let section = help.components(separatedBy: "SUBCOMMANDS:\n").last ?? ""
        return section.matches(of: #/(?m)^  ([a-z]+) /#).map { String($0.output.1) }.filter { $0 != "help" }
    }

    /// The flags `COMMAND --help` lists (`--version` aside, which takes no value).
    static func flags(of command: String) async throws -> [String] {
        let help = try await run([command, "--help"]).stdout
        return help.matches(of: #/\n  --([a-z-]+) /#).map { String($0.output.1) }.filter { $0 != "version" }
    }

    /// What each command needs on the command line before it reads its other flags.
    static let required: [String: [String]] = [
        "serve": ["--db", "/nonexistent-folder/never-created.sqlite"],
        "migrate": ["--db", "/nonexistent-folder/x.sqlite"], "prune": ["--db", "/nonexistent-folder/x.sqlite"],
        "replay": ["--db", "/nonexistent-folder/x.sqlite", "s_1"], "backup": ["--db", "x", "--to", "y"],
        "restore": ["--from", "x", "--db", "y"], "healthcheck": ["--host", "127.0.0.1"],
    ]

    /// Flags that take any text, so no value is wrong before the work starts; each is read from
    /// its variable in other tests (`NAVIGATION_VALUES_DB` in the migrate and PostgreSQL tests,
    /// the tokens in SecretFileTests, `tls-cert`, which `healthcheck` only checks is set, in
    /// TLSServeTests).
    static let freeText: Set<String> = ["host", "db", "admin-token", "create-token", "to", "from", "tls-cert"]

    /// Every flag of every command is read from its variable: a wrong value there is a usage
    /// error naming the variable. A new flag that takes any text belongs in `freeText`, with a
    /// test of its own that reads it from its variable.
    @Test func everyFlagOfEveryCommandIsReadFromItsVariable() async throws {
        let commands = try await Self.commands()
        #expect(commands == ["serve", "migrate", "replay", "prune", "backup", "restore", "healthcheck"])
        for command in commands {
            let flags = try await Self.flags(of: command)
            #expect(!flags.isEmpty, "\(command)")
            for flag in flags
            where !Self.freeText.contains(flag) && !(Self.required[command] ?? []).contains("--\(flag)") {
                let variable = "NAVIGATION_VALUES_" + flag.uppercased().replacingOccurrences(of: "-", with: "_")
                let outcome = try await run(
                    [command] + (Self.required[command] ?? []), environment: [variable: "wrong"])
                #expect(outcome.status == 2, "\(command) \(variable)=wrong: \(outcome)")
                #expect(outcome.stderr.hasPrefix("error: \(variable)"), "\(command) \(variable)=wrong: \(outcome)")
            }
        }
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func aCompletionScriptIsPrintedForEachShell(shell: String) async throws {
        let outcome = try await run(["--generate-completion-script", shell])
        #expect(outcome.status == 0)
        #expect(outcome.stderr == "")
        for word in ["serve", "migrate", "replay", "prune", "backup", "healthcheck", "max-stacks", "admin-token-file"] {
            #expect(outcome.stdout.contains(word), "\(shell): \(word)")
        }
    }

    /// The bash script, sourced into a real bash, completes commands, flags and flag values.
    @Test func theBashScriptCompletesCommandsFlagsAndValues() async throws {
        let script = try await run(["--generate-completion-script", "bash"]).stdout
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-completion-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("navigation-values.bash")
        try Data(script.utf8).write(to: file)
        let driver = """
            source "$1"
            complete_line() {
                COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
                _navigation-values navigation-values "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                printf '%s\\n' "${COMPREPLY[@]}" | sort | tr '\\n' ' '; echo
            }
            complete -p navigation-values
            complete_line navigation-values mi
            complete_line navigation-values serve --max-st
            complete_line navigation-values serve --sync ''
            complete_line navigation-values serve --log-level w
            """
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"), arguments: ["-c", driver, "driver", file.path])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(
            outcome.stdout == """
                complete -o filenames -F _navigation-values navigation-values
                migrate\u{20}
                --max-stacks\u{20}
                full normal\u{20}
                warning\u{20}

                """)
    }

    @Test func helpCommandPrintsTheCommandsHelp() async throws {
        let outcome = try await run(["help", "migrate"])
        #expect(outcome.status == 0)
        #expect(outcome.stdout == (try await run(["migrate", "--help"])).stdout)
    }
}
