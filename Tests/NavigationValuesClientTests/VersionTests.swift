import Foundation
import HTTPServer
import NavigationValues
import NavigationValuesClient
import NavigationValuesWire
import TestSupport
import Testing

/// One version: the client's `User-Agent`, the served document's `info.version` and the changelog's
/// latest release all read `NavigationValuesVersion.current` (the CLI's `--version`:
/// `CLIUsageTests.versionPrintsTheVersion`).
@Suite struct VersionTests {
    @Test func theClientSendsThePackagesVersionAsItsUserAgent() async throws {
        let router = Router()
        router.get("/metrics") { request in
            Response(body: Array((request.headers["user-agent"] ?? "none").utf8))
        }
        let server = HTTPServer(
            configuration: .init(host: "127.0.0.1", port: 0), responder: router.buildResponder())
        try await server.start()
        do {
            let client = NavigationValuesClient(baseURL: try #require(URL(string: "http://127.0.0.1:\(server.port)")))
            #expect(try await client.metrics() == "NavigationValuesClient/\(NavigationValuesVersion.current)")
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    @Test func theServedDocumentHasThePackagesVersion() async throws {
        try await withServer { client, _ in
            let document = try await client.openAPIDocument()
            #expect(document["info"]?["version"] == .string(NavigationValuesVersion.current))
        }
    }

    @Test func theChangelogsLatestReleaseIsThePackagesVersion() throws {
        let changelog = try String(
            contentsOf: repositoryRoot.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let releases = changelog.split(separator: "\n").filter { $0.hasPrefix("## [") && !$0.hasPrefix("## [Unreleased]") }
        #expect(releases.first?.hasPrefix("## [\(NavigationValuesVersion.current)]") == true, "\(releases.first ?? "")")
    }
}
