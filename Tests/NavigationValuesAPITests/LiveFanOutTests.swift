import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import TestSupport
import Testing

/// Streams that have caught up are parked: the publisher writes the next event straight to
/// their connections while those have room, and wakes a stream's task only for anything else
/// (EventHub). These check what parking must keep, over real sockets: a reader that stops
/// reading is still cut off past its budget and holds no one back, every reader gets every
/// event once and in order whichever path wrote it, and keep-alives still flow.
@Suite struct LiveFanOutTests {
    /// A subscriber that never reads: its socket buffers fill, then its writer's, then its budget.
    func stalledReader(_ server: NavigationValuesServer, _ session: TestSession) throws -> RawClient {
        let reader = try RawClient(port: server.port, receiveBufferSize: 4_096)
        try reader.send(
            "GET /v1/sessions/\(session.id)/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                + "Authorization: Bearer \(session.token)\r\n\r\n")
        return reader
    }

    func stream(_ server: NavigationValuesServer, _ session: TestSession, _ query: String = "") throws -> SSEClient {
        try SSEClient(
            port: server.port, path: "/v1/sessions/\(session.id)/events\(query)",
            headers: ["Authorization": "Bearer \(session.token)"])
    }

    @Test func aStalledReaderAmongFastOnesIsCutOffAndEveryOtherGetsEveryEventInOrder() async throws {
        try await withRunningServer(configure: {
            $0.subscribers.bufferBytes = 128 * 1024
            $0.sendBufferSize = 16 * 1024  // so that the kernel holds little of what the stalled reader leaves
        }) { client, server in
            let session = try await TestSession.create(client)
            let stalled = try stalledReader(server, session)
            defer { stalled.shutdown() }
            // Six readers from the start (parked at once), on both event loops.
            var fast: [SSEClient] = []
            defer { for reader in fast { reader.close() } }
            for _ in 0..<6 {
                let reader = try stream(server, session)
                #expect(await reader.status() == 200)
                fast.append(reader)
            }
            try await waitUntil("seven subscribers", timeout: .seconds(30)) { server.hub.subscriberCount == 7 }
            // 40 events of 12 KB: 480 KB, past the stalled reader's socket buffers, its writer's
            // 64 KiB high-water mark and its 128 KiB budget.
            let blob = JSONValue.string(String(repeating: "b", count: 12_000))
            let events = 40
            for index in 0..<events {
                if index == 10 {
                    // Two more join with the history behind them: they catch up from the store while
                    // the pushes go on, then park.
                    for _ in 0..<2 {
                        let late = try stream(server, session, "?after=1")
                        #expect(await late.status() == 200)
                        fast.append(late)
                    }
                }
                try await session.patch("root", ["blob": blob, "i": .integer(Int64(index))])
            }
            // Every reader that keeps up got each event once, in order, while the stalled one
            // never read a byte.
            let expected = (2...(events + 1)).map { String($0) }
            for (index, reader) in fast.enumerated() {
                let ids = await reader.frames.events(events, timeout: .seconds(60)).map(\.id)
                #expect(ids == expected, "reader \(index)")
            }
            // The stalled one was cut off past its budget, and only it.
            #expect(try await eventually(timeout: .seconds(30)) { server.hub.droppedSubscriberCount == 1 })
            #expect(server.hub.subscriberCount == fast.count)
        }
    }

    @Test func aParkedStreamGetsEventsAndTheSessionsEndOnceEachInOrderThenCloses() async throws {
        try await withRunningServer { client, server in
            let session = try await TestSession.create(client)
            let reader = try stream(server, session)
            defer { reader.close() }
            #expect(await reader.status() == 200)
            try await waitUntil("a subscriber", timeout: .seconds(30)) { server.hub.subscriberCount == 1 }
            // Written by the publisher while the stream is parked...
            for index in 0..<3 { try await session.push("Screen \(index)") }
            // ...and the end, which wakes the stream's task: it must know what was written meanwhile.
            #expect(try await session.send("DELETE").status == 204)
            var ids: [String?] = []
            for await frame in reader.frames where frame.comment == nil { ids.append(frame.id) }
            #expect(ids == ["2", "3", "4", "5"])
        }
    }

    @Test func keepAlivesReachAParkedStreamBetweenEvents() async throws {
        try await withRunningServer(configure: { $0.keepAliveInterval = .milliseconds(50) }) { client, server in
            let session = try await TestSession.create(client)
            let reader = try stream(server, session)
            defer { reader.close() }
            #expect(await reader.status() == 200)
            try await waitUntil("a subscriber", timeout: .seconds(30)) { server.hub.subscriberCount == 1 }
            let (comments, ids) = try await withTimeout(.seconds(30), "keep-alives, then three events") {
                var comments = 0
                var ids: [String] = []
                for await frame in reader.frames {
                    if frame.comment == "keep-alive" {
                        comments += 1
                        if comments == 3 { for index in 0..<3 { try await session.push("Screen \(index)") } }
                    } else if let id = frame.id {
                        ids.append(id)
                        if ids.count == 3 { break }
                    }
                }
                return (comments, ids)
            }
            #expect(comments >= 3)
            #expect(ids == ["2", "3", "4"])
        }
    }
}
