import CSQLite
import Foundation
import NavigationValuesStore

#if canImport(Glibc)
    import Glibc
#endif

/// Copies of a SQLite database taken while a server writes to it, and putting one back, through
/// SQLite's online backup API (https://sqlite.org/backup.html).
///
/// A copy is one snapshot: the source is read inside one read transaction, so it holds every
/// transaction committed before the copy began and none that began after. In write-ahead-log
/// mode (every database `serve` and `migrate` open) a reader never stops the writer, so the copy
/// runs beside a server without holding its commits; what the server writes meanwhile stays in
/// the log, which no checkpoint copies past the snapshot until the copy ends (past four times
/// `--wal-checkpoint-pages`, the server waits for it: back-pressure, not loss). A database in a
/// rollback-journal mode is copied in steps that each take the read lock only for their pages,
/// and SQLite starts the copy again when a writer changed the source between two steps.
///
/// Copies are checked before they count: `PRAGMA integrity_check`, and a schema that this binary's
/// migrations recognise (``Migrator/pendingMigrations(in:)``).
public enum SQLiteBackup {
    /// Pages copied per `sqlite3_backup_step` (4 MiB at SQLite's default page size).
    public static let pagesPerStep: Int32 = 1024

    /// What a copy holds, once checked.
    public struct Summary: Sendable, Equatable {
        /// Pages in the copy, and its size in bytes.
        public var pages: Int
        public var bytes: Int
        /// The migrations applied to it, this binary's numbering.
        public var schemaVersion: Int
        /// The migrations this binary carries that it lacks (`serve` and `migrate` apply them).
        public var pendingMigrations: Int
    }

