import Foundation
import NavigationValues
import NavigationValuesAPI
import TestSupport
import Testing

@Suite struct OpenAPIDocumentTests {
    /// If this fails, run `scripts/embed-openapi.sh` after editing `openapi/openapi.json`.
    @Test func theEmbeddedDocumentEqualsTheFile() throws {
        let file = try Data(contentsOf: repositoryRoot.appendingPathComponent("openapi/openapi.json"))
        #expect(Data(OpenAPIDocument.json.utf8) == file)
    }

    @Test func theServerServesTheDocumentAsJSON() async throws {
        try await withRunningServer { client, _ in
            let answer = try await client.send("GET", "/openapi.json")
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type") == "application/json; charset=utf-8")
            #expect(answer.body == Array(OpenAPIDocument.json.utf8))
            #expect(answer.json?["openapi"] == "3.1.0")
        }
    }

    /// Every row of docs/API.md's endpoint table.
    static let endpoints: [(String, String)] = [
        ("post", "/v1/sessions"), ("get", "/v1/sessions"), ("get", "/v1/sessions/{id}"),
        ("delete", "/v1/sessions/{id}"), ("post", "/v1/sessions/{id}/push"), ("post", "/v1/sessions/{id}/pop"),
        ("put", "/v1/sessions/{id}/path"), ("get", "/v1/sessions/{id}/screens/{screen}"),
        ("patch", "/v1/sessions/{id}/screens/{screen}/values"),
        ("put", "/v1/sessions/{id}/screens/{screen}/handlers/{key}"),
        ("delete", "/v1/sessions/{id}/screens/{screen}/handlers/{key}"),
        ("post", "/v1/sessions/{id}/screens/{screen}/preferences/{key}"), ("get", "/v1/sessions/{id}/events"),
        ("get", "/v1/sessions/{id}/history"), ("get", "/v1/sessions/{id}/replay"), ("get", "/v1/events"),
        ("get", "/healthz"), ("get", "/readyz"), ("get", "/metrics"), ("get", "/openapi.json"),
        // Added since: tickets, observer tokens, diff, export, import, fork.
        ("post", "/v1/tickets"), ("post", "/v1/observers"), ("get", "/v1/observers"),
        ("get", "/v1/observers/{observer}"), ("delete", "/v1/observers/{observer}"),
        ("get", "/v1/sessions/{id}/diff"), ("get", "/v1/sessions/{id}/export"), ("post", "/v1/sessions/import"),
        ("post", "/v1/sessions/fork"), ("post", "/v1/sessions/{id}/handoff"), ("post", "/v1/handoffs/redeem"),
    ]

    /// Every endpoint of several stacks per session (docs/Stacks.md, Endpoints).
    static let stackEndpoints: [(String, String)] = [
        ("get", "/v1/sessions/{id}/stacks"), ("post", "/v1/sessions/{id}/stacks"),
        ("get", "/v1/sessions/{id}/stacks/{stack}"), ("delete", "/v1/sessions/{id}/stacks/{stack}"),
        ("post", "/v1/sessions/{id}/stacks/{stack}/push"), ("post", "/v1/sessions/{id}/stacks/{stack}/pop"),
        ("put", "/v1/sessions/{id}/stacks/{stack}/path"), ("post", "/v1/sessions/{id}/stacks/{stack}/move"),
        ("post", "/v1/sessions/{id}/select"),
        ("post", "/v1/sessions/{id}/present"), ("post", "/v1/sessions/{id}/dismiss"),
        ("put", "/v1/sessions/{id}/screens/{screen}/above"), ("post", "/v1/sessions/{id}/screens/{screen}/return"),
        ("post", "/v1/sessions/{id}/batch"),
    ]

    @Test func everyEndpointOfTheContractIsDescribedWithProblemAnswers() throws {
        let document = try JSONValue(parsing: Array(OpenAPIDocument.json.utf8))
        let paths = try #require(document["paths"]?.objectValue)
        var described: Set<String> = []
        for (path, item) in paths {
            for method in ["get", "post", "put", "patch", "delete"] where item[method] != nil {
                described.insert("\(method) \(path)")
            }
        }
        let endpoints = Self.endpoints + Self.stackEndpoints
        #expect(described == Set(endpoints.map { "\($0.0) \($0.1)" }))
        for (method, path) in endpoints {
            let responses = try #require(paths[path]?[method]?["responses"]?.objectValue, "\(method) \(path)")
            #expect(responses.keys.contains { $0.hasPrefix("2") }, "\(method) \(path) has no 2xx")
            for (status, response) in responses where status.hasPrefix("4") || status.hasPrefix("5") {
                #expect(
                    response["$ref"] == .string("#/components/responses/Problem\(status)"),
                    "\(method) \(path) \(status)")
            }
        }
    }

    @Test func everyReferenceResolves() throws {
        let document = try JSONValue(parsing: Array(OpenAPIDocument.json.utf8))
        var references: [String] = []
        func collect(_ value: JSONValue) {
            switch value {
            case .object(let members):
                if case .string(let reference)? = members["$ref"] { references.append(reference) }
                members.values.forEach(collect)
            case .array(let items): items.forEach(collect)
            default: break
            }
        }
        collect(document)
        #expect(!references.isEmpty)
        for reference in references {
            let parts = reference.split(separator: "/").dropFirst().map(String.init)
            #expect(reference.hasPrefix("#/"))
            let target = parts.reduce(Optional(document)) { value, part in value?[part] }
            #expect(target != nil, "\(reference) does not resolve")
        }
    }
}
