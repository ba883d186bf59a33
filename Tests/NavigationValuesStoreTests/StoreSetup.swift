import Foundation
import NavigationValuesPostgres
import NavigationValuesSQLite
import NavigationValuesStore
import TestSupport
import Testing

/// The stores the store contract runs on: SQLite (a new file, a file reopened by a second store
/// before reading, as after a restart, and `:memory:`), the pure-Swift `InMemorySessionStore`
/// (what the in-memory server for tests and previews keeps) and PostgreSQL (a new database, and
/// one read back through a second store, as another instance would).
enum StoreSetup: String, CaseIterable, Sendable {
    case file
    case reopenedFile
    case memory
    case inMemory
    case postgres
    case reopenedPostgres

    /// The SQLite setups.
    static let sqlite: [StoreSetup] = [.file, .reopenedFile, .memory]
    /// The PostgreSQL setups.
    static let postgreSQL: [StoreSetup] = [.postgres, .reopenedPostgres]

    /// Every setup the contract runs on here: SQLite always, PostgreSQL when a server can be had.
    /// When it cannot, `PostgresAvailabilityTests.aPostgreSQLServerIsAvailable` is skipped with
    /// the reason, so the run says that the PostgreSQL half of the contract did not run.
    static let contract: [StoreSetup] = sqlite + [.inMemory] + (PostgresTestServer.isAvailable ? postgreSQL : [])

    var isPostgres: Bool { self == .postgres || self == .reopenedPostgres }
    /// A SQLite file the test may open with `Database` to look at its rows.
    var isSQLiteFile: Bool { self == .file || self == .reopenedFile }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where a PostgreSQL server can be had; says why it did not run otherwise.
    static var needsPostgres: Self {
        .enabled(if: PostgresTestServer.isAvailable, Comment(rawValue: PostgresTestServer.unavailableReason))
    }
}

/// A scenario's store: writes go to `store`; reads go to `reading()`, which, for `.reopenedFile`,
/// closes `store` and opens the file again, and for `.reopenedPostgres` opens a second store on
/// the same database.
struct StoreUnderTest {
    let setup: StoreSetup
    /// The SQLite path, or the PostgreSQL URL.
    let path: String
    let store: any SessionStore
    let now: (@Sendable () -> Date)?

    func reading() async throws -> any SessionStore {
        switch setup {
        case .reopenedFile:
            await store.close()
            var configuration = SQLiteSessionStore.Configuration()
            if let now { configuration.now = now }
            return try SQLiteSessionStore(path: path, configuration: configuration)
        case .reopenedPostgres:
            let second = try await PostgresSessionStore.open(url: path, configuration: .testing(now: now))
            opened.append(second)
            return second
        default:
            return store
        }
    }

    private let opened = OpenedStores()
}

/// Stores a scenario opened besides its own, closed when it ends.
final class OpenedStores: @unchecked Sendable {
    // @unchecked: appended to and drained by the one task that runs the scenario.
    var stores: [any SessionStore] = []
    func append(_ store: any SessionStore) { stores.append(store) }
}

extension StoreUnderTest {
    func closeAll() async {
        await store.close()
        for other in opened.stores { await other.close() }
    }
}

extension PostgresDriver.Configuration {
    /// Test settings: few connections (every test has its own database), the clock given.
    static func testing(now: (@Sendable () -> Date)? = nil) -> Self {
        var configuration = Self()
        configuration.readerCount = 2
        if let now { configuration.now = now }
        return configuration
    }
}

/// Runs `body` with a store of kind `setup`: on a temporary file, in memory, or on a fresh
/// PostgreSQL database (dropped afterwards). `now` is the store's clock.
func withStore(
    _ setup: StoreSetup, now: (@Sendable () -> Date)? = nil, _ body: (StoreUnderTest) async throws -> Void
) async throws {
    var configuration = SQLiteSessionStore.Configuration()
    if let now { configuration.now = now }
    /// `body` on `subject`, whose connections are closed afterwards, on success and on failure.
    func run(_ subject: StoreUnderTest) async throws {
        do {
            try await body(subject)
        } catch {
            await subject.closeAll()
            throw error
        }
        await subject.closeAll()
    }
    switch setup {
    case .inMemory:
        var configuration = InMemorySessionStore.Configuration()
        if let now { configuration.now = now }
        let subject = StoreUnderTest(
            setup: setup, path: "", store: InMemorySessionStore(configuration: configuration), now: now)
        try await run(subject)
    case .memory:
        let store = try SQLiteSessionStore(path: ":memory:", configuration: configuration)
        let subject = StoreUnderTest(setup: setup, path: ":memory:", store: store, now: now)
        try await run(subject)
    case .file, .reopenedFile:
        try await withTemporaryDatabase { path in
            let store = try SQLiteSessionStore(path: path, configuration: configuration)
            let subject = StoreUnderTest(setup: setup, path: path, store: store, now: now)
            try await run(subject)
        }
    case .postgres, .reopenedPostgres:
        try await PostgresTestServer.withDatabase { url in
            let store = try await PostgresSessionStore.open(url: url, configuration: .testing(now: now))
            let subject = StoreUnderTest(setup: setup, path: url, store: store, now: now)
            try await run(subject)
        }
    }
}
