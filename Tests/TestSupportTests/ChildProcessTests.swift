import Foundation
import Testing

@testable import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// ChildProcess on real children (`/bin/sh`, coreutils): what it captures, how it reports an end,
/// what the child inherits, and what it refuses.
@Suite struct ChildProcessTests {
    private let shell = URL(fileURLWithPath: "/bin/sh")

    // MARK: - Output

    /// Each stream carries several times a pipe's 64 KiB, written by two writers at once: a
    /// launcher that drained one pipe after the other would deadlock, one that lost bytes would differ.
    @Test func stdoutAndStderrAreCapturedFullyWhileBothFillAtOnce() async throws {
        let outcome = try await ChildProcess.run(
            shell, arguments: ["-c", "seq 1 100000 & seq 1 100000 | sed 's/^/e/' >&2 & wait"], timeout: .seconds(120))
        let numbers = (1...100_000).map { "\($0)\n" }.joined()
        let errors = (1...100_000).map { "e\($0)\n" }.joined()
        #expect(numbers.utf8.count > 8 * 65_536)
        #expect(outcome.exit == .exited(0))
        #expect(outcome.stdout == numbers)
        #expect(outcome.stderr == errors)
    }

    @Test func linesArriveInOrderAndEndWithTheStream() async throws {
        let child = try ChildProcess(shell, arguments: ["-c", "printf 'one\\ntwo\\n\\nthree\\n'"])
        let lines = try await collect(4, of: child.lines)
        #expect(lines == ["one", "two", "", "three"])
        #expect(try await child.outcome() == .init(status: 0, stdout: "one\ntwo\n\nthree\n", stderr: ""))
    }

    // MARK: - Ending

    @Test func anExitStatusIsReported() async throws {
        let child = try ChildProcess(shell, arguments: ["-c", "echo out; echo err >&2; exit 3"])
        #expect(try await child.outcome() == .init(status: 3, stdout: "out\n", stderr: "err\n"))
        #expect(!child.isRunning)
    }

    @Test func killEndsTheChildWithSIGKILL() async throws {
        let child = try ChildProcess(URL(fileURLWithPath: "/bin/sleep"), arguments: ["600"])
        #expect(child.isRunning)
        child.kill()
        #expect(try await child.waitForExit() == .signalled(SIGKILL))
        #expect(!child.isRunning)
        // Once reaped, nothing more is sent to its pid (which another process may get next).
        child.kill()
        #expect(try await child.waitForExit() == .signalled(SIGKILL))
    }

    /// SIGTERM's default action ends the child: it inherits no handler and no block from us.
    @Test func aSignalReachesTheChild() async throws {
        let child = try ChildProcess(URL(fileURLWithPath: "/bin/sleep"), arguments: ["600"])
        child.signal(SIGTERM)
        #expect(try await child.waitForExit() == .signalled(SIGTERM))
    }

    @Test func waitingPastTheTimeoutKillsTheChild() async throws {
        let child = try ChildProcess(URL(fileURLWithPath: "/bin/sleep"), arguments: ["600"])
        await #expect(throws: TestTimeout.self) { try await child.waitForExit(timeout: .milliseconds(100)) }
        #expect(try await child.waitForExit() == .signalled(SIGKILL))
    }

    /// The end is known when the child ends, not when its pipes close: here a grandchild keeps them open.
    @Test func theExitIsReportedWhileAGrandchildStillHoldsThePipes() async throws {
        let child = try ChildProcess(shell, arguments: ["-c", "sleep 600 & echo $!"])
        let grandchild = try #require(pid_t(try await first(of: child.lines)))
        #expect(try await child.waitForExit() == .exited(0))
        #expect(kill(grandchild, SIGKILL) == 0)  // still running, holding stdout and stderr
        #expect(await child.standardOutput.text() == "\(grandchild)\n")
    }

    @Test func waitStatusesDecodeAsTheSysWaitMacrosDo() {
        #expect(WaitStatus(rawValue: 0x0000).exit == .exited(0))
        #expect(WaitStatus(rawValue: 0x0300).exit == .exited(3))
        #expect(WaitStatus(rawValue: 0xFF00).exit == .exited(255))
        #expect(WaitStatus(rawValue: 0x0009).exit == .signalled(SIGKILL))
        #expect(WaitStatus(rawValue: 0x0080 | SIGSEGV).exit == .signalled(SIGSEGV))  // core dumped
    }

