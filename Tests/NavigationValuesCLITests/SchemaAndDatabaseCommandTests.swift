import Foundation
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
        let path = try file("schema.json", #"{"values": {"counter": {"type": "integer", "default": 0}}, "strict": true}"#)
        let server = try await ServeProcess(["--admin-token", "admin", "--schema", path])
        let created = try await request("POST", server.baseURL.appendingPathComponent("v1/sessions"), body: "{}")
        #expect(created.status == 201)
        #expect(created.body.contains(#""strict":true"#))
        #expect(created.body.contains(#""resolved":{"counter":0}"#))
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
}
