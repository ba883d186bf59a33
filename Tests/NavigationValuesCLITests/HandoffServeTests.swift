import Foundation
import NavigationValues
import TestSupport
import Testing

/// Hand-offs across instances: two `navigation-values serve` processes on one PostgreSQL database
/// (sharing the admin token, so each accepts the other's codes) race to redeem one code; exactly
/// one redeem wins. Neither server's log holds a code or a token.
@Suite(.enabled(if: PostgresTestServer.isAvailable, Comment(rawValue: PostgresTestServer.unavailableReason)))
struct HandoffServeTests {
    @Test func twoInstancesRacingToRedeemOneCodeLetExactlyOneWin() async throws {
        try await PostgresTestServer.withDatabase { url in
            let flags = [
                "--db", url, "--admin-token", "shared-admin", "--handoff-lifetime", "60", "--max-handoffs", "3",
            ]
            let servers = [try await ServeProcess(flags), try await ServeProcess(flags)]
            let created = try await servers[0].send("POST", "/v1/sessions", body: #"{"root": {"name": "Home"}}"#)
            let id = try #require(created.json?["id"]?.stringValue)
            let token = try #require(created.json?["token"]?.stringValue)
            var secrets = [token]
            for round in 0..<3 {
                // Made on either instance.
                let made = try await servers[round % 2].send(
                    "POST", "/v1/sessions/\(id)/handoff", headers: ["Authorization": "Bearer \(token)"])
                #expect(made.status == 201, "\(made.text)")
                let code = try #require(made.json?["code"]?.stringValue)
                secrets.append(code)
                // Eight redeems at once, four on each instance.
                let answers = try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
                    for index in 0..<8 {
                        let server = servers[index % 2]
                        group.addTask {
                            try await server.send("POST", "/v1/handoffs/redeem", body: #"{"code": "\#(code)"}"#)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let winners = answers.filter { $0.status == 200 }
                #expect(winners.count == 1, "\(answers.map(\.status))")
                #expect(answers.filter { $0.status == 409 }.count == 7)
                for answer in answers where answer.status == 409 {
                    #expect(answer.json?["type"] == "/problems/handoff-code-used")
                }
                let device = try #require(winners.first?.json?["token"]?.stringValue)
                secrets.append(device)
                // The winner's token works on both instances.
                for server in servers {
                    let read = try await server.send(
                        "GET", "/v1/sessions/\(id)", headers: ["Authorization": "Bearer \(device)"])
                    #expect(read.status == 200)
                }
            }
            var logs = ""
            for server in servers {
                let outcome = try await server.stop()
                #expect(outcome.exit == .exited(0))
                logs += outcome.stderr
            }
            #expect(logs.contains("/v1/handoffs/redeem"), "the requests were logged: \(logs.prefix(2_000))")
            for secret in secrets { #expect(!logs.contains(secret)) }
        }
    }

    @Test func theHandoffFlagsAreBounded() async throws {
        for (flag, value) in [("--handoff-lifetime", "5"), ("--handoff-lifetime", "3601"), ("--max-handoffs", "0")] {
            let outcome = try await run(["serve", "--db", ":memory:", flag, value])
            #expect(outcome.status != 0)
            #expect(outcome.stderr.contains(String(flag.dropFirst(2))), "\(outcome)")
        }
    }
}
