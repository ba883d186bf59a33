import Foundation
import NavigationValuesPostgres
import NavigationValuesStore
import TestSupport
import Testing

/// Says whether the PostgreSQL half of the store contract ran: when no server can be had, this
/// test is skipped with the reason, and the contract's arguments hold SQLite only.
@Suite struct PostgresAvailabilityTests {
    @Test(.needsPostgres)
    func aPostgreSQLServerIsAvailable() async throws {
        try await PostgresTestServer.withDatabase { url in
            let store = try await PostgresSessionStore.open(url: url, configuration: .testing())
            try await store.checkWritable()
            #expect(store.isShared)
            #expect(try await store.sessions(after: nil, limit: 10).isEmpty)
            await store.close()
        }
    }
}
