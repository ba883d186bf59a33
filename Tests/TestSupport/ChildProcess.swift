import CSpawn
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The repository's root folder, found from this file's path.
public let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Why a child process could not be run or did not do what was expected.
public struct ChildProcessError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String

    /// An error that says what went wrong.
    public init(_ description: String) { self.description = description }
}

/// A child process (a built executable of this package, or a system tool) with its stdout and
/// stderr read to their ends on threads of their own, so the child never blocks on a full pipe.
///
/// Spawned with posix_spawn(3), never Foundation's `Process` (whose child setup in
/// swift-corelibs-foundation 6.3 can crash the whole test process): stdin reads /dev/null, and
/// no descriptor of the test process but the two pipes reaches the child, CLOEXEC or not.
///
/// No child outlives the test process: every child gets SIGKILL as its parent-death signal
/// (`setpriv --pdeathsig KILL`, util-linux), so a test process that crashes or is killed leaves
/// no server holding `swift test`'s pipes; `deinit` kills a child still running.
///
/// ```swift
/// let server = try ChildProcess(built: "api-crash-server", arguments: ["--db", path, "--admin-token", "a"])
/// let url = try await server.listeningURL()
/// server.kill()
/// #expect(try await server.waitForExit() == .signalled(SIGKILL))
/// ```
public final class ChildProcess: Sendable {
    /// How a child ended.
    public enum Exit: Equatable, Sendable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal with this number killed it.
        case signalled(Int32)

        /// `exit 0`, `signal 9`.
        public var description: String {
            switch self {
            case .exited(let status): "exit \(status)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    /// What a finished child printed, and how it ended.
    public struct Outcome: Equatable, Sendable, CustomStringConvertible {
        /// How it ended.
        public var exit: Exit
        /// Everything it wrote to stdout.
        public var stdout: String
        /// Everything it wrote to stderr.
        public var stderr: String

        /// The exit status, or the number of the signal that killed it.
        public var status: Int32 {
            switch exit {
            case .exited(let status), .signalled(let status): status
            }
        }

        /// The exit and both outputs, for a failure message.
        public var description: String { "\(exit)\nstdout:\n\(stdout)\nstderr:\n\(stderr)" }
    }

    /// The child's process id.
    public let processIdentifier: Int32
    /// The child's stdout.
    public let standardOutput: ChildOutput
    /// The child's stderr.
    public let standardError: ChildOutput
    private let ending: Ending

    /// Starts `executable` with `arguments`, in `directory` (default: ours), with `environment`
    /// (default: ours) and stdin reading nothing.
    ///
    /// - Throws: ``ChildProcessError`` with the path and strerror(3) when the child cannot start:
    ///   `executable` or `directory` missing (ENOENT), not executable (EACCES).
    public init(
        _ executable: URL, arguments: [String] = [], environment: [String: String]? = nil, directory: URL? = nil
    ) throws {
        try checkRunnable(executable.path, in: directory?.path)
        let path: String
        let argv: [String]
        if Self.hasSetpriv {
            path = Self.setpriv
            argv = [Self.setpriv, "--pdeathsig", "KILL", "--", executable.path] + arguments
        } else {
            path = executable.path
            argv = [executable.path] + arguments
        }
        let output = try PipeEnds()
        let errorOutput: PipeEnds
        do { errorOutput = try PipeEnds() } catch {
            output.close()
            throw error
        }
        let request = SpawnRequest(
            path: path, arguments: argv,
            environment: environment.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } },
            directory: directory?.path, standardOutput: output.write, standardError: errorOutput.write)
        do { processIdentifier = try Spawner.spawn(request) } catch {
            output.close()
            errorOutput.close()
            throw error
        }
        // The child holds its own copies now: the pipes reach their ends when it (and whatever it
        // started) closes them.
        close(output.write)
        close(errorOutput.write)
        let ending = Ending(processIdentifier: processIdentifier)
        self.ending = ending
        // Each ChildOutput owns its read end from here, closing it even when it cannot start.
        let abandon = {
            ending.send(SIGKILL)
            ending.reap()
        }
        do { standardOutput = try ChildOutput(readingFrom: output.read) } catch {
            close(errorOutput.read)
            abandon()
            throw error
        }
        do {
            standardError = try ChildOutput(readingFrom: errorOutput.read)
            try startThread(named: "ChildReaper") { ending.reap() }
        } catch {
            abandon()
            throw error
        }
    }

