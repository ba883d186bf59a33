import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the built `http-bench-server` and stops it with SIGTERM and SIGINT.
@Suite struct SignalTests {
    static let executable = try? ChildProcess.builtProduct(named: "http-bench-server")

    @Test(.enabled(if: executable != nil, "http-bench-server is built"), arguments: [SIGTERM, SIGINT])
    func aSignalShutsDownGracefullyAndExitsZero(_ signal: Int32) async throws {
        let server = try ChildProcess(try #require(Self.executable), arguments: ["0", "1"])
        let url = try await server.listeningURL()
        #expect(url.absoluteString.hasPrefix("http://127.0.0.1:"))
        let client = try RawClient(port: try #require(url.port))
        #expect(try await client.exchange(get("/healthz")).text == #"{"status":"ok"}"#)
        server.signal(signal)
        #expect(try await server.waitForExit() == .exited(0))
        #expect(try await client.untilClosed().isEmpty)
    }
}
