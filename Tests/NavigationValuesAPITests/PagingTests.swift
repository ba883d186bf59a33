import Foundation
import NavigationValues
import NavigationValuesAPI
import TestSupport
import Testing

/// Big reads bounded, so that they block no others: history, long poll and a stream's
/// catch-up page by bytes as well as by count, and still hand over every event, in order, once.
@Suite struct PagingTests {
    /// A session with 12 events of about 30 KB after its creation.
    func heavySession(_ client: TestClient) async throws -> TestSession {
        let session = try await TestSession.create(client)
        for index in 0..<12 {
            try await session.patch("root", ["blob": .string(String(repeating: "h", count: 30_000)), "i": .integer(Int64(index))])
        }
        return session
    }

    @Test func historyPagesByBytesAndHandsOverEveryEvent() async throws {
        try await withRunningServer(configure: { $0.maxPageBytes = 100_000 }) { client, _ in
            let session = try await heavySession(client)
            var after: Int64 = 0
            var seen: [Int64] = []
            while true {
                let page = try await session.send("GET", "/history?after=\(after)&limit=1000")
                #expect(page.status == 200)
                #expect(page.body.count <= 100_000 + 31_000)  // the budget, or one event past it
                let events = try #require(page.json?["events"]?.arrayValue)
                seen += events.compactMap { $0["seq"]?.integerValue }
                guard let next = page.json?["next"]?.integerValue else { break }
                #expect(events.count <= 4)
                after = next
            }
            #expect(seen == Array(1...13))
        }
    }

    @Test func aLongPollAnswersAPageBoundedByBytes() async throws {
        try await withRunningServer(configure: { $0.maxPageBytes = 100_000 }) { client, _ in
            let session = try await heavySession(client)
            let page = try await session.send("GET", "/events?after=1")
            let events = try #require(page.json?["events"]?.arrayValue)
            #expect(events.count >= 1 && events.count <= 4)
            #expect(page.json?["last"] == events.last?["seq"])
        }
    }

    @Test func aStreamsCatchUpPagesByBytesAndMissesNothing() async throws {
        try await withRunningServer(configure: { $0.maxPageBytes = 50_000 }) { client, server in
            let session = try await heavySession(client)
            let stream = try SSEClient(
                port: server.port, path: "/v1/sessions/\(session.id)/events?after=0",
                headers: ["Authorization": "Bearer \(session.token)"])
            defer { stream.close() }
            let frames = await stream.frames.events(13, timeout: .seconds(60))
            #expect(frames.map(\.id) == (1...13).map { String($0) })
        }
    }

    @Test func oneEventLargerThanAPageIsStillAPage() async throws {
        try await withRunningServer(configure: { $0.maxPageBytes = 1_000 }) { client, _ in
            let session = try await heavySession(client)
            let page = try await session.send("GET", "/history?after=1&limit=5")
            #expect(page.json?["events"]?.arrayValue?.count == 1)
            #expect(page.json?["next"] == 2)
        }
    }
}
