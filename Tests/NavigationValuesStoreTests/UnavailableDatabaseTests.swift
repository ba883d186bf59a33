import Foundation
import NavigationValuesSQLite
import NavigationValuesStore
import Testing

/// Disk trouble surfaces as `StoreError`, never as a crash.
@Suite struct UnavailableDatabaseTests {
    let sample = SampleSession()

    func readOnlyConfiguration() -> SQLiteSessionStore.Configuration {
        var configuration = SQLiteSessionStore.Configuration()
        configuration.access = .readOnly
        return configuration
    }

    @Test func aReadOnlyStoreReadsButEveryWriteIsUnavailable() async throws {
        try await withTemporaryDatabase { path in
            let writer = try SQLiteSessionStore(path: path)
            try await writer.commit(sample.creation)
            try await writer.checkWritable()
            await writer.close()

            let store = try SQLiteSessionStore(path: path, configuration: readOnlyConfiguration())
            #expect(try await store.loadSession(sample.id)?.record.version == 1)
            let error = await expectStoreError(.unavailable) { try await store.commit(sample.mutation(2)) }
            #expect(error?.primaryResultCode == 8)  // SQLITE_READONLY
            await expectStoreError(.unavailable) { try await store.checkWritable() }
            #expect(store.metrics.failedMutations == 1)
            await store.close()
        }
    }

    @Test func aReadOnlyStoreRefusesAFileThatNeedsMigrating() async throws {
        try await withTemporaryDatabase { path in
            _ = try Database(path: path)  // an empty file
            await expectStoreError(.migrationRefused) {
                _ = try SQLiteSessionStore(path: path, configuration: readOnlyConfiguration())
            }
        }
    }

    /// Root ignores file permissions, so this runs only as another user.
    @Test(.enabled(if: getuid() != 0))
    func aFileWithoutWritePermissionIsUnavailable() async throws {
        try await withTemporaryDatabase { path in
            let writer = try SQLiteSessionStore(path: path)
            try await writer.commit(sample.creation)
            await writer.close()
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path) }
            do {
                let store = try SQLiteSessionStore(path: path)
                await expectStoreError(.unavailable) { try await store.commit(sample.mutation(2)) }
                await expectStoreError(.unavailable) { try await store.checkWritable() }
                await store.close()
            } catch let error as StoreError {
                #expect(error.code == .unavailable, "\(error) in \(folder)")
            }
        }
    }

    @Test func aFileThatIsNotADatabaseIsCorrupt() async throws {
        try await withTemporaryDatabase { path in
            try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: path))
            let error = await expectStoreError(.corrupt) { _ = try SQLiteSessionStore(path: path) }
            #expect(error?.message.hasPrefix(path) == true)
        }
    }

    @Test func aFolderThatDoesNotExistIsUnavailable() async throws {
        try await withTemporaryDatabase { path in
            let error = await expectStoreError(.unavailable) {
                _ = try SQLiteSessionStore(path: path + "/missing/db.sqlite")
            }
            #expect(error?.message.contains("missing/db.sqlite") == true)
        }
    }
}
