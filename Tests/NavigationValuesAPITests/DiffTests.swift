import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesWire
import TestSupport
import Testing

@Suite struct DiffTests {
    /// For every pair (A, B) of revisions of a random session, both ways round and A = B:
    /// the diff applied to the replay at A gives the replay at B. Snapshots every 8 events, so
    /// replays start from snapshots and from the first event.
    @Test(arguments: Backend.available)
    func theDiffBetweenAnyTwoRevisionsTurnsOneReplayIntoTheOther(backend: Backend) async throws {
        try await withRunningServer(on: backend, configure: { $0.service.snapshotInterval = 8 }) { client, _ in
            let session = try await TestSession.create(client, ["schema": randomHistorySchema, "root": ["name": "R"]])
            try await session.applyRandomRequests(32, seed: 11)
            let version = try #require(try await session.get()["version"]?.integerValue)
            #expect(version > 16)
            var replays: [Int64: JSONValue] = [:]
            for revision in 1...version { replays[revision] = try await session.replay(at: revision) }
            for from in 1...version {
                for to in 1...version {
                    let answer = try await session.send("GET", "/diff?from=\(from)&to=\(to)")
                    #expect(answer.status == 200)
                    #expect(answer.header("Content-Type") == "application/json-patch+json")
                    let patch = try JSONPatch(json: try #require(answer.json))
                    #expect(patch.operations.first == .test(path: "/version", value: .integer(from)))
                    let source = try #require(replays[from])
                    #expect(try patch.applied(to: source) == replays[to], "diff from \(from) to \(to)")
                    // A patch made for one revision refuses another (its first operation tests it).
                    if from != to {
                        #expect(throws: JSONPatchError.self) { try patch.applied(to: replays[to] ?? .null) }
                    }
                }
            }
        }
    }

    @Test(arguments: Backend.available)
    func withoutRevisionsItIsTheLatestChange(backend: Backend) async throws {
        try await withRunningServer(on: backend) { client, _ in
            let session = try await TestSession.create(client)
            let pushed = try await session.push("Detail")
            let answer = try await session.send("GET", "/diff")
            let patch = try JSONPatch(json: try #require(answer.json))
            #expect(patch.operations.first == .test(path: "/version", value: 1))
            #expect(patch.operations.contains(.replace(path: "/version", value: 2)))
            #expect(
                patch.operations.contains { operation in
                    if case .add("/screens/1", let screen) = operation { return screen["id"] == .string(pushed) }
                    return false
                })
            let onlyTo = try await session.send("GET", "/diff?to=1")
            #expect(try JSONPatch(json: try #require(onlyTo.json)) == JSONPatch([.test(path: "/version", value: 1)]))
        }
    }

    @Test func revisionsOutsideTheHistoryAndMissingCredentialsAreProblems() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            expectProblem(try await session.send("GET", "/diff?from=0"), 422, type: "unprocessable-content")
            expectProblem(try await session.send("GET", "/diff?to=x"), 422, type: "unprocessable-content")
            expectProblem(try await session.send("GET", "/diff?from=1&to=2"), 404, type: "not-found")
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(session.id)/diff"), 401, type: "unauthorized")
            let other = try await TestSession.create(client)
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(session.id)/diff", token: other.token), 403,
                type: "forbidden")
            // A purged session's history is gone: 410, as its history and events answer.
            #expect(try await session.send("DELETE", "?purge=true").status == 204)
            expectProblem(try await session.send("GET", "/diff"), 410, type: "gone")
        }
    }
}
