import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesWire
import TestSupport
import Testing

/// Replay and restarts of sessions with several stacks: replay at every N equals what the
/// server showed at N; a restarted server shows and behaves exactly as before.
@Suite struct StacksReplayAndRestartTests {
    static let schema: JSONValue = [
        "values": [
            "title": ["type": "string", "default": "t"], "draft": ["type": "any", "observationIgnored": true],
        ],
        "preferences": ["pick": ["type": "string", "default": ""]],
    ]

    /// One random change of a session with several stacks, as an operation of a batch
    /// (`{"op", …}`), chosen from what the session shows now.
    static func randomOperation(_ shown: JSONValue, _ random: inout SplitMix64) -> JSONValue {
        let tabs = (shown["stacks"]?.arrayValue ?? []).filter { $0["kind"] == "tab" }.compactMap { $0["id"] }
        let stacks: [JSONValue] =
            ["main", "top", "selected"] + (shown["stacks"]?.arrayValue ?? []).compactMap { $0["id"] }
        func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &random)] }
        let screen = pick(["top", "root", "selected:top", "top:root"] as [JSONValue])
        let values: [JSONValue] = ["a", "b", .null, 1]
        switch Int.random(in: 0..<15, using: &random) {
        case 0, 1: return ["op": "push", "stack": pick(stacks), "name": "S", "values": ["title": pick(values)]]
        case 2: return ["op": "pop", "stack": pick(stacks)]
        case 3:
            return [
                "op": "createStack", "id": .string("tab\(Int.random(in: 0..<4, using: &random))"),
                "root": ["name": "T"],
            ]
        case 4: return ["op": "selectStack", "stack": pick(["main"] + tabs)]
        case 5: return ["op": "removeStack", "stack": pick(tabs.isEmpty ? ["main"] : tabs)]
        case 6, 7:
            return [
                "op": "present", "style": pick(["sheet", "fullScreenCover"] as [JSONValue]), "root": ["name": "P"],
            ]
        case 8: return ["op": "dismiss"]
        case 9: return ["op": "setValues", "screen": screen, "values": [pick(["title", "draft", "n"]): pick(values)]]
        case 10:
            return [
                "op": "setHandler", "screen": screen, "key": "pick", "passBack": .bool(Bool.random(using: &random)),
            ]
        case 11: return ["op": "publish", "screen": screen, "key": "pick", "value": pick(["p", "q"] as [JSONValue])]
        case 12: return ["op": "replaceAbove", "screen": screen, "screens": [["name": "R1"], ["name": "R2"]]]
        case 13 where tabs.isEmpty:
            return ["op": "createStack", "id": .string("tab\(Int.random(in: 4..<6, using: &random))")]
        case 13:
            // Now and then past the last tab: refused.
            let position = Int.random(in: 0...tabs.count, using: &random)
            return ["op": "moveStack", "stack": pick(tabs), "position": .integer(Int64(position))]
        default: return ["op": "return", "screen": "top", "key": "pick", "value": "r"]
        }
    }

    /// Sends one operation through its own endpoint (or, one time in four, a batch of two or three).
    static func send(_ operation: JSONValue, alone: Bool, to session: TestSession) async throws -> HTTPResponse {
        guard alone else { return try await session.send("POST", "/batch", json: ["operations": [operation]]) }
        var body = operation.objectValue ?? [:]
        let name = body.removeValue(forKey: "op")?.stringValue ?? ""
        func take(_ member: String) -> String { body.removeValue(forKey: member)?.stringValue ?? "" }
        switch name {
        case "push": return try await session.send("POST", "/stacks/\(take("stack"))/push", json: .object(body))
        case "pop": return try await session.send("POST", "/stacks/\(take("stack"))/pop", json: .object(body))
        case "createStack": return try await session.send("POST", "/stacks", json: .object(body))
        case "selectStack": return try await session.send("POST", "/select", json: .object(body))
        case "removeStack": return try await session.send("DELETE", "/stacks/\(take("stack"))")
        case "moveStack": return try await session.send("POST", "/stacks/\(take("stack"))/move", json: .object(body))
        case "present": return try await session.send("POST", "/present", json: .object(body))
        case "dismiss": return try await session.send("POST", "/dismiss", json: .object(body))
        case "setValues":
            let screen = take("screen")
            return try await session.send("PATCH", "/screens/\(screen)/values", json: body["values"] ?? [:])
        case "setHandler":
            let (screen, key) = (take("screen"), take("key"))
            return try await session.send("PUT", "/screens/\(screen)/handlers/\(key)", json: .object(body))
        case "publish":
            let (screen, key) = (take("screen"), take("key"))
            return try await session.send("POST", "/screens/\(screen)/preferences/\(key)", json: .object(body))
        case "replaceAbove":
            return try await session.send("PUT", "/screens/\(take("screen"))/above", json: .object(body))
        default: return try await session.send("POST", "/screens/\(take("screen"))/return", json: .object(body))
        }
    }

    /// Replay at every N of a random multi-stack session equals what the server showed
    /// right after event N; with snapshots every 3 events and with none.
    @Test(arguments: [0, 3])
    func replayAtEveryEventEqualsWhatTheServerShowedThen(snapshotInterval: Int) async throws {
        try await withRunningServer(configure: { $0.service.snapshotInterval = snapshotInterval }) { client, _ in
            let session = try await TestSession.create(client, ["schema": Self.schema, "root": ["name": "Root"]])
            var random = SplitMix64(state: UInt64(1_616 + snapshotInterval))
            var shown: [Int64: JSONValue] = [1: try await session.get()]
            var current = try await session.get()
            var kinds: Set<String> = []
            for _ in 0..<120 {
                let answer: HTTPResponse
                if Int.random(in: 0..<4, using: &random) == 0 {
                    let count = Int.random(in: 2...3, using: &random)
                    var operations: [JSONValue] = []
                    for _ in 0..<count { operations.append(Self.randomOperation(current, &random)) }
                    answer = try await session.send("POST", "/batch", json: ["operations": .array(operations)])
                } else {
                    answer = try await Self.send(Self.randomOperation(current, &random), alone: true, to: session)
                }
                guard (200..<300).contains(answer.status) else {
                    // A refusal (409, 404, 422) changes nothing.
                    #expect((400..<500).contains(answer.status), "\(String(decoding: answer.body, as: UTF8.self))")
                    continue
                }
                current = try await session.get()
                shown[try #require(current["version"]?.integerValue)] = current
            }
            for event in try await session.history() {
                for inner in [event] + (event["events"]?.arrayValue ?? []) {
                    if let type = inner["type"]?.stringValue { kinds.insert(type) }
                }
            }
            let latest = try #require(shown.keys.max())
            #expect(latest > 60)
            // The random walk went through the new kinds of change.
            for type in [
                "stack.created", "stack.selected", "stack.presented", "stack.dismissed", "stack.screen.pushed",
                "batch.applied", "screens.replaced", "stack.moved",
            ] {
                #expect(kinds.contains(type), "no \(type) event")
            }
            for version in 1...latest {
                let expected = try #require(shown[version], "no answer was seen at version \(version)")
                let replayed = try await session.send("GET", "/replay?at=\(version)")
                #expect(replayed.status == 200)
                #expect(replayed.json == expected, "replay at \(version) differs from what the server showed")
            }
        }
    }

    /// A session with a selected tab, nested presentations, handlers with memory on a sheet's screens.
    static func build(_ session: TestSession) async throws -> (sheetTop: String, cover: String) {
        _ = try await session.push("Detail", values: ["title": "detail"])
        _ = try await session.addTab("search", root: "Search")
        _ = try await session.push("Results", onto: "search")
        try await session.expect(200, "POST", "/select", json: ["stack": "search"])
        let (sheet, _) = try await session.present(from: "top", root: "Filter")
        let sheetTop = try await session.push("Options", onto: sheet)
        try await session.patch(sheetTop, ["title": "options", "draft": "typed"])
        try await session.handle(sheetTop, "pick", passBack: true)
        try await session.handle("search:top", "pick", passBack: false)
        try await session.publish(sheetTop, "pick", "blue")
        let (cover, _) = try await session.present(from: sheetTop, style: "fullScreenCover", root: "Camera")
        _ = try await session.addTab("profile", root: "Profile")
        try await session.expect(
            200, "POST", "/batch",
            json: ["operations": [["op": "push", "stack": "profile"], ["op": "pop", "stack": "profile"]]])
        // `search` moves after `profile`: it now comes after the sheet its screen presents in the
        // stored positions, and must still be there before that sheet when the session loads.
        try await session.expect(200, "POST", "/stacks/search/move", json: ["position": 1])
        return (sheetTop, cover)
    }

    /// After a restart on the same file, every read is the same, and the session behaves
    /// the same (handler memory, the tree's rules, positions of new stacks).
    @Test func aRestartedServerShowsAndBehavesExactlyAsBefore() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-stacks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("stacks.sqlite").path
        func reads(_ session: TestSession) async throws -> [JSONValue] {
            var result = [try await session.get(), try await session.expect(200, "GET", "/stacks")]
            for stack in ["main", "search", "profile", "top", "selected"] {
                result.append(try await session.expect(200, "GET", "/stacks/\(stack)"))
            }
            for screen in ["top", "root", "search:root", "selected:top"] {
                result.append(try await session.screen(screen))
            }
            return result
        }
        /// What the same changes answer, run on either side of the restart.
        func behaviour(_ session: TestSession, sheetTop: String, cover: String) async throws -> [JSONValue] {
            var answers: [JSONValue] = []
            // The cover's presenter is covered: no push.
            answers.append(try await session.send("POST", "/stacks/top/push").json ?? .null)
            try await session.expect(200, "POST", "/dismiss", json: ["stack": .string(cover)])
            // The same value again: the handler remembers it, nothing is delivered.
            answers.append(try await session.publish(sheetTop, "pick", "blue"))
            answers.append(try await session.publish(sheetTop, "pick", "green"))
            answers.append(try await session.expect(201, "POST", "/stacks", json: ["id": "late"]))
            answers.append(try await session.expect(200, "POST", "/stacks/late/move", json: ["position": 0]))
            answers.append(try await session.get())
            return answers.map(Self.withoutTimes)
        }
        let (session, before, sheetTop, cover) = try await withRunningServer(databasePath: path) { client, _ in
            let session = try await TestSession.create(client, ["schema": Self.schema, "root": ["name": "Home"]])
            let (sheetTop, cover) = try await Self.build(session)
            return (session, try await reads(session), sheetTop, cover)
        }
        let (after, behavedAfter) = try await withRunningServer(databasePath: path) { client, _ in
            let restarted = TestSession(client: client, id: session.id, token: session.token, created: session.created)
            let after = try await reads(restarted)
            let replayed = try await restarted.send("GET", "/replay")
            #expect(replayed.json == after.first)
            return (after, try await behaviour(restarted, sheetTop: sheetTop, cover: cover))
        }
        #expect(after == before)
        // The same changes on a session built alike that never restarted answer the same (ids aside).
        let behavedWithout = try await withRunningServer { client, _ in
            let twin = try await TestSession.create(client, ["schema": Self.schema, "root": ["name": "Home"]])
            let (twinSheetTop, twinCover) = try await Self.build(twin)
            return try await behaviour(twin, sheetTop: twinSheetTop, cover: twinCover)
        }
        #expect(Self.shapes(behavedAfter) == Self.shapes(behavedWithout))
    }

    // MARK: - Comparing answers across sessions

    static func withoutTimes(_ json: JSONValue) -> JSONValue {
        guard case .object(var members) = json else { return json }
        members["createdAt"] = nil
        members["updatedAt"] = nil
        return .object(members)
    }

    /// An answer with every id replaced by its kind, so two sessions built alike compare equal.
    static func shapes(_ answers: [JSONValue]) -> [JSONValue] {
        func shape(_ json: JSONValue) -> JSONValue {
            switch json {
            case .string(let text) where text.hasPrefix("c_") || text.hasPrefix("p_") || text.hasPrefix("s_"):
                return .string(String(text.prefix(2)))
            case .array(let items): return .array(items.map(shape))
            case .object(let members): return .object(members.mapValues(shape))
            default: return json
            }
        }
        return answers.map(shape)
    }
}
