import ArgumentParser
import Foundation
import NavigationValuesPostgres
import NavigationValuesSQLite
import NavigationValuesSessions
import NavigationValuesStore

/// `navigation-values prune --db PATH [RETENTION FLAGS]`: runs retention once, to the end.
struct Prune: Command {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "End idle sessions, purge old ended ones and compact history, now.",
        discussion: """
            Does at once what 'serve' does every --retention-interval, with the same rules and \
            defaults: ends sessions neither changed nor used for --session-idle-timeout (each gets its \
            session.ended event), purges sessions ended longer than --ended-retention ago (history and \
            idempotency records included), forgets their tombstones as long after the purge, and \
            compacts each session's history to the newest snapshot that keeps --history-keep-events \
            events and every event younger than --history-keep-days. Prints what it removed. It may \
            run beside a server on the same file: a session the server holds in memory and changes at \
            the same moment is reloaded by the server, which applies that change again. With a \
            PostgreSQL URL it prunes the database that every instance shares (run it from one place); \
            it never migrates that database: one whose schema is behind is refused until 'migrate'.
            """)

    @Option(.flag("db", "PATH|URL", "SQLite file, or PostgreSQL URL, to prune."), completion: .file())
    var db: String?
    @OptionGroup var retention: RetentionFlags

    func run(_ arguments: ParsedArguments) async throws {
        guard let databasePath = arguments["db"] else { throw UsageError("prune needs --db PATH|URL") }
        let policy = try RetentionFlags.policy(arguments)
        let shown =
            PostgresSessionStore.isDatabaseURL(databasePath)
            ? PostgresSessionStore.redacted(databasePath) : databasePath
        let store: any SessionStore
        do {
            if PostgresSessionStore.isDatabaseURL(databasePath) {
                var configuration = PostgresSessionStore.Configuration()
                configuration.listens = false
                configuration.migrates = false
                store = try await PostgresSessionStore.open(url: databasePath, configuration: configuration)
            } else {
                store = try await SQLiteSessionStore.open(path: databasePath)
            }
        } catch {
            throw CommandFailure("\(shown): \(error)")
        }
        let report: RetentionReport
        do {
            report = try await SessionService(store: store).retention.runToEnd(policy)
        } catch {
            await store.close()
            throw CommandFailure("\(shown): \(error)")
        }
        await store.close()
        Console.out("ended \(report.ended) idle session(s)")
        Console.out("purged \(report.purged) ended session(s)")
        Console.out("compacted \(report.compactedEvents) event(s)")
        Console.out("forgot \(report.expiredRecords) expired record(s)")
    }
}
