import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

/// A log-first commit appends its event to `event_log` (Migrations/0012), and the writer moves the
/// rows into `events` later: every read of a session's events sees both tables, a file made before
/// the migration is upgraded in place, and a stop or a kill leaves nothing out.
@Suite struct EventLogTests {
    /// Rows of the session in `events` and in `event_log`, read by another connection.
    static func rows(in database: String, of id: String) throws -> (events: [Int64], appended: [Int64]) {
        let db = try Database(path: database, access: .readOnly)
        let moved = try db.fetchAll("SELECT seq FROM events WHERE session = ?1 ORDER BY seq", [.text(id)]) {
            $0.int64(0)
        }
        let appended = try db.fetchAll("SELECT seq FROM event_log WHERE session = ?1 ORDER BY rowid", [.text(id)]) {
            $0.int64(0)
        }
        return (moved, appended)
    }

    /// The whole history as the API answers it, page after page of 2.
    static func history(_ client: TestClient, of id: String, token: String) async throws -> [JSONValue] {
        var events: [JSONValue] = []
        var after: Int64 = 0
        while true {
            let page = try await client.send("GET", "/v1/sessions/\(id)/history?after=\(after)&limit=2", token: token)
            try #require(page.status == 200, "\(page.text)")
            let items = page.json?["events"]?.arrayValue ?? []
            events += items
            guard let next = page.json?["next"]?.integerValue else { break }
            after = next
        }
        return events
    }

    /// The earlier release's file (EarlierReleaseDatabaseTests) upgraded in place: its events stay
    /// in `events`, the next ones are appended, the history reads both in order, and a clean stop
    /// moves them.
    @Test func anEarlierReleasesFileKeepsItsEventsAndAppendsTheNextOnes() async throws {
        let folder = try EarlierReleaseDatabaseTests.copyFixture()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("copy.sqlite").path
        let id = EarlierReleaseDatabaseTests.sessionID
        let token = EarlierReleaseDatabaseTests.token
        let tables = try Database(path: path, access: .readOnly).fetchAll(
            "SELECT name FROM sqlite_schema WHERE name = 'event_log'") { $0.string(0) }
        #expect(tables.isEmpty)
        let earlier = try Database(path: path, access: .readOnly).fetchAll(
            "SELECT seq FROM events WHERE session = ?1 ORDER BY seq", [.text(id)]) { $0.int64(0) }
        #expect(!earlier.isEmpty)
        let configure: (inout NavigationValuesServer.Configuration) -> Void = { configuration in
            EarlierReleaseDatabaseTests.configure(&configuration)
            configuration.writeBehind.isHeldForTests = true
        }
        let told = try await withRunningServer(databasePath: path, configure: configure) { client, _ in
            let before = try await Self.history(client, of: id, token: token)
            #expect(before.count == earlier.count)
            for name in ["One", "Two", "Three"] {
                let pushed = try await client.send("POST", "/v1/sessions/\(id)/push", json: ["name": .string(name)], token: token)
                #expect(pushed.status == 201, "\(pushed.text)")
            }
            // Held: the new events are still appended, the earlier ones where they were.
            let rows = try Self.rows(in: path, of: id)
            #expect(rows.events == earlier)
            let last = try #require(earlier.last)
            #expect(rows.appended == [last + 1, last + 2, last + 3])
            let (log, _) = try WriteBehindCrashTests.versions(in: path, of: id)
            #expect(log == last + 3)
            let after = try await Self.history(client, of: id, token: token)
            #expect(after.map { $0["seq"]?.integerValue } == (earlier + rows.appended).map { $0 })
            #expect(Array(after.prefix(before.count)) == before)
            return after
        }
        // A clean stop moved them: one table, the same history.
        let rows = try Self.rows(in: path, of: id)
        #expect(rows.appended.isEmpty)
        #expect(rows.events.count == told.count)
        try await withRunningServer(databasePath: path, configure: configure) { client, _ in
            let again = try await Self.history(client, of: id, token: token)
            #expect(again == told)
        }
    }
}
