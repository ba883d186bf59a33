import Foundation
import NavigationValues
import TestSupport
import Testing

/// `serve` as an operator runs it: the listening line, signals, tokens, flags against variables, logs.
@Suite struct ServeCommandTests {
    @Test func servePrintsOneListeningLineAnswersHealthzAndExitsZeroOnSIGTERM() async throws {
        let server = try await ServeProcess(["--admin-token", "admin"])
        #expect(server.listeningLine.wholeMatch(of: /listening on http:\/\/127\.0\.0\.1:[1-9][0-9]*/) != nil)
        let health = try await server.send("GET", "/healthz")
        #expect(health.status == 200)
        #expect(health.text == #"{"status":"ok"}"#)
        let outcome = try await server.stop(SIGTERM)
        #expect(outcome.status == 0)
        #expect(outcome.stdout == server.listeningLine + "\n")
    }

    @Test func sigintAlsoStopsGracefullyWithStatusZero() async throws {
        let server = try await ServeProcess(["--admin-token", "admin"])
        let outcome = try await server.stop(SIGINT)
        #expect(outcome.status == 0)
        #expect(outcome.stderr.contains(" info stopped"))
    }

    @Test func aGeneratedAdminTokenIsPrintedOnceOnStderrAndWorks() async throws {
        let server = try await ServeProcess()
        // The token line is written before the listening line, so it is there by now.
        let outcome = try await server.stop(SIGTERM)
        let tokenLines = outcome.stderr.split(separator: "\n").filter { $0.hasPrefix("admin token (generated") }
        #expect(tokenLines.count == 1)
        let token = try #require(tokenLines.first?.split(separator: " ").last.map(String.init))
        #expect(token.count >= 22)
        #expect(!outcome.stdout.contains(token))
        // A second server on the same database, told the token, accepts it.
        let again = try await ServeProcess(["--admin-token", token])
        let answer = try await again.send("GET", "/v1/sessions", headers: ["Authorization": "Bearer \(token)"])
        #expect(answer.status == 200)
        #expect(try await again.stop().stderr.contains("admin token (generated") == false)
    }

    /// The browser-facing flags take effect: CORS origins from the variable, the inspector served.
    @Test func corsOriginsFromTheVariableAndTheInspectorAreServed() async throws {
        let server = try await ServeProcess(
            ["--admin-token", "admin", "--ticket-lifetime", "5"],
            environment: ["NAVIGATION_VALUES_CORS_ORIGINS": "https://support.example, http://localhost:3000"])
        let answer = try await server.send("GET", "/healthz", headers: ["Origin": "http://localhost:3000"])
        #expect(answer.header("Access-Control-Allow-Origin") == "http://localhost:3000")
        let page = try await server.send("GET", "/inspector/")
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(try await server.stop().status == 0)
    }

