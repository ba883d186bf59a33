import Foundation
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

/// The store and the `sqlite3` shell on one file at once, as an operator would use them.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
struct WriteAheadLogTests {
    func shell(_ path: String, _ sql: String) async throws -> String {
        try await ChildProcess.output(of: URL(fileURLWithPath: "/usr/bin/sqlite3"), arguments: ["-bail", path, sql])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theShellSeesCommittedDataWhileTheStoreIsOpenAndTheStoreSeesTheShells() async throws {
        try await withTemporaryDatabase { path in
            let store = try SQLiteSessionStore(path: path)
            let sample = SampleSession()
            try await store.commit(sample.creation)
            try await store.commit(sample.mutation(2, [.setValue(sample.root, key: "title", json: #""x""#)]))

            #expect(try await shell(path, "PRAGMA journal_mode") == "wal")
            #expect(
                try await shell(path, "SELECT group_concat(seq) FROM (SELECT seq FROM events ORDER BY seq)") == "1,2")
            #expect(try await shell(path, "SELECT version || ' ' || state FROM sessions") == "2 active")
            #expect(try await shell(path, "SELECT json FROM context_values") == #""x""#)

            // An operator ends the session by hand; the store's readers see it at once.
            _ = try await shell(path, "UPDATE sessions SET state = 'ended', version = 3 WHERE id = 's_sample'")
            let session = try #require(try await store.loadSession(sample.id))
            #expect(session.record.state == .ended)
            #expect(session.record.version == 3)
            // And the store's writer keeps going after the shell's write, its commits conditional
            // on the version the shell left: one made from version 2 is a conflict.
            await expectStoreError(.conflict) { try await store.commit(sample.mutation(3)) }
            try await store.commit(sample.mutation(4))
            #expect(try await shell(path, "SELECT max(seq) FROM events") == "4")
            await store.close()
        }
    }

    @Test func theFullSyncModeAlsoRunsInWriteAheadLogMode() async throws {
        try await withTemporaryDatabase { path in
            var configuration = SQLiteSessionStore.Configuration()
            configuration.sync = .full
            let store = try SQLiteSessionStore(path: path, configuration: configuration)
            try await store.commit(SampleSession().creation)
            #expect(try await shell(path, "PRAGMA journal_mode") == "wal")
            #expect(try await shell(path, "SELECT count(*) FROM events") == "1")
            await store.close()
        }
    }
}
