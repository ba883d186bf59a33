import Foundation
import TestSupport
import Testing

/// A libcrypto whose providers did not load is a clear start-up error: a message and exit 1,
/// before anything listens, never a trap on the first hash.
@Suite struct CryptoStartupTests {
    /// An OpenSSL configuration that activates only the null provider: once a configuration loads
    /// a provider, OpenSSL 3 no longer loads its default one, so SHA-256 and AES-256-GCM are gone.
    static func nullProviderConfiguration() throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("nv-openssl-\(UUID().uuidString).cnf")
        let text = """
            openssl_conf = openssl_init

            [openssl_init]
            providers = provider_sect

            [provider_sect]
            null = null_sect

            [null_sect]
            activate = 1

            """
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test func serveWithoutLibcryptosAlgorithmsExitsOneWithAMessage() async throws {
        let configuration = try Self.nullProviderConfiguration()
        defer { try? FileManager.default.removeItem(at: configuration) }
        let outcome = try await run(
            ["serve", "--port", "0", "--db", ":memory:"], environment: ["OPENSSL_CONF": configuration.path])
        #expect(
            outcome
                == Outcome(
                    status: 1, stdout: "",
                    stderr:
                        "error: libcrypto offers no SHA-256: its default provider did not load (check OPENSSL_CONF)\n"),
            "\(outcome)")
    }

    @Test func migrateWithoutLibcryptosAlgorithmsExitsOneWithAMessage() async throws {
        let configuration = try Self.nullProviderConfiguration()
        defer { try? FileManager.default.removeItem(at: configuration) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outcome = try await run(
            ["migrate", "--db", folder.appendingPathComponent("db.sqlite").path],
            environment: ["OPENSSL_CONF": configuration.path])
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr.contains("check OPENSSL_CONF"), "\(outcome)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("db.sqlite").path))
    }
}