    /// Why a copy or a restore did not happen, in words an operator can act on.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// Copies the database at `source` to a new file at `destination`, checks the copy, and
    /// returns what it holds. The copy is written beside `destination` under a temporary name and
    /// moved there once checked, so `destination` never holds a partial copy.
    ///
    /// - Throws: ``Failure`` when `destination` exists, the source cannot be read, or the copy
    ///   fails its checks; ``StoreError`` for SQLite's errors.
    public static func copy(from source: String, to destination: String) throws -> Summary {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw Failure("'\(destination)' exists; a backup never overwrites a file: choose a new name")
        }
        guard FileManager.default.fileExists(atPath: source) else {
            throw Failure("'\(source)' does not exist")
        }
        let partial = "\(destination).partial-\(getpid())"
        try? FileManager.default.removeItem(atPath: partial)
        do {
            try copyPages(from: source, to: partial)
            let summary = try check(partial, shownAs: "the copy of '\(source)'")
            try publish(partial, as: destination)
            return summary
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        }
    }

    /// Checks the copy at `path`: SQLite's integrity check, and a schema this binary knows (not
    /// newer than its migrations, each applied one matching its own).
    ///
    /// - Parameter shownAs: How messages name the file (default: `'path'`).
    /// - Throws: ``Failure`` saying what is wrong with it.
    public static func check(_ path: String, shownAs name: String? = nil, migrator: Migrator = Migrator()) throws
        -> Summary
    {
        let name = name ?? "'\(path)'"
        guard FileManager.default.fileExists(atPath: path) else { throw Failure("\(name) does not exist") }
        do {
            let database = try Database(path: path, access: .readOnly)
            let problems = try database.fetchAll("PRAGMA integrity_check(20)") { $0.string(0) }
            guard problems == ["ok"] else {
                throw Failure("\(name) fails SQLite's integrity check: \(problems.joined(separator: "; "))")
            }
            let applied = try migrator.appliedMigrations(in: database)
            guard !applied.isEmpty else { throw Failure("\(name) is not a NavigationValues database (no schema)") }
            let pending = try migrator.pendingMigrations(in: database)
            let pages = try database.fetchOne("PRAGMA page_count") { $0.int(0) } ?? 0
            let pageSize = try database.pageSize
            return Summary(
                pages: pages, bytes: pages * pageSize, schemaVersion: applied.count, pendingMigrations: pending.count)
        } catch let failure as Failure {
            throw failure
        } catch let error as StoreError where error.code == .migrationRefused {
            throw Failure("\(name) does not match this binary's schema: \(error.message)")
        } catch {
            throw Failure("\(name) cannot be read as a SQLite database: \(error)")
        }
    }

    /// Replaces the database at `database` (created when it does not exist) with the copy at
    /// `copy`, after checking the copy. Refused while any other connection has `database` open (a
    /// server): it takes the file's exclusive lock first, and keeps it until the copy is in place,
    /// so no server can open the database half restored. SQLite writes the pages in one
    /// transaction, so a crash midway leaves the old database.
    ///
    /// - Throws: ``Failure`` when the copy fails its checks, `database` exists and `replace` is
    ///   false, or another process has it open.
    public static func restore(from copy: String, to database: String, replace: Bool) throws -> Summary {
        _ = try check(copy)
        let exists = ((try? FileManager.default.attributesOfItem(atPath: database)[.size] as? Int) ?? 0) > 0
        guard !exists || replace else {
            throw Failure(
                "'\(database)' exists; pass --replace to overwrite it (take a backup of it first if you may want it back)"
            )
        }
        do {
            let target = try Database(path: database, access: .readWrite, busyTimeout: .seconds(1))
            // Out of write-ahead-log mode and under an exclusive lock held to the end: either
            // fails while another connection has the database open.
            do {
                try target.execute("PRAGMA locking_mode = EXCLUSIVE")
                _ = try target.fetchOne("PRAGMA journal_mode = DELETE") { $0.string(0) }
                try target.execute("BEGIN EXCLUSIVE")
                try target.execute("COMMIT")
            } catch let error as StoreError
                where error.primaryResultCode == SQLITE_BUSY || error.primaryResultCode == SQLITE_LOCKED
            {
                throw Failure(
                    "'\(database)' is in use: another process (a server?) has it open; stop it, then run restore again")
            }
            let source = try Database(path: copy, access: .readOnly)
            try runBackup(from: source, to: target, pagesPerStep: -1)
        }
        // Checked again where it now lies; `serve` and `migrate` switch it back to write-ahead logging.
        return try check(database)
    }

    // MARK: - Steps

    /// The source's pages into a new file at `path`, in steps, inside one read transaction of
    /// the source when it is in write-ahead-log mode.
    private static func copyPages(from source: String, to path: String) throws {
        let reader = try Database(path: source, access: .readOnly)
        let journalMode = try reader.fetchOne("PRAGMA journal_mode") { $0.string(0) }?.lowercased()
        let holdsSnapshot = journalMode == "wal"
        if holdsSnapshot {
            try reader.execute("BEGIN DEFERRED")
            // The snapshot starts at the transaction's first read.
            _ = try reader.fetchOne("SELECT count(*) FROM sqlite_schema") { $0.int(0) }
        }
        defer { if holdsSnapshot { _ = try? reader.execute("ROLLBACK") } }
        let writer = try Database(path: path, access: .readWrite)
        try runBackup(from: reader, to: writer, pagesPerStep: pagesPerStep)
        // The copy carries the source's write-ahead-log mode in its header; as a rollback-journal
        // file it is one file, read without a log or shared-memory file beside it.
        _ = try writer.fetchOne("PRAGMA journal_mode = DELETE") { $0.string(0) }
    }

    /// Runs a backup from `source` into `destination` to its end, `pagesPerStep` pages at a time
    /// (-1: all at once), waiting out the moments a lock is taken elsewhere.
    private static func runBackup(from source: Database, to destination: Database, pagesPerStep: Int32) throws {
        guard let backup = sqlite3_backup_init(destination.handle, "main", source.handle, "main") else {
            throw StoreError(
                resultCode: sqlite3_extended_errcode(destination.handle),
                message: String(cString: sqlite3_errmsg(destination.handle)), sql: nil)
        }
        var code = SQLITE_OK
        var waited = Duration.zero
        while true {
            code = sqlite3_backup_step(backup, pagesPerStep)
            if code == SQLITE_OK { continue }
            guard code == SQLITE_BUSY || code == SQLITE_LOCKED, waited < .seconds(30) else { break }
            waited += .milliseconds(10)
            usleep(10_000)
        }
        let finished = sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE, finished == SQLITE_OK else {
            let failed = code == SQLITE_DONE ? finished : code
            throw StoreError(
                resultCode: failed, message: "backup failed: \(String(cString: sqlite3_errstr(failed)))", sql: nil)
        }
    }

    /// Moves the checked copy to `destination` (never over an existing file: `link` refuses
    /// one) and syncs the folder, so the new name survives a crash.
    private static func publish(_ partial: String, as destination: String) throws {
        let descriptor = open(partial, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
        guard link(partial, destination) == 0 else {
            let reason = String(cString: strerror(errno))
            throw Failure("cannot create '\(destination)': \(reason)")
        }
        unlink(partial)
        let folder = (destination as NSString).deletingLastPathComponent
        let directory = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }
}
