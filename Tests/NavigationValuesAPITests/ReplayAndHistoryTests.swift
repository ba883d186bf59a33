import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

@Suite struct ReplayAndHistoryTests {
    /// Applies random operations and checks, for every N, that replay at N equals the session the
    /// server showed right after operation N. Runs with snapshots every 3 events and with none.
    @Test(arguments: [0, 3])
    func replayAtEveryEventEqualsWhatTheServerShowedThen(snapshotInterval: Int) async throws {
        try await withRunningServer(configure: { $0.service.snapshotInterval = snapshotInterval }) { client, _ in
            let schema: JSONValue = [
                "values": [
                    "title": ["type": "string", "default": "t"], "draft": ["type": "any", "observationIgnored": true],
                ],
                "preferences": ["pick": ["type": "string", "default": ""]],
            ]
            let session = try await client.createSession(["schema": schema, "root": ["name": "Root"]])
            var random = SplitMix64(state: UInt64(42 + snapshotInterval))
            var shown: [Int64: JSONValue] = [:]
            let first = try await client.send("GET", "/v1/sessions/\(session.id)", token: session.token)
            shown[1] = first.json
            let keys = ["title", "draft", "n"]
            let values: [JSONValue] = ["a", "b", 1, .null, ["x": [1, 2]]]
            for _ in 0..<60 {
                let base = "/v1/sessions/\(session.id)"
                let screen = ["root", "top"][Int.random(in: 0..<2, using: &random)]
                let result: HTTPResponse
                switch Int.random(in: 0..<8, using: &random) {
                case 0, 1:
                    result = try await client.send(
                        "POST", "\(base)/push", json: ["name": "S", "values": ["n": 1]], token: session.token)
                case 2:
                    result = try await client.send("POST", "\(base)/pop", json: ["count": 1], token: session.token)
                case 3:
                    let key = keys[Int.random(in: 0..<keys.count, using: &random)]
                    let value = values[Int.random(in: 0..<values.count, using: &random)]
                    result = try await client.send(
                        "PATCH", "\(base)/screens/\(screen)/values", json: [key: value], token: session.token)
                case 4:
                    let passBack = Bool.random(using: &random)
                    result = try await client.send(
                        "PUT", "\(base)/screens/\(screen)/handlers/pick", json: ["passBack": .bool(passBack)],
                        token: session.token)
                case 5:
                    result = try await client.send(
                        "DELETE", "\(base)/screens/\(screen)/handlers/pick", token: session.token)
                case 6:
                    let value = ["p", "q", "r"][Int.random(in: 0..<3, using: &random)]
                    result = try await client.send(
                        "POST", "\(base)/screens/\(screen)/preferences/pick", json: ["value": .string(value)],
                        token: session.token)
                default:
                    result = try await client.send(
                        "PUT", "\(base)/path",
                        json: ["screens": [["name": "P1"], ["name": "P2", "values": ["title": "deep"]]]],
                        token: session.token)
                }
                guard (200..<300).contains(result.status) else { continue }  // 409 pops and 404 handlers change nothing
                let now = try await client.send("GET", base, token: session.token)
                let version = try #require(now.json?["version"]?.integerValue)
                shown[version] = now.json
            }
            let latest = try #require(shown.keys.max())
            #expect(latest > 30)
            for version in 1...latest {
                let expected = try #require(shown[version], "no answer was seen at version \(version)")
                let replayed = try await client.send(
                    "GET", "/v1/sessions/\(session.id)/replay?at=\(version)", token: session.token)
                #expect(replayed.status == 200)
                #expect(replayed.json == expected, "replay at \(version) differs from what the server showed")
            }
            let noAt = try await client.send("GET", "/v1/sessions/\(session.id)/replay", token: session.token)
            #expect(noAt.json == shown[latest])
        }
    }

