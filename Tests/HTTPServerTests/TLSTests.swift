import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

/// HTTPS on the server's own event loops: real handshakes with a certificate authority made for
/// the test, through curl and the tests' own OpenSSL client; keep-alive, streams, slow and hostile
/// clients and the limits as over plain HTTP; failed handshakes reported; the pair reloaded.
@Suite struct TLSTests {
    /// What the server reported about failed handshakes: `reason` per failure.
    final class Failures: Sendable {
        private let reasons = Mutex<[String]>([])
        var all: [String] { reasons.withLock { $0 } }
        var hook: @Sendable (String?, String) -> Void {
            { _, reason in self.reasons.withLock { $0.append(reason) } }
        }
    }

    static func makeRouter() -> Router {
        let router = Router()
        router.get("/healthz") { _ in Response(body: Array("ok".utf8)) }
        router.post("/echo") { request in Response(body: request.body) }
        router.get("/large") { _ in Response(body: [UInt8](repeating: UInt8(ascii: "x"), count: 8 << 20)) }
        router.get("/events") { _ in
            Response(headers: ["Content-Type": "text/event-stream"]) { writer in
                for index in 1...3 { try await writer.write(Array("id: \(index)\ndata: event \(index)\n\n".utf8)) }
            }
        }
        return router
    }

    /// A fresh authority and a pair it signed (removed by the caller).
    static func makeIdentity(_ name: String) async throws -> (TLSTestAuthority, TLSIdentity) {
        let authority = try await TLSTestAuthority(name: name)
        let pair = try await authority.issue("server-\(name)")
        return (authority, try TLSIdentity(certificatePath: pair.certificate.path, keyPath: pair.key.path))
    }

