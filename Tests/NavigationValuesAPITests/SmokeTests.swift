import Foundation
import NavigationValues
import NavigationValuesAPI
import TestSupport
import Testing

@Suite struct SmokeTests {
    @Test func createPushWritePublish() async throws {
        try await withRunningServer { client, _ in
            let created = try await client.send(
                "POST", "/v1/sessions",
                json: [
                    "root": ["name": "Home", "values": ["title": "x"]],
                    "schema": ["values": ["title": ["type": "string", "default": ""]]],
                ])
            #expect(created.status == 201)
            let session = try #require(created.json)
            let id = try #require(session["id"]?.stringValue)
            let token = try #require(session["token"]?.stringValue)
            #expect(created.header("ETag") == "\"1\"")
            #expect(created.header("Location") == "/v1/sessions/\(id)")

            let pushed = try await client.send(
                "POST", "/v1/sessions/\(id)/push", json: ["name": "Detail"], token: token)
            #expect(pushed.status == 201)
            #expect(pushed.json?["screen"]?["resolved"]?["title"] == "x")
            #expect(pushed.json?["version"] == 2)

            let handler = try await client.send(
                "PUT", "/v1/sessions/\(id)/screens/root/handlers/selection", json: ["passBack": true], token: token)
            #expect(handler.status == 200)
            let published = try await client.send(
                "POST", "/v1/sessions/\(id)/screens/top/preferences/selection", json: ["value": "p"], token: token)
            #expect(published.status == 200)
            let root = try #require(session["screens"]?.arrayValue?.first?["id"])
            #expect(published.json?["deliveries"] == [["screen": root, "value": "p"]])
            #expect(published.json?["stoppedAt"] == .null)

            let patched = try await client.send(
                "PATCH", "/v1/sessions/\(id)/screens/root/values", json: ["title": 5], token: token)
            #expect(patched.status == 422)
            #expect(patched.json?["errors"]?.arrayValue?.first?["pointer"] == "/title")

            let unauthorized = try await client.send("GET", "/v1/sessions/\(id)")
            #expect(unauthorized.status == 401)
            let current = try await client.send("GET", "/v1/sessions/\(id)", token: token)
            #expect(current.json?["version"] == 4)
            #expect(current.json?["screens"]?.arrayValue?.count == 2)
        }
    }
}
