import Foundation
import NavigationValues
import NavigationValuesWire
import TestSupport
import Testing

/// Observer tokens, stream tickets, fork and import behind a balancer: two instances on one
/// PostgreSQL database, a credential or a copy made through one and used through the other.
@Suite(.needsPostgres) struct SharedAccessTests {
    @Test func credentialsAndCopiesMadeOnOneInstanceWorkOnTheOther() async throws {
        try await PostgresTestServer.withDatabase { url in
            let instances = try await TwoInstances.start(url)
            do {
                try await crossInstance(instances)
            } catch {
                try? await instances.stop()
                throw error
            }
            try await instances.stop()
        }
    }

    private func crossInstance(_ instances: TwoInstances) async throws {
        let (a, b) = (instances.clients[0], instances.clients[1])
        let session = try await TestSession.create(a)
        try await session.push("Detail")

        // An observer token issued by A reads through B and cannot write there.
        let issued = try await a.send(
            "POST", "/v1/observers", json: ["session": .string(session.id)], token: session.token)
        #expect(issued.status == 201, "\(issued.text)")
        let observer = try #require(issued.json?["token"]?.stringValue)
        #expect(try await b.send("GET", "/v1/sessions/\(session.id)", token: observer).status == 200)
        expectProblem(
            try await b.send("POST", "/v1/sessions/\(session.id)/push", json: [:], token: observer), 403,
            type: "forbidden")

        // A ticket issued by A (to the observer) opens B's stream, which then carries A's writes.
        let ticket = try await a.ticket(for: session.id, token: observer)
        let stream = try b.stream("/v1/sessions/\(session.id)/events", ticket: ticket, query: "&after=0")
        defer { stream.close() }
        #expect(await stream.status() == 200)
        try await session.push("Third")
        let frames = await stream.frames.events(3)
        #expect(frames.map(\.event) == ["session.created", "screen.pushed", "screen.pushed"])

        // A fork asked of B starts from what A wrote; its export imported through A replays alike.
        let forked = try await b.send(
            "POST", "/v1/sessions/fork", json: ["session": .string(session.id), "at": 2], token: session.token)
        #expect(forked.status == 201, "\(forked.text)")
        let fork = try #require(forked.json?["id"]?.stringValue)
        let forkToken = try #require(forked.json?["token"]?.stringValue)
        let origin = try await a.send("GET", "/v1/sessions/\(fork)", token: forkToken)
        #expect(origin.json?["origin"] == ["session": .string(session.id), "version": 2])
        #expect(origin.json?["version"] == 2)
        let export = try await a.send("GET", "/v1/sessions/\(fork)/export", token: forkToken)
        #expect(export.status == 200)
        let imported = try await a.send(
            "POST", "/v1/sessions/import", raw: Data(export.body), headers: ["Content-Type": "application/x-ndjson"])
        #expect(imported.status == 201, "\(imported.text)")
        let copy = try #require(imported.json?["id"]?.stringValue)
        let copyToken = try #require(imported.json?["token"]?.stringValue)
        let seen = try await b.send("GET", "/v1/sessions/\(copy)", token: copyToken)
        #expect(seen.status == 200)
        #expect(seen.json?["version"] == 2)
        #expect(seen.json?["screens"]?.arrayValue?.count == origin.json?["screens"]?.arrayValue?.count)
    }
}
