import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import TestSupport
import Testing

/// `GET /v1/sessions/{id}` answered from the session's rendered JSON without its actor: the same
/// bytes as the actor's answer, never a stale version, never past the loaded-session limit.
@Suite struct SessionReadCacheTests {
    /// A figure of `/metrics`, by its name (no labels).
    static func figure(_ client: TestClient, _ name: String) async throws -> Int {
        let text = try await client.send("GET", "/metrics").text
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(name + " ") })
        return try #require(Int(line.split(separator: " ")[1]))
    }

    /// One exchange on a raw socket: status, every header in order but `Date` and
    /// `X-Request-Id` (which differ per request), and the body bytes.
    static func exactAnswer(port: Int, path: String, token: String) async throws -> (String, [UInt8]) {
        let raw = try RawClient(port: port, timeout: .seconds(60))
        let answer = try await raw.exchange(
            "GET \(path) HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer \(token)\r\n\r\n")
        let head = answer.headers.filter { !["date", "x-request-id"].contains($0.name.lowercased()) }
            .map { "\($0.name): \($0.value)" }.joined(separator: "\n")
        return ("\(answer.status)\n\(head)", answer.body)
    }

    /// What an observer token reads: it never takes the cache, so it is the actor's own answer.
    static func observerToken(_ client: TestClient, _ session: TestSession) async throws -> String {
        let observer = try await client.observer(["session": .string(session.id)], token: session.token)
        return try #require(observer["token"]?.stringValue)
    }

    @Test func aCachedReadIsTheActorsAnswerByteForByte() async throws {
        try await withRunningServer { client, server in
            let session = try await TestSession.create(
                client, ["root": ["name": "Inbox", "values": ["title": "Inbox"]]])
            _ = try await session.push("Thread", values: ["title": "Thread"])
            let observer = try await Self.observerToken(client, session)
            let path = "/v1/sessions/\(session.id)"
            let before = try await Self.figure(client, "navigation_values_session_reads_cached_total")
            let first = try await Self.exactAnswer(port: server.port, path: path, token: session.token)  // fills
            let cached = try await Self.exactAnswer(port: server.port, path: path, token: session.token)
            let admin = try await Self.exactAnswer(port: server.port, path: path, token: client.adminToken)
            let actors = try await Self.exactAnswer(port: server.port, path: path, token: observer)
            let after = try await Self.figure(client, "navigation_values_session_reads_cached_total")
            #expect(after - before == 2, "the second token read and the admin read come from the cache")
            #expect(first.0.hasPrefix("200\n"))
            #expect(first.0.contains("ETag: \"2\""))
            #expect(cached == first)
            #expect(admin == first)
            #expect(actors == first)
            #expect(try await Self.figure(client, "navigation_values_sessions_read_cached") == 1)
        }
    }

    @Test func everyMutationIsSeenByTheNextCachedRead() async throws {
        try await withRunningServer { client, server in
            let session = try await TestSession.create(client, ["root": ["name": "Home", "values": ["n": 0]]])
            let observer = try await Self.observerToken(client, session)
            let path = "/v1/sessions/\(session.id)"
            let start = try await Self.figure(client, "navigation_values_session_reads_cached_total")
            var random = SplitMix64(state: 12)
            var depth = 0
            for step in 0..<40 {
                // Read twice, so that the second read is the cache's, then mutate.
                _ = try await Self.exactAnswer(port: server.port, path: path, token: session.token)
                let cached = try await Self.exactAnswer(port: server.port, path: path, token: session.token)
                let actors = try await Self.exactAnswer(port: server.port, path: path, token: observer)
                #expect(cached == actors, "step \(step)")
                let answer: HTTPResponse
                switch random.next() % 4 {
                case 0 where depth > 0:
                    answer = try await session.send("POST", "/pop", json: ["count": 1])
                    depth -= 1
                case 1:
                    answer = try await session.send("PATCH", "/screens/top/values", json: ["n": .integer(Int64(step))])
                case 2:
                    answer = try await session.send(
                        "PUT", "/screens/root/handlers/h\(step % 3)", json: ["passBack": .bool(step % 2 == 0)])
                default:
                    answer = try await session.send("POST", "/push", json: ["name": .string("S\(step)")])
                    depth += 1
                }
                #expect((200..<300).contains(answer.status), "step \(step): \(answer.text)")
                let version = try #require(answer.header("ETag"))
                // The answer to the mutation is out: a read now must show it.
                let next = try await Self.exactAnswer(port: server.port, path: path, token: session.token)
                #expect(next.0.contains("ETag: \(version)"), "step \(step): \(next.0)")
                #expect(next == (try await Self.exactAnswer(port: server.port, path: path, token: observer)))
            }
            #expect(try await Self.figure(client, "navigation_values_session_reads_cached_total") - start >= 40)
        }
    }

    @Test func anEndedSessionIsReadAsEndedAndAPurgedOneIsGone() async throws {
        try await withRunningServer { client, server in
            let session = try await TestSession.create(client)
            let other = try await TestSession.create(client)
            let path = "/v1/sessions/\(session.id)"
            _ = try await Self.exactAnswer(port: server.port, path: path, token: session.token)
            _ = try await Self.exactAnswer(port: server.port, path: path, token: session.token)
            let ended = try await session.send("DELETE", "")
            #expect(ended.status == 204)
            let read = try await session.send("GET", "")
            #expect(read.status == 200)
            #expect(read.json?["state"] == "ended")
            #expect(read.header("ETag") == ended.header("ETag"))
            _ = try await session.send("GET", "")  // cached again, ended
            // The credential is checked before the cache is consulted: another session's token,
            // a malformed one and none are refused as they always were.
            expectProblem(try await client.send("GET", path, token: other.token), 403, type: "forbidden")
            expectProblem(try await client.send("GET", path, token: "t_short"), 401, type: "unauthorized")
            expectProblem(try await client.send("GET", path), 401, type: "unauthorized")
            let purged = try await session.send("DELETE", "?purge=true")
            #expect(purged.status == 204)
            expectProblem(try await session.send("GET", ""), 404, type: "not-found")
            expectProblem(try await client.send("GET", path, token: client.adminToken), 404, type: "not-found")
            #expect(try await Self.figure(client, "navigation_values_sessions_read_cached") == 0)
        }
    }

    @Test func theCacheHoldsNoMoreSessionsThanMemoryDoes() async throws {
        try await withRunningServer(configure: { $0.service.maxLoadedSessions = 4 }) { client, server in
            var sessions: [TestSession] = []
            for index in 0..<12 {
                let session = try await TestSession.create(client, ["root": ["name": .string("R\(index)")]])
                _ = try await session.push("A\(index)")
                sessions.append(session)
            }
            for round in 0..<2 {
                for session in sessions {
                    let path = "/v1/sessions/\(session.id)"
                    let first = try await Self.exactAnswer(port: server.port, path: path, token: session.token)
                    let again = try await Self.exactAnswer(port: server.port, path: path, token: session.token)
                    #expect(first == again, "round \(round)")
                    #expect(first.0.contains("ETag: \"2\""))
                    let loaded = try await Self.figure(client, "navigation_values_sessions_loaded")
                    let cached = try await Self.figure(client, "navigation_values_sessions_read_cached")
                    #expect(cached <= loaded)
                    #expect(loaded <= 4)
                }
            }
            // A session unloaded and changed since is read at its new version.
            let first = sessions[0]
            _ = try await first.push("After")
            let read = try await Self.exactAnswer(
                port: server.port, path: "/v1/sessions/\(first.id)", token: first.token)
            #expect(read.0.contains("ETag: \"3\""))
        }
    }
}
