import Foundation
import NavigationValuesStore
import NavigationValuesPostgres
import NavigationValuesSQLite
import TestSupport
import Testing

@Suite struct EmbeddedMigrationsTests {
    /// If this fails, run `scripts/embed-migrations.sh` after changing `Migrations/` or
    /// `Migrations/postgres/`.
    @Test(arguments: [("Migrations", Migration.embedded), ("Migrations/postgres", Migration.embeddedPostgres)])
    func theEmbeddedSQLEqualsTheFilesInMigrations(folder name: String, embedded: [Migration]) throws {
        let folder = repositoryRoot.appendingPathComponent(name)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".sql") }
            .sorted()
        #expect(!files.isEmpty)
        #expect(embedded.map(\.fileName) == files)
        for migration in embedded where files.contains(migration.fileName) {
            let bytes = try Data(contentsOf: folder.appendingPathComponent(migration.fileName))
            #expect(Data(migration.sql.utf8) == bytes, "\(migration.fileName) differs from its embedded copy")
        }
    }

    @Test(arguments: [Migration.embedded, Migration.embeddedPostgres])
    func migrationFilesAreNumberedWithoutGaps(embedded: [Migration]) {
        #expect(embedded.map(\.version) == Array(1...embedded.count))
        for migration in embedded {
            #expect(migration.fileName.wholeMatch(of: /\d{4}_[a-z]+(_[a-z0-9]+)+\.sql/) != nil)
        }
    }
}
