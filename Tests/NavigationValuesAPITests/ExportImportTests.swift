import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesWire
import TestSupport
import Testing

@Suite struct ExportImportTests {
    /// Export, then import: the new session has a new id, token and screen ids, and otherwise
    /// replays exactly as the original at every revision; its own export is the original's with
    /// the ids changed. Runs with snapshots every 5 events, so the copy's snapshots are used too.
    @Test(arguments: Backend.available)
    func anImportedExportReplaysLikeTheOriginalAtEveryRevision(backend: Backend) async throws {
        try await withRunningServer(on: backend, configure: { $0.service.snapshotInterval = 5 }) { client, _ in
            let original = try await TestSession.create(
                client, ["schema": randomHistorySchema, "root": ["name": "Home", "values": ["title": "x"]]])
            try await original.applyRandomRequests(40, seed: 3)
            #expect(try await original.send("DELETE").status == 204)  // the copy ends too
            let version = try #require(try await original.get()["version"]?.integerValue)

            let export = try await original.send("GET", "/export")
            #expect(export.status == 200)
            #expect(export.header("Content-Type") == "application/x-ndjson")
            #expect(export.header("Content-Disposition") == "attachment; filename=\"\(original.id).ndjson\"")
            let lines = export.text.split(separator: "\n").map(String.init)
            let history = try await original.everyEvent()
            #expect(lines.count == Int(version))
            #expect(try lines.map { try JSONValue(parsing: $0) } == history)

            let imported = try await client.send(
                "POST", "/v1/sessions/import", raw: Data(export.body), headers: ["Content-Type": "application/x-ndjson"]
            )
            #expect(imported.status == 201, "\(imported.text)")
            let json = try #require(imported.json)
            let id = try #require(json["id"]?.stringValue)
            let token = try #require(json["token"]?.stringValue)
            #expect(id != original.id)
            #expect(token != original.token)
            #expect(imported.header("Location") == "/v1/sessions/\(id)")
            #expect(imported.header("ETag") == "\"\(version)\"")
            let copy = TestSession(client: client, id: id, token: token, created: json)

            var map = screenIDMap(from: history, to: try await copy.everyEvent())
            #expect(!map.isEmpty)
            #expect(Set(map.keys).isDisjoint(with: Set(map.values)))
            map[original.id] = id
            for revision in 1...version {
                let expected = replacingStrings(map, in: try await original.replay(at: revision))
                #expect(try await copy.replay(at: revision) == expected, "revision \(revision)")
            }
            let again = try await copy.send("GET", "/export")
            let expectedLines = try lines.map { replacingStrings(map, in: try JSONValue(parsing: $0)) }
            #expect(try again.text.split(separator: "\n").map { try JSONValue(parsing: String($0)) } == expectedLines)
            // The copy ended as the original did.
            expectProblem(try await copy.send("POST", "/push", json: [:]), 410, type: "gone")
        }
    }

    @Test(arguments: Backend.available)
    func aCopyGoesOnIndependentlyOfItsOriginal(backend: Backend) async throws {
        try await withRunningServer(on: backend) { client, _ in
            let original = try await TestSession.create(client)
            try await original.push("A")
            let export = try await original.send("GET", "/export")
            let imported = try await client.send(
                "POST", "/v1/sessions/import", raw: Data(export.body), headers: ["Content-Type": "application/x-ndjson"]
            )
            let json = try #require(imported.json)
            let copy = TestSession(
                client: client, id: try #require(json["id"]?.stringValue),
                token: try #require(json["token"]?.stringValue),
                created: json)
            try await copy.push("OnlyInCopy")
            #expect(try await original.get()["version"] == 2)
            #expect(try await copy.get()["version"] == 3)
            #expect(try await original.get()["screens"]?.arrayValue?.count == 2)
        }
    }