    /// Fifty children at once, from many threads: each is reaped with its own status and output.
    @Test func concurrentChildrenAreEachReapedWithTheirOwnStatus() async throws {
        let outcomes = try await withThrowingTaskGroup(of: (Int32, ChildProcess.Outcome).self) { group in
            for status in Int32(0)..<50 {
                group.addTask {
                    let outcome = try await ChildProcess.run(
                        shell, arguments: ["-c", "echo \(status); echo e\(status) >&2; exit \(status)"],
                        timeout: .seconds(120))
                    return (status, outcome)
                }
            }
            var outcomes: [Int32: ChildProcess.Outcome] = [:]
            for try await (status, outcome) in group { outcomes[status] = outcome }
            return outcomes
        }
        #expect(outcomes.count == 50)
        for status in Int32(0)..<50 {
            #expect(outcomes[status] == .init(status: status, stdout: "\(status)\n", stderr: "e\(status)\n"))
        }
    }

    // MARK: - What the child gets

    @Test func theChildSeesExactlyTheEnvironmentGiven() async throws {
        let environment = ["ALPHA": "1", "WITH_SPACES": "two words", "EMPTY": "", "LINES": "one\ntwo", "EQ": "a=b"]
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"), arguments: ["-0"], environment: environment)
        #expect(outcome.exit == .exited(0))
        #expect(try Self.environment(fromNulSeparated: outcome.stdout) == environment)
    }