    @Test func replayReadsStraightFromTheFileWhileTheServerWrites() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-replay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("live.sqlite").path
        try await withRunningServer(databasePath: path) { client, _ in
            let session = try await client.createSession(["root": ["values": ["title": "x"]]])
            try await client.push(session, values: ["title": "y"])
            let shown = try await client.send("GET", "/v1/sessions/\(session.id)", token: session.token)
            try await client.push(session)
            let fromFile = try await SessionReplay.session(SessionID(session.id), at: 2, databasePath: path)
            #expect(fromFile.json == shown.json)
            await #expect(throws: SessionReplay.Failure.self) {
                try await SessionReplay.session(SessionID("s_unknown"), databasePath: path)
            }
        }
    }

    /// A schema whose typed entries have no default (they read null) must load again from what the
    /// server stored: after a restart and in replay. (Found by schemathesis: it did not.)
    @Test func entriesWithoutDefaultsSurviveRestartAndReplay() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("schema.sqlite").path
        let types = ["string", "integer", "number", "boolean", "object", "array", "any"]
        var declared: [String: JSONValue] = [:]
        for type in types { declared[type] = ["type": .string(type)] }
        let schema: JSONValue = ["values": .object(declared), "preferences": ["p": ["type": "string"]], "strict": true]
        let (session, before) = try await withRunningServer(databasePath: path) { client, _ in
            let session = try await client.createSession(["schema": schema])
            try await client.push(session, values: ["string": "s"])
            let shown = try await client.send("GET", "/v1/sessions/\(session.id)", token: session.token)
            #expect(shown.json?["screens"]?.arrayValue?.first?["resolved"]?["integer"] == .null)
            let replayed = try await client.send("GET", "/v1/sessions/\(session.id)/replay?at=1", token: session.token)
            #expect(replayed.status == 200)
            return (session, shown.json)
        }
        try await withRunningServer(databasePath: path) { client, _ in
            let after = try await client.send("GET", "/v1/sessions/\(session.id)", token: session.token)
            #expect(after.status == 200)
            #expect(after.json == before)
        }
    }

    @Test func replayOutsideTheHistoryIsRefused() async throws {
        try await withRunningServer { client, _ in
            let session = try await client.createSession()
            let tooFar = try await client.send("GET", "/v1/sessions/\(session.id)/replay?at=2", token: session.token)
            #expect(tooFar.status == 404)
            let zero = try await client.send("GET", "/v1/sessions/\(session.id)/replay?at=0", token: session.token)
            #expect(zero.status == 422)
            #expect(zero.header("Content-Type") == "application/problem+json")
        }
    }

    @Test func historyPagesThroughEveryEventInOrder() async throws {
        try await withRunningServer { client, _ in
            let session = try await client.createSession()
            for _ in 0..<4 { try await client.push(session) }
            let first = try await client.send("GET", "/v1/sessions/\(session.id)/history?limit=2", token: session.token)
            #expect(first.status == 200)
            #expect(first.json?["events"]?.arrayValue?.map { $0["seq"] } == [1, 2])
            #expect(first.json?["next"] == 2)
            let second = try await client.send(
                "GET", "/v1/sessions/\(session.id)/history?after=2&limit=2", token: session.token)
            #expect(second.json?["events"]?.arrayValue?.map { $0["type"] } == ["screen.pushed", "screen.pushed"])
            #expect(second.json?["next"] == 4)
            let last = try await client.send("GET", "/v1/sessions/\(session.id)/history?after=4", token: session.token)
            #expect(last.json?["events"]?.arrayValue?.map { $0["seq"] } == [5])
            #expect(last.json?["next"] == .null)
            let bad = try await client.send(
                "GET", "/v1/sessions/\(session.id)/history?limit=1001", token: session.token)
            #expect(bad.status == 422)
        }
    }

    @Test func historyAndReplayStayAfterTheSessionEndsAndAreGoneAfterAPurge() async throws {
        try await withRunningServer { client, _ in
            let session = try await client.createSession()
            try await client.push(session)
            _ = try await client.send("DELETE", "/v1/sessions/\(session.id)", token: session.token)
            let history = try await client.send("GET", "/v1/sessions/\(session.id)/history", token: session.token)
            #expect(history.json?["events"]?.arrayValue?.last?["type"] == "session.ended")
            let replay = try await client.send("GET", "/v1/sessions/\(session.id)/replay?at=2", token: session.token)
            #expect(replay.json?["state"] == "active")
            #expect(replay.json?["screens"]?.arrayValue?.count == 2)
            _ = try await client.send("DELETE", "/v1/sessions/\(session.id)?purge=true", token: session.token)
            let gone = try await client.send("GET", "/v1/sessions/\(session.id)/history", token: session.token)
            #expect(gone.status == 410)
            #expect(gone.json?["type"] == "/problems/gone")
            let purgedReplay = try await client.send(
                "GET", "/v1/sessions/\(session.id)/replay?at=1", token: session.token)
            #expect(purgedReplay.status == 410)
            let poll = try await client.send("GET", "/v1/sessions/\(session.id)/events?after=0", token: session.token)
            #expect(poll.status == 410)
            let never = try await client.send("GET", "/v1/sessions/s_never/history", token: client.adminToken)
            #expect(never.status == 404)
        }
    }

    @Test func longPollAnswersAtOnceWhenEventsWaitAndOtherwiseWhenOneArrives() async throws {
        try await withRunningServer { client, _ in
            let session = try await client.createSession()
            let ready = try await client.send("GET", "/v1/sessions/\(session.id)/events?after=0", token: session.token)
            #expect(ready.json?["events"]?.arrayValue?.count == 1)
            #expect(ready.json?["last"] == 1)
            let empty = try await client.send("GET", "/v1/sessions/\(session.id)/events?after=1", token: session.token)
            #expect(empty.json?["events"] == [])
            #expect(empty.json?["last"] == 1)
            async let waited = client.send(
                "GET", "/v1/sessions/\(session.id)/events?after=1&wait=20", token: session.token)
            let pusher = Task {
                _ = try await client.push(session)
            }
            let answer = try await waited
            try await pusher.value
            #expect(answer.json?["events"]?.arrayValue?.first?["type"] == "screen.pushed")
            #expect(answer.json?["last"] == 2)
            let tooLong = try await client.send(
                "GET", "/v1/sessions/\(session.id)/events?after=1&wait=61", token: session.token)
            #expect(tooLong.status == 422)
        }
    }

    @Test func theAdminStreamTagsEveryEventWithItsSession() async throws {
        try await withRunningServer { client, server in
            let forbidden = try SSEClient(
                port: server.port, path: "/v1/events", headers: ["Authorization": "Bearer nope"])
            #expect(await forbidden.status() == 403)
            let stream = try SSEClient(
                port: server.port, path: "/v1/events", headers: ["Authorization": "Bearer admin-secret"])
            defer { stream.close() }
            #expect(await stream.status() == 200)
            let first = try await client.createSession()
            let second = try await client.createSession()
            let frames = await stream.frames.events(2)
            let sessions = try frames.map { try JSONValue(parsing: $0.data ?? "")["session"] }
            #expect(sessions == [.string(first.id), .string(second.id)])
            #expect(frames.map(\.event) == ["session.created", "session.created"])
        }
    }
}
