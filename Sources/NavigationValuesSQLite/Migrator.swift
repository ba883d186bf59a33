import Foundation
import NavigationValuesStore

/// Brings a database's schema up to date with the migrations the binary carries.
///
/// Each migration runs in its own `BEGIN IMMEDIATE` transaction together with the
/// `schema_migrations` row that records it, so a crash leaves it either applied and recorded or
/// not applied at all. The migrator refuses a database that does not match the binary: an
/// applied migration whose checksum (or name) changed, a migration newer than the binary knows,
/// or tables without `schema_migrations`.
///
/// A migration file must not open or close transactions itself, and cannot switch
/// `PRAGMA foreign_keys` (a no-op inside a transaction): rebuild a table with the steps of
/// https://sqlite.org/lang_altertable.html#otheralter that keep foreign keys on.
///
/// ```swift
/// let db = try Database(path: path)
/// let applied = try Migrator().migrate(db)   // the migrations it applied now
/// ```
public struct Migrator: Sendable {
    /// The migrations to apply, in order.
    public var migrations: [Migration]

    /// A migrator for `migrations`, which must be numbered 1, 2, 3… in order: a list that is not
    /// is refused when it would migrate (`.migrationRefused`, naming the gap), not here.
    public init(migrations: [Migration] = Migration.embedded) {
        self.migrations = migrations
    }

    /// Applies every pending migration, each in its own transaction, and returns them.
    ///
    /// - Throws: ``StoreError`` with code `.migrationRefused` when the database does not match
    ///   this binary's migrations; SQLite's errors otherwise.
    @discardableResult
    public func migrate(_ db: Database, now: @autoclosure () -> Date = Date()) throws -> [Migration] {
        var applied: [Migration] = []
        while true {
            // Check and apply under the write lock, so two processes never apply one migration twice.
            let next = try db.inTransaction(.immediate) { () throws -> Migration? in
                guard let next = try pendingMigrations(in: db).first else { return nil }
                try db.executeScript(next.sql)
                try db.execute(
                    "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
                    [.integer(next.version), .text(next.name), .text(next.checksum), .milliseconds(now())])
                return next
            }
            guard let next else { return applied }
            applied.append(next)
        }
    }

    /// The migrations not applied yet, after checking that the applied ones match this binary.
    ///
    /// - Throws: ``StoreError`` with code `.migrationRefused` when they do not match.
    public func pendingMigrations(in db: Database) throws -> [Migration] {
        try Migration.pending(after: try appliedMigrations(in: db), of: migrations)
    }

    /// The rows of `schema_migrations`, oldest first; empty for a new database.
    ///
    /// - Throws: ``StoreError`` with code `.migrationRefused` when the database has tables but no
    ///   `schema_migrations` (it belongs to something else).
    public func appliedMigrations(in db: Database) throws -> [AppliedMigration] {
        let objects = try db.fetchAll(
            "SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        ) { $0.string(0) }
        guard objects.contains("schema_migrations") else {
            guard objects.isEmpty else {
                throw Migration.refusal(
                    "the database has tables but no schema_migrations: it is not a NavigationValues database")
            }
            return []
        }
        return try db.fetchAll("SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version") {
            AppliedMigration(version: $0.int(0), name: $0.string(1), checksum: $0.string(2), appliedAt: $0.date(3))
        }
    }
}
