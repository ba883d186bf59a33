import Foundation
import NavigationValuesStore

/// Brings a PostgreSQL database's schema up to date with the migrations the binary carries
/// (`Migrations/postgres/`), as ``Migrator`` does for SQLite, with the same checks.
///
/// Each migration runs in its own transaction together with the `schema_migrations` row that
/// records it, under a transaction-scoped advisory lock, so that several instances starting at
/// once apply each migration exactly once. It refuses a database whose applied migrations do
/// not match the binary (an edited, newer or gapped history), or whose current schema has tables
/// but no `schema_migrations`.
///
/// ```swift
/// let applied = try PostgresMigrator().migrate(url: "postgres://nv@127.0.0.1:5432/nv")
/// ```
public struct PostgresMigrator: Sendable {
    /// The key of the advisory lock migrations take (`pg_advisory_xact_lock`): "NaVa" in ASCII.
    static let lockKey = 0x4E61_5661

    /// The migrations to apply, in order.
    public var migrations: [Migration]

    /// A migrator for `migrations`, which must be numbered 1, 2, 3… in order: a list that is not
    /// is refused when it would migrate (`.migrationRefused`, naming the gap), not here.
    public init(migrations: [Migration] = Migration.embeddedPostgres) {
        self.migrations = migrations
    }

    /// Connects to `url`, applies every pending migration, each in its own transaction, and
    /// returns them. Blocks: call it at start-up, or off the cooperative pool.
    ///
    /// - Throws: ``StoreError``: `.migrationRefused` when the database does not match this
    ///   binary's migrations; `.unavailable` when it cannot be reached.
    @discardableResult
    public func migrate(url: String) throws -> [Migration] {
        try migrate(try PostgresConnection(url: url))
    }

    /// The migrations applied to the database at `url`, oldest first.
    public func appliedMigrations(url: String) throws -> [AppliedMigration] {
        try appliedMigrations(in: try PostgresConnection(url: url))
    }

    /// The migrations not applied yet to the database at `url`, after checking the applied ones.
    public func pendingMigrations(url: String) throws -> [Migration] {
        try Migration.pending(after: try appliedMigrations(url: url), of: migrations)
    }

    func pendingMigrations(in connection: PostgresConnection) throws -> [Migration] {
        try Migration.pending(after: try appliedMigrations(in: connection), of: migrations)
    }

    @discardableResult
    func migrate(_ connection: PostgresConnection) throws -> [Migration] {
        var applied: [Migration] = []
        while true {
            try connection.executeScript("BEGIN; SELECT pg_advisory_xact_lock(\(Self.lockKey))")
            let next: Migration?
            do {
                next = try Migration.pending(after: try appliedMigrations(in: connection), of: migrations).first
                if let next {
                    try connection.executeScript(next.sql)
                    // Version, name and checksum are digits, [a-z_] and hex: safe as literals.
                    try connection.executeScript(
                        """
                        INSERT INTO schema_migrations (version, name, checksum, applied_at)
                        VALUES (\(next.version), '\(next.name)', '\(next.checksum)', now())
                        """)
                }
                try connection.executeScript("COMMIT")
            } catch {
                _ = try? connection.executeScript("ROLLBACK")
                throw error
            }
            guard let next else { return applied }
            applied.append(next)
        }
    }

    func appliedMigrations(in connection: PostgresConnection) throws -> [AppliedMigration] {
        let tables = try connection.executeScript(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).rows.compactMap { $0.first ?? nil }
        guard tables.contains("schema_migrations") else {
            guard tables.isEmpty else {
                throw Migration.refusal(
                    "the database's schema has tables but no schema_migrations: it is not a NavigationValues database")
            }
            return []
        }
        let rows = try connection.executeScript(
            """
            SELECT version, name, checksum, (extract(epoch FROM applied_at) * 1000)::bigint
            FROM schema_migrations ORDER BY version
            """
        ).rows
        return try rows.map { row in
            guard row.count == 4, let version = row[0].flatMap({ Int($0) }), let name = row[1], let checksum = row[2],
                let milliseconds = row[3].flatMap({ Int64($0) })
            else {
                throw StoreError(code: .corrupt, message: "schema_migrations has a row that does not read back")
            }
            return AppliedMigration(
                version: version, name: name, checksum: checksum,
                appliedAt: Date(millisecondsSince1970: milliseconds))
        }
    }
}
