import Foundation
import NavigationValues
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import Synchronization
import Testing

/// Runs `body` with the path of a database file in a fresh temporary folder, removed afterwards
/// (whether `body` succeeds or throws).
func withTemporaryDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("NavigationValuesStoreTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory.appendingPathComponent("store.sqlite").path)
}

/// A SQLite store on a temporary file, its state written behind the log as `writeBehind` says
/// (held until the test writes it, in the write-behind suites), under `sync`: `body` runs with
/// it and the file's path, the store closes, and then `reopened`, if given, runs with the file
/// opened again (default configuration) and closes it.
func withWriteBehindStore(
    _ writeBehind: WriteBehind, sync: SQLiteSessionStore.SyncMode = .normal,
    _ body: (SQLiteSessionStore, String) async throws -> Void,
    reopened: ((SQLiteSessionStore) async throws -> Void)? = nil
) async throws {
    try await withTemporaryDatabase { path in
        var configuration = SQLiteSessionStore.Configuration()
        configuration.sync = sync
        configuration.writeBehind = writeBehind
        let store = try SQLiteSessionStore(path: path, configuration: configuration)
        do {
            try await body(store, path)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        guard let reopened else { return }
        let again = try SQLiteSessionStore(path: path)
        do {
            try await reopened(again)
        } catch {
            await again.close()
            throw error
        }
        await again.close()
    }
}

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let current: Mutex<Date>
    init(_ start: Date = Date(millisecondsSince1970: 1_796_000_000_000)) { current = Mutex(start) }
    var now: Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}

// MARK: - Sample rows

/// Builds the mutations of a small session, as the API would.
struct SampleSession {
    var id: SessionID
    var at: Date

    init(_ id: String = "s_sample", at: Date = Date(millisecondsSince1970: 1_796_000_000_000)) {
        self.id = SessionID(id)
        self.at = at
    }

    var root: ScreenID { ScreenID("c_\(id.rawValue)_0") }

    func screen(_ index: Int) -> ScreenID { ScreenID("c_\(id.rawValue)_\(index)") }

    var record: SessionRecord {
        SessionRecord(
            id: id, version: 1, state: .active, schemaJSON: #"{"strict":false}"#, tokenHash: "ab12", createdAt: at,
            updatedAt: at)
    }

    func screenRecord(_ index: Int, name: String = "Screen") -> ScreenRecord {
        ScreenRecord(
            id: screen(index), session: id, index: index, name: name, role: index == 0 ? "navigationStack" : "screen",
            previous: index == 0 ? nil : screen(index - 1))
    }

    func event(_ seq: Int64, _ type: String = "values.updated") -> StoredEvent {
        StoredEvent(
            session: id, seq: seq, type: type, json: #"{"seq":\#(seq),"type":"\#(type)"}"#,
            at: at.addingTimeInterval(Double(seq)))
    }

    /// Event 1: the session with its root screen.
    var creation: StoredMutation {
        StoredMutation(
            session: id, event: event(1, "session.created"),
            changes: [.insertSession(record), .insertScreen(screenRecord(0, name: "Home"))])
    }

    /// Event `seq` with `changes` and the version update that goes with it.
    func mutation(
        _ seq: Int64, _ changes: [StateChange] = [], idempotency: IdempotencyRecord? = nil,
        snapshot: StoredSnapshot? = nil
    ) -> StoredMutation {
        StoredMutation(
            session: id, event: event(seq),
            changes: changes + [
                .updateSession(id, version: seq, state: .active, updatedAt: at.addingTimeInterval(Double(seq)))
            ],
            idempotency: idempotency, snapshot: snapshot)
    }
}

/// Expects `body` to throw a `StoreError` with `code`, and returns it.
@discardableResult
func expectStoreError(
    _ code: StoreError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async -> StoreError? {
    do {
        try await body()
        Issue.record("expected StoreError \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as StoreError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected StoreError \(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
