import Foundation
import TestSupport
import Testing

/// `--schema FILE`, `migrate` and `replay` against real files in temporary folders.
@Suite struct SchemaAndDatabaseCommandTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-cli-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func file(_ name: String, _ text: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test func aDefaultSchemaFileAppliesToSessionsCreatedWithoutOne() async throws {
        let path = try file(
            "schema.json", #"{"values": {"counter": {"type": "integer", "default": 0}}, "strict": true}"#)
        let server = try await ServeProcess(["--admin-token", "admin", "--schema", path])
        let created = try await server.send("POST", "/v1/sessions", body: "{}")
        #expect(created.status == 201)
        #expect(created.text.contains(#""strict":true"#))
        #expect(created.text.contains(#""resolved":{"counter":0}"#))
        #expect(try await server.stop().status == 0)
        try? FileManager.default.removeItem(at: folder)
    }

    @Test func badSchemaFilesAreUsageErrorsThatSayWhatIsWrong() async throws {
        let missing = folder.appendingPathComponent("missing.json").path
        let notJSON = try file("broken.json", "{values")
        let wrong = try file("wrong.json", #"{"values": {"counter": {"type": "colour"}}}"#)
        let cases: [(String, String)] = [
            (missing, "--schema: cannot read schema file '\(missing)'"),
            (notJSON, "--schema: '\(notJSON)' is not valid JSON: "),
            (wrong, "--schema: '\(wrong)' is not a valid schema: /values/counter"),
        ]
        for (path, message) in cases {
            let outcome = try await run(["serve", "--port", "0", "--db", ":memory:", "--schema", path])
            #expect(outcome.status == 2, "\(path)")
            #expect(outcome.stdout == "")
            #expect(outcome.stderr.hasPrefix("error: \(message)"), "\(outcome.stderr)")
        }
        let fromVariable = try await run(
            ["serve", "--port", "0", "--db", ":memory:"], environment: ["NAVIGATION_VALUES_SCHEMA": missing])
        #expect(fromVariable.status == 2)
        #expect(fromVariable.stderr.hasPrefix("error: NAVIGATION_VALUES_SCHEMA: cannot read schema file"))
        try? FileManager.default.removeItem(at: folder)
    }

    @Test func migrateAppliesEveryMigrationOnceThenReportsTheVersion() async throws {
        let path = folder.appendingPathComponent("migrated.sqlite").path
        let first = try await run(["migrate", "--db", path])
        #expect(first.status == 0)
        #expect(first.stderr == "")
        let lines = first.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("applied 0001_") == true)
        let version = lines.count - 1
        #expect(version >= 1)
        #expect(lines.last == "\(path) is at schema version \(version)")
        #expect(FileManager.default.fileExists(atPath: path))
        let second = try await run(["migrate"], environment: ["NAVIGATION_VALUES_DB": path])
        #expect(second == Outcome(status: 0, stdout: "\(path) is at schema version \(version)\n", stderr: ""))
        try? FileManager.default.removeItem(at: folder)
    }

    @Test func migrateOnAnUnopenableFileFailsWithStatusOne() async throws {
        let outcome = try await run(["migrate", "--db", "/nonexistent-folder/x.sqlite"])
        #expect(outcome.status == 1)
        #expect(outcome.stdout == "")
        #expect(outcome.stderr.hasPrefix("error: /nonexistent-folder/x.sqlite"))
    }

    @Test func replayOfAnUnknownSessionFailsWithoutPrintingJSON() async throws {
        let path = folder.appendingPathComponent("replay.sqlite").path
        #expect(try await run(["migrate", "--db", path]).status == 0)
        let outcome = try await run(["replay", "--db", path, "s_unknown"])
        #expect(outcome.status == 1)
        #expect(outcome.stdout == "")
        #expect(outcome.stderr.hasPrefix("error: "))
        try? FileManager.default.removeItem(at: folder)
    }

    @Test func replayPrintsTheSessionAsItWasAfterAnEvent() async throws {
        let server = try await ServeProcess(["--admin-token", "admin"])
        let created = try await server.send("POST", "/v1/sessions", body: #"{"root": {"name": "Home"}}"#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any])
        let id = try #require(object["id"] as? String)
        let pushed = try await server.send(
            "POST", "/v1/sessions/\(id)/push", body: #"{"name": "Detail"}"#, headers: ["Authorization": "Bearer admin"])
        #expect(pushed.status == 201)
        // Read-only, so it runs beside the server.
        let database = server.folder.appendingPathComponent("navigation-values.sqlite").path
        let latest = try await run(["replay", "--db", database, id])
        let first = try await run(["replay", "--db", database, id, "--at", "1"])
        #expect(try await server.stop().status == 0)
        #expect(latest.status == 0)
        #expect(latest.stderr == "")
        let latestJSON = try #require(
            try JSONSerialization.jsonObject(with: Data(latest.stdout.utf8)) as? [String: Any])
        #expect(latestJSON["version"] as? Int == 2)
        #expect((latestJSON["screens"] as? [Any])?.count == 2)
        let firstJSON = try #require(try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any])
        #expect(firstJSON["version"] as? Int == 1)
        #expect((firstJSON["screens"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Home"])
        let beyond = try await run(["replay", "--db", database, id, "--at", "3"])
        #expect(beyond.status == 1)
        #expect(beyond.stdout == "")
        #expect(beyond.stderr.hasPrefix("error: "))
    }

    @Test func exportPrintsTheHistoryOrTheSameTestTheAPIWrites() async throws {
        let server = try await ServeProcess(["--admin-token", "admin"])
        let created = try await server.send("POST", "/v1/sessions", body: #"{"root": {"name": "Home \"1\""}}"#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any])
        let id = try #require(object["id"] as? String)
        let admin = ["Authorization": "Bearer admin"]
        #expect(
            try await server.send("POST", "/v1/sessions/\(id)/push", body: #"{"name": "B"}"#, headers: admin).status
                == 201)
        let lines = try await server.send("GET", "/v1/sessions/\(id)/export", headers: admin)
        let test = try await server.send("GET", "/v1/sessions/\(id)/export?format=swift-testing", headers: admin)
        let some = try await server.send(
            "GET", "/v1/sessions/\(id)/export?format=swift-testing&versions=2", headers: admin)
        let database = server.folder.appendingPathComponent("navigation-values.sqlite").path
        let exported = try await run(["export", "--db", database, id])
        let asTest = try await run(["export", "--db", database, id, "--as-test"])
        let asSomeTest = try await run(["export", "--as-test", "--db", database, id, "--versions", "2"])
        let beyond = try await run(["export", "--db", database, id, "--as-test", "--versions", "3"])
        #expect(try await server.stop().status == 0)
        #expect(exported == Outcome(status: 0, stdout: lines.text, stderr: ""))
        #expect(asTest == Outcome(status: 0, stdout: test.text, stderr: ""))
        #expect(asSomeTest == Outcome(status: 0, stdout: some.text, stderr: ""))
        #expect(asTest.stdout.contains("import NavigationValues"))
        #expect(beyond.status == 1)
        #expect(beyond.stdout == "")
        #expect(beyond.stderr.hasPrefix("error: session \(id) has events 1 to 2, not 3"))
    }
}