    /// Each kind of bad file is a 422 naming its line (pointer `/<line index>…`).
    @Test func aFileThatDoesNotReplayIsRefusedNamingTheLine() async throws {
        try await withRunningServer { client, _ in
            let original = try await TestSession.create(
                client, ["schema": randomHistorySchema, "root": ["name": "Home"]])
            try await original.handle("root", "pick", passBack: false)
            let top = try await original.push("Top")
            try await original.publish(top, "pick", "p")
            let lines = (try await original.send("GET", "/export")).text.split(separator: "\n").map(String.init)
            #expect(lines.count == 4)

            func send(_ lines: [String], type: String = "application/x-ndjson") async throws -> HTTPResponse {
                try await client.send(
                    "POST", "/v1/sessions/import", raw: Data(lines.joined(separator: "\n").utf8),
                    headers: ["Content-Type": type])
            }
            expectProblem(try await send(["{not json"]), 422, type: "unprocessable-content", pointers: ["/0"])
            expectProblem(try await send([lines[1]]), 422, type: "unprocessable-content", pointers: ["/0/seq"])
            expectProblem(
                try await send([lines[0], lines[2]]), 422, type: "unprocessable-content", pointers: ["/1/seq"])
            expectProblem(
                try await send([lines[0], lines[0]]), 422, type: "unprocessable-content", pointers: ["/1/seq"])
            // A recorded delivery that the replay does not make: the walk stopped at the root.
            let tampered = lines[3].replacingOccurrences(of: #""stoppedAt":"c_"#, with: #""stoppedAt":"x_"#)
            #expect(tampered != lines[3])
            let refused = try await send([lines[0], lines[1], lines[2], tampered])
            expectProblem(refused, 422, type: "unprocessable-content", pointers: ["/3/stoppedAt"])
            #expect(refused.json?["detail"]?.stringValue?.hasPrefix("line 4: ") == true)
            let ended = #"{"seq":5,"type":"session.ended","at":"2026-11-30T10:00:00.000Z"}"#
            let afterEnd = #"{"seq":6,"type":"session.ended","at":"2026-11-30T10:00:00.000Z"}"#
            expectProblem(
                try await send(lines + [ended, afterEnd]), 422, type: "unprocessable-content", pointers: ["/5"])
            expectProblem(try await send([]), 422, type: "unprocessable-content")
            expectProblem(try await send(lines, type: "text/csv"), 415, type: "unsupported-media-type")
            // Blank lines and CRLF are fine.
            let crlf = try await send(lines.map { $0 + "\r" } + ["", "  "])
            #expect(crlf.status == 201, "\(crlf.text)")
        }
    }

    @Test func anImportIsBoundedByTheCopyLimitAndTheBodyLimit() async throws {
        try await withRunningServer(configure: { $0.service.maxCopiedEvents = 3 }) { client, _ in
            let original = try await TestSession.create(client)
            for _ in 0..<3 { try await original.push("S") }
            let export = try await original.send("GET", "/export")
            let refused = try await client.send(
                "POST", "/v1/sessions/import", raw: Data(export.body), headers: ["Content-Type": "application/x-ndjson"]
            )
            expectProblem(refused, 422, type: "unprocessable-content", pointers: ["/3"])
            #expect(refused.json?["detail"]?.stringValue?.contains("--max-copied-events") == true)
            let huge = Data(repeating: UInt8(ascii: " "), count: 1024 * 1024 + 1)
            expectProblem(
                try await client.send(
                    "POST", "/v1/sessions/import", raw: huge, headers: ["Content-Type": "application/x-ndjson"]), 413,
                type: "content-too-large")
        }
    }

    @Test(arguments: Backend.available)
    func aRetriedImportAnswersTheFirstSessionAgain(backend: Backend) async throws {
        try await withRunningServer(on: backend) { client, server in
            let original = try await TestSession.create(client)
            let export = try await original.send("GET", "/export")
            let first = try await client.send(
                "POST", "/v1/sessions/import", raw: Data(export.body),
                headers: ["Idempotency-Key": "import-1", "Content-Type": "application/x-ndjson"])
            let second = try await client.send(
                "POST", "/v1/sessions/import", raw: Data(export.body),
                headers: ["Idempotency-Key": "import-1", "Content-Type": "application/x-ndjson"])
            #expect(first.status == 201)
            #expect(second.status == 201)
            #expect(second.header("Idempotent-Replayed") == "true")
            #expect(second.json == first.json)
            let list = try await client.send("GET", "/v1/sessions", token: client.adminToken)
            #expect(list.json?["sessions"]?.arrayValue?.count == 2)
        }
    }

    @Test func exportNeedsACredentialThatReadsTheSession() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let other = try await TestSession.create(client)
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(session.id)/export"), 401, type: "unauthorized")
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(session.id)/export", token: other.token), 403,
                type: "forbidden")
            let admin = try await client.send("GET", "/v1/sessions/\(session.id)/export", token: client.adminToken)
            #expect(admin.status == 200)
            expectProblem(
                try await client.send("GET", "/v1/sessions/s_nope/export", token: client.adminToken), 404,
                type: "not-found")
        }
    }
}
