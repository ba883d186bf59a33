import BenchmarkSupport
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Idle subscribers held by a child process (`events-bench hold PORT COUNT SESSION TOKEN`).
///
/// They live in a child because both ends of 10,000 loopback connections need 20,000+ descriptors,
/// more than one process may open here (RLIMIT_NOFILE hard limit 20,000). It also keeps the
/// clients' memory out of the server's resident set.
enum HeldSubscribers {
    /// The child: opens `COUNT` streams, prints `ready COUNT` once every one has its 200 head,
    /// then holds them until its stdin closes.
    static func runChild(_ arguments: [String]) -> Never {
        guard arguments.count == 4, let port = Int(arguments[0]), let count = Int(arguments[1]), count > 0 else {
            report("error usage: events-bench hold PORT COUNT SESSION TOKEN")
            exit(2)
        }
        do {
            try ProcessFigures.raiseFileLimit()
            let reader = try StreamReader.open(
                count: count, port: port, path: "/v1/sessions/\(arguments[2])/events", token: arguments[3])
            reader.start()
            try reader.waitForHeads(timeout: .seconds(120))
            report("ready \(count)")
            // Hold until the parent closes our stdin (or dies).
            var byte: UInt8 = 0
            while read(STDIN_FILENO, &byte, 1) > 0 {}
            if let failure = reader.failure {
                report("error while holding: \(failure)")
                exit(1)
            }
            _ = reader.stop()
            exit(0)
        } catch {
            report("error \(error)")
            exit(1)
        }
    }

    private static func report(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Lines the child printed, filled by a reader thread.
    private final class LineBuffer: Sendable {
        let lines = Mutex<[String]>([])

        /// Reads `fd` to its end (the child's exit), splitting lines; then closes it.
        func read(from fd: Int32) {
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4_096)
            while true {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                pending.append(contentsOf: chunk[..<count])
                while let newline = pending.firstIndex(of: 10) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeFirst(newline + 1)
                    lines.withLock { $0.append(line) }
                }
            }
            close(fd)
        }
    }

    /// The parent's handle on a running child. Used from one thread.
    final class Child {
        private let process: Process
        private let input: Pipe
        private let output: Pipe
        private let lines = LineBuffer()

        /// Starts `events-bench hold …` from this very executable.
        init(port: Int, count: Int, session: String, token: String) throws {
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["hold", String(port), String(count), session, token]
            input = Pipe()
            output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            // The reader thread owns its own descriptor, so it never races the Pipe's.
            let outputFD = dup(output.fileHandleForReading.fileDescriptor)
            guard outputFD >= 0 else { throw BenchError.system("dup") }
            let thread = Thread { [lines] in lines.read(from: outputFD) }
            thread.start()
        }

        /// Waits for the child's `ready` line, or throws on its `error` line, its exit, or `timeout`.
        func waitUntilReady(timeout: Duration) throws {
            let deadline = ContinuousClock.now + timeout
            while true {
                let seen = lines.lines.withLock { $0 }
                if let error = seen.first(where: { $0.hasPrefix("error") }) {
                    throw BenchError("subscriber child: \(error)")
                }
                if seen.contains(where: { $0.hasPrefix("ready") }) { return }
                guard process.isRunning else {
                    throw BenchError(
                        "subscriber child exited (status \(process.terminationStatus)) before it was ready")
                }
                guard ContinuousClock.now < deadline else {
                    throw BenchError("subscriber child not ready after \(timeout)")
                }
                usleep(1_000)
            }
        }

        /// Closes the child's stdin so it closes its streams and exits; waits up to `timeout`.
        func release(timeout: Duration) throws {
            try? input.fileHandleForWriting.close()
            let deadline = ContinuousClock.now + timeout
            while process.isRunning {
                guard ContinuousClock.now < deadline else {
                    process.terminate()
                    throw BenchError("subscriber child still running \(timeout) after release")
                }
                usleep(1_000)
            }
            guard process.terminationStatus == 0 else {
                let error = lines.lines.withLock { $0.first { $0.hasPrefix("error") } } ?? "no message"
                throw BenchError("subscriber child exited with status \(process.terminationStatus): \(error)")
            }
        }
    }
}
