import Foundation
import NavigationValues
import TestSupport
import Testing

/// Several stacks per session on PostgreSQL with two instances: a random
/// multi-stack session written alternately through either instance reads the same through both
/// after every change, and replay through the other instance equals what was shown at every N.
@Suite(.needsPostgres) struct StacksOnPostgresTests {
    @Test func aRandomMultiStackSessionWrittenThroughTwoInstancesReadsTheSameThroughBoth() async throws {
        try await PostgresTestServer.withDatabase { url in
            let instances = try await TwoInstances.start(url)
            do {
                try await alternate(instances)
            } catch {
                try? await instances.stop()
                throw error
            }
            try await instances.stop()
        }
    }

    private func alternate(_ instances: TwoInstances) async throws {
        let created = try await TestSession.create(
            instances.clients[0], ["schema": StacksReplayAndRestartTests.schema, "root": ["name": "Root"]])
        let through = [instances.session(created, on: 0), instances.session(created, on: 1)]
        var random = SplitMix64(state: 1_617)
        var current = try await through[1].get()
        var shown: [Int64: JSONValue] = [1: current]
        var applied = 0
        for step in 0..<60 {
            let writer = through[step % 2]
            let answer: HTTPResponse
            if step % 5 == 4 {
                var operations: [JSONValue] = []
                for _ in 0..<3 { operations.append(StacksReplayAndRestartTests.randomOperation(current, &random)) }
                answer = try await writer.send("POST", "/batch", json: ["operations": .array(operations)])
            } else {
                answer = try await StacksReplayAndRestartTests.send(
                    StacksReplayAndRestartTests.randomOperation(current, &random), alone: true, to: writer)
            }
            guard (200..<300).contains(answer.status) else {
                #expect((400..<500).contains(answer.status), "\(String(decoding: answer.body, as: UTF8.self))")
                // A refusal changes nothing, on either instance.
                #expect(try await through[(step + 1) % 2].get() == current)
                continue
            }
            applied += 1
            current = try await writer.get()
            // The other instance reads the same tree (it checks the stored version before reading).
            #expect(try await through[(step + 1) % 2].get() == current, "instances differ after step \(step)")
            shown[try #require(current["version"]?.integerValue)] = current
        }
        #expect(applied > 30)
        let latest = try #require(shown.keys.max())
        for version in 1...latest {
            let expected = try #require(shown[version], "no answer was seen at version \(version)")
            let replayed = try await through[1].send("GET", "/replay?at=\(version)")
            #expect(replayed.status == 200)
            #expect(replayed.json == expected, "replay at \(version) differs from what was shown")
        }
    }
}
