import Foundation
import NavigationValues
import NavigationValuesClient
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

/// What a reader of an event stream saw, shared with the test.
final class StreamLog: Sendable {
    private let state = Mutex<(seqs: [Int64], reconnects: [ReconnectNotice])>(([], []))
    func record(_ seq: Int64) { state.withLock { $0.seqs.append(seq) } }
    func record(_ notice: ReconnectNotice) { state.withLock { $0.reconnects.append(notice) } }
    var seqs: [Int64] { state.withLock { $0.seqs } }
    var reconnects: [ReconnectNotice] { state.withLock { $0.reconnects } }
}

/// The event stream resumes by itself with `Last-Event-ID`: every event once, in order, across a
/// server killed with SIGKILL and restarted, and across connections it cuts itself.
@Suite struct EventStreamResumeTests {
    @Test func theStreamResumesAcrossAServerKilledMidStreamWithNoGapAndNoDuplicate() async throws {
        try await withTemporaryFolder { folder in
            let database = folder.appendingPathComponent("resume.sqlite").path
            let first = try ChildProcess(
                built: "api-crash-server", arguments: ["--db", database, "--admin-token", adminToken])
            let url = try await first.listeningURL()
            let port = try #require(url.port)
            let log = StreamLog()
            let client = makeClient(url) { configuration in
                configuration.retry = RetryPolicy(
                    maxAttempts: 40, initialDelay: .milliseconds(20), maxDelay: .milliseconds(250))
                configuration.streams.onReconnect = { log.record($0) }
            }
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let reader = Task {
                for try await item in session.events(after: 0) { log.record(item.seq) }
            }
            defer { reader.cancel() }

            // A writer pushes throughout, its retries riding out the outage; the server is killed
            // once the reader is mid-stream, and restarted on the same file and port.
            let writer = Task {
                var acknowledged: [Int64: ScreenID] = [:]
                for index in 0..<40 {
                    let pushed = try await session.push("screen-\(index)")
                    acknowledged[pushed.version] = pushed.screen.id
                }
                return acknowledged
            }
            try await waitUntil("the reader to be mid-stream", timeout: .seconds(60)) { log.seqs.count >= 10 }
            first.kill()
            #expect(try await first.waitForExit() == .signalled(SIGKILL))
            let second = try ChildProcess(
                built: "api-crash-server",
                arguments: ["--db", database, "--admin-token", adminToken, "--port", String(port)])
            defer { second.kill() }
            _ = try await second.listeningURL()
            let acknowledged = try await writer.value
            let final = try await session.get()
            let reached = try await eventually(timeout: .seconds(60)) { log.seqs.last == final.version }
            #expect(
                reached,
                "read \(log.seqs); reconnections: \(log.reconnects.map { "after \($0.after ?? -1): \($0.reason)" })")
            #expect(log.seqs == Array(1...final.version), "every event once, in order")
            #expect(!log.reconnects.isEmpty, "the stream was cut by the kill")
            #expect(log.reconnects.allSatisfy { $0.after != nil })
            // Every acknowledged write survived and is on the stack.
            let onStack = Set(final.screens.map(\.id))
            #expect(acknowledged.values.allSatisfy(onStack.contains))
            #expect(acknowledged.count == 40)
            #expect(final.version == 41, "each push applied once, retries included")
        }
    }

    @Test(arguments: ServerKind.allCases) func aReaderThatFallsBehindIsCutAndResumesFromItsLastEvent(server: ServerKind)
        async throws
    {
        try await withServer(server, client: { $0.streams.maxBufferedBytes = 2_048 }) { client, _ in
            let log = StreamLog()
            let session = try await client.createSession(root: ScreenSeed("Home"))
            // About 130 KB of events, twice what one read of the socket transport takes (64 KiB),
            // so the cut always comes before the last event: a smaller backlog can arrive whole in
            // one read, and then the reader has every event before it is cut.
            for index in 0..<60 {
                try await session.push("S\(index)", values: ["padding": .string(String(repeating: "x", count: 2_000))])
            }
            let final = try await session.get().version
            let reconnecting = makeClient(sameServerAs: client) { configuration in
                configuration.streams.maxBufferedBytes = 2_048
                configuration.streams.onReconnect = { log.record($0) }
            }
            var iterator = reconnecting.session(id: session.id, token: session.token).events(after: 0)
                .makeAsyncIterator()
            let firstItem = try await iterator.next()
            #expect(firstItem?.seq == 1)
            // Read nothing more until the client has cut its connection (it holds too much unread).
            try await waitUntil("the stream to be cut", timeout: .seconds(60)) {
                (try await client.metrics()).contains("navigation_values_subscribers 0")
            }
            var seqs: [Int64] = [1]
            while let item = try await iterator.next() {
                seqs.append(item.seq)
                if item.seq == final { break }
            }
            #expect(seqs == Array(1...final))
            #expect(log.reconnects.first?.after.map { $0 >= 1 && $0 < final } == true)
        }
    }

    @Test(arguments: ServerKind.allCases) func cancellingTheReadingTaskClosesTheStream(server: ServerKind) async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let reader = Task {
                for try await _ in session.events(after: 0) {}
            }
            try await waitUntil("the stream to subscribe", timeout: .seconds(30)) {
                (try await client.metrics()).contains("navigation_values_subscribers 1")
            }
            reader.cancel()
            await #expect(throws: CancellationError.self) { try await reader.value }
            try await waitUntil("the server to see the stream closed", timeout: .seconds(30)) {
                (try await client.metrics()).contains("navigation_values_subscribers 0")
            }
        }
    }
}
