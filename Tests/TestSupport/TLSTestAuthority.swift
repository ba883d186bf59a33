import Foundation

/// A certificate authority made for one test with the `openssl` command, and server certificates
/// it signs for `127.0.0.1` and `localhost`: PEM files in a temporary folder of their own.
///
/// ```swift
/// let authority = try await TLSTestAuthority(name: "reload")
/// let pair = try await authority.issue("first")
/// let identity = try TLSIdentity(certificatePath: pair.certificate.path, keyPath: pair.key.path)
/// ```
public struct TLSTestAuthority: Sendable {
    /// A certificate and its private key.
    public struct Pair: Sendable {
        public var certificate: URL
        public var key: URL

        public init(certificate: URL, key: URL) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// The folder holding every file.
    public let folder: URL
    /// The authority's own certificate: what a client trusts (`curl --cacert`).
    public let certificate: URL
    private let key: URL
    public let name: String

    /// Makes a new authority (an ECDSA P-256 key, valid two days) in a new temporary folder.
    public init(name: String) async throws {
        self.name = name
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tls-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        certificate = folder.appendingPathComponent("ca.pem")
        key = folder.appendingPathComponent("ca.key")
        try await Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", key.path, "-out", certificate.path, "-days", "2", "-subj", "/CN=Test CA \(name)",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
    }

    /// A server certificate for `127.0.0.1` and `localhost`, whose subject is `CN=<common name>`.
    public func issue(_ commonName: String) async throws -> Pair {
        let pair = Pair(
            certificate: folder.appendingPathComponent("\(commonName).pem"),
            key: folder.appendingPathComponent("\(commonName).key"))
        let request = folder.appendingPathComponent("\(commonName).csr")
        let extensions = folder.appendingPathComponent("\(commonName).ext")
        try Data(
            """
            subjectAltName=IP:127.0.0.1,DNS:localhost
            basicConstraints=CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=serverAuth
            """.utf8
        ).write(to: extensions)
        try await Self.openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", pair.key.path,
            "-out", request.path, "-subj", "/CN=\(commonName)",
        ])
        try await Self.openssl([
            "x509", "-req", "-in", request.path, "-CA", certificate.path, "-CAkey", key.path, "-set_serial",
            String(UInt32.random(in: 1...UInt32.max)), "-days", "2", "-out", pair.certificate.path, "-extfile",
            extensions.path,
        ])
        return pair
    }

    /// Removes the folder.
    public func remove() {
        try? FileManager.default.removeItem(at: folder)
    }

    private static func openssl(_ arguments: [String]) async throws {
        let outcome = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/openssl"), arguments: arguments)
        guard outcome.exit == .exited(0) else { throw ChildProcessError("openssl \(arguments): \(outcome)") }
    }
}