    /// `NAVIGATION_VALUES_WAL_CHECKPOINT_PAGES` sets the checkpointer's threshold: with 2 pages,
    /// a few mutations start checkpoints, which `/metrics` counts.
    @Test func theCheckpointThresholdFromItsVariableStartsCheckpoints() async throws {
        let server = try await ServeProcess(
            ["--admin-token", "admin"], environment: ["NAVIGATION_VALUES_WAL_CHECKPOINT_PAGES": "2"])
        let created = try await server.send("POST", "/v1/sessions", body: #"{"root": {"name": "Home"}}"#)
        #expect(created.status == 201)
        let id = try #require(created.json?["id"]?.stringValue)
        let token = try #require(created.json?["token"]?.stringValue)
        func checkpoints() async throws -> Int {
            let text = try await server.send("GET", "/metrics", headers: ["Authorization": "Bearer admin"]).text
            return text.split(separator: "\n").filter {
                $0.hasPrefix("navigation_values_store_checkpoints_total{")
            }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
        }
        // Ten pushes write a few dozen pages: far from the default threshold of 10,000.
        for _ in 0..<10 {
            let pushed = try await server.send(
                "POST", "/v1/sessions/\(id)/push", body: #"{"name": "Detail"}"#,
                headers: ["Authorization": "Bearer \(token)"])
            #expect(pushed.status == 201)
        }
        #expect(try await eventually { try await checkpoints() > 0 })
        // The writer's finishing steps, counted whether or not one ran.
        let text = try await server.send("GET", "/metrics", headers: ["Authorization": "Bearer admin"]).text
        for name in ["navigation_values_store_writer_checkpoint_seconds_total", "navigation_values_store_writer_checkpoint_pages_total"] {
            #expect(text.split(separator: "\n").contains { $0.hasPrefix(name + " ") }, "\(name) in /metrics")
        }
        #expect(try await server.stop().status == 0)
    }

    @Test func theFlagWinsOverItsEnvironmentVariable() async throws {
        let server = try await ServeProcess(
            ["--admin-token", "from-flag"], environment: ["NAVIGATION_VALUES_ADMIN_TOKEN": "from-variable"])
        #expect(
            try await server.send("GET", "/v1/sessions", headers: ["Authorization": "Bearer from-flag"]).status == 200)
        #expect(
            try await server.send("GET", "/v1/sessions", headers: ["Authorization": "Bearer from-variable"]).status
                == 401)
        #expect(try await server.stop().status == 0)
    }

    @Test func environmentVariablesAreReadWhenNoFlagIsGiven() async throws {
        let server = try await ServeProcess(
            [],
            environment: [
                "NAVIGATION_VALUES_ADMIN_TOKEN": "from-variable", "NAVIGATION_VALUES_PORT": "0",
                "NAVIGATION_VALUES_LOG_FORMAT": "json",
            ])
        #expect(
            try await server.send("GET", "/v1/sessions", headers: ["Authorization": "Bearer from-variable"]).status
                == 200)
        let outcome = try await server.stop()
        #expect(outcome.status == 0)
        #expect(outcome.stderr.contains(#""message":"request","method":"GET","route":"/v1/sessions","status":200"#))
    }

    @Test func stackLimitsComeFromTheirFlagsAndVariables() async throws {
        let server = try await ServeProcess(
            ["--max-batch-operations", "1", "--max-presentation-depth", "0"],
            environment: ["NAVIGATION_VALUES_MAX_STACKS": "2"])
        let created = try await server.send("POST", "/v1/sessions", body: "{}")
        let session = try #require(try JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any])
        let id = try #require(session["id"] as? String)
        let auth = ["Authorization": "Bearer \(try #require(session["token"] as? String))"]
        func detail(_ answer: HTTPResponse) -> String {
            let json = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
            return json?["detail"] as? String ?? ""
        }
        let batch = try await server.send(
            "POST", "/v1/sessions/\(id)/batch", body: #"{"operations": [{"op": "push"}, {"op": "push"}]}"#,
            headers: auth)
        #expect(batch.status == 422)
        #expect(detail(batch) == "a batch holds at most 1 operations")
        let present = try await server.send("POST", "/v1/sessions/\(id)/present", body: "{}", headers: auth)
        #expect(detail(present) == "presentations nest at most 0 deep")
        let tab = try await server.send("POST", "/v1/sessions/\(id)/stacks", body: #"{"id": "one"}"#, headers: auth)
        #expect(tab.status == 201)
        let second = try await server.send("POST", "/v1/sessions/\(id)/stacks", body: #"{"id": "two"}"#, headers: auth)
        #expect(second.status == 422)
        #expect(detail(second).hasPrefix("a session holds at most 2 stacks"))
        #expect(try await server.stop().status == 0)
    }

    @Test func eachRequestIsLoggedOnStderrWithItsRequestID() async throws {
        let server = try await ServeProcess(["--admin-token", "admin", "--log-level", "debug"])
        let answer = try await server.send("GET", "/healthz", headers: ["X-Request-Id": "req-42"])
        #expect(answer.header("X-Request-Id") == "req-42")
        let missing = try await server.send("GET", "/v1/sessions/s_nope", headers: ["Authorization": "Bearer admin"])
        #expect(missing.status == 404)
        let generated = try #require(missing.header("X-Request-Id"))
        let outcome = try await server.stop()
        let lines = outcome.stderr.split(separator: "\n").map(String.init)
        #expect(
            lines.contains {
                $0.hasSuffix(
                    " debug request method=GET route=/healthz status=200 duration_ms=\($0.durationText) request_id=req-42 client=127.0.0.1"
                )
            })
        #expect(
            lines.contains {
                $0.contains(" info request method=GET route=/v1/sessions/{id} status=404 ")
                    && $0.hasSuffix("request_id=\(generated) client=127.0.0.1")
            })
    }

    @Test func jsonLogLinesAreJSONObjectsWithEveryField() async throws {
        let server = try await ServeProcess(["--admin-token", "admin", "--log-format", "json"])
        _ = try await server.send("POST", "/v1/sessions", body: "{}")
        let outcome = try await server.stop()
        let requests = try outcome.stderr.split(separator: "\n").compactMap { line -> [String: Any]? in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return object["message"] as? String == "request" ? object : nil
        }
        let line = try #require(requests.first)
        #expect(line["level"] as? String == "info")
        #expect(line["method"] as? String == "POST")
        #expect(line["route"] as? String == "/v1/sessions")
        #expect(line["status"] as? Int == 201)
        #expect(line["duration_ms"] is Double || line["duration_ms"] is Int)
        #expect((line["request_id"] as? String)?.hasPrefix("r_") == true)
        #expect(line["client"] as? String == "127.0.0.1")
        #expect((line["at"] as? String)?.hasSuffix("Z") == true)
    }

    @Test func aTakenPortIsAFailureWithStatusOne() async throws {
        let first = try await ServeProcess(["--admin-token", "admin"])
        let port = try #require(first.baseURL.port)
        let outcome = try await run(["serve", "--port", "\(port)", "--db", ":memory:", "--admin-token", "a"])
        #expect(outcome.status == 1)
        #expect(outcome.stdout == "")
        #expect(outcome.stderr.contains("error: cannot start"))
        _ = try await first.stop()
    }

    @Test func anUnopenableDatabaseIsAFailureNamingTheFile() async throws {
        let outcome = try await run(["serve", "--port", "0", "--db", "/nonexistent-folder/x.sqlite"])
        #expect(outcome.status == 1)
        #expect(outcome.stderr.contains("/nonexistent-folder/x.sqlite"))
    }

    @Test func healthcheckExitsZeroAgainstALiveServerAndOneWithoutOne() async throws {
        let server = try await ServeProcess(["--admin-token", "admin"])
        let port = try #require(server.baseURL.port)
        #expect(try await run(["healthcheck", "--port", "\(port)"]) == Outcome(status: 0, stdout: "ok\n", stderr: ""))
        #expect(try await run(["healthcheck"], environment: ["NAVIGATION_VALUES_PORT": "\(port)"]).status == 0)
        _ = try await server.stop()
        let refused = try await run(["healthcheck", "--port", "\(port)"])
        #expect(refused.status == 1)
        #expect(refused.stderr.hasPrefix("error: cannot connect to 127.0.0.1:\(port)"))
    }
}

extension String {
    /// The `duration_ms=` value of a text log line, so a whole line can be compared.
    var durationText: String {
        guard let match = firstMatch(of: #/duration_ms=([0-9.]+) /#) else { return "?" }
        return String(match.output.1)
    }
}