    static func curl(_ arguments: [String]) async throws -> ChildProcess.Outcome {
        try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/curl"), arguments: ["-sS", "--max-time", "20"] + arguments,
            timeout: .seconds(30))
    }

    @Test func curlTrustingTheAuthorityIsAnsweredAndWithoutItRefuses() async throws {
        let (authority, identity) = try await Self.makeIdentity("curl")
        defer { authority.remove() }
        let failures = Failures()
        try await withRunningServer(Self.makeRouter(), tls: identity, tlsHandshakeFailed: failures.hook) { server in
            let url = "https://localhost:\(server.port)/healthz"
            let trusted = try await Self.curl(["--cacert", authority.certificate.path, url])
            #expect(trusted.exit == .exited(0), "\(trusted)")
            #expect(trusted.stdout == "ok")
            // TLS 1.2 is served too.
            let tls12 = try await Self.curl(["--cacert", authority.certificate.path, "--tls-max", "1.2", url])
            #expect(tls12.exit == .exited(0), "\(tls12)")
            // Without the authority, curl refuses the certificate (60: peer certificate cannot be
            // authenticated); its alert makes the handshake fail on the server's side too.
            let untrusted = try await Self.curl([url])
            #expect(untrusted.exit == .exited(60), "\(untrusted)")
            // Plain HTTP on the HTTPS port is no request.
            let plain = try await Self.curl(["http://127.0.0.1:\(server.port)/healthz"])
            #expect(plain.exit != .exited(0))
            try await waitUntil { failures.all.count >= 2 }
            #expect(failures.all.contains { $0.contains("unknown ca") }, "\(failures.all)")
            #expect(failures.all.contains("http request"), "\(failures.all)")
        }
    }

    @Test func tlsBelow1_2IsRefused() async throws {
        let (authority, identity) = try await Self.makeIdentity("old")
        defer { authority.remove() }
        let failures = Failures()
        try await withRunningServer(Self.makeRouter(), tls: identity, tlsHandshakeFailed: failures.hook) { server in
            // SECLEVEL=0 lets this OpenSSL client offer TLS 1.1 at all; the server still refuses it.
            let old = try await Self.curl([
                "--cacert", authority.certificate.path, "--tlsv1.1", "--tls-max", "1.1", "--ciphers",
                "DEFAULT@SECLEVEL=0", "https://localhost:\(server.port)/healthz",
            ])
            #expect(old.exit == .exited(35), "\(old)")  // 35: the TLS handshake failed
            try await waitUntil { !failures.all.isEmpty }
            #expect(failures.all.contains("unsupported protocol"), "\(failures.all)")
        }
    }

    @Test func aKeptAliveConnectionServesRequestsOverTLS13WithALPN() async throws {
        let (authority, identity) = try await Self.makeIdentity("keepalive")
        defer { authority.remove() }
        try await withRunningServer(Self.makeRouter(), tls: identity) { server in
            let client = try RawClient(port: server.port, tls: TLSClientOptions(trusting: authority.certificate))
            #expect(client.tlsVersion == "TLSv1.3")
            #expect(client.alpn == "http/1.1")
            #expect(client.peerSubject == "/CN=server-keepalive")
            for index in 0..<5 {
                let body = "request \(index) " + String(repeating: "y", count: index * 40_000)
                let answer = try await client.exchange(
                    "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
                #expect(answer.status == 200)
                #expect(answer.text == body)
            }
            // A large answer crosses many TLS records and fills the socket more than once.
            let large = try await client.exchange(get("/large"))
            #expect(large.body.count == 8 << 20)
            #expect(server.openConnectionCount == 1)
        }
    }

    @Test func anEventStreamFlowsOverTLS() async throws {
        let (authority, identity) = try await Self.makeIdentity("sse")
        defer { authority.remove() }
        try await withRunningServer(Self.makeRouter(), tls: identity) { server in
            let stream = try SSEClient(
                port: server.port, path: "/events", tls: TLSClientOptions(trusting: authority.certificate))
            defer { stream.close() }
            #expect(await stream.status() == 200)
            let frames = try await collect(3, of: stream.frames)
            #expect(frames.map(\.data) == ["event 1", "event 2", "event 3"])
        }
    }

    @Test func silentAndSlowClientsAreCutOffByTheHeaderTimeout() async throws {
        let (authority, identity) = try await Self.makeIdentity("slow")
        defer { authority.remove() }
        let failures = Failures()
        try await withRunningServer(
            Self.makeRouter(), headerTimeout: .seconds(2), tls: identity, tlsHandshakeFailed: failures.hook
        ) { server in
            // Connects and never says hello: the handshake times out.
            let silent = try RawClient(port: server.port)
            // A handshake half sent: a record header promising 512 bytes, of which 5 come.
            let stalled = try RawClient(port: server.port)
            try stalled.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03])
            // Slowloris over TLS: the handshake is done, then part of a head, and nothing more.
            let slow = try RawClient(port: server.port, tls: TLSClientOptions(trusting: authority.certificate))
            try await slow.write("GET /healthz HTTP/1.1\r\nHo")
            #expect(try await silent.untilClosed().isEmpty)
            #expect(try await stalled.untilClosed().isEmpty)
            #expect(try await slow.untilClosed().isEmpty)
            try await waitUntil { failures.all.count >= 2 }
            #expect(failures.all.filter { $0 == "handshake timed out" }.count == 2, "\(failures.all)")
            let client = try RawClient(port: server.port, tls: TLSClientOptions(trusting: authority.certificate))
            #expect(try await client.exchange(get("/healthz")).text == "ok")
        }
    }

    @Test func aStalledHandshakeDelaysNoOtherConnectionOfItsLoop() async throws {
        let (authority, identity) = try await Self.makeIdentity("loop")
        defer { authority.remove() }
        // What the server reports of failed handshakes: none is expected before the end (the
        // stalled ones wait for the 10-minute header timeout), and any there is says why a
        // connection the test expects to be served was closed.
        let failures = Failures()
        try await withRunningServer(
            Self.makeRouter(), eventLoopCount: 1, tls: identity, tlsHandshakeFailed: failures.hook
        ) { server in
            var stalled: [RawClient] = []
            for _ in 0..<20 {
                let client = try RawClient(port: server.port)
                try client.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
                stalled.append(client)
            }
            let started = ContinuousClock.now
            for index in 0..<10 {
                do {
                    let client = try RawClient(
                        port: server.port, timeout: HTTPClient.defaultTimeout,
                        tls: TLSClientOptions(trusting: authority.certificate))
                    #expect(try await client.exchange(get("/healthz")).text == "ok")
                } catch {
                    Issue.record("client \(index): \(error); the server's handshake failures: \(failures.all)")
                }
            }
            #expect(failures.all.isEmpty, "\(failures.all)")
            #expect(ContinuousClock.now - started < .seconds(20))
            #expect(server.openConnectionCount >= 20)
            withExtendedLifetime(stalled) {}
        }
    }

    @Test func theLimitsAnswerAsOverPlainHTTP() async throws {
        let (authority, identity) = try await Self.makeIdentity("limits")
        defer { authority.remove() }
        try await withRunningServer(Self.makeRouter(), tls: identity) { server in
            let options = TLSClientOptions(trusting: authority.certificate)
            let large = try RawClient(port: server.port, tls: options)
            let head = try await large.exchange(get("/healthz", "X-Padding: \(String(repeating: "a", count: 17_000))\r\n"))
            #expect(head.status == 431)
            #expect(head.header("Connection") == "close")
            let body = try RawClient(port: server.port, tls: options)
            let tooLarge = try await body.exchange(
                "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(2 << 20)\r\n\r\n")
            #expect(tooLarge.status == 413)
            let client = try RawClient(port: server.port, tls: options)
            #expect(try await client.exchange(get("/healthz")).text == "ok")
        }
    }

    @Test func aClientThatStopsReadingIsClosedAfterTheIdleTimeout() async throws {
        let (authority, identity) = try await Self.makeIdentity("stall")
        defer { authority.remove() }
        try await withRunningServer(Self.makeRouter(), idleTimeout: .seconds(1), tls: identity) { server in
            let options = TLSClientOptions(trusting: authority.certificate)
            let reader = try RawClient(port: server.port, timeout: .seconds(30), receiveBufferSize: 4096, tls: options)
            try await reader.write(get("/large"))
            // Nothing read: the server's writes stall, and it closes the connection.
            try await waitUntil(timeout: .seconds(30)) { server.openConnectionCount == 0 }
            let client = try RawClient(port: server.port, tls: options)
            #expect(try await client.exchange(get("/healthz")).text == "ok")
        }
    }

    @Test func reloadingGivesNewConnectionsTheNewPairAndKeepsOpenOnes() async throws {
        let first = try await TLSTestAuthority(name: "first")
        let second = try await TLSTestAuthority(name: "second")
        defer {
            first.remove()
            second.remove()
        }
        let firstPair = try await first.issue("first")
        let secondPair = try await second.issue("second")
        // The files the server is told about; rewritten in place, as a certificate renewal does.
        let certificate = first.folder.appendingPathComponent("served.pem")
        let key = first.folder.appendingPathComponent("served.key")
        try FileManager.default.copyItem(at: firstPair.certificate, to: certificate)
        try FileManager.default.copyItem(at: firstPair.key, to: key)
        let identity = try TLSIdentity(certificatePath: certificate.path, keyPath: key.path)
        try await withRunningServer(Self.makeRouter(), tls: identity) { server in
            let old = try RawClient(port: server.port, tls: TLSClientOptions(trusting: first.certificate))
            #expect(try await old.exchange(get("/healthz")).text == "ok")
            #expect(old.peerSubject == "/CN=first")

            try Data(contentsOf: secondPair.certificate).write(to: certificate)
            try Data(contentsOf: secondPair.key).write(to: key)
            try identity.reload()
            #expect(identity.subject == "/CN=second")
            let new = try RawClient(port: server.port, tls: TLSClientOptions(trusting: second.certificate))
            #expect(new.peerSubject == "/CN=second")
            #expect(try await new.exchange(get("/healthz")).text == "ok")
            // The connection made before the reload goes on with its own.
            #expect(try await old.exchange(get("/healthz")).text == "ok")
            #expect(throws: ClientError.self) {
                try RawClient(port: server.port, tls: TLSClientOptions(trusting: first.certificate))
            }

            // A key that does not match the certificate is refused; the pair in force stays.
            try Data(contentsOf: firstPair.key).write(to: key)
            #expect(throws: TLSError.self) { try identity.reload() }
            let after = try RawClient(port: server.port, tls: TLSClientOptions(trusting: second.certificate))
            #expect(after.peerSubject == "/CN=second")
            #expect(try await after.exchange(get("/healthz")).text == "ok")
        }
    }

    @Test func aBadPairIsRefusedWithItsReason() async throws {
        let authority = try await TLSTestAuthority(name: "bad")
        defer { authority.remove() }
        let pair = try await authority.issue("bad")
        let other = try await authority.issue("other")
        let missing = authority.folder.appendingPathComponent("missing.pem").path
        #expect(throws: TLSError.self) { try TLSIdentity(certificatePath: missing, keyPath: pair.key.path) }
        do {
            _ = try TLSIdentity(certificatePath: pair.certificate.path, keyPath: other.key.path)
            Issue.record("a mismatched key was accepted")
        } catch {
            #expect(error.description.contains("key values mismatch"), "\(error)")
        }
        // The key is no certificate.
        #expect(throws: TLSError.self) { try TLSIdentity(certificatePath: pair.key.path, keyPath: pair.key.path) }
    }
}
