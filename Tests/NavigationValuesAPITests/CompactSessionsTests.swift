import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import TestSupport
import Testing

/// Sessions put in compact form past `--max-hot-sessions`, over real sockets, on SQLite and
/// PostgreSQL: reads answer the same bytes, a stream opened while the session was hot gets the
/// events of changes made to it once compact, and history, export and fork see those changes.
@Suite struct CompactSessionsTests {
    static func figure(_ client: TestClient, _ name: String) async throws -> Double {
        try #require(try parseExposition(try await client.send("GET", "/metrics").text)[name])
    }

    @Test(arguments: Backend.available)
    func aCompactSessionAnswersStreamsAndChangesAsAHotOne(backend: Backend) async throws {
        try await withRunningServer(on: backend, configure: { $0.service.maxHotSessions = 1 }) { client, server in
            var sessions: [(id: String, token: String)] = []
            for name in ["A", "B", "C"] {
                let created = try await client.send(
                    "POST", "/v1/sessions",
                    json: ["root": ["name": .string(name), "values": ["title": "t"]], "schema": ["values": ["n": ["type": "integer", "default": 0]]]])
                let id = try #require(created.json?["id"]?.stringValue)
                let token = try #require(created.json?["token"]?.stringValue)
                sessions.append((id, token))
                try await client.send("POST", "/v1/sessions/\(id)/push", json: ["name": "Detail", "values": ["n": 2]], token: token)
                try await client.send("POST", "/v1/sessions/\(id)/stacks", json: ["id": "settings"], token: token)
                try await client.send("POST", "/v1/sessions/\(id)/present", json: ["from": "main:top"], token: token)
            }
            let a = sessions[0]
            let stream = try SSEClient(
                port: server.port, path: "/v1/sessions/\(a.id)/events", headers: ["Authorization": "Bearer \(a.token)"])
            defer { stream.close() }
            #expect(await stream.status() == 200)
            let before = try await client.send("GET", "/v1/sessions/\(a.id)", token: a.token)
            let explainedBefore = try await client.send("GET", "/v1/sessions/\(a.id)?explain=1", token: a.token)
            #expect(before.status == 200)
            // The others read last: A is the least recently used, and the hot set holds one.
            for session in sessions.dropFirst() {
                try await client.send("GET", "/v1/sessions/\(session.id)", token: session.token)
            }
            try await waitUntil("the hot set is down to one") {
                try await Self.figure(client, "navigation_values_sessions_hot") == 1
            }
            #expect(try await Self.figure(client, "navigation_values_sessions_loaded") == 3)

            let after = try await client.send("GET", "/v1/sessions/\(a.id)", token: a.token)
            #expect(after.status == 200)
            #expect(after.body == before.body)
            #expect(after.header("ETag") == before.header("ETag"))
            // Put away again, then changed: the stream opened while it was hot gets the event.
            try await client.send("GET", "/v1/sessions/\(sessions[1].id)", token: sessions[1].token)
            try await waitUntil("A is compact again") {
                try await Self.figure(client, "navigation_values_sessions_hot") == 1
            }
            let explained = try await client.send("GET", "/v1/sessions/\(a.id)?explain=1", token: a.token)
            #expect(explained.body == explainedBefore.body)
            try await client.send("GET", "/v1/sessions/\(sessions[1].id)", token: sessions[1].token)
            try await waitUntil("A is compact once more") {
                try await Self.figure(client, "navigation_values_sessions_hot") == 1
            }
            let pushed = try await client.send(
                "POST", "/v1/sessions/\(a.id)/stacks/top/push", json: ["name": "Later", "values": ["n": 3]], token: a.token)
            #expect(pushed.status == 201)
            let version = try #require(pushed.json?["version"]?.integerValue)
            #expect(version == 5)
            let frames = await stream.frames.events(1)
            #expect(frames.first?.event == "stack.screen.pushed")
            #expect(frames.first?.id == "5")

            let history = try await client.send("GET", "/v1/sessions/\(a.id)/events", token: a.token)
            #expect(history.text.contains("\"Later\""))
            let fork = try await client.send(
                "POST", "/v1/sessions/fork", json: ["session": .string(a.id), "at": 5], token: "admin-secret")
            #expect(fork.status == 201)
            let forkID = try #require(fork.json?["id"]?.stringValue)
            let forkToken = try #require(fork.json?["token"]?.stringValue)
            let forked = try await client.send("GET", "/v1/sessions/\(forkID)", token: forkToken)
            let current = try await client.send("GET", "/v1/sessions/\(a.id)", token: a.token)
            #expect(forked.json?["stacks"]?.arrayValue?.count == 2)
            #expect(current.json?["stacks"]?.arrayValue?.count == 2)
            #expect(current.text.contains("\"Later\""))
            #expect(forked.text.contains("\"Later\""))
        }
    }
}
