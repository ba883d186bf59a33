import ArgumentParser
import NavigationValuesPostgres
import NavigationValuesSQLite

/// `navigation-values backup --db FILE --to FILE`: a consistent copy of a SQLite database, taken
/// while a server writes to it.
struct Backup: Command {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a SQLite database, consistently, while a server writes to it.",
        discussion: """
            Copies the database --db to the new file --to with SQLite's online backup API: one \
            snapshot, holding every write acknowledged before the copy began. The server's writes \
            go on meanwhile (in write-ahead-log mode a reader never stops the writer). The copy is \
            written under a temporary name, checked (SQLite's integrity check, a schema this binary \
            knows), then moved to --to; an existing --to is never overwritten. Prints what the copy \
            holds. For PostgreSQL, use pg_dump (docs/Operations.md, "Backups").
            """)

    @Option(.flag("db", "FILE", "SQLite file to copy (the one 'serve --db' names)."), completion: .file())
    var db: String?
    @Option(.flag("to", "FILE", "New file to write the copy to."), completion: .file())
    var to: String?

    func run(_ arguments: ParsedArguments) async throws {
        let database = try Self.sqliteFile(arguments, command: "backup")
        guard let destination = arguments["to"] else { throw UsageError("backup needs --to FILE") }
        let summary: SQLiteBackup.Summary
        do {
            summary = try SQLiteBackup.copy(from: database, to: destination)
        } catch {
            throw CommandFailure("backup of '\(database)': \(error)")
        }
        Console.out("backed up \(database) to \(destination): \(Self.describe(summary))")
    }

    /// `--db`, which must name a SQLite file.
    /// - Throws: `UsageError` when it is missing, or is a PostgreSQL URL (which has its own tools).
    static func sqliteFile(_ arguments: ParsedArguments, command: String) throws(UsageError) -> String {
        guard let database = arguments["db"] else { throw UsageError("\(command) needs --db FILE") }
        guard !PostgresSessionStore.isDatabaseURL(database), database != ":memory:" else {
            throw UsageError(
                "\(command) takes a SQLite file; for PostgreSQL use pg_dump and pg_restore (docs/Operations.md, \"Backups\")"
            )
        }
        return database
    }

    /// One line on what a checked copy holds.
    static func describe(_ summary: SQLiteBackup.Summary) -> String {
        var text = "\(summary.pages) pages (\(summary.bytes) bytes), schema version \(summary.schemaVersion)"
        if summary.pendingMigrations > 0 {
            text += " (\(summary.pendingMigrations) migration(s) behind this binary: 'migrate' or 'serve' applies them)"
        }
        return text + ", integrity ok"
    }
}

/// `navigation-values restore --from FILE --db FILE`: puts a backup in place of a SQLite database.
struct Restore: Command {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put a backup in place of a SQLite database, with no server running on it.",
        discussion: """
            Checks the copy --from (SQLite's integrity check, a schema this binary knows), then \
            writes it over the database --db in one transaction, under the file's exclusive lock. \
            Refused while another process has --db open: stop the server first, restore, then \
            start it again. An existing, non-empty --db is replaced only with --replace yes (take a \
            backup of it first if you may want it back). For PostgreSQL, use pg_restore \
            (docs/Operations.md, "Backups").
            """)

    @Option(.flag("from", "FILE", "The backup to restore (made by 'backup')."), completion: .file())
    var from: String?
    @Option(.flag("db", "FILE", "SQLite file to restore into (created when missing)."), completion: .file())
    var db: String?
    @Option(.flag("replace", "yes|no", "yes: overwrite an existing, non-empty --db (default no)."))
    var replace: String?

    func run(_ arguments: ParsedArguments) async throws {
        guard let copy = arguments["from"] else { throw UsageError("restore needs --from FILE") }
        let database = try Backup.sqliteFile(arguments, command: "restore")
        let replace = try arguments.choice("replace", ["yes", "no"]) == "yes"
        let summary: SQLiteBackup.Summary
        do {
            summary = try SQLiteBackup.restore(from: copy, to: database, replace: replace)
        } catch {
            throw CommandFailure("restore of '\(copy)' into '\(database)': \(error)")
        }
        Console.out("restored \(copy) into \(database): \(Backup.describe(summary))")
    }
}
