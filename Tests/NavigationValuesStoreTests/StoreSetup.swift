import Foundation
import NavigationValuesStore

/// The kinds of store a scenario runs on: a new file, a file reopened by a second store before
/// reading (as after a restart), and `:memory:`.
enum StoreSetup: String, CaseIterable {
    case file
    case reopenedFile
    case memory
}

/// A scenario's store: writes go to `store`; reads go to `reading()`, which, for
/// `.reopenedFile`, closes `store` and opens the file again.
struct StoreUnderTest {
    let setup: StoreSetup
    let path: String
    let store: SQLiteSessionStore
    let configuration: SQLiteSessionStore.Configuration

    func reading() async throws -> SQLiteSessionStore {
        guard setup == .reopenedFile else { return store }
        await store.close()
        return try SQLiteSessionStore(path: path, configuration: configuration)
    }
}

/// Runs `body` with a store of kind `setup` (on a temporary file, except for `.memory`).
func withStore(
    _ setup: StoreSetup, configuration: SQLiteSessionStore.Configuration = .init(),
    _ body: (StoreUnderTest) async throws -> Void
) async throws {
    if setup == .memory {
        let store = try SQLiteSessionStore(path: ":memory:", configuration: configuration)
        try await body(StoreUnderTest(setup: setup, path: ":memory:", store: store, configuration: configuration))
        await store.close()
        return
    }
    try await withTemporaryDatabase { path in
        let store = try SQLiteSessionStore(path: path, configuration: configuration)
        try await body(StoreUnderTest(setup: setup, path: path, store: store, configuration: configuration))
        await store.close()
    }
}
