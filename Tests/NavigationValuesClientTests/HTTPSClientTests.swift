import Foundation
import HTTPServer
import NavigationValuesAPI
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The client over HTTPS: on Linux an `https://` URL goes through URLSession (FoundationNetworking,
/// libcurl), which trusts the system's certificate store and nothing else (its
/// `URLSessionCertificateAuthorityInfoFile` variable is read on Android only). So the Demo runs
/// with the test's authority in place of the system's bundle, in a mount namespace of its own,
/// as `update-ca-certificates` would put it there on a machine (docs/Client.md, "HTTPS").
@Suite struct HTTPSClientTests {
    @Test func theDemoRunsOverHTTPSTrustingAnAuthorityInTheSystemStore() async throws {
        let authority = try await TLSTestAuthority(name: "client")
        defer { authority.remove() }
        let pair = try await authority.issue("localhost")
        let identity = try TLSIdentity(certificatePath: pair.certificate.path, keyPath: pair.key.path)
        try await withServer(configure: { $0.tls = identity }) { _, server in
            let demo = try ChildProcess.builtProduct(named: "navigation-values-demo")
            let url = "https://localhost:\(server.port)"
            // Not trusted: the first scenario fails.
            let refused = try await ChildProcess.run(demo, arguments: ["--url", url], timeout: .seconds(120))
            #expect(refused.exit == .exited(1), "\(refused)")
            // Trusted: all ten hold.
            let namespace = geteuid() == 0 ? "-m" : "-rm"
            let script = #"mount --bind "$0" /etc/ssl/certs/ca-certificates.crt && exec "$1" --url "$2""#
            let trusted = try await ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/unshare"),
                arguments: [namespace, "/bin/sh", "-c", script, authority.certificate.path, demo.path, url],
                timeout: .seconds(180))
            #expect(trusted.exit == .exited(0), "\(trusted)")
            #expect(trusted.stdout.hasSuffix("all 10 scenarios hold\n"), "\(trusted.stdout)")
        }
    }
}
