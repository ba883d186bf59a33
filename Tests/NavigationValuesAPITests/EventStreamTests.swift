import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import TestSupport
import Testing

/// A session created for a test: its id and token.
struct CreatedSession {
    var id: String
    var token: String
    var rootID: String
}

extension TestClient {
    func createSession(_ body: JSONValue = [:]) async throws -> CreatedSession {
        let created = try await send("POST", "/v1/sessions", json: body)
        try #require(created.status == 201)
        let json = try #require(created.json)
        return CreatedSession(
            id: try #require(json["id"]?.stringValue), token: try #require(json["token"]?.stringValue),
            rootID: try #require(json["screens"]?.arrayValue?.first?["id"]?.stringValue))
    }

    /// Subscribes to the session's event stream (`query` such as `?after=0`) with its token.
    func events(of session: CreatedSession, _ query: String = "") throws -> SSEClient {
        try SSEClient(
            port: http.port, path: "/v1/sessions/\(session.id)/events\(query)",
            headers: ["Authorization": "Bearer \(session.token)"])
    }

    @discardableResult
    func push(_ session: CreatedSession, name: String = "Screen", values: JSONValue = [:]) async throws -> HTTPResponse
    {
        let result = try await send(
            "POST", "/v1/sessions/\(session.id)/push", json: ["name": .string(name), "values": values],
            token: session.token)
        try #require(result.status == 201, "push answered \(result.status)")
        return result
    }
}

@Suite struct EventStreamTests {
    @Test func aLiveStreamSeesLaterEventsWithSSEFraming() async throws {
        try await withRunningServer { client, server in
            let session = try await client.createSession()
            let stream = try client.events(of: session)
            defer { stream.close() }
            #expect(await stream.status() == 200)
            try await client.push(session, name: "Detail")
            let frames = await stream.frames.events(1)
            let frame = try #require(frames.first)
            #expect(frame.id == "2")
            #expect(frame.event == "screen.pushed")
            let data = try JSONValue(parsing: try #require(frame.data))
            #expect(data["seq"] == 2)
            #expect(data["screen"]?["name"] == "Detail")
        }
    }

    @Test func afterZeroReplaysEverythingThenFollows() async throws {
        try await withRunningServer { client, server in
            let session = try await client.createSession()
            try await client.push(session)
            let stream = try client.events(of: session, "?after=0")
            defer { stream.close() }
            try await client.push(session)
            let frames = await stream.frames.events(3)
            #expect(frames.map(\.id) == ["1", "2", "3"])
            #expect(frames.map(\.event) == ["session.created", "screen.pushed", "screen.pushed"])
        }
    }

    @Test func resumingByLastEventIDUnderConcurrentWritersMissesNothingAndRepeatsNothing() async throws {
        try await withRunningServer { client, server in
            let session = try await client.createSession()
            let writers = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<4 {
                        group.addTask {
                            for index in 0..<30 {
                                try await client.send(
                                    "PATCH", "/v1/sessions/\(session.id)/screens/root/values",
                                    json: ["n": .integer(Int64(index))],
                                    token: session.token)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            // 1 created + 120 updates = 121 events, read in several connections of 20 events each.
            var seen: [Int] = []
            while seen.count < 121 {
                var headers = ["Authorization": "Bearer \(session.token)"]
                headers["Last-Event-ID"] = String(seen.last ?? 0)
                let stream = try SSEClient(
                    port: server.port, path: "/v1/sessions/\(session.id)/events", headers: headers)
                let frames = await stream.frames.events(min(20, 121 - seen.count))
                stream.close()
                try #require(!frames.isEmpty, "a resumed stream delivered nothing")
                seen += frames.compactMap { $0.id.flatMap(Int.init) }
            }
            try await writers.value
            #expect(seen == Array(1...121))
        }
    }

    @Test func snapshotStartsWithTheWholeSessionThenEveryLaterEvent() async throws {
        try await withRunningServer { client, server in
            let session = try await client.createSession()
            try await client.push(session, name: "A")
            let stream = try client.events(of: session, "?snapshot=1")
            defer { stream.close() }
            // The head comes once the snapshot's version is fixed; a push sent before that would
            // be inside the snapshot rather than after it.
            #expect(await stream.status() == 200)
            try await client.push(session, name: "B")
            let frames = await stream.frames.events(2)
            #expect(frames.map(\.event) == ["session.snapshot", "screen.pushed"])
            #expect(frames.map(\.id) == ["2", "3"])
            let snapshot = try JSONValue(parsing: try #require(frames.first?.data))
            #expect(snapshot["version"] == 2)
            #expect(snapshot["screens"]?.arrayValue?.count == 2)
        }
    }

    @Test func anEndedSessionsStreamDrainsAndCloses() async throws {
        try await withRunningServer { client, server in
            let session = try await client.createSession()
            try await client.push(session)
            let ended = try await client.send("DELETE", "/v1/sessions/\(session.id)", token: session.token)
            #expect(ended.status == 204)
            let stream = try client.events(of: session, "?after=1")
            var events: [String?] = []
            for await frame in stream.frames where frame.comment == nil { events.append(frame.event) }
            #expect(events == ["screen.pushed", "session.ended"])
        }
    }

    @Test func aLiveStreamClosesAfterTheSessionEnds() async throws {
        try await withRunningServer { client, server in
            let session = try await client.createSession()
            let stream = try client.events(of: session)
            #expect(await stream.status() == 200)
            _ = try await client.send("DELETE", "/v1/sessions/\(session.id)", token: session.token)
            var events: [String?] = []
            for await frame in stream.frames where frame.comment == nil { events.append(frame.event) }
            #expect(events == ["session.ended"])
        }
    }

    @Test func streamsNeedTheSessionsTokenAndAnExistingSession() async throws {
        try await withRunningServer { client, server in
            let first = try await client.createSession()
            let second = try await client.createSession()
            let foreign = try SSEClient(
                port: server.port, path: "/v1/sessions/\(first.id)/events",
                headers: ["Authorization": "Bearer \(second.token)"])
            #expect(await foreign.status() == 403)
            let anonymous = try SSEClient(port: server.port, path: "/v1/sessions/\(first.id)/events")
            #expect(await anonymous.status() == 401)
            let missing = try SSEClient(
                port: server.port, path: "/v1/sessions/s_missing/events",
                headers: ["Authorization": "Bearer admin-secret"])
            #expect(await missing.status() == 404)
            _ = try await client.send("DELETE", "/v1/sessions/\(first.id)?purge=true", token: first.token)
            let purged = try SSEClient(
                port: server.port, path: "/v1/sessions/\(first.id)/events?after=0",
                headers: ["Authorization": "Bearer admin-secret"])
            // The session is gone (404 for it), but its events are known to be purged: 410.
            #expect(await purged.status() == 410)
            #expect(try await client.send("GET", "/v1/sessions/\(first.id)", token: client.adminToken).status == 404)
        }
    }

    @Test func disconnectedSubscribersAreReleased() async throws {
        try await withRunningServer { client, server in
            let session = try await client.createSession()
            var streams: [SSEClient] = []
            for _ in 0..<5 {
                let stream = try client.events(of: session)
                #expect(await stream.status() == 200)
                streams.append(stream)
            }
            #expect(try await eventually { server.hub.subscriberCount == 5 })
            for stream in streams { stream.close() }
            // A push makes the server write to the closed streams, which notices them gone at once.
            try await client.push(session)
            #expect(try await eventually { server.hub.subscriberCount == 0 })
        }
    }

    @Test func aStalledReaderDoesNotDelayPushesForOthers() async throws {
        try await withRunningServer(configure: { $0.subscriberBufferLimit = 8 }) { client, server in
            let session = try await client.createSession()
            // A reader that never reads: its socket buffers fill, then its subscription overflows.
            let stalled = try RawClient(port: server.port, receiveBufferSize: 4_096)
            defer { stalled.shutdown() }
            try stalled.send(
                "GET /v1/sessions/\(session.id)/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                    + "Authorization: Bearer \(session.token)\r\n\r\n")
            #expect(try await eventually { server.hub.subscriberCount == 1 })
            let big = JSONValue.string(String(repeating: "x", count: 60_000))
            for index in 0..<60 {
                let result = try await client.send(
                    "PATCH", "/v1/sessions/\(session.id)/screens/root/values",
                    json: ["blob": big, "i": .integer(Int64(index))],
                    token: session.token)
                try #require(result.status == 200)
            }
            #expect(try await eventually { server.hub.droppedSubscriberCount >= 1 })
        }
    }
}
