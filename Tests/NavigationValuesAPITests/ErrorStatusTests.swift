import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

/// Every error status docs/API.md names for the session endpoints, with its problem+json body.
@Suite struct ErrorStatusTests {
    @Test func malformedJSONIsABadRequest() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let answer = try await session.send("POST", "/push", raw: Data(#"{"name": "A","#.utf8))
            expectProblem(answer, 400, type: "malformed-request")
            let create = try await client.send("POST", "/v1/sessions", raw: Data("nope".utf8))
            expectProblem(create, 400, type: "malformed-request")
            #expect(try await session.get()["version"] == 1)
        }
    }

    @Test func missingOrInvalidTokensAreUnauthorized() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let missing = try await client.send("GET", "/v1/sessions/\(session.id)")
            expectProblem(missing, 401, type: "unauthorized")
            #expect(missing.header("WWW-Authenticate") == "Bearer")
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(session.id)", token: "not-a-token"), 401,
                type: "unauthorized")
            expectProblem(
                try await client.send(
                    "POST", "/v1/sessions/\(session.id)/push", json: [:], headers: ["Authorization": "Basic abc"]),
                401, type: "unauthorized")
            expectProblem(try await client.send("GET", "/v1/sessions"), 401, type: "unauthorized")
            expectProblem(try await client.send("GET", "/v1/sessions", token: "wrong"), 401, type: "unauthorized")
            // Unknown sessions do not reveal themselves to a caller without a token.
            expectProblem(try await client.send("GET", "/v1/sessions/s_unknown"), 401, type: "unauthorized")
        }
    }

    /// The scheme is matched in any case (RFC 9110 §11.1); spaces around the token are
    /// ignored; a header that is not `Bearer <token>` is no token.
    @Test func theBearerSchemeIsReadInAnyCaseAndOnlyThatShape() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let path = "/v1/sessions/\(session.id)"
            for header in ["bearer \(session.token)", "BEARER \(session.token)", "Bearer   \(session.token)  "] {
                let answer = try await client.send("GET", path, headers: ["Authorization": header])
                #expect(answer.status == 200, "\(header)")
            }
            for header in [
                "Bearer", "Bearer ", "Bearer\t\(session.token)", "Bearers \(session.token)", "\(session.token)",
            ] {
                expectProblem(
                    try await client.send("GET", path, headers: ["Authorization": header]), 401, type: "unauthorized")
            }
            let admin = try await client.send("GET", path, headers: ["Authorization": "bearer \(client.adminToken)"])
            #expect(admin.status == 200)
        }
    }

    @Test func anotherSessionsTokenIsForbidden() async throws {
        try await withRunningServer { client, _ in
            let mine = try await TestSession.create(client)
            let theirs = try await TestSession.create(client)
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(mine.id)", token: theirs.token), 403, type: "forbidden")
            let push = try await client.send("POST", "/v1/sessions/\(mine.id)/push", json: [:], token: theirs.token)
            expectProblem(push, 403, type: "forbidden")
            #expect(try await mine.get()["version"] == 1)
            // A session token on an admin-only route.
            expectProblem(try await client.send("GET", "/v1/sessions", token: mine.token), 403, type: "forbidden")
        }
    }

    @Test func unknownSessionsScreensAndRoutesAreNotFound() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            expectProblem(
                try await client.send("GET", "/v1/sessions/s_missing", token: client.adminToken), 404, type: "not-found"
            )
            expectProblem(
                try await client.send("POST", "/v1/sessions/s_missing/push", json: [:], token: client.adminToken), 404,
                type: "not-found")
            expectProblem(try await session.send("GET", "/screens/c_missing"), 404, type: "not-found")
            expectProblem(
                try await session.send("PATCH", "/screens/c_missing/values", json: ["a": 1]), 404, type: "not-found")
            expectProblem(
                try await session.send("POST", "/screens/c_missing/preferences/k", json: ["value": 1]), 404,
                type: "not-found")
            expectProblem(try await session.send("POST", "/pop", json: ["to": "c_missing"]), 404, type: "not-found")
            expectProblem(try await client.send("GET", "/v1/nothing-here"), 404, type: "not-found")
            let popped = try await session.push("Gone")
            try await session.pop()
            expectProblem(try await session.send("GET", "/screens/\(popped)"), 404, type: "not-found")
            expectProblem(
                try await session.send("PATCH", "/screens/\(popped)/values", json: ["a": 1]), 404, type: "not-found")
            #expect(try await session.get()["version"] == 3)
        }
    }

    @Test func aWrongMethodIsNotAllowedAndSaysWhatIs() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let answer = try await session.send("PATCH", "", json: [:])
            expectProblem(answer, 405, type: "method-not-allowed")
            #expect(answer.header("Allow") == "DELETE, GET, HEAD")
            let push = try await session.send("GET", "/push")
            expectProblem(push, 405, type: "method-not-allowed")
            #expect(push.header("Allow") == "POST")
        }
    }

    @Test func poppingTheRootIsAConflict() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            expectProblem(try await session.send("POST", "/pop", json: ["count": 1]), 409, type: "conflict")
            expectProblem(try await session.send("POST", "/pop"), 409, type: "conflict")
            try await session.push("A")
            expectProblem(try await session.send("POST", "/pop", json: ["count": 2]), 409, type: "conflict")
            let session2 = try await session.get()
            #expect(session2["version"] == 2)
            #expect(session2.screenIDs.count == 2)
        }
    }

    @Test func mutationsOfAnEndedSessionAreGone() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            try await session.handle("root", "k", passBack: true)
            #expect(try await session.send("DELETE").status == 204)
            let attempts: [(String, String, JSONValue?)] = [
                ("POST", "/push", [:]), ("POST", "/pop", ["count": 1]), ("PUT", "/path", ["screens": []]),
                ("PATCH", "/screens/root/values", ["a": 1]), ("PUT", "/screens/root/handlers/k", ["passBack": false]),
                ("DELETE", "/screens/root/handlers/k", nil), ("POST", "/screens/root/preferences/k", ["value": 1]),
                ("DELETE", "", nil),
            ]
            for (method, suffix, body) in attempts {
                expectProblem(try await session.send(method, suffix, json: body), 410, type: "gone")
            }
            let read = try await session.get()
            #expect(read["state"] == "ended")
            #expect(read["version"] == 3)
        }
    }

    @Test func anIfMatchMismatchFailsWithoutSideEffects() async throws {
        try await withRunningServer { client, server in
            let session = try await TestSession.create(client)
            try await session.push("A")
            let stale = try await session.send("POST", "/push", json: ["name": "B"], headers: ["If-Match": "\"1\""])
            expectProblem(stale, 412, type: "precondition-failed")
            #expect(stale.header("ETag") == "\"2\"")
            let patch = try await session.send(
                "PATCH", "/screens/root/values", json: ["a": 1], headers: ["If-Match": "\"7\""])
            expectProblem(patch, 412, type: "precondition-failed")
            let read = try await session.get()
            #expect(read["version"] == 2)
            #expect(read.screenIDs.count == 2)
            #expect(read["state"] == "active")
            #expect(read["screens"]?.arrayValue?.first?["values"] == [:])
            #expect(try await server.store.events(of: SessionID(session.id), after: 2, limit: 10).isEmpty)

            let fresh = try await session.send("POST", "/push", json: ["name": "B"], headers: ["If-Match": "\"2\""])
            #expect(fresh.status == 201)
            #expect(fresh.header("ETag") == "\"3\"")
            let star = try await session.send("POST", "/pop", headers: ["If-Match": "*"])
            #expect(star.status == 200)
        }
    }

    /// An `If-Match` that is neither `*` nor a version is a malformed request, whatever the session's
    /// version: 400, nothing applied, and no `ETag` that would read as an answer about the version.
    @Test func aMalformedIfMatchIsABadRequest() async throws {
        try await withRunningServer { client, server in
            let session = try await TestSession.create(client)
            for value in ["soon", "", "\u{84}", "\"1", "1\"", "\"\"", "W/", "\"-1\"", "\"1\", \"2\"", "\"1.0\"", "0x1",
                "\"1234567890123456789\"", "* \"1\"", "\" 1\""]
            {
                let answer = try await session.send(
                    "POST", "/push", json: ["name": "B"], headers: ["If-Match": value])
                expectProblem(answer, 400, type: "malformed-request")
                #expect(answer.header("ETag") == nil, "If-Match: \(value)")
                #expect(answer.json?["detail"]?.stringValue?.contains("If-Match") == true)
            }
            let delete = try await session.send("DELETE", "", headers: ["If-Match": "soon"])
            expectProblem(delete, 400, type: "malformed-request")
            #expect(try await server.store.events(of: SessionID(session.id), after: 1, limit: 10).isEmpty)
            #expect(try await session.get()["state"] == "active")

            // Every well-formed spelling of version 1 applies; of another version, 412.
            var version: Int64 = 1
            for value in ["\"1\"", "W/\"2\"", "3", " \t\"4\"\t ", "\"000005\""] {
                let answer = try await session.send("PATCH", "/screens/root/values", json: ["k": .integer(version)], headers: ["If-Match": value])
                #expect(answer.status == 200, "If-Match: \(value)")
                version += 1
            }
            expectProblem(
                try await session.send("POST", "/push", json: ["name": "B"], headers: ["If-Match": "\"0\""]), 412,
                type: "precondition-failed")
            expectProblem(
                try await session.send("POST", "/push", json: ["name": "B"], headers: ["If-Match": "999999999999999999"]), 412,
                type: "precondition-failed")
        }
    }

    @Test func aBodyThatIsNotJSONIsUnsupported() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let answer = try await session.send(
                "POST", "/push", raw: Data(#"{"name": "A"}"#.utf8), headers: ["Content-Type": "text/plain"])
            expectProblem(answer, 415, type: "unsupported-media-type")
            let create = try await client.send(
                "POST", "/v1/sessions", raw: Data("name=A".utf8),
                headers: ["Content-Type": "application/x-www-form-urlencoded"])
            expectProblem(create, 415, type: "unsupported-media-type")
            #expect(try await session.get()["version"] == 1)
        }
    }

    @Test func aBodyOverTheLimitIsTooLarge() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let big =
                Data(#"{"name": ""#.utf8) + Data(repeating: UInt8(ascii: "a"), count: 1_100_000) + Data(#""}"#.utf8)
            let answer = try await session.send("POST", "/push", raw: big)
            #expect(answer.status == 413)
            #expect(answer.header("Content-Type") == "application/problem+json")
        }
    }

    // MARK: - 422

    @Test func aValueOfTheWrongTypeNamesTheKeyAndTheType() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["schema": SessionEndpointTests.schema])
            let answer = try await session.send(
                "PATCH", "/screens/root/values", json: ["counter": "three", "title": "ok"])
            expectProblem(answer, 422, type: "unprocessable-content", pointers: ["/counter"])
            let detail = answer.json?["errors"]?.arrayValue?.first?["detail"]?.stringValue ?? ""
            #expect(detail.contains("counter") && detail.contains("integer"))
            // Nothing of the request applied, not even the valid key.
            #expect(try await session.screen("root")["values"] == [:])

            let two = try await session.send("PATCH", "/screens/root/values", json: ["counter": 1.5, "title": 2])
            expectProblem(two, 422, type: "unprocessable-content", pointers: ["/counter", "/title"])
            let push = try await session.send("POST", "/push", json: ["values": ["title": true]])
            expectProblem(push, 422, type: "unprocessable-content", pointers: ["/values/title"])
            let path = try await session.send(
                "PUT", "/path", json: ["screens": [["name": "A"], ["values": ["counter": []]]]])
            expectProblem(path, 422, type: "unprocessable-content", pointers: ["/screens/1/values/counter"])
            let create = try await client.send(
                "POST", "/v1/sessions",
                json: ["root": ["values": ["counter": "x"]], "schema": SessionEndpointTests.schema])
            expectProblem(create, 422, type: "unprocessable-content", pointers: ["/root/values/counter"])
            let preference = try await session.send(
                "POST", "/screens/root/preferences/selectedItem", json: ["value": 3])
            expectProblem(preference, 422, type: "unprocessable-content", pointers: ["/value"])
            let handler = try await session.send(
                "PUT", "/screens/root/handlers/selectedItem", json: ["passBack": "yes"])
            expectProblem(handler, 422, type: "unprocessable-content", pointers: ["/passBack"])
            #expect(try await session.get()["version"] == 1)
        }
    }

    @Test func aStrictSchemaRejectsUndeclaredKeys() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client, ["schema": SessionEndpointTests.schema])
            let value = try await session.send("PATCH", "/screens/root/values", json: ["colour": "red"])
            expectProblem(value, 422, type: "unprocessable-content", pointers: ["/colour"])
            let preference = try await session.send("POST", "/screens/root/preferences/other", json: ["value": 1])
            expectProblem(preference, 422, type: "unprocessable-content")
            let handler = try await session.send("PUT", "/screens/root/handlers/other", json: ["passBack": true])
            expectProblem(handler, 422, type: "unprocessable-content")
            #expect(try await session.get()["version"] == 1)

            // Without `strict`, undeclared keys are `any` with default null.
            let loose = try await TestSession.create(client, ["schema": ["values": ["n": ["type": "integer"]]]])
            let written = try await loose.patch("root", ["colour": ["r": 1]])
            #expect(written["screen"]?["resolved"] == ["colour": ["r": 1], "n": .null])
        }
    }

    @Test func unknownMembersAndBadShapesAreUnprocessable() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            expectProblem(
                try await session.send("POST", "/push", json: ["name": "A", "colour": 1]), 422,
                type: "unprocessable-content", pointers: ["/colour"])
            expectProblem(try await session.send("POST", "/push", json: [1, 2]), 422, type: "unprocessable-content")
            expectProblem(
                try await session.send("POST", "/pop", json: ["count": 0]), 422, type: "unprocessable-content",
                pointers: ["/count"])
            expectProblem(
                try await session.send("POST", "/pop", json: ["count": 1, "to": "root"]), 422,
                type: "unprocessable-content")
            expectProblem(
                try await session.send("POST", "/screens/root/preferences/k", json: [:]), 422,
                type: "unprocessable-content", pointers: ["/value"])
            expectProblem(
                try await client.send("POST", "/v1/sessions", json: ["root": ["colour": 1]]), 422,
                type: "unprocessable-content", pointers: ["/root/colour"])
            expectProblem(
                try await client.send("POST", "/v1/sessions", json: ["schema": ["values": ["a": ["type": "text"]]]]),
                422, type: "unprocessable-content", pointers: ["/schema/values/a/type"])
            expectProblem(
                try await client.send(
                    "GET", "/v1/sessions?limit=0", token: client.adminToken), 422, type: "unprocessable-content")
            #expect(try await session.get()["version"] == 1)
        }
    }

    @Test func keyNamesFollowTheRules() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let longest = String(repeating: "k", count: 128)
            let ok = try await session.patch("root", [.init(stringLiteral: longest): 1, "a.b-c_D9": 2])
            #expect(ok["screen"]?["values"]?.objectValue?.count == 2)
            for bad in ["with space", String(repeating: "k", count: 129), "ü", "a/b", ""] {
                let answer = try await session.send("PATCH", "/screens/root/values", json: .object([bad: 1]))
                expectProblem(
                    answer, 422, type: "unprocessable-content",
                    pointers: ["/" + bad.replacingOccurrences(of: "/", with: "~1")])
            }
            expectProblem(
                try await session.send("PUT", "/screens/root/handlers/bad%20key", json: ["passBack": true]), 422,
                type: "unprocessable-content")
            expectProblem(
                try await session.send(
                    "POST", "/screens/root/preferences/\(String(repeating: "p", count: 129))", json: ["value": 1]),
                422, type: "unprocessable-content")
            #expect(try await session.get()["version"] == 2)
        }
    }

    @Test func valuesOverSizeOrDepthLimitsAreUnprocessable() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            // 64 KiB of JSON is allowed, one byte more is not (the quotes count).
            let fits = JSONValue.string(String(repeating: "a", count: 64 * 1024 - 2))
            #expect(try await session.send("PATCH", "/screens/root/values", json: ["big": fits]).status == 200)
            let over = JSONValue.string(String(repeating: "a", count: 64 * 1024 - 1))
            expectProblem(
                try await session.send("PATCH", "/screens/root/values", json: ["big": over]), 422,
                type: "unprocessable-content", pointers: ["/big"])
            expectProblem(
                try await session.send("POST", "/screens/root/preferences/p", json: ["value": over]), 422,
                type: "unprocessable-content", pointers: ["/value"])

            func nested(_ depth: Int) -> JSONValue {
                var value: JSONValue = 1
                for _ in 0..<depth { value = [value] }
                return value
            }
            #expect(try await session.send("PATCH", "/screens/root/values", json: ["deep": nested(64)]).status == 200)
            // Inside the deepest envelope too (a path's screens nest values four levels down).
            let deepPath = try await session.send(
                "PUT", "/path", json: ["screens": [["values": ["deep": nested(64)]]]])
            #expect(deepPath.status == 200)
            expectProblem(
                try await session.send("PATCH", "/screens/root/values", json: ["deep": nested(65)]), 422,
                type: "unprocessable-content", pointers: ["/deep"])
            expectProblem(
                try await session.send("POST", "/push", json: ["values": ["deep": nested(65)]]), 422,
                type: "unprocessable-content", pointers: ["/values/deep"])
            expectProblem(
                try await session.send("POST", "/push", json: ["values": ["deep": nested(200)]]), 422,
                type: "unprocessable-content")
            #expect(try await session.get()["version"] == 4)
        }
    }

    @Test func theScreenAndValueCountsAreLimited() async throws {
        try await withRunningServer(configure: {
            $0.service.limits.maxScreens = 4
            $0.service.limits.maxValuesPerScreen = 2
        }) { client, _ in
            let session = try await TestSession.create(client)
            for name in ["A", "B", "C"] { try await session.push(name) }
            // Four screens, the root included, is the limit.
            expectProblem(try await session.send("POST", "/push", json: [:]), 422, type: "unprocessable-content")
            expectProblem(
                try await session.send("PUT", "/path", json: ["screens": [[:], [:], [:], [:]]]), 422,
                type: "unprocessable-content", pointers: ["/screens"])
            #expect(try await session.send("PUT", "/path", json: ["screens": [[:], [:], [:]]]).status == 200)
            #expect(try await session.get().screenIDs.count == 4)

            try await session.patch("root", ["a": 1, "b": 2])
            expectProblem(
                try await session.send("PATCH", "/screens/root/values", json: ["c": 3]), 422,
                type: "unprocessable-content")
            // Replacing an existing key is not a new value.
            try await session.patch("root", ["a": 5])
            try await session.pop()
            expectProblem(
                try await session.send("POST", "/push", json: ["values": ["a": 1, "b": 2, "c": 3]]), 422,
                type: "unprocessable-content", pointers: ["/values"])
            expectProblem(
                try await client.send("POST", "/v1/sessions", json: ["root": ["values": ["a": 1, "b": 2, "c": 3]]]),
                422, type: "unprocessable-content", pointers: ["/root/values"])
        }
    }

    @Test func theDefaultLimitAllowsAThousandScreensRootIncluded() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let screens = JSONValue.array(Array(repeating: [:], count: 999))
            #expect(try await session.send("PUT", "/path", json: ["screens": screens]).status == 200)
            expectProblem(try await session.send("POST", "/push", json: [:]), 422, type: "unprocessable-content")
            #expect(try await session.get().screenIDs.count == 1_000)
        }
    }
}
