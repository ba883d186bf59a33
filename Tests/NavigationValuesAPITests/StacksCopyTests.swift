import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesWire
import TestSupport
import Testing

/// Export, import, fork and diff of sessions with several stacks (tabs, presentations,
/// compound changes and batches): the copies replay like their originals at every revision.
@Suite struct StacksCopyTests {
    /// A random multi-stack session: 90 changes through their own endpoints, one in four as a
    /// batch of two or three, with the refusals left out (they change nothing).
    static func randomSession(_ client: TestClient, seed: UInt64) async throws -> TestSession {
        let session = try await TestSession.create(
            client, ["schema": StacksReplayAndRestartTests.schema, "root": ["name": "Root"]])
        var random = SplitMix64(state: seed)
        var current = try await session.get()
        for _ in 0..<90 {
            let answer: HTTPResponse
            if Int.random(in: 0..<4, using: &random) == 0 {
                let count = Int.random(in: 2...3, using: &random)
                var operations: [JSONValue] = []
                for _ in 0..<count { operations.append(StacksReplayAndRestartTests.randomOperation(current, &random)) }
                answer = try await session.send("POST", "/batch", json: ["operations": .array(operations)])
            } else {
                answer = try await StacksReplayAndRestartTests.send(
                    StacksReplayAndRestartTests.randomOperation(current, &random), alone: true, to: session)
            }
            guard (200..<300).contains(answer.status) else { continue }
            current = try await session.get()
        }
        return session
    }

    /// Export, then import: the copy (new session, screen and presentation ids) replays as the
    /// original at every revision, and its own export is the original's with the ids changed.
    @Test(arguments: Backend.available)
    func anImportedMultiStackExportReplaysLikeTheOriginal(backend: Backend) async throws {
        try await withRunningServer(on: backend, configure: { $0.service.snapshotInterval = 7 }) { client, _ in
            let original = try await Self.randomSession(client, seed: 2_026)
            let history = try await original.everyEvent()
            let kinds = Set(
                history.flatMap { event in
                    ([event] + (event["events"]?.arrayValue ?? [])).compactMap { $0["type"]?.stringValue }
                })
            for type in [
                "stack.created", "stack.presented", "stack.dismissed", "screens.replaced", "batch.applied",
                "stack.moved",
            ] {
                #expect(kinds.contains(type), "the random session has no \(type) event")
            }
            let version = Int64(history.count)
            #expect(version > 40)

            let export = try await original.send("GET", "/export")
            #expect(export.status == 200)
            let imported = try await client.send(
                "POST", "/v1/sessions/import", raw: Data(export.body), headers: ["Content-Type": "application/x-ndjson"]
            )
            #expect(imported.status == 201, "\(imported.text)")
            let json = try #require(imported.json)
            let copy = TestSession(
                client: client, id: try #require(json["id"]?.stringValue),
                token: try #require(json["token"]?.stringValue),
                created: json)
            let copyHistory = try await copy.everyEvent()
            var map = idMap(from: history, to: copyHistory)
            #expect(map.keys.contains { $0.hasPrefix("p_") }, "no presentation id was mapped")
            map[original.id] = copy.id
            for revision in 1...version {
                let expected = replacingStrings(map, in: try await original.replay(at: revision))
                #expect(try await copy.replay(at: revision) == expected, "revision \(revision)")
            }
            #expect(copyHistory.map { event in event["seq"] } == history.map { event in event["seq"] })
            #expect(copyHistory == history.map { replacingStrings(map, in: $0) })
        }
    }

    /// A fork at N of a multi-stack session is the origin replayed at N; then the diff of the
    /// fork between any two revisions turns one replay into the other.
    @Test(arguments: Backend.available)
    func aForkOfAMultiStackSessionIsItsReplayAndDiffsHold(backend: Backend) async throws {
        try await withRunningServer(on: backend, configure: { $0.service.snapshotInterval = 5 }) { client, _ in
            let origin = try await Self.randomSession(client, seed: 77)
            let history = try await origin.everyEvent()
            let at = Int64(history.count) - 3
            let forked = try await client.send(
                "POST", "/v1/sessions/fork", json: ["session": .string(origin.id), "at": .integer(at)],
                token: origin.token)
            #expect(forked.status == 201, "\(forked.text)")
            let json = try #require(forked.json)
            let fork = TestSession(
                client: client, id: try #require(json["id"]?.stringValue),
                token: try #require(json["token"]?.stringValue),
                created: json)
            var map = idMap(from: Array(history.prefix(Int(at))), to: try await fork.everyEvent())
            map[origin.id] = fork.id
            var expected = replacingStrings(map, in: try await origin.replay(at: at))
            expected =
                expected.objectValue.map { members in
                    var members = members
                    members["origin"] = ["session": .string(origin.id), "version": .integer(at)]
                    return .object(members)
                } ?? expected
            #expect(try await fork.replay(at: at) == expected)

            // The diff between revisions of the multi-stack history, both ways round: every second
            // revision against every sixth.
            var replays: [Int64: JSONValue] = [:]
            for revision in 1...at { replays[revision] = try await fork.replay(at: revision) }
            var pairs = 0
            for from in stride(from: 1, through: at, by: 2) {
                for to in stride(from: 1, through: at, by: 6) {
                    let answer = try await fork.send("GET", "/diff?from=\(from)&to=\(to)")
                    #expect(answer.status == 200)
                    let patch = try JSONPatch(json: try #require(answer.json))
                    #expect(try patch.applied(to: try #require(replays[from])) == replays[to], "\(from) to \(to)")
                    pairs += 1
                }
            }
            #expect(pairs > 60)
        }
    }
}

/// The ids a copy gave a session's screens and presentations, from the two sessions' events in
/// order (a batch's steps included): each screen an event made (a root, a pushed screen, a new
/// stack's screens) and each presentation, of one against the same of the other.
func idMap(from original: [JSONValue], to copy: [JSONValue]) -> [String: String] {
    var map: [String: String] = [:]
    func made(_ event: JSONValue) -> [String] {
        var screens: [JSONValue] = []
        var ids: [String] = []
        if let root = event["root"] { screens.append(root) }
        if let screen = event["screen"], screen.objectValue != nil { screens.append(screen) }
        screens += event["pushed"]?.arrayValue ?? []
        if let stack = event["stack"], stack.objectValue != nil {
            if let id = stack["id"]?.stringValue { ids.append(id) }
            screens += stack["screens"]?.arrayValue ?? []
        }
        for step in event["events"]?.arrayValue ?? [] { ids += made(step) }
        return ids + screens.compactMap { $0["id"]?.stringValue }
    }
    for (left, right) in zip(original, copy) {
        for (old, new) in zip(made(left), made(right)) { map[old] = new }
    }
    return map
}
