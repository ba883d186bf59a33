import Foundation
import NavigationValues
import TestSupport
import Testing

/// `migrate`, `serve` and `replay` on a PostgreSQL URL (`--db postgres://…` or `NAVIGATION_VALUES_DB`).
@Suite(
    .enabled(if: PostgresTestServer.isAvailable, Comment(rawValue: PostgresTestServer.unavailableReason))
) struct PostgresCommandTests {
    @Test func migrateServeAndReplayTakeAPostgreSQLURL() async throws {
        try await PostgresTestServer.withDatabase { url in
            let first = try await run(["migrate", "--db", url])
            #expect(first.status == 0, "\(first)")
            #expect(first.stdout.contains("applied postgres/0001_create_schema.sql"))
            // As many versions as files applied (a migration added later must not break this).
            let applied = first.stdout.split(separator: "\n").filter { $0.hasPrefix("applied postgres/") }.count
            #expect(applied >= 1)
            #expect(first.stdout.contains("is at schema version \(applied)"))
            let second = try await run(["migrate"], environment: ["NAVIGATION_VALUES_DB": url])
            #expect(second.stdout.contains("applied") == false)

            let server = try await ServeProcess(
                ["--admin-token", "secret"], environment: ["NAVIGATION_VALUES_DB": url])
            let created = try await server.send("POST", "/v1/sessions", body: #"{"root": {"name": "Home"}}"#)
            #expect(created.status == 201)
            let id = try #require(created.json?["id"]?.stringValue)
            let token = try #require(created.json?["token"]?.stringValue)
            let pushed = try await server.send(
                "POST", "/v1/sessions/\(id)/push", body: #"{"name": "Detail"}"#,
                headers: ["Authorization": "Bearer \(token)"])
            #expect(pushed.status == 201)
            let stopped = try await server.stop()
            #expect(stopped.exit == .exited(0))
            #expect(stopped.stderr.contains("db=postgres://"), "\(stopped.stderr)")

            let replayed = try await run(["replay", "--db", url, id, "--at", "1"])
            #expect(replayed.status == 0, "\(replayed)")
            let json = try JSONValue(parsing: Array(replayed.stdout.utf8))
            #expect(json["version"] == 1)
            #expect(json.screens.map { $0["name"] } == ["Home"])
        }
    }

    @Test func anUnreachableDatabaseFailsWithStatusOneAndNoPassword() async throws {
        let outcome = try await run(["migrate", "--db", "postgres://nv:s3cret@127.0.0.1:1/nv?connect_timeout=2"])
        #expect(outcome.status == 1)
        #expect(outcome.stderr.contains("postgres://nv:***@127.0.0.1:1/nv"))
        #expect(!outcome.stderr.contains("s3cret"))
    }
}

extension JSONValue {
    fileprivate var screens: [JSONValue] { self["screens"]?.arrayValue ?? [] }
}