    @Test func withoutAnEnvironmentTheChildGetsOurs() async throws {
        let outcome = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), arguments: ["-0"])
        #expect(outcome.exit == .exited(0))
        #expect(try Self.environment(fromNulSeparated: outcome.stdout) == ProcessInfo.processInfo.environment)
    }

    @Test func theChildRunsInTheDirectoryGiven() async throws {
        try await withTemporaryFolder { folder in
            let outcome = try await ChildProcess.run(
                URL(fileURLWithPath: "/bin/pwd"), arguments: ["-P"], directory: folder)
            #expect(outcome == .init(status: 0, stdout: folder.resolvingSymlinksInPath().path + "\n", stderr: ""))
        }
        let ours = try await ChildProcess.run(URL(fileURLWithPath: "/bin/pwd"), arguments: ["-P"])
        #expect(
            ours.stdout == URL(fileURLWithPath: FileManager.default.currentDirectoryPath).resolvingSymlinksInPath().path
                + "\n")
    }

    /// A descriptor of ours without FD_CLOEXEC (the test process holds many: other suites' sockets)
    /// does not reach the child, which holds its stdin (/dev/null), stdout and stderr, and no more.
    @Test func noDescriptorOfOursReachesTheChild() async throws {
        let devNull = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(devNull >= 0)
        let inheritable = fcntl(devNull, F_DUPFD, 300)  // F_DUPFD leaves FD_CLOEXEC clear on the copy
        close(devNull)
        try #require(inheritable >= 300)
        defer { close(inheritable) }
        try #require(fcntl(inheritable, F_GETFD) & FD_CLOEXEC == 0)

        let child = try ChildProcess(URL(fileURLWithPath: "/bin/sleep"), arguments: ["600"])
        defer { child.kill() }
        let descriptors = "/proc/\(child.processIdentifier)/fd"
        // Until `sleep` runs (setpriv and the loader open files of their own meanwhile); a leaked
        // descriptor would stay there for good and the wait would time out.
        let settled = try await eventually {
            (try? FileManager.default.contentsOfDirectory(atPath: descriptors).sorted()) == ["0", "1", "2"]
        }
        let seen = (try? FileManager.default.contentsOfDirectory(atPath: descriptors).sorted()) ?? []
        #expect(settled, "the child's descriptors: \(seen)")
        #expect(!seen.contains("\(inheritable)"))
        let stdin = try FileManager.default.destinationOfSymbolicLink(atPath: "\(descriptors)/0")
        let stdout = try FileManager.default.destinationOfSymbolicLink(atPath: "\(descriptors)/1")
        let stderr = try FileManager.default.destinationOfSymbolicLink(atPath: "\(descriptors)/2")
        #expect(stdin == "/dev/null")
        #expect(stdout.hasPrefix("pipe:") && stderr.hasPrefix("pipe:") && stdout != stderr)
    }

    /// The child starts with no blocked signal and none ignored, though we ignore SIGPIPE (as
    /// servers do): `cat` reads its own masks from /proc.
    @Test func theChildInheritsNoSignalMaskNorIgnoredSignal() async throws {
        signal(SIGPIPE, SIG_IGN)
        let ours = try Self.signalMasks(in: String(contentsOfFile: "/proc/self/status", encoding: .utf8))
        try #require(ours.ignored & Self.bit(SIGPIPE) != 0)
        let outcome = try await ChildProcess.run(URL(fileURLWithPath: "/bin/cat"), arguments: ["/proc/self/status"])
        #expect(outcome.exit == .exited(0))
        let child = try Self.signalMasks(in: outcome.stdout)
        #expect(child.blocked == 0)
        // glibc's posix_spawn leaves its two internal signals (32, 33: thread cancellation and
        // setxid, which no program may use) ignored in the child when we handle them, and refuses
        // them in a sigset_t: a program of glibc's installs its own handlers when it needs them.
        #expect(child.ignored & ~(Self.bit(32) | Self.bit(33)) == 0, "SigIgn: \(String(child.ignored, radix: 16))")
    }

    // MARK: - Refusals

    @Test func aMissingExecutableThrowsWithItsPath() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/tool"
        let error = try #require(throws: ChildProcessError.self) { try ChildProcess(URL(fileURLWithPath: missing)) }
        #expect(error.description.contains(missing))
        #expect(error.description.contains("No such file or directory"))
    }

    @Test func aFileThatIsNotExecutableThrowsPermissionDenied() async throws {
        try await withTemporaryFolder { folder in
            let script = folder.appendingPathComponent("script.sh")
            try "#!/bin/sh\necho hi\n".write(to: script, atomically: true, encoding: .utf8)
            let error = try #require(throws: ChildProcessError.self) { try ChildProcess(script) }
            #expect(error.description.contains(script.path))
            #expect(error.description.contains("Permission denied"))
            let folderError = try #require(throws: ChildProcessError.self) { try ChildProcess(folder) }
            #expect(folderError.description.contains("Permission denied"))
        }
    }

    @Test func aMissingDirectoryThrowsWithItsPath() throws {
        let missing = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)")
        let error = try #require(throws: ChildProcessError.self) {
            try ChildProcess(URL(fileURLWithPath: "/bin/pwd"), directory: missing)
        }
        #expect(error.description.contains(missing.path))
        #expect(error.description.contains("No such file or directory"))
    }

    @Test func anArgumentHoldingANulByteIsRefused() throws {
        let error = try #require(throws: ChildProcessError.self) {
            try ChildProcess(URL(fileURLWithPath: "/bin/echo"), arguments: ["a\u{0}b"])
        }
        #expect(error.description.contains("NUL"))
    }

    // MARK: - Helpers

    private static func environment(fromNulSeparated text: String) throws -> [String: String] {
        var environment: [String: String] = [:]
        for entry in text.split(separator: "\0", omittingEmptySubsequences: true) {
            let equals = try #require(entry.firstIndex(of: "="), "no '=' in \(entry)")
            environment[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        return environment
    }

    /// The SigBlk and SigIgn masks of a /proc/PID/status text.
    private static func signalMasks(in status: String) throws -> (blocked: UInt64, ignored: UInt64) {
        func mask(_ name: String) throws -> UInt64 {
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("\(name):") })
            return try #require(UInt64(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16))
        }
        return (try mask("SigBlk"), try mask("SigIgn"))
    }

    /// Signal `number`'s bit in a /proc signal mask.
    private static func bit(_ number: Int32) -> UInt64 { 1 << UInt64(number - 1) }

    private func withTemporaryFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder)
    }
}
