import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import TestSupport
import Testing

/// Memory bounded for readers that stop reading: subscribers are capped per
/// session and in total (503 with `Retry-After` past a cap), and a reader that stops reading is
/// dropped once its byte budget (the event being written included) is spent, then resumes by id.
@Suite struct SubscriberLimitTests {
    @Test func aSessionTakesAtMostItsSubscribersThen503WithRetryAfter() async throws {
        try await withRunningServer(configure: { $0.subscribers.maxPerSession = 2 }) { client, server in
            let session = try await TestSession.create(client)
            let other = try await TestSession.create(client)
            let first = try session.eventStream(on: server)
            let second = try session.eventStream(on: server)
            defer { [first, second].forEach { $0.close() } }
            #expect(await first.status() == 200)
            #expect(await second.status() == 200)
            let refused = try await session.send("GET", "/events", headers: ["Accept": "text/event-stream"])
            expectProblem(refused, 503, type: "too-many-subscribers")
            #expect(refused.header("Retry-After") == "5")
            #expect(refused.json?["limit"] == "max-subscribers-per-session")
            // A long poll waits as a subscriber too.
            let poll = try await session.send("GET", "/events?after=0&wait=1")
            expectProblem(poll, 503, type: "too-many-subscribers")
            // Another session has places of its own.
            let elsewhere = try other.eventStream(on: server)
            defer { elsewhere.close() }
            #expect(await elsewhere.status() == 200)
            // Once one leaves, its place is free again.
            first.close()
            try await session.push("Wake")  // the write to the closed stream notices it gone
            try await waitUntil("the closed stream's place is free", timeout: .seconds(30)) {
                server.hub.subscriberCount == 2
            }
            let again = try session.eventStream(on: server)
            defer { again.close() }
            #expect(await again.status() == 200)
        }
    }

    @Test func theServerTakesAtMostItsSubscribersInTotalAdminStreamIncluded() async throws {
        try await withRunningServer(configure: { $0.subscribers.maxTotal = 2 }) { client, server in
            let session = try await TestSession.create(client)
            let admin = try SSEClient(
                port: server.port, path: "/v1/events", headers: ["Authorization": "Bearer \(client.adminToken)"])
            let one = try session.eventStream(on: server)
            defer { [admin, one].forEach { $0.close() } }
            #expect(await admin.status() == 200)
            #expect(await one.status() == 200)
            let refused = try await client.send(
                "GET", "/v1/events", token: client.adminToken, headers: ["Accept": "text/event-stream"])
            expectProblem(refused, 503, type: "too-many-subscribers")
            #expect(refused.json?["limit"] == "max-subscribers")
            #expect(server.hub.refusedSubscriberCount == 1)
        }
    }

    @Test func aStalledReaderIsDroppedOnceItsBytesAreSpentAndResumesById() async throws {
        try await withRunningServer(configure: {
            $0.subscribers.bufferBytes = 128 * 1024
            $0.sendBufferSize = 16 * 1024  // so that the kernel holds little of what the reader leaves
        }) { client, server in
            let session = try await TestSession.create(client)
            let stalled = try session.stalledEventReader(on: server)
            defer { stalled.shutdown() }
            let live = try session.eventStream(on: server)
            defer { live.close() }
            #expect(await live.status() == 200)
            try await waitUntil("two subscribers", timeout: .seconds(30)) { server.hub.subscriberCount == 2 }
            // 12 events of 30 KB: 360 KB, past the stalled reader's 128 KiB and its socket's buffers.
            for index in 0..<12 {
                try await session.patch(
                    "root", ["blob": .string(String(repeating: "b", count: 30_000)), "i": .integer(Int64(index))])
            }
            #expect(try await eventually(timeout: .seconds(30)) { server.hub.droppedSubscriberCount == 1 })
            // The reader that keeps up got every event.
            let frames = await live.frames.events(12, timeout: .seconds(60))
            #expect(frames.map(\.id) == (2...13).map { String($0) })
            // The dropped one comes back with the last id it saw and misses nothing.
            let resumed = try SSEClient(
                port: server.port, path: "/v1/sessions/\(session.id)/events",
                headers: ["Authorization": "Bearer \(session.token)", "Last-Event-ID": "5"])
            defer { resumed.close() }
            #expect(await resumed.frames.events(8, timeout: .seconds(60)).map(\.id) == (6...13).map { String($0) })
        }
    }

    @Test func oneEventLargerThanTheWholeBudgetStillReachesAReaderThatKeepsUp() async throws {
        try await withRunningServer(configure: { $0.subscribers.bufferBytes = 1_024 }) { client, server in
            let session = try await TestSession.create(client)
            let live = try session.eventStream(on: server)
            defer { live.close() }
            #expect(await live.status() == 200)
            try await waitUntil("a subscriber", timeout: .seconds(30)) { server.hub.subscriberCount == 1 }
            try await session.patch("root", ["blob": .string(String(repeating: "b", count: 20_000))])
            let frames = await live.frames.events(1, timeout: .seconds(30))
            #expect(frames.map(\.id) == ["2"])
            #expect(server.hub.droppedSubscriberCount == 0)
        }
    }
}
