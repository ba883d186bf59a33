import ArgumentParser
import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesPostgres
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire

/// `navigation-values replay --db PATH SESSION [--at N]`: prints a session as it was after event N,
/// read straight from the database (docs/API.md, The executable).
struct Replay: Command {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Print a session as it was after an event, from the database.",
        discussion: """
            Prints the session SESSION as it was right after its event N (default: the latest), as \
            JSON of the same shape as GET /v1/sessions/{id}. Opens the database read-only, so it can \
            run beside a server.
            """)

    @Option(.flag("db", "PATH|URL", "SQLite file, or postgres://user@host:port/db, to read."), completion: .file())
    var db: String?
    @Argument(help: ArgumentHelp("The session's id.", valueName: "SESSION"))
    var session: String?
    @Option(.flag("at", "N", "Event number (default: the latest)."))
    var at: String?

    func run(_ arguments: ParsedArguments) async throws {
        guard let databasePath = arguments["db"] else { throw UsageError("replay needs --db PATH") }
        guard let session else { throw UsageError("replay needs a SESSION id") }
        let event = try arguments.integer("at", in: 1...Int.max).map(Int64.init)
        let replayed: SessionResource
        do {
            replayed = try await SessionReplay.session(SessionID(session), at: event, databasePath: databasePath)
        } catch let failure as SessionReplay.Failure {
            throw CommandFailure(failure.description)
        } catch {
            let shown =
                PostgresSessionStore.isDatabaseURL(databasePath)
                ? PostgresSessionStore.redacted(databasePath) : databasePath
            throw CommandFailure("\(shown): \(error)")
        }
        Console.out(replayed.json.serialized())
    }
}
