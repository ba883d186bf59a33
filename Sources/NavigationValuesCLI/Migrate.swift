import ArgumentParser
import NavigationValuesPostgres
import NavigationValuesSQLite
import NavigationValuesStore

/// `navigation-values migrate --db PATH`: applies pending migrations and exits.
struct Migrate: Command {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending database migrations and exit.",
        discussion: """
            Creates the SQLite file when it does not exist (or takes the PostgreSQL database at a \
            postgres:// URL), applies every migration this binary carries that the database lacks (each \
            in its own transaction), and prints what it applied. 'serve' does the same at start; run \
            'migrate' to upgrade a database before starting new servers on it.
            """)

    @Option(.flag("db", "PATH|URL", "SQLite file, or postgres://user@host:port/db, to migrate."), completion: .file())
    var db: String?

    func run(_ arguments: ParsedArguments) async throws {
        guard let databasePath = arguments["db"] else { throw UsageError("migrate needs --db PATH") }
        let applied: [Migration]
        let version: Int
        if PostgresSessionStore.isDatabaseURL(databasePath) {
            let shown = PostgresSessionStore.redacted(databasePath)
            do {
                let migrator = PostgresMigrator()
                applied = try migrator.migrate(url: databasePath)
                version = try migrator.appliedMigrations(url: databasePath).count
            } catch {
                throw CommandFailure("\(shown): \(error)")
            }
            for migration in applied { Console.out("applied postgres/\(migration.fileName)") }
            Console.out("\(shown) is at schema version \(version)")
            return
        }
        do {
            let database = try Database(path: databasePath)
            try database.enableWriteAheadLog(synchronous: .normal)
            let migrator = Migrator()
            applied = try migrator.migrate(database)
            version = try migrator.appliedMigrations(in: database).count
        } catch {
            throw CommandFailure("\(databasePath): \(error)")
        }
        for migration in applied { Console.out("applied \(migration.fileName)") }
        Console.out("\(databasePath) is at schema version \(version)")
    }
}
