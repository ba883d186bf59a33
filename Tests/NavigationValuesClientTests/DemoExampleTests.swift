import Foundation
import NavigationValuesClient
import TestSupport
import Testing

/// The Demo example (`Examples/Demo`, the seed's ten scenarios on the client) runs against a real
/// server and prints what docs/Client.md shows.
@Suite struct DemoExampleTests {
    @Test func theDemoRunsItsTenScenariosAgainstARealServer() async throws {
        try await withServer { client, _ in
            let outcome = try await ChildProcess.run(
                try ChildProcess.builtProduct(named: "navigation-values-demo"),
                arguments: ["--url", client.baseURL.absoluteString], timeout: .seconds(120))
            #expect(outcome.exit == .exited(0), "\(outcome)")
            let lines = outcome.stdout.split(separator: "\n")
            #expect(lines.count == 11)
            #expect(lines.prefix(10).allSatisfy { $0.hasPrefix("ok ") }, "\(outcome.stdout)")
            #expect(lines.last == "all 10 scenarios hold")
            let page = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/Client.md"), encoding: .utf8)
            #expect(page.contains(outcome.stdout), "docs/Client.md shows the Demo's output verbatim")
        }
    }

    @Test func badUsageIsExitTwoWithAMessage() async throws {
        let demo = try ChildProcess.builtProduct(named: "navigation-values-demo")
        let unknown = try await ChildProcess.run(demo, arguments: ["--colour"])
        #expect(unknown.exit == .exited(2))
        #expect(unknown.stderr.contains("unknown argument --colour"))
        let help = try await ChildProcess.run(demo, arguments: ["--help"])
        #expect(help.exit == .exited(0))
        #expect(help.stderr.contains("usage: navigation-values-demo [--url URL]"))
        let unreachable = try await ChildProcess.run(
            demo, arguments: ["--url", "http://127.0.0.1:1"], timeout: .seconds(120))
        #expect(unreachable.exit == .exited(1))
        #expect(unreachable.stdout.contains("FAILED 1."))
    }
}
