import NavigationValuesPostgres
import NavigationValuesSQLite
import NavigationValuesStore

/// `navigation-values migrate --db PATH`: applies pending migrations and exits.
struct Migrate: Command {
    static let name = "migrate"
    static let abstract = "Apply pending database migrations and exit."
    static let synopsis = "migrate --db PATH|URL"
    static let discussion = """
        Creates the SQLite file when it does not exist (or takes the PostgreSQL database at a
        postgres:// URL), applies every migration this binary carries that the database lacks (each
        in its own transaction), and prints what it applied. 'serve' does the same at start; run
        'migrate' to upgrade a database before starting new servers on it.
        """
    static let flags = [
        Flag(name: "db", valueName: "PATH|URL", help: "SQLite file, or postgres://user@host:port/db, to migrate.")
    ]

    var databasePath: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        if let extra = arguments.positionals.first { throw UsageError("unexpected argument '\(extra)'") }
        guard let path = arguments["db"] else { throw UsageError("migrate needs --db PATH") }
        databasePath = path
    }

    func run() async throws -> Int32 {
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
            return 0
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
        return 0
    }
}
