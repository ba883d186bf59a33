import NavigationValuesClient
import NavigationValuesWire
import Testing

/// A stream's iterator reads the same events through `next()` (on the global executor) and through
/// `next(isolation:)` (on the caller's actor, what `for try await` calls).
@Suite struct EventStreamIsolationTests {
    @Test(arguments: ServerKind.allCases) @MainActor func bothWaysOfAskingForTheNextEventDeliverEveryEventInOrder(
        server: ServerKind
    ) async throws {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            for index in 0..<5 { try await session.push("S\(index)") }
            try await session.pop(count: 2)
            let final = try await session.get().version
            var plain = session.events(after: 0).makeAsyncIterator()
            var isolated = session.events(after: 0).makeAsyncIterator()
            var plainSeqs: [Int64] = []
            var isolatedSeqs: [Int64] = []
            for _ in 0..<final {
                plainSeqs.append(try #require(try await plain.next()).seq)
                isolatedSeqs.append(try #require(try await isolated.next(isolation: MainActor.shared)).seq)
            }
            #expect(plainSeqs == Array(1...final))
            #expect(isolatedSeqs == Array(1...final))
        }
    }
}
