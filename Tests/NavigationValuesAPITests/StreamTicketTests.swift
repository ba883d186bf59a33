import Foundation
import NavigationValues
import Logging
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

/// A clock a test moves by hand.
final class ManualClock: Sendable {
    private let instant = Mutex(Date(timeIntervalSince1970: 1_796_000_000))
    var now: Date { instant.withLock { $0 } }
    func advance(by seconds: TimeInterval) { instant.withLock { $0 += seconds } }
}

extension TestClient {
    /// A stream ticket for `session` (or, with nil, for every session), asked with `token`.
    func ticket(for session: String?, token: String) async throws -> String {
        let body: JSONValue = session.map { ["session": .string($0)] } ?? ["all": true]
        let answer = try await send("POST", "/v1/tickets", json: body, token: token)
        try #require(answer.status == 200, "ticket answered \(answer.status): \(answer.text)")
        #expect(answer.header("Cache-Control") == "no-store")
        return try #require(answer.json?["ticket"]?.stringValue)
    }

    /// An event stream opened with nothing but a ticket, as `EventSource` opens one.
    func stream(_ path: String, ticket: String, query: String = "") throws -> SSEClient {
        try SSEClient(port: http.port, path: "\(path)?ticket=\(ticket)\(query)")
    }
}

@Suite struct StreamTicketTests {
    @Test func aTicketOpensTheSessionsStreamWithoutAnAuthorizationHeader() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let answer = try await client.send(
                "POST", "/v1/tickets", json: ["session": .string(session.id)], token: session.token)
            #expect(answer.status == 200)
            let json = try #require(answer.json)
            let ticket = try #require(json["ticket"]?.stringValue)
            #expect(ticket.hasPrefix("st_"))
            #expect(json["session"] == .string(session.id))
            #expect(json["expiresAt"]?.stringValue != nil)
            let stream = try client.stream("/v1/sessions/\(session.id)/events", ticket: ticket, query: "&after=0")
            defer { stream.close() }
            #expect(await stream.status() == 200)
            try await session.push("Detail")
            let frames = await stream.frames.events(2)
            #expect(frames.map(\.event) == ["session.created", "screen.pushed"])
            // The long poll takes a ticket too.
            let poll = try await client.send("GET", "/v1/sessions/\(session.id)/events?after=0&ticket=\(ticket)")
            #expect(poll.status == 200)
            #expect(poll.json?["last"] == 2)
        }
    }

    @Test func aTicketExpiresAfterItsLifetimeButAnOpenStreamStays() async throws {
        let clock = ManualClock()
        try await withRunningServer(configure: {
            $0.now = { clock.now }
            $0.service.ticketLifetime = .seconds(30)
        }) { client, _ in
            let session = try await TestSession.create(client)
            let ticket = try await client.ticket(for: session.id, token: session.token)
            let open = try client.stream("/v1/sessions/\(session.id)/events", ticket: ticket)
            defer { open.close() }
            #expect(await open.status() == 200)
            clock.advance(by: 29.9)
            let stillValid = try client.stream("/v1/sessions/\(session.id)/events", ticket: ticket)
            #expect(await stillValid.status() == 200)
            stillValid.close()
            clock.advance(by: 0.2)
            let expired = try await client.send("GET", "/v1/sessions/\(session.id)/events?ticket=\(ticket)")
            expectProblem(expired, 401, type: "unauthorized")
            #expect(expired.json?["detail"]?.stringValue?.contains("expired") == true)
            #expect(expired.header("WWW-Authenticate") == "Bearer")
            try await session.push("After")
            #expect(await open.frames.events(1).first?.event == "screen.pushed")
        }
    }

    @Test func aTicketCanOnlyRead() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let ticket = try await client.ticket(for: session.id, token: session.token)
            let base = "/v1/sessions/\(session.id)"
            // Not a bearer token: it is not shaped like one.
            expectProblem(
                try await client.send("POST", "\(base)/push", json: [:], token: ticket), 401, type: "unauthorized")
            expectProblem(try await client.send("GET", base, token: ticket), 401, type: "unauthorized")
            // Only the event streams take it from the query.
            for (method, path) in [("POST", "\(base)/push"), ("GET", base), ("GET", "\(base)/history")] {
                let answer = try await client.send(method, "\(path)?ticket=\(ticket)", json: [:])
                expectProblem(answer, 401, type: "unauthorized")
                #expect(answer.json?["detail"]?.stringValue?.contains("event streams") == true)
            }
            // It cannot buy a longer-lived credential either.
            expectProblem(
                try await client.send("POST", "/v1/tickets", json: ["session": .string(session.id)], token: ticket),
                401, type: "unauthorized")
            #expect(try await session.get()["version"] == 1)
        }
    }

    @Test func aTicketIsScopedToItsSessionOrToEverySession() async throws {
        try await withRunningServer { client, _ in
            let first = try await TestSession.create(client)
            let second = try await TestSession.create(client)
            let ticket = try await client.ticket(for: first.id, token: first.token)
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(second.id)/events?ticket=\(ticket)"), 403,
                type: "forbidden")
            expectProblem(try await client.send("GET", "/v1/events?ticket=\(ticket)"), 403, type: "forbidden")
            // Asking for another session's ticket, or for every session's with a session token: 403.
            expectProblem(
                try await client.send("POST", "/v1/tickets", json: ["session": .string(second.id)], token: first.token),
                403, type: "forbidden")
            expectProblem(
                try await client.send("POST", "/v1/tickets", json: ["all": true], token: first.token), 403,
                type: "forbidden")
            expectProblem(
                try await client.send("POST", "/v1/tickets", json: ["session": "s_unknown"], token: client.adminToken),
                404, type: "not-found")
            // The admin's ticket for every session opens the stream of every session.
            let every = try await client.ticket(for: nil, token: client.adminToken)
            let stream = try client.stream("/v1/events", ticket: every)
            defer { stream.close() }
            #expect(await stream.status() == 200)
            try await second.push("Seen")
            let frame = try #require(await stream.frames.events(1).first)
            #expect(try JSONValue(parsing: frame.data ?? "")["session"] == .string(second.id))
            // And one session's stream.
            let one = try client.stream("/v1/sessions/\(first.id)/events", ticket: every)
            #expect(await one.status() == 200)
            one.close()
        }
    }

    @Test func damagedForgedAndDoubledCredentialsAreRefused() async throws {
        try await withRunningServer { client, _ in
            let session = try await TestSession.create(client)
            let ticket = try await client.ticket(for: session.id, token: session.token)
            let path = "/v1/sessions/\(session.id)/events"
            var flipped = Array(ticket)
            flipped[10] = flipped[10] == "A" ? "B" : "A"
            for bad in [String(flipped), String(ticket.dropLast(2)), "st_", "st_!!!!", "nonsense"] {
                let answer = try await client.send("GET", "\(path)?ticket=\(bad)")
                expectProblem(answer, 401, type: "unauthorized")
                #expect(answer.text.contains(bad) == false || bad == "st_")
            }
            // A ticket signed by another server (another admin token) is forged here.
            let foreign = try await withRunningServer(configure: { $0.adminToken = "another-secret" }) { other, _ in
                let session = try await TestSession.create(other)
                return (session.id, try await other.ticket(for: session.id, token: session.token))
            }
            expectProblem(
                try await client.send("GET", "/v1/sessions/\(foreign.0)/events?ticket=\(foreign.1)"), 401,
                type: "unauthorized")
            expectProblem(
                try await client.send("GET", "\(path)?ticket=\(ticket)", token: session.token), 400,
                type: "malformed-request")
            expectProblem(
                try await client.send("POST", "/v1/tickets", json: [:], token: session.token), 422,
                type: "unprocessable-content", pointers: ["/session"])
            expectProblem(
                try await client.send(
                    "POST", "/v1/tickets", json: ["session": .string(session.id), "all": true], token: session.token),
                422, type: "unprocessable-content", pointers: ["/all"])
            expectProblem(
                try await client.send("POST", "/v1/tickets", json: ["session": .string(session.id)]), 401,
                type: "unauthorized")
        }
    }

    /// Tickets travel in URLs, so they must never reach a log: requests that use one, succeed or
    /// fail, are logged by route pattern only, in both log formats and at every level.
    @Test(arguments: NavigationValuesLogHandler.Format.allCases)
    func aTicketNeverAppearsInTheLog(format: NavigationValuesLogHandler.Format) async throws {
        let log = LogLines()
        let clock = ManualClock()
        var tickets: [String] = []
        try await withRunningServer(configure: {
            $0.logger = log.logger(level: .debug, format: format)
            $0.now = { clock.now }
        }) { client, _ in
            let session = try await TestSession.create(client)
            let other = try await TestSession.create(client)
            let ticket = try await client.ticket(for: session.id, token: session.token)
            let every = try await client.ticket(for: nil, token: client.adminToken)
            tickets = [ticket, every]
            let stream = try client.stream("/v1/sessions/\(session.id)/events", ticket: ticket)
            #expect(await stream.status() == 200)
            try await session.push("A")
            _ = await stream.frames.events(1)
            stream.close()
            let all = try client.stream("/v1/events", ticket: every)
            #expect(await all.status() == 200)
            all.close()
            #expect(try await client.send("GET", "/v1/sessions/\(other.id)/events?ticket=\(ticket)").status == 403)
            #expect(try await client.send("GET", "/v1/sessions/\(session.id)?ticket=\(ticket)").status == 401)
            #expect(try await client.send("GET", "/v1/sessions/\(session.id)/nothing?ticket=\(ticket)").status == 404)
            clock.advance(by: 3_600)
            #expect(try await client.send("GET", "/v1/sessions/\(session.id)/events?ticket=\(ticket)").status == 401)
        }
        let lines = log.all
        #expect(lines.count >= 8)
        #expect(lines.contains { $0.contains("/v1/sessions/{id}/events") })
        for ticket in tickets {
            let signature = String(ticket.suffix(20))
            for line in lines {
                #expect(!line.contains(ticket) && !line.contains(signature), "\(line)")
                #expect(!line.contains("ticket="), "\(line)")
            }
        }
    }
}
