import Foundation
import Testing

/// The folder holding the built products (`.build/debug`), found next to the running tests.
func builtProduct(named name: String) throws -> URL {
    var candidates: [URL] = []
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        candidates.append(bundle.bundleURL.deletingLastPathComponent())
    }
    if let executable = Bundle.main.executableURL {
        candidates.append(executable.deletingLastPathComponent())
    }
    candidates.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent())
    candidates.append(repositoryRoot.appendingPathComponent(".build/debug"))
    for folder in candidates {
        let url = folder.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    throw ChildProcessError(message: "\(name) not found in \(candidates.map(\.path)); build with --build-tests")
}

struct ChildProcessError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// A child process whose stdout arrives as lines, read on a thread of its own.
final class ChildProcess: Sendable {
    let process: Process
    let lines: AsyncStream<String>
    private let errorOutput: Pipe

    init(_ executable: URL, arguments: [String]) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errorOutput = Pipe()
        process.standardOutput = output
        process.standardError = errorOutput
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        self.process = process
        self.lines = lines
        self.errorOutput = errorOutput
        try process.run()
        let handle = output.fileHandleForReading
        // Blocking reads stay off the cooperative pool.
        Thread.detachNewThread {
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
            }
            continuation.finish()
        }
    }

    /// Everything the child wrote to stderr; call after it exited.
    var standardError: String {
        String(decoding: errorOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    func kill(_ signal: Int32) {
        _ = Foundation.kill(process.processIdentifier, signal)
    }

    deinit {
        if process.isRunning { _ = Foundation.kill(process.processIdentifier, SIGKILL) }
    }
}

/// Runs `body`, failing with an error when it takes longer than `timeout`.
func withTimeout<T: Sendable>(
    _ timeout: Duration, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw ChildProcessError(message: "timed out after \(timeout)")
        }
        defer { group.cancelAll() }
        guard let result = try await group.next() else { throw ChildProcessError(message: "no result") }
        return result
    }
}
