import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import TestSupport
import Testing

/// Outputs capped (amplification, and big events that used to answer 500): what a session
/// renders and answers is bounded, each past-cap request is a 422 naming the limit, and nothing of
/// it is committed. docs/API.md's shapes stay: `resolved` still lists every declared entry.
@Suite struct OutputLimitOverHTTPTests {
    /// 15 string entries of 4,000 characters: 60 KB of defaults, under the 64 KiB allowed.
    static let heavySchema: JSONValue = .object(
        Dictionary(
            uniqueKeysWithValues: (0..<15).map { index in
                (
                    "d\(index)",
                    ["type": "string", "default": .string(String(repeating: "x", count: 4_000))] as JSONValue
                )
            }))

    static func emptyScreens(_ count: Int) -> JSONValue {
        ["screens": .array(Array(repeating: [:], count: count))]
    }

    @Test func schemaDefaultsObeyTheValueLimitsAndTheirBytesAndEntriesAreCapped() async throws {
        try await withRunningServer { client, _ in
            let big = String(repeating: "x", count: 70_000)
            let tooLarge = try await client.send(
                "POST", "/v1/sessions",
                json: ["schema": ["values": ["big": ["type": "string", "default": .string(big)]]]])
            expectProblem(tooLarge, 422, type: "unprocessable-content", pointers: ["/schema/values/big/default"])
            var deep: JSONValue = 1
            for _ in 0..<66 { deep = [deep] }  // past the 64 levels a value may nest, inside what a body may
            let tooDeep = try await client.send(
                "POST", "/v1/sessions", json: ["schema": ["values": ["deep": ["type": "any", "default": deep]]]])
            expectProblem(tooDeep, 422, type: "unprocessable-content", pointers: ["/schema/values/deep/default"])
            // Each default fits, together they do not: 20 x 4,000 = 80 KB.
            let together: JSONValue = .object(
                Dictionary(
                    uniqueKeysWithValues: (0..<20).map { index in
                        (
                            "d\(index)",
                            ["type": "string", "default": .string(String(repeating: "y", count: 4_000))] as JSONValue
                        )
                    }))
            let tooMuch = try await client.send("POST", "/v1/sessions", json: ["schema": ["values": together]])
            expectProblem(tooMuch, 422, type: "limit-exceeded")
            #expect(tooMuch.json?["limit"] == "max-default-bytes")
            let entries: JSONValue = .object(
                Dictionary(uniqueKeysWithValues: (0..<1_001).map { ("k\($0)", ["type": "integer"] as JSONValue) }))
            let tooMany = try await client.send("POST", "/v1/sessions", json: ["schema": ["values": entries]])
            expectProblem(tooMany, 422, type: "limit-exceeded")
            #expect(tooMany.json?["limit"] == "max-schema-entries")
            // Nothing was created.
            let list = try await client.send("GET", "/v1/sessions", token: client.adminToken)
            #expect(list.json?["sessions"]?.arrayValue?.count == 0)
        }
    }

