import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesStore
import TestSupport
import Testing

/// A server restarted on the same file serves every session exactly as it acknowledged it.
@Suite struct RestartTests {
    /// A fresh temp folder for a database that outlives one server.
    static func withDatabaseFile<T>(_ body: (String) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nv-api-restart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder.appendingPathComponent("sessions.sqlite").path)
    }

    /// Sessions with values, handlers (passing and stopping, with memory), received preferences,
    /// pops, a path replace and an ended one.
    static func build(_ client: TestClient) async throws -> [TestSession] {
        let schema: JSONValue = [
            "values": [
                "title": ["type": "string", "default": "untitled"],
                "draft": ["type": "string", "default": "", "observationIgnored": true],
            ],
            "preferences": ["selection": ["type": "any", "default": .null]],
        ]
        let first = try await TestSession.create(
            client, ["root": ["name": "Home", "values": ["title": "home"]], "schema": schema])
        let b = try await first.push("B", values: ["draft": "d", "extra": [1, 2]])
        let c = try await first.push("C")
        try await first.handle("root", "selection", passBack: true)
        try await first.handle(b, "selection", passBack: false)
        try await first.handle(c, "selection", passBack: true)
        try await first.publish(c, "selection", ["item": 7])
        try await first.patch(b, ["title": "bee"])
        try await first.handle("root", "other", passBack: true)
        try await first.publish(b, "other", "o")

        let second = try await TestSession.create(client)
        try await second.push("X")
        try await second.send(
            "PUT", "/path", json: ["screens": [["name": "P1", "values": ["k": true]], ["name": "P2"]]])
        try await second.pop()
        try await second.handle("top", "k", passBack: true)
        try await second.publish("top", "k", 1.5)

        let ended = try await TestSession.create(client, ["root": ["values": ["v": "kept"]]])
        try await ended.send("DELETE")
        return [first, second, ended]
    }

    static func snapshot(_ sessions: [TestSession], via client: TestClient) async throws -> [JSONValue] {
        var reads: [JSONValue] = []
        for session in sessions {
            let moved = TestSession(client: client, id: session.id, token: session.token, created: session.created)
            reads.append(try await moved.get())
            for screen in try await moved.get().screenIDs {
                reads.append(try await moved.screen(screen))
            }
        }
        let list = try await client.send("GET", "/v1/sessions", token: client.adminToken)
        reads.append(try #require(list.json))
        return reads
    }

    @Test func aRestartedServerAnswersExactlyWhatItAnsweredBefore() async throws {
        try await Self.withDatabaseFile { path in
            let (sessions, before) = try await withRunningServer(databasePath: path) { client, _ in
                let sessions = try await Self.build(client)
                return (sessions, try await Self.snapshot(sessions, via: client))
            }
            try await withRunningServer(databasePath: path) { client, server in
                #expect(server.service.loadedSessionCount == 0)  // nothing read at start
                let after = try await Self.snapshot(sessions, via: client)
                #expect(after.count == before.count)
                for (old, new) in zip(before, after) { #expect(old == new) }
            }
        }
    }

    @Test func handlerMemorySurvivesARestart() async throws {
        try await Self.withDatabaseFile { path in
            let session = try await withRunningServer(databasePath: path) { client, _ in
                let session = try await TestSession.create(client)
                let b = try await session.push("B")
                let c = try await session.push("C")
                try await session.handle("root", "selection", passBack: true)
                try await session.handle(b, "selection", passBack: false)
                try await session.handle(c, "selection", passBack: true)
                let first = try await session.publish(c, "selection", "p")
                #expect(first["deliveries"]?.arrayValue?.count == 2)
                return session
            }
            try await withRunningServer(databasePath: path) { client, _ in
                let moved = TestSession(client: client, id: session.id, token: session.token, created: session.created)
                // The same value again: no handler is called again, B's remembered stop applies.
                let again = try await moved.publish("top", "selection", "p")
                let ids = try await moved.get().screenIDs
                #expect(again == ["deliveries": [], "stoppedAt": .string(ids[1]), "version": 8])
                // A new value is delivered as before the restart.
                let next = try await moved.publish("top", "selection", "q")
                #expect(next["deliveries"]?.arrayValue?.compactMap { $0["screen"]?.stringValue } == [ids[2], ids[1]])
                // Tokens still authorize after the restart (stored hashed).
                #expect(try await moved.send("POST", "/push", json: [:]).status == 201)
                #expect(try await moved.send("GET").header("ETag") == "\"10\"")
            }
        }
    }

    @Test func anIdempotentRetryAfterARestartStillReplays() async throws {
        try await Self.withDatabaseFile { path in
            let (session, first) = try await withRunningServer(databasePath: path) { client, _ in
                let session = try await TestSession.create(client)
                let first = try await session.send(
                    "POST", "/push", json: ["name": "A"], headers: ["Idempotency-Key": "k"])
                return (session, try #require(first.json))
            }
            try await withRunningServer(databasePath: path) { client, _ in
                let moved = TestSession(client: client, id: session.id, token: session.token, created: session.created)
                let retry = try await moved.send(
                    "POST", "/push", json: ["name": "A"], headers: ["Idempotency-Key": "k"])
                #expect(retry.status == 201)
                #expect(retry.json == first)
                #expect(try await moved.get()["version"] == 2)
            }
        }
    }
}
