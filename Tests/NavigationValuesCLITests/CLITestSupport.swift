import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The repository's root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

struct CLITestError: Error, CustomStringConvertible {
    var description: String
}

/// The built `navigation-values`, found next to the running tests (the test target depends on it).
func navigationValuesBinary() throws -> URL {
    var candidates: [URL] = []
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        candidates.append(bundle.bundleURL.deletingLastPathComponent())
    }
    candidates.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent())
    candidates.append(repositoryRoot.appendingPathComponent(".build/debug"))
    for folder in candidates {
        let url = folder.appendingPathComponent("navigation-values")
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    throw CLITestError(
        description: "navigation-values not found in \(candidates.map(\.path)); build with --build-tests")
}

/// The environment a child gets: ours without any `NAVIGATION_VALUES_*`, plus `extra`.
func childEnvironment(_ extra: [String: String]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("NAVIGATION_VALUES_") }
    for (name, value) in extra { environment[name] = value }
    return environment
}

/// Reads a pipe to its end on a thread of its own (blocking reads stay off the cooperative pool).
final class PipeCollector: Sendable {
    private let data = Mutex(Data())
    private let finished = Mutex<CheckedContinuation<Void, Never>?>(nil)
    private let isDone = Mutex(false)
    /// Complete lines, as they arrive.
    let lines: AsyncStream<String>

    init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        self.lines = lines
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                self.data.withLock { $0.append(chunk) }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            continuation.finish()
            let waiter = self.isDone.withLock { done in
                done = true
                return self.finished.withLock { $0 }
            }
            waiter?.resume()
        }
    }

    /// Waits for the end of the stream and returns everything read.
    func text() async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = isDone.withLock { done in
                if !done { finished.withLock { $0 = continuation } }
                return done
            }
            if done { continuation.resume() }
        }
        return String(decoding: data.withLock { $0 }, as: UTF8.self)
    }
}

/// What a finished run printed and returned.
struct Outcome: Equatable, CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String { "status \(status)\nstdout:\n\(stdout)\nstderr:\n\(stderr)" }
}

/// A running `navigation-values` child process.
final class CLIProcess: Sendable {
    let process: Process
    let stdout: PipeCollector
    let stderr: PipeCollector
    private let exit = Mutex<(status: Int32?, waiter: CheckedContinuation<Int32, Never>?)>((nil, nil))

    init(_ arguments: [String], environment: [String: String] = [:], directory: URL? = nil) throws {
        let process = Process()
        process.executableURL = try navigationValuesBinary()
        process.arguments = arguments
        process.environment = childEnvironment(environment)
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let errorOutput = Pipe()
        process.standardOutput = output
        process.standardError = errorOutput
        process.standardInput = FileHandle.nullDevice
        self.process = process
        stdout = PipeCollector(output)
        stderr = PipeCollector(errorOutput)
        process.terminationHandler = { [self] process in
            let waiter = self.exit.withLock { state in
                state.status = process.terminationStatus
                return state.waiter
            }
            waiter?.resume(returning: process.terminationStatus)
        }
        try process.run()
    }

    /// Waits for the process to exit (at most `timeout`; then kills it and throws) and returns what it printed.
    func outcome(timeout: Duration = .seconds(30)) async throws -> Outcome {
        let status = try await withTimeout(
            timeout,
            onTimeout: { [process] in
                process.interrupt()
                kill(process.processIdentifier, SIGKILL)
            }
        ) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
                let status = self.exit.withLock { state in
                    if state.status == nil { state.waiter = continuation }
                    return state.status
                }
                if let status { continuation.resume(returning: status) }
            }
        }
        return Outcome(status: status, stdout: await stdout.text(), stderr: await stderr.text())
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// Runs `navigation-values` with `arguments` to its end.
func run(
    _ arguments: [String], environment: [String: String] = [:], directory: URL? = nil
) async throws -> Outcome {
    try await CLIProcess(arguments, environment: environment, directory: directory).outcome()
}

/// Runs `body`, failing when it takes longer than `timeout` (after calling `onTimeout`).
func withTimeout<T: Sendable>(
    _ timeout: Duration, onTimeout: @escaping @Sendable () -> Void = {},
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else {
            onTimeout()
            throw CLITestError(description: "timed out after \(timeout)")
        }
        return result
    }
}

/// A `serve` child on port 0 in a fresh temporary folder, with its address once it listens.
final class ServeProcess: Sendable {
    let child: CLIProcess
    let folder: URL
    let baseURL: URL
    let listeningLine: String

    init(_ arguments: [String] = [], environment: [String: String] = [:]) async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var arguments = ["serve"] + arguments
        if !arguments.contains("--port") && environment["NAVIGATION_VALUES_PORT"] == nil {
            arguments += ["--port", "0"]
        }
        child = try CLIProcess(arguments, environment: environment, directory: folder)
        let lines = child.stdout.lines
        let line = try await withTimeout(.seconds(30)) { () async -> String? in
            for await line in lines { return line }
            return nil
        }
        guard let line, line.hasPrefix("listening on http://"), let url = URL(string: String(line.dropFirst(13))) else {
            let outcome = try await child.outcome(timeout: .seconds(5))
            throw CLITestError(description: "serve printed no 'listening on' line: \(outcome)")
        }
        listeningLine = line
        baseURL = url
    }

    /// Sends `signal` and returns how the server ended.
    func stop(_ signal: Int32 = SIGTERM) async throws -> Outcome {
        child.signal(signal)
        return try await child.outcome()
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }
}

/// An HTTP answer.
struct HTTPAnswer {
    var status: Int
    var headers: [String: String]
    var body: String

    func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
}

/// Sends one request with URLSession.
func request(
    _ method: String, _ url: URL, body: String? = nil, headers: [String: String] = [:]
) async throws -> HTTPAnswer {
    var request = URLRequest(url: url)
    request.httpMethod = method
    if let body {
        request.httpBody = Data(body.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let session = URLSession(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }
    let (data, response) = try await session.data(for: request)
    guard let http = response as? HTTPURLResponse else { throw CLITestError(description: "not an HTTP answer") }
    var fields: [String: String] = [:]
    for (name, value) in http.allHeaderFields {
        if let name = name as? String, let value = value as? String { fields[name] = value }
    }
    return HTTPAnswer(status: http.statusCode, headers: fields, body: String(decoding: data, as: UTF8.self))
}