    @Test func aPathThatWouldRepeatTheDefaultsOnEveryScreenIs422AndCommitsNothing() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["schema": ["values": Self.heavySchema]])
            // 3 KB asking for 999 screens that each list 60 KB of defaults: 60 MB of answer.
            let refused = try await session.send("PUT", "/path", json: Self.emptyScreens(999))
            expectProblem(refused, 422, type: "limit-exceeded")
            #expect(refused.json?["limit"] == "max-event-bytes")
            #expect(refused.body.count < 2_048)
            let after = try await session.get()
            #expect(after["version"] == 1)
            #expect(after.screenIDs.count == 1)
            let history = try await session.send("GET", "/history")
            #expect(history.json?["events"]?.arrayValue?.count == 1)
            // Ten such screens fit (600 KB), and still list every declared entry.
            let accepted = try await session.send("PUT", "/path", json: Self.emptyScreens(10))
            #expect(accepted.status == 200)
            #expect(accepted.body.count <= 4 * 1024 * 1024)
            let pushed = try #require(accepted.json?["pushed"]?.arrayValue)
            #expect(pushed.count == 10)
            #expect(pushed.allSatisfy { $0["resolved"]?.objectValue?.count == 15 })
            #expect(try await session.get()["version"] == 2)
        }
    }

    @Test func aPatchWhoseAffectedWouldRepeatAValueOnAThousandScreensIs422() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            #expect(try await session.send("PUT", "/path", json: Self.emptyScreens(999)).status == 200)
            // 60 KB written on the root, inherited by 1,000 screens: 60 MB of `affected`.
            let big = JSONValue.string(String(repeating: "v", count: 60_000))
            let refused = try await session.send("PATCH", "/screens/root/values", json: ["v": big])
            expectProblem(refused, 422, type: "limit-exceeded")
            #expect(refused.json?["limit"] == "max-event-bytes")
            #expect(refused.body.count < 2_048)
            let root = try await session.screen("root")
            #expect(root["values"] == [:])
            #expect(try await session.get()["version"] == 2)
            // A small value on the same 1,000 screens is fine, each listed once.
            let small = try await session.patch("root", ["v": "small"])
            #expect(small["affected"]?.arrayValue?.count == 1_000)
        }
    }

    /// An import (or a fork) replays a history through the same limits as the live requests that
    /// made it: a server with smaller limits refuses a copy that passes them, and keeps nothing.
    @Test func anImportObeysTheLimitsOfTheServerThatTakesIt() async throws {
        let (withDefaults, withScreens) = try await withRunningServer { client, _ in
            let schema: JSONValue = [
                "values": ["d": ["type": "string", "default": .string(String(repeating: "d", count: 2_000))]]
            ]
            let defaults = try await TestSession.create(client, ["schema": schema])
            let screens = try await TestSession.create(client)
            #expect(try await screens.send("PUT", "/path", json: Self.emptyScreens(50)).status == 200)
            _ = try await screens.patch("root", ["v": .string(String(repeating: "v", count: 1_000))])
            return (try await defaults.send("GET", "/export").body, try await screens.send("GET", "/export").body)
        }
        try await withRunningServer(configure: {
            $0.service.limits.maxDefaultBytes = 1_000
            $0.service.limits.maxSessionBytes = 40_000
        }) { client, _ in
            let ndjson = ["Content-Type": "application/x-ndjson"]
            let refusedDefaults = try await client.send(
                "POST", "/v1/sessions/import", raw: Data(withDefaults), headers: ndjson)
            expectProblem(refusedDefaults, 422, type: "unprocessable-content")
            #expect(refusedDefaults.json?["detail"]?.stringValue?.contains("max-default-bytes") == true)
            // 51 screens that each resolve the 1 KB value: past 40 KB of session.
            let refusedScreens = try await client.send(
                "POST", "/v1/sessions/import", raw: Data(withScreens), headers: ndjson)
            expectProblem(refusedScreens, 422, type: "unprocessable-content")
            #expect(refusedScreens.json?["detail"]?.stringValue?.contains("max-session-bytes") == true)
            let list = try await client.send("GET", "/v1/sessions", token: client.adminToken)
            #expect(list.json?["sessions"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test func aPublishDeliveredToManyScreensIsBoundedToo() async throws {
        try await withRunningServer(configure: { $0.service.limits.maxEventBytes = 100_000 }) { client, _ in
            let session = try await TestSession.create(client)
            for _ in 0..<2 { try await session.push("Screen") }
            for screen in try await session.get().screenIDs {
                try await session.handle(screen, "choice", passBack: true)
            }
            // 40 KB delivered to three screens: 120 KB of deliveries.
            let value = JSONValue.string(String(repeating: "p", count: 40_000))
            let refused = try await session.send("POST", "/screens/top/preferences/choice", json: ["value": value])
            expectProblem(refused, 422, type: "limit-exceeded")
            #expect(refused.json?["limit"] == "max-event-bytes")
            #expect(try await session.screen("root")["preferences"] == [:])
            let small = try await session.publish("top", "choice", "ok")
            #expect(small["deliveries"]?.arrayValue?.count == 3)
        }
    }

    @Test func anEventOverItsLimitIs422NotA500AndTheSessionGoesOn() async throws {
        try await withRunningServer(configure: { $0.service.limits.maxEventBytes = 16_384 }) { client, _ in
            let session = try await TestSession.create(client)
            let values: JSONValue = [
                "a": .string(String(repeating: "a", count: 10_000)),
                "b": .string(String(repeating: "b", count: 10_000)),
            ]
            let refused = try await session.send("POST", "/push", json: ["name": "Big", "values": values])
            expectProblem(refused, 422, type: "limit-exceeded")
            #expect(refused.json?["limit"] == "max-event-bytes")
            #expect(refused.json?["detail"]?.stringValue?.contains("max-event-bytes") == true)
            #expect(try await session.get().screenIDs.count == 1)
            // The refused push left nothing behind: the next one gets version 2.
            let next = try await session.send("POST", "/push", json: ["name": "Small"])
            #expect(next.status == 201)
            #expect(next.json?["version"] == 2)
        }
    }

    @Test func aSessionMayNotRenderPastItsLimit() async throws {
        try await withRunningServer(configure: { $0.service.limits.maxSessionBytes = 50_000 }) { client, _ in
            let session = try await TestSession.create(client)
            // Each screen brings its own 10 KB key, which every later screen resolves too.
            var refused: HTTPResponse?
            for index in 0..<10 {
                let answer = try await session.send(
                    "POST", "/push",
                    json: ["name": "S", "values": [.init("k\(index)"): .string(String(repeating: "z", count: 10_000))]])
                if answer.status != 201 {
                    refused = answer
                    break
                }
            }
            let problem = try #require(refused)
            expectProblem(problem, 422, type: "limit-exceeded")
            #expect(problem.json?["limit"] == "max-session-bytes")
            let whole = try await session.send("GET", "")
            #expect(whole.status == 200)
            #expect(whole.body.count <= 50_000)
        }
    }
}
