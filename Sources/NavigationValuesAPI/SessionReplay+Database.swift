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
            let result = try await session(id, at: at, in: store)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }
}
