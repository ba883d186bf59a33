import NavigationValuesPostgres
import NavigationValuesSQLite
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire

extension SessionReplay {
    /// The session right after event `at` (default: the latest), read straight from a database
    /// file (read-only, so it works while a server writes to it) or a PostgreSQL URL (never migrated, never listened to): what
    /// `navigation-values replay --db PATH|URL SESSION [--at N]` prints.
    public static func session(_ id: SessionID, at: Int64? = nil, databasePath: String) async throws
        -> SessionResource
    {
        try await reading(databasePath) { store in try await session(id, at: at, in: store) }
    }

    /// Session `id`'s history read straight from a database, as `GET /v1/sessions/{id}/export`
    /// writes it (one event a line), or with `asTest` as `?format=swift-testing` writes it (checking
    /// after `versions`, every event when nil); `write` gets one line at a time, without its line
    /// feed: what `navigation-values export --db PATH|URL SESSION [--as-test]` prints.
    ///
    /// - Throws: `Failure` for an unknown session, a version past its last event or events no
    ///   longer kept; `SessionError` past the test's size limit (`maxTestBytes`); `StoreError`.
    public static func export(
        _ id: SessionID, asTest: Bool, versions: Set<Int64>? = nil, databasePath: String,
        maxTestBytes: Int = ServiceConfiguration().maxTestExportBytes, write: @Sendable (String) -> Void
    ) async throws {
        try await reading(databasePath) { store in
            let latest = try await stored(id, in: store).latest
            if let past = versions?.first(where: { $0 > latest }) {
                throw Failure(
                    reason: .eventOutOfRange,
                    description: "session \(id.rawValue) has events 1 to \(latest), not \(past)")
            }
            guard try await store.events(of: id, after: 0, limit: 1).first?.seq == 1 else {
                throw Failure(
                    reason: .unknownSession, description: "session \(id.rawValue) no longer has its first events")
            }
            let pageBytes = 1024 * 1024
            if asTest {
                let source = try await swiftTest(
                    of: id, through: latest, checking: versions, in: store, maxBytes: maxTestBytes, pageBytes: pageBytes
                )
                write(source.hasSuffix("\n") ? String(source.dropLast()) : source)
                return
            }
            var position: Int64 = 0
            while position < latest {
                let page = try await store.eventPage(
                    of: id, after: position, limit: Int(min(1_000, latest - position)), maxBytes: pageBytes
                ).events
                guard let last = page.last else { break }
                for event in page { write(event.json) }
                position = last.seq
            }
        }
    }

    /// Runs `body` on a store opened read-only on a database file (so it works while a server writes
    /// to it) or a PostgreSQL URL (never migrated, never listened to), and closes it.
    private static func reading<T: Sendable>(
        _ databasePath: String, _ body: (any SessionStore) async throws -> T
    ) async throws -> T {
        let store: any SessionStore
        if PostgresSessionStore.isDatabaseURL(databasePath) {
            var configuration = PostgresSessionStore.Configuration()
            configuration.readerCount = 1
            configuration.listens = false
            configuration.migrates = false
            store = try await PostgresSessionStore.open(url: databasePath, configuration: configuration)
        } else {
            var configuration = SQLiteSessionStore.Configuration()
            configuration.access = .readOnly
            store = try await SQLiteSessionStore.open(path: databasePath, configuration: configuration)
        }
        do {
            let result = try await body(store)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }
}
