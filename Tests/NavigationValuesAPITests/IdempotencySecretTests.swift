import Foundation
import NavigationValues
import TestSupport
import Testing

/// No token in clear: a create sent with `Idempotency-Key`
/// kept its answer, token included, in `idempotency_keys` for 24 h. Now the file holds neither the
/// token nor the key, and a retry with the key still gets the first answer, token included.
@Suite struct IdempotencySecretTests {
    /// Every byte of the database and its write-ahead log.
    func fileBytes(_ path: String) -> [UInt8] {
        [path, path + "-wal"].flatMap { [UInt8](FileManager.default.contents(atPath: $0) ?? Data()) }
    }

    @Test func theDatabaseHoldsNoUsableTokenAndTheRetryStillGetsIt() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-secret-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("secret.sqlite").path
        let key = "c0ffee-\(UUID().uuidString)"
        let body: JSONValue = ["root": ["name": "Home"]]
        let token = try await withRunningServer(databasePath: path) { client, _ in
            let first = try await client.send("POST", "/v1/sessions", json: body, headers: ["Idempotency-Key": key])
            #expect(first.status == 201)
            let token = try #require(first.json?["token"]?.stringValue)
            // A push with a key of its own is kept too, its key hashed.
            let id = try #require(first.json?["id"]?.stringValue)
            let push = try await client.send(
                "POST", "/v1/sessions/\(id)/push", json: ["name": "D"], token: token,
                headers: ["Idempotency-Key": key + "-push"])
            #expect(push.status == 201)
            return token
        }
        // Read back from the file, as the issue did: no token, no key, no part of either.
        let bytes = fileBytes(path)
        #expect(!bytes.isEmpty)
        for secret in [token, String(token.dropFirst(2).prefix(20)), key] {
            #expect(bytes.firstRange(of: Array(secret.utf8)) == nil, "\(secret) is in the file")
        }
        // After a restart the same retry answers the same session and the same token.
        try await withRunningServer(databasePath: path) { client, _ in
            let retry = try await client.send("POST", "/v1/sessions", json: body, headers: ["Idempotency-Key": key])
            #expect(retry.status == 201)
            #expect(retry.header("Idempotent-Replayed") == "true")
            #expect(retry.json?["token"]?.stringValue == token)
            // Another key with the same body creates another session.
            let other = try await client.send(
                "POST", "/v1/sessions", json: body, headers: ["Idempotency-Key": key + "-other"])
            #expect(other.json?["token"]?.stringValue != token)
        }
    }

    @Test func idempotencyRecordsGoWithTheirSession() async throws {
        try await withRunningServer { client, server in
            let key = "purge-me-\(UUID().uuidString)"
            let created = try await client.send("POST", "/v1/sessions", json: [:], headers: ["Idempotency-Key": key])
            let id = try #require(created.json?["id"]?.stringValue)
            let token = try #require(created.json?["token"]?.stringValue)
            #expect(try await client.send("DELETE", "/v1/sessions/\(id)?purge=true", token: token).status == 204)
            // The create's record went with the session: the same retry makes a new one.
            let retry = try await client.send("POST", "/v1/sessions", json: [:], headers: ["Idempotency-Key": key])
            #expect(retry.status == 201)
            #expect(retry.header("Idempotent-Replayed") == nil)
            #expect(retry.json?["id"]?.stringValue != id)
            _ = server
        }
    }
}
