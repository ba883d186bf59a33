import Foundation
import NavigationValues
import TestSupport
import Testing

/// `docs/API.md` is the contract a client is written against: it names every operation the server
/// serves, as its served OpenAPI document lists them.
@Suite struct APIDocumentTests {
    @Test func everyServedOperationIsNamedInTheContract() async throws {
        let page = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/API.md"), encoding: .utf8)
        try await withRunningServer { client, _ in
            let answer = try await client.send("GET", "/openapi.json")
            let paths = try #require(answer.json?["paths"]?.objectValue)
            var operations: [String] = []
            for (path, item) in paths {
                for method in ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
                where item[method] != nil {
                    operations.append("\(method.uppercased()) \(path)")
                }
            }
            #expect(operations.count > 40)
            // "METHOD /path" and then the path's end: a space, a query, a backtick or the line's end.
            let missing = operations.filter { operation in
                !["`", " ", "?", "\n"].contains { page.contains(operation + $0) }
            }
            #expect(missing.isEmpty, "docs/API.md does not name \(missing.sorted())")
        }
    }
}
