import Foundation
import NavigationValues
import NavigationValuesAPI
import TestSupport
import Testing

/// An import's body may be as large as `--max-import-bytes` (every other request keeps docs/API.md's
/// 1 MiB), and the server holds at most `--max-large-body-memory` bytes of such bodies at once.
@Suite struct LargeImportTests {
    /// A session whose export is over 1 MiB and under 1.5 MiB: 40 writes of a 15 KB string (each event carries it twice).
    private func bigSession(_ client: TestClient) async throws -> (TestSession, [UInt8]) {
        let session = try await TestSession.create(client)
        let screen = try await session.push("Big")
        for index in 0..<40 {
            let text = String(repeating: Character(UnicodeScalar(UInt8(97 + index % 26))), count: 15_000)
            try await session.patch(screen, ["set": ["note": .string(text)]])
        }
        let export = try await session.send("GET", "/export")
        try #require(export.status == 200)
        try #require(
            export.body.count > 1024 * 1024 && export.body.count < 1536 * 1024,
            "the export is \(export.body.count) bytes")
        return (session, export.body)
    }

    private func importing(_ client: TestClient, _ body: [UInt8]) async throws -> HTTPResponse {
        try await client.send(
            "POST", "/v1/sessions/import", raw: Data(body), headers: ["Content-Type": "application/x-ndjson"])
    }

    @Test func anExportOverOneMebibyteImportsAndReplaysLikeItsOriginal() async throws {
        try await withRunningServer { client, _ in
            let (original, export) = try await bigSession(client)
            let imported = try await importing(client, export)
            #expect(imported.status == 201, "\(imported.text.prefix(300))")
            let json = try #require(imported.json)
            let copy = TestSession(
                client: client, id: try #require(json["id"]?.stringValue),
                token: try #require(json["token"]?.stringValue), created: json)
            let originalState = try await original.get()
            let copyState = try await copy.get()
            #expect(copyState["version"] == originalState["version"])
            #expect(
                copyState["screens"]?.arrayValue?.last?["values"]
                    == originalState["screens"]?.arrayValue?.last?["values"])
            // Any other request keeps the usual limit.
            let big = Data(repeating: UInt8(ascii: " "), count: 1024 * 1024 + 1)
            expectProblem(try await original.send("POST", "/push", raw: big), 413, type: "content-too-large")
        }
    }

    @Test func anImportOverItsOwnLimitIs413NamingIt() async throws {
        try await withRunningServer(configure: { $0.maxImportBytes = 2 * 1024 * 1024 }) { client, _ in
            let huge = [UInt8](repeating: UInt8(ascii: " "), count: 2 * 1024 * 1024 + 1)
            let refused = try await importing(client, huge)
            expectProblem(refused, 413, type: "content-too-large")
            #expect(refused.json?["detail"]?.stringValue?.contains("2097152") == true)
        }
    }

    /// While one large import is being received, a second that does not fit the memory left is a
    /// 503 with `Retry-After`, before its body is read; once the first is answered, it fits again.
    @Test func largeBodiesPastTheServersMemoryForThemAre503UntilOneIsAnswered() async throws {
        try await withRunningServer(configure: { $0.maxLargeBodyBytesInFlight = 3 * 1024 * 1024 }) { client, server in
            let (_, export) = try await bigSession(client)
            // The held body leaves less room than the export needs: 3 MiB - length < export.count.
            let length = 3 * 1024 * 1024 - export.count + 1
            try #require(length >= export.count, "the export is \(export.count) bytes")
            let held = try RawClient(port: server.port, timeout: .seconds(60))
            try held.send(
                "POST /v1/sessions/import HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-ndjson\r\n"
                    + "Content-Length: \(length)\r\nExpect: 100-continue\r\n\r\n")
            // The room is taken when the head is parsed, which the 100 Continue shows.
            let continued = try await offload { try held.readLine() }
            #expect(continued.hasPrefix("HTTP/1.1 100"))
            _ = try await offload { try held.readLine() }

            let refused = try await importing(client, export)
            expectProblem(refused, 503, type: "service-unavailable")
            #expect(refused.header("Retry-After") == "1")

            // The held request's body: padding the declared length with blank lines, which an
            // import skips.
            var body = export + [UInt8(ascii: "\n")]
            body += [UInt8](repeating: UInt8(ascii: "\n"), count: max(0, length - body.count))
            let answer = try await offload { [body] in
                try held.send(body)
                return try held.readResponse()
            }
            #expect(answer.status == 201, "\(answer.text.prefix(300))")

            // The room returns with the first request's last copy, just after its answer.
            var retried: HTTPResponse?
            #expect(
                try await eventually(pollingEvery: .milliseconds(100)) {
                    retried = try await importing(client, export)
                    return retried?.status == 201
                })
            #expect(retried?.status == 201)
        }
    }
}
