import Foundation
import NavigationValuesStore
import TestSupport
import Testing

@Suite struct EmbeddedMigrationsTests {
    /// If this fails, run `scripts/embed-migrations.sh` after changing `Migrations/`.
    @Test func theEmbeddedSQLEqualsTheFilesInMigrations() throws {
        let folder = repositoryRoot.appendingPathComponent("Migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".sql") }
            .sorted()
        #expect(!files.isEmpty)
        #expect(Migration.embedded.map(\.fileName) == files)
        for migration in Migration.embedded where files.contains(migration.fileName) {
            let bytes = try Data(contentsOf: folder.appendingPathComponent(migration.fileName))
            #expect(Data(migration.sql.utf8) == bytes, "\(migration.fileName) differs from its embedded copy")
        }
    }

    @Test func migrationFilesAreNumberedWithoutGaps() {
        #expect(Migration.embedded.map(\.version) == Array(1...Migration.embedded.count))
        for migration in Migration.embedded {
            #expect(migration.fileName.wholeMatch(of: /\d{4}_[a-z]+(_[a-z0-9]+)+\.sql/) != nil)
        }
    }
}
