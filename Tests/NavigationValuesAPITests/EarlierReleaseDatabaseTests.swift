import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSQLite
import NavigationValuesStore
import TestSupport
import Testing

/// A database written by the release before libcrypto, `Fixtures/sealed-idempotency-v1.sqlite`: its
/// binary served it, and was asked (with curl, at 2026-12-03T08:40:13Z) to create a session with
/// `Idempotency-Key: fixture-create-1` and body `{}`, then an observer token for it with
/// `Idempotency-Key: fixture-observer-1`. Both answers carry a token, so both were sealed in the
/// earlier form (`NVS1`). After the upgrade, the same retries still get the same answers: the old
/// seals open, the stored token hashes match and the recorded migration checksums still agree.
@Suite struct EarlierReleaseDatabaseTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/sealed-idempotency-v1.sqlite")
    static let sessionID = "s_aB7a8BlCP6iM"
    static let token = "t_QzjWOZoGCrOI0i__O42BlhHC6OG9HQ4X8_NTeklKZrU"
    static let observerToken = "ro_z_LLV3y12IHIRah3VNhkU0sgniuF73yeevZULDUZVpU"
    /// A minute after the fixture was written, well within the 24 hours its records are kept.
    static let now = Date(timeIntervalSince1970: 1_796_287_273)

    /// The fixture's clock, and no retention pass.
    static func configure(_ configuration: inout NavigationValuesServer.Configuration) {
        configuration.now = { Self.now }
        configuration.retentionInterval = nil
    }

    /// A new folder holding a copy of the fixture, `copy.sqlite`.
    static func copyFixture() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-v1-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: fixture.path, toPath: folder.appendingPathComponent("copy.sqlite").path)
        return folder
    }

    @Test func retriesAfterTheUpgradeGetTheAnswersSealedBeforeIt() async throws {
        let folder = try Self.copyFixture()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("copy.sqlite").path
        let configure = Self.configure
        try await withRunningServer(databasePath: path, configure: configure) { client, _ in
            let create = try await client.send(
                "POST", "/v1/sessions", raw: Data("{}".utf8), headers: ["Idempotency-Key": "fixture-create-1"])
            #expect(create.status == 201)
            #expect(create.header("Idempotent-Replayed") == "true")
            #expect(create.json?["id"]?.stringValue == Self.sessionID)
            #expect(create.json?["token"]?.stringValue == Self.token)

            let observer = try await client.send(
                "POST", "/v1/observers",
                raw: Data(#"{"session":"s_aB7a8BlCP6iM","label":"fixture","expiresIn":86400}"#.utf8),
                token: Self.token, headers: ["Idempotency-Key": "fixture-observer-1"])
            #expect(observer.status == 201)
            #expect(observer.header("Idempotent-Replayed") == "true")
            #expect(observer.json?["token"]?.stringValue == Self.observerToken)

            // The tokens themselves still work: their stored SHA-256 hashes match.
            #expect(try await client.send("GET", "/v1/sessions/\(Self.sessionID)", token: Self.token).status == 200)
            #expect(
                try await client.send("GET", "/v1/sessions/\(Self.sessionID)", token: Self.observerToken).status == 200)
            // The same key with another body is another request, refused as such (not opened).
            let other = try await client.send(
                "POST", "/v1/sessions", raw: Data(#"{"root":{"name":"Other"}}"#.utf8),
                headers: ["Idempotency-Key": "fixture-create-1"])
            #expect(other.json?["token"]?.stringValue != Self.token)
        }
    }

    /// The file is upgraded in place to log-first commits (Migrations/0010): its session, whose
    /// state was written with its events, takes changes written behind its log, and reads back
    /// the same once the server restarts on the file.
    @Test func theUpgradedFileTakesChangesWrittenBehindTheLog() async throws {
        let folder = try Self.copyFixture()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("copy.sqlite").path
        let configure: (inout NavigationValuesServer.Configuration) -> Void = { configuration in
            Self.configure(&configuration)
            configuration.writeBehind.isHeldForTests = true
        }
        let shown = try await withRunningServer(databasePath: path, configure: configure) { client, _ in
            let before = try await client.send("GET", "/v1/sessions/\(Self.sessionID)", token: Self.token)
            let version = try #require(before.json?["version"]?.integerValue)
            let push = try await client.send(
                "POST", "/v1/sessions/\(Self.sessionID)/push", json: ["name": "After", "values": ["n": 1]],
                token: Self.token)
            #expect(push.status == 201)
            #expect(push.json?["version"] == .integer(version + 1))
            // Held: the state rows are still at the version the earlier release wrote.
            let rows = try WriteBehindCrashTests.versions(in: path, of: Self.sessionID)
            #expect(rows.log == version + 1)
            #expect(rows.state == version)
            return try await client.send("GET", "/v1/sessions/\(Self.sessionID)", token: Self.token).json
        }
        try await withRunningServer(databasePath: path, configure: configure) { client, _ in
            let again = try await client.send("GET", "/v1/sessions/\(Self.sessionID)", token: Self.token)
            #expect(again.json == shown)
            let migrations = try Database(path: path, access: .readOnly).fetchAll(
                "SELECT version FROM schema_migrations ORDER BY version") { $0.int64(0) }
            #expect(migrations.last == Int64(Migration.embedded.count))
        }
    }
}