    /// Starts the executable `name` built beside the tests (see ``builtProduct(named:)``).
    public convenience init(
        built name: String, arguments: [String] = [], environment: [String: String]? = nil, directory: URL? = nil
    ) throws {
        try self.init(
            Self.builtProduct(named: name), arguments: arguments, environment: environment, directory: directory)
    }

    deinit {
        ending.send(SIGKILL)
    }

    private static let setpriv = "/usr/bin/setpriv"
    private static let hasSetpriv = access(setpriv, X_OK) == 0

    /// The executable `name` in the build folder (`.build/debug`): beside the test bundle, or
    /// beside the running test binary. A test target that runs one depends on its target, so
    /// `swift build --build-tests` builds it.
    public static func builtProduct(named name: String) throws -> URL {
        var folders: [URL] = Bundle.allBundles.filter { $0.bundlePath.hasSuffix(".xctest") }
            .map { $0.bundleURL.deletingLastPathComponent() }
        folders.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent())
        folders.append(repositoryRoot.appendingPathComponent(".build/debug"))
        for folder in folders {
            let url = folder.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw ChildProcessError("\(name) not found in \(folders.map(\.path)); build with --build-tests")
    }

    /// The toolchain's `tool` (`swiftc`, `swift`): `<toolchain>/usr/bin/tool`, found from the Swift
    /// runtime this process links (`<toolchain>/usr/lib/swift/linux/libswiftCore.so`); the
    /// environment variable `variable`, when set, names another.
    public static func toolchain(_ tool: String, overriddenBy variable: String) throws -> URL {
        if let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        // FileHandle reads to the end; `String(contentsOfFile:)` stops at 4 KiB on /proc files.
        let maps = String(
            decoding: FileHandle(forReadingAtPath: "/proc/self/maps")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        let suffix = "/lib/swift/linux/libswiftCore.so"
        guard let line = maps.split(separator: "\n").first(where: { $0.hasSuffix(suffix) }),
            let start = line.firstIndex(of: "/")
        else {
            throw ChildProcessError("no libswiftCore.so in /proc/self/maps; set \(variable)")
        }
        return URL(fileURLWithPath: String(line[start...].dropLast(suffix.count)) + "/bin/" + tool)
    }

    // MARK: - Output

    /// The child's stdout lines as they come (one reader at a time).
    public var lines: AsyncStream<String> { standardOutput.lines }

    /// Reads stdout lines until one matches `predicate` and returns it. Throws when the child's
    /// stdout ends first (with its stderr in the message) or after `timeout`.
    public func line(
        timeout: Duration = .seconds(30), where predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        let lines = self.lines
        let found = try await withTimeout(timeout, "a matching line on the child's stdout") { () async -> String? in
            for await line in lines where predicate(line) { return line }
            return nil
        }
        guard let found else {
            let stderr = await standardError.text()
            throw ChildProcessError("the child's stdout ended without the line; stderr:\n\(stderr)")
        }
        return found
    }

    /// The address of the child's `listening on http://H:P` line, waiting at most `timeout`.
    public func listeningURL(timeout: Duration = .seconds(30)) async throws -> URL {
        let prefix = "listening on "
        let line = try await self.line(timeout: timeout) { $0.hasPrefix(prefix) }
        guard let url = URL(string: String(line.dropFirst(prefix.count))), url.port != nil else {
            throw ChildProcessError("not an address: \(line)")
        }
        return url
    }

    // MARK: - Ending

    /// Whether the child still runs.
    public var isRunning: Bool { ending.exit == nil }

    /// Sends `signal` to the child, unless it has ended (never to another process given its pid).
    public func signal(_ signal: Int32) {
        ending.send(signal)
    }

    /// Kills the child with SIGKILL (`kill -9`).
    public func kill() { signal(SIGKILL) }

    /// Waits for the child to end; after `timeout`, kills it and throws ``TestTimeout``.
    public func waitForExit(timeout: Duration = .seconds(30)) async throws -> Exit {
        let killChild: @Sendable () -> Void = { [ending] in ending.send(SIGKILL) }
        return try await withTimeout(timeout, "the child's exit", onTimeout: killChild) { [ending] in
            await ending.wait()
        }
    }

    /// Waits for the child to end (see ``waitForExit(timeout:)``) and returns what it printed.
    public func outcome(timeout: Duration = .seconds(30)) async throws -> Outcome {
        let exit = try await waitForExit(timeout: timeout)
        return Outcome(exit: exit, stdout: await standardOutput.text(), stderr: await standardError.text())
    }

    /// Runs a tool (`/usr/bin/sha256sum`, say), with `environment` (default: ours), to its end and
    /// returns its stdout; throws ``ChildProcessError`` with what it printed when it does not exit 0.
    public static func output(
        of executable: URL, arguments: [String] = [], environment: [String: String]? = nil
    ) async throws -> String {
        let outcome = try await run(executable, arguments: arguments, environment: environment)
        guard outcome.exit == .exited(0) else {
            throw ChildProcessError("\(executable.path) \(arguments) ended with \(outcome)")
        }
        return outcome.stdout
    }

    /// Runs `executable` to its end and returns what it printed (see ``init(_:arguments:environment:directory:)``).
    public static func run(
        _ executable: URL, arguments: [String] = [], environment: [String: String]? = nil, directory: URL? = nil,
        timeout: Duration = .seconds(30)
    ) async throws -> Outcome {
        try await ChildProcess(executable, arguments: arguments, environment: environment, directory: directory)
            .outcome(timeout: timeout)
    }
}

/// What a child writes to one pipe, read to its end on a thread of its own: as lines while they
/// come, and as a whole once the pipe closes.
public final class ChildOutput: Sendable {
    /// Complete lines, as they arrive; finishes when the pipe closes. One reader at a time.
    public let lines: AsyncStream<String>
    private let state = Mutex<(bytes: [UInt8], isClosed: Bool, waiters: [CheckedContinuation<Void, Never>])>(
        ([], false, []))

