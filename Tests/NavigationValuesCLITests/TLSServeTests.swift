import Foundation
import TestSupport
import Testing

/// `serve --tls-cert --tls-key` as an operator runs it: HTTPS announced and served, failed
/// handshakes counted and logged, the pair read again on SIGHUP, `healthcheck` over HTTPS.
@Suite struct TLSServeTests {
    /// Two authorities and a pair from each; the served files start as the first pair.
    struct Certificates {
        let first: TLSTestAuthority
        let second: TLSTestAuthority
        let firstPair: TLSTestAuthority.Pair
        let secondPair: TLSTestAuthority.Pair
        let served: TLSTestAuthority.Pair

        init() async throws {
            first = try await TLSTestAuthority(name: "cli-first")
            second = try await TLSTestAuthority(name: "cli-second")
            firstPair = try await first.issue("first")
            secondPair = try await second.issue("second")
            served = TLSTestAuthority.Pair(
                certificate: first.folder.appendingPathComponent("served.pem"),
                key: first.folder.appendingPathComponent("served.key"))
            try FileManager.default.copyItem(at: firstPair.certificate, to: served.certificate)
            try FileManager.default.copyItem(at: firstPair.key, to: served.key)
        }

        func serve(_ pair: TLSTestAuthority.Pair) throws {
            try Data(contentsOf: pair.certificate).write(to: served.certificate)
            try Data(contentsOf: pair.key).write(to: served.key)
        }

        func remove() {
            first.remove()
            second.remove()
        }
    }

    @Test func theVariablesServeHTTPSAndFailedHandshakesAreCountedAndLogged() async throws {
        let certificates = try await Certificates()
        defer { certificates.remove() }
        let server = try await ServeProcess(
            ["--admin-token", "admin"],
            environment: [
                "NAVIGATION_VALUES_TLS_CERT": certificates.served.certificate.path,
                "NAVIGATION_VALUES_TLS_KEY": certificates.served.key.path,
            ],
            tls: TLSClientOptions(trusting: certificates.first.certificate))
        #expect(server.listeningLine.wholeMatch(of: /listening on https:\/\/127\.0\.0\.1:[1-9][0-9]*/) != nil)
        #expect(try await server.send("GET", "/healthz").status == 200)
        #expect(try await server.metric("navigation_values_tls_handshake_failures_total") == 0)
        // Plain HTTP on the HTTPS port.
        let plain = try RawClient(port: try #require(server.baseURL.port))
        try await plain.write("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = try? await plain.untilClosed()
        let line = try await server.logLine(containing: "tls handshake failed")
        #expect(line.contains("http request"), "\(line)")
        #expect(try await server.metric("navigation_values_tls_handshake_failures_total") == 1)

        // healthcheck reads the same variables, and speaks HTTPS.
        let health = try await run(
            ["healthcheck"],
            environment: [
                "NAVIGATION_VALUES_PORT": String(try #require(server.baseURL.port)),
                "NAVIGATION_VALUES_TLS_CERT": certificates.served.certificate.path,
            ])
        #expect(health.exit == .exited(0), "\(health)")
        let plainHealth = try await run(["healthcheck", "--port", String(try #require(server.baseURL.port))])
        #expect(plainHealth.exit == .exited(1), "\(plainHealth)")
        #expect(try await server.stop().status == 0)
    }

    @Test func sighupReadsThePairAgainKeepingOpenConnectionsAndRefusingABadOne() async throws {
        let certificates = try await Certificates()
        defer { certificates.remove() }
        let server = try await ServeProcess(
            [
                "--admin-token", "admin", "--tls-cert", certificates.served.certificate.path, "--tls-key",
                certificates.served.key.path,
            ],
            tls: TLSClientOptions(trusting: certificates.first.certificate))
        let port = try #require(server.baseURL.port)
        let old = try RawClient(port: port, tls: TLSClientOptions(trusting: certificates.first.certificate))
        #expect(old.peerSubject == "/CN=first")
        #expect(try await old.exchange("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)

        try certificates.serve(certificates.secondPair)
        server.child.signal(SIGHUP)
        let reloaded = try await server.logLine(containing: "tls certificate reloaded")
        #expect(reloaded.contains("CN=second"), "\(reloaded)")
        let new = try RawClient(port: port, tls: TLSClientOptions(trusting: certificates.second.certificate))
        #expect(new.peerSubject == "/CN=second")
        #expect(try await new.exchange("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        // The kept-alive connection from before the reload still answers.
        #expect(try await old.exchange("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)

        // The second certificate with the first key: refused, and the second pair keeps serving.
        try Data(contentsOf: certificates.firstPair.key).write(to: certificates.served.key)
        server.child.signal(SIGHUP)
        let refused = try await server.logLine(containing: "tls certificate reload refused")
        #expect(refused.contains("key values mismatch"), "\(refused)")
        let after = try RawClient(port: port, tls: TLSClientOptions(trusting: certificates.second.certificate))
        #expect(after.peerSubject == "/CN=second")
        #expect(try await after.exchange("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        #expect(try await server.stop().status == 0)
    }

    /// OpenSSL's own socket writes raise SIGPIPE when the client has reset the connection, which
    /// ends a process that does not ignore it (as `serve` does not): every TLS write must fail with
    /// EPIPE instead, as the plain sockets' do.
    @Test func clientsResettingMidAnswerLeaveTheServerRunning() async throws {
        let certificates = try await Certificates()
        defer { certificates.remove() }
        let options = TLSClientOptions(trusting: certificates.first.certificate)
        let server = try await ServeProcess(
            [
                "--admin-token", "admin", "--tls-cert", certificates.served.certificate.path, "--tls-key",
                certificates.served.key.path,
            ],
            tls: options)
        let port = try #require(server.baseURL.port)
        try await offload {
            for _ in 0..<100 {
                // The OpenAPI document is a large answer: the server is still writing it when the reset comes.
                let client = try RawClient(port: port, tls: options)
                try client.send("GET /openapi.json HTTP/1.1\r\nHost: t\r\n\r\n")
                client.abort()
            }
        }
        #expect(server.child.isRunning)
        #expect(try await server.send("GET", "/healthz").status == 200)
        #expect(try await server.stop().status == 0)
    }

    @Test func aMissingHalfOrABadFileIsAUsageError() async throws {
        let certificates = try await Certificates()
        defer { certificates.remove() }
        let alone = try await run(["serve", "--tls-cert", certificates.served.certificate.path])
        #expect(alone.exit == .exited(2), "\(alone)")
        #expect(alone.stderr.contains("--tls-cert needs --tls-key"), "\(alone)")
        let keyAlone = try await run(["serve"], environment: ["NAVIGATION_VALUES_TLS_KEY": certificates.served.key.path])
        #expect(keyAlone.stderr.contains("NAVIGATION_VALUES_TLS_KEY needs --tls-cert"), "\(keyAlone)")
        let mismatched = try await run([
            "serve", "--tls-cert", certificates.secondPair.certificate.path, "--tls-key", certificates.firstPair.key.path,
        ])
        #expect(mismatched.exit == .exited(2), "\(mismatched)")
        #expect(mismatched.stderr.contains("key values mismatch"), "\(mismatched)")
        #expect(!mismatched.stderr.contains("PRIVATE KEY"))
    }
}
