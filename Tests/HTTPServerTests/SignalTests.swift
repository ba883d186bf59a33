import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the built `http-bench-server` and stops it with SIGTERM and SIGINT.
@Suite struct SignalTests {
    static let executable: URL = {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // Swift Testing on Linux runs `<bin>/<Package>PackageTests.xctest`; the executable is beside it.
        while directory.path != "/"
            && !FileManager.default.fileExists(atPath: directory.appendingPathComponent("http-bench-server").path)
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("http-bench-server")
    }()

    @Test(
        .enabled(if: FileManager.default.isExecutableFile(atPath: executable.path), "http-bench-server is built"),
        arguments: [SIGTERM, SIGINT]
    )
    func aSignalShutsDownGracefullyAndExitsZero(_ signal: Int32) async throws {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["0", "1"]
        let output = Pipe()
        process.standardOutput = output
        let (exited, exitedSink) = AsyncStream.makeStream(of: Int32.self)
        process.terminationHandler = { exitedSink.yield($0.terminationStatus) }
        try process.run()
        let line = try await offload { () -> String in
            var bytes: [UInt8] = []
            while !bytes.contains(0x0A) {
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { break }
                bytes += data
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        let prefix = "listening on http://127.0.0.1:"
        #expect(line.hasPrefix(prefix))
        let port = try #require(Int(line.dropFirst(prefix.count).trimmingCharacters(in: .whitespacesAndNewlines)))
        let client = try RawClient(port: port)
        #expect(try await client.exchange(get("/healthz")).text == #"{"status":"ok"}"#)
        kill(process.processIdentifier, signal)
        #expect(try await first(of: exited) == 0)
        #expect(try await client.untilClosed().isEmpty)
    }
}
