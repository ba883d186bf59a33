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
    private let process: Process
    private let ending = Ending()

    /// Starts `executable` with `arguments`, in `directory` (default: ours), with `environment`
    /// (default: ours) and stdin reading nothing.
    public init(
        _ executable: URL, arguments: [String] = [], environment: [String: String]? = nil, directory: URL? = nil
    ) throws {
        let process = Process()
        if FileManager.default.isExecutableFile(atPath: Self.setpriv) {
            process.executableURL = URL(fileURLWithPath: Self.setpriv)
            process.arguments = ["--pdeathsig", "KILL", "--", executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let errorOutput = Pipe()
        process.standardOutput = output
        process.standardError = errorOutput
        process.standardInput = FileHandle.nullDevice
        self.process = process
        standardOutput = ChildOutput(output)
        standardError = ChildOutput(errorOutput)
        processIdentifier = try Spawner.shared.run(process) { [ending] process in
            ending.record(
                process.terminationReason == .uncaughtSignal
                    ? .signalled(process.terminationStatus) : .exited(process.terminationStatus))
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
        if process.isRunning { Glibc.kill(processIdentifier, SIGKILL) }
    }

    private static let setpriv = "/usr/bin/setpriv"

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

    /// Sends `signal` to the child.
    public func signal(_ signal: Int32) {
        if isRunning { Glibc.kill(processIdentifier, signal) }
    }

    /// Kills the child with SIGKILL (`kill -9`).
    public func kill() { signal(SIGKILL) }

    /// Waits for the child to end; after `timeout`, kills it and throws ``TestTimeout``.
    public func waitForExit(timeout: Duration = .seconds(30)) async throws -> Exit {
        let processIdentifier = processIdentifier
        let killChild: @Sendable () -> Void = { Glibc.kill(processIdentifier, SIGKILL) }
        return try await withTimeout(timeout, "the child's exit", onTimeout: killChild) { [ending] in
            await ending.wait()
        }
    }

    /// How the child ended, once it has, and who waits for that.
    private final class Ending: Sendable {
        private let state = Mutex<(exit: Exit?, waiters: [CheckedContinuation<Exit, Never>])>((nil, []))

        var exit: Exit? { state.withLock { $0.exit } }

        func record(_ exit: Exit) {
            let waiters = state.withLock { state in
                state.exit = exit
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: exit) }
        }

        func wait() async -> Exit {
            await withCheckedContinuation { continuation in
                let exit = state.withLock { state -> Exit? in
                    if state.exit == nil { state.waiters.append(continuation) }
                    return state.exit
                }
                if let exit { continuation.resume(returning: exit) }
            }
        }
    }

    /// Waits for the child to end (see ``waitForExit(timeout:)``) and returns what it printed.
    public func outcome(timeout: Duration = .seconds(30)) async throws -> Outcome {
        let exit = try await waitForExit(timeout: timeout)
        return Outcome(exit: exit, stdout: await standardOutput.text(), stderr: await standardError.text())
    }

    /// Runs a tool (`/usr/bin/sha256sum`, say) to its end and returns its stdout; throws
    /// ``ChildProcessError`` with what it printed when it does not exit 0.
    public static func output(of executable: URL, arguments: [String] = []) async throws -> String {
        let outcome = try await run(executable, arguments: arguments)
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

    init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        self.lines = lines
        let thread = Thread { [self] in
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 16_384)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                state.withLock { $0.bytes += chunk[..<count] }
                pending += chunk[..<count]
                while let newline = pending.firstIndex(of: 0x0A) {
                    continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
            continuation.finish()
            let waiters = state.withLock { state in
                state.isClosed = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        thread.start()
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

/// Starts every child from one thread that lives as long as the test process. The parent-death
/// signal fires when the thread that started a child ends (prctl(2), PR_SET_PDEATHSIG), and the
/// cooperative pool's threads may end while their children still run; this one never does.
private final class Spawner: Sendable {
    static let shared = Spawner()
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let wakeUp = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            while true {
                wakeUp.wait()
                let job = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                job?()
            }
        }
        thread.name = "TestSupport.Spawner"
        thread.start()
    }

    /// Runs `process` on the spawning thread, with `terminated` as its termination handler;
    /// returns its process id.
    func run(_ process: Process, terminated: @escaping @Sendable (Process) -> Void) throws -> Int32 {
        final class Outcome: Sendable {
            let result = Mutex<Result<Int32, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
        }
        let outcome = Outcome()
        process.terminationHandler = terminated
        jobs.withLock {
            $0.append {
                outcome.result.withLock {
                    $0 = Result {
                        try process.run()
                        return process.processIdentifier
                    }
                }
                outcome.done.signal()
            }
        }
        wakeUp.signal()
        outcome.done.wait()
        guard let result = outcome.result.withLock({ $0 }) else {
            preconditionFailure("the spawning thread signalled without a result")
        }
        return try result.get()
    }
}

extension ChildProcess.Outcome {
    /// An outcome that exited with `status`. (Declared in an extension, so that the struct keeps its
    /// memberwise `init(exit:stdout:stderr:)`.)
    public init(status: Int32, stdout: String, stderr: String) {
        self.init(exit: .exited(status), stdout: stdout, stderr: stderr)
    }
}
