import Foundation
import TestSupport
import Testing

/// The tokens from files (`--admin-token-file`, `--create-token-file` and their variables), as
/// Docker and Kubernetes secrets are mounted: the server started from them accepts exactly the
/// file's token, and every way of getting them wrong is a usage error naming the flag and the file.
@Suite final class SecretFileTests: Sendable {
    /// A fresh folder for each test's secret files.
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Writes `content` to a file in the folder and returns its path.
    func file(_ name: String, _ content: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(content.utf8).write(to: url)
        return url.path
    }

    /// GET /v1/sessions (admin only) with `token`: its status.
    func listStatus(_ server: ServeProcess, token: String) async throws -> Int {
        try await server.send("GET", "/v1/sessions", headers: ["Authorization": "Bearer \(token)"]).status
    }

    @Test func theAdminTokenFileFromTheFlagGivesTheTokenWithoutItsLineBreak() async throws {
        let path = try file("admin-token", "from-the-file\n")
        let server = try await ServeProcess(["--admin-token-file", path])
        #expect(try await listStatus(server, token: "from-the-file") == 200)
        #expect(try await listStatus(server, token: "other") == 401)
        let outcome = try await server.stop()
        #expect(outcome.status == 0)
        #expect(!outcome.stderr.contains("admin token (generated"))
        #expect(!outcome.stderr.contains("from-the-file"))
    }

    @Test func theTokenFilesFromTheirVariablesAndAWindowsLineBreak() async throws {
        let admin = try file("admin", "admin-secret\r\n")
        let create = try file("create", "create-secret")
        let server = try await ServeProcess(
            [],
            environment: [
                "NAVIGATION_VALUES_ADMIN_TOKEN_FILE": admin, "NAVIGATION_VALUES_CREATE_TOKEN_FILE": create,
            ])
        #expect(try await listStatus(server, token: "admin-secret") == 200)
        let body = #"{"root": {"name": "Home"}}"#
        #expect(try await server.send("POST", "/v1/sessions", body: body).status == 401)
        let created = try await server.send(
            "POST", "/v1/sessions", body: body, headers: ["Authorization": "Bearer create-secret"])
        #expect(created.status == 201)
        #expect(try await server.stop().status == 0)
    }

    /// One form on the command line wins over the other in the environment, as any flag wins over
    /// its variable.
    @Test func theCommandLineWinsOverTheOtherFormInTheEnvironment() async throws {
        let path = try file("admin", "file-token\n")
        let fromFile = try await ServeProcess(
            ["--admin-token-file", path], environment: ["NAVIGATION_VALUES_ADMIN_TOKEN": "variable-token"])
        #expect(try await listStatus(fromFile, token: "file-token") == 200)
        #expect(try await listStatus(fromFile, token: "variable-token") == 401)
        #expect(try await fromFile.stop().status == 0)
        let fromValue = try await ServeProcess(
            ["--admin-token", "flag-token"], environment: ["NAVIGATION_VALUES_ADMIN_TOKEN_FILE": path])
        #expect(try await listStatus(fromValue, token: "flag-token") == 200)
        #expect(try await fromValue.stop().status == 0)
    }

    @Test func everyWrongSecretIsAUsageErrorNamingTheFlagAndTheFile() async throws {
        let missing = folder.appendingPathComponent("missing").path
        let empty = try file("empty", "")
        let blank = try file("blank", "\n\n")
        let twoLines = try file("two-lines", "one\ntwo\n")
        let large = try file("large", String(repeating: "t", count: 4097))
        let good = try file("good", "token\n")
        let cases: [([String], [String: String], String)] = [
            (
                ["--admin-token-file", missing], [:],
                "--admin-token-file: cannot read '\(missing)': No such file or directory"
            ),
            (["--admin-token-file", folder.path], [:], "--admin-token-file: cannot read '\(folder.path)': Is a directory"),
            (["--admin-token-file", empty], [:], "--admin-token-file: '\(empty)' is empty"),
            ([], ["NAVIGATION_VALUES_ADMIN_TOKEN_FILE": blank], "NAVIGATION_VALUES_ADMIN_TOKEN_FILE: '\(blank)' is empty"),
            (
                ["--create-token-file", twoLines], [:],
                "--create-token-file: '\(twoLines)' holds more than one line, a control character or invalid UTF-8; it should hold the token alone"
            ),
            (
                ["--admin-token-file", large], [:],
                "--admin-token-file: '\(large)' holds more than 4096 bytes; it should hold the token alone"
            ),
            (
                ["--admin-token", "x", "--admin-token-file", good], [:],
                "--admin-token and --admin-token-file are both given; give one of them"
            ),
            (
                [], ["NAVIGATION_VALUES_CREATE_TOKEN": "x", "NAVIGATION_VALUES_CREATE_TOKEN_FILE": good],
                "NAVIGATION_VALUES_CREATE_TOKEN and NAVIGATION_VALUES_CREATE_TOKEN_FILE are both given; give one of them"
            ),
            (["--admin-token="], [:], "--admin-token is empty"),
        ]
        for (arguments, environment, message) in cases {
            let outcome = try await run(["serve", "--port", "0", "--db", ":memory:"] + arguments, environment: environment)
            #expect(outcome.status == 2, "\(arguments) \(environment)")
            #expect(outcome.stdout == "")
            #expect(
                outcome.stderr == "error: \(message)\nRun 'navigation-values serve --help' for usage.\n",
                "\(arguments) \(environment)")
        }
    }
}
