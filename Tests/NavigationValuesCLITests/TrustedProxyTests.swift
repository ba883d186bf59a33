import Foundation
import TestSupport
import Testing

/// `--trusted-proxies` over real sockets: from a trusted peer (the test, on 127.0.0.1),
/// `X-Forwarded-For` names the client for the creation limit and the log; from any other peer it is
/// ignored.
@Suite struct TrustedProxyTests {
    static let oneCreationEach = ["--admin-token", "admin", "--create-burst", "1", "--create-rate", "0.001"]

    /// POST /v1/sessions with `forwardedFor` as X-Forwarded-For: its status.
    func create(_ server: ServeProcess, forwardedFor: String) async throws -> Int {
        try await server.send("POST", "/v1/sessions", body: "{}", headers: ["X-Forwarded-For": forwardedFor]).status
    }

    @Test func aTrustedProxyNamesTheClientForTheCreationLimitAndTheLog() async throws {
        let server = try await ServeProcess(Self.oneCreationEach + ["--trusted-proxies", "10.0.0.0/8, 127.0.0.1"])
        #expect(try await create(server, forwardedFor: "203.0.113.5") == 201)
        #expect(try await create(server, forwardedFor: "203.0.113.5") == 429)
        #expect(try await create(server, forwardedFor: "203.0.113.6") == 201)
        // The rightmost address outside the trusted ranges is the client: what a client wrote
        // before it (198.51.100.9) does not make it another.
        #expect(try await create(server, forwardedFor: "198.51.100.9, 203.0.113.5, 10.1.2.3") == 429)
        #expect(try await create(server, forwardedFor: "2001:db8::1") == 201)
        let lines = try await server.stop().stderr.split(separator: "\n")
        #expect(lines.contains { $0.contains(" status=201 ") && $0.hasSuffix(" client=203.0.113.6") })
        #expect(lines.filter { $0.contains(" status=429 ") && $0.hasSuffix(" client=203.0.113.5") }.count == 2)
        #expect(lines.contains { $0.contains(" status=201 ") && $0.hasSuffix(" client=2001:db8::1") })
    }

    @Test(arguments: [["--trusted-proxies", "10.0.0.0/8,::1"], []])
    func fromAnUntrustedPeerTheHeaderIsIgnored(proxies: [String]) async throws {
        let server = try await ServeProcess(Self.oneCreationEach + proxies)
        #expect(try await create(server, forwardedFor: "203.0.113.5") == 201)
        #expect(try await create(server, forwardedFor: "203.0.113.6") == 429)
        let lines = try await server.stop().stderr.split(separator: "\n")
        #expect(lines.contains { $0.contains(" status=429 ") && $0.hasSuffix(" client=127.0.0.1") })
        #expect(!lines.contains { $0.contains("client=203.0.113") })
    }

    @Test func aWrongRangeIsAUsageError() async throws {
        let outcome = try await run(["serve", "--port", "0", "--db", ":memory:", "--trusted-proxies", "10.0.0.0/33"])
        #expect(outcome.status == 2)
        #expect(
            outcome.stderr
                == "error: --trusted-proxies: '10.0.0.0/33' is not an IP address or a range such as 10.0.0.0/8 or fd00::/8\nRun 'navigation-values serve --help' for usage.\n"
        )
    }
}
