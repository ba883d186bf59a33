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
    @Test func aStalledReaderAmongFastOnesIsCutOffAndEveryOtherGetsEveryEventInOrder() async throws {
        try await withRunningServer(configure: {
            $0.subscribers.bufferBytes = 128 * 1024
            $0.sendBufferSize = 16 * 1024  // so that the kernel holds little of what the stalled reader leaves
        }) { client, server in
            let session = try await TestSession.create(client)
            let stalled = try session.stalledEventReader(on: server)
            defer { stalled.shutdown() }
            // Six readers from the start (parked at once), on both event loops.
            var fast: [SSEClient] = []
            defer { for reader in fast { reader.close() } }
            for _ in 0..<6 {
                let reader = try session.eventStream(on: server)
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
                        let late = try session.eventStream(on: server, "?after=1")
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
            let reader = try session.eventStream(on: server)
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
            let reader = try session.eventStream(on: server)
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