    /// Reads `descriptor` (the read end of a pipe, which this output then owns) to its end with
    /// read(2) on a thread of its own, and closes it there. When that thread cannot start, closes
    /// the descriptor and throws.
    init(readingFrom descriptor: Int32) throws {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        self.lines = lines
        do {
            try startThread(named: "ChildOutput") { [self] in
                read(from: descriptor, lines: continuation)
            }
        } catch {
            close(descriptor)
            throw error
        }
    }

    private func read(from descriptor: Int32, lines: AsyncStream<String>.Continuation) {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            state.withLock { $0.bytes += chunk[..<count] }
            pending += chunk[..<count]
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                lines.yield(String(decoding: pending[start..<newline], as: UTF8.self))
                start = newline + 1
            }
            pending.removeSubrange(..<start)
        }
        close(descriptor)
        lines.finish()
        let waiters = state.withLock { state in
            state.isClosed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits for the pipe to close (the child exited, or closed it) and returns all it carried.
    public func text() async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isClosed = state.withLock { state in
                if !state.isClosed { state.waiters.append(continuation) }
                return state.isClosed
            }
            if isClosed { continuation.resume() }
        }
        return String(decoding: state.withLock { $0.bytes }, as: UTF8.self)
    }
}

extension ChildProcess.Outcome {
    /// An outcome that exited with `status`. (Declared in an extension, so that the struct keeps its
    /// memberwise `init(exit:stdout:stderr:)`.)
    public init(status: Int32, stdout: String, stderr: String) {
        self.init(exit: .exited(status), stdout: stdout, stderr: stderr)
    }
}
