import Foundation
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesWire

/// `navigation-values export --db PATH SESSION [--as-test [--versions LIST]]`: a session's history
/// as `GET /v1/sessions/{id}/export` writes it, or as a Swift Testing test, from the database.
struct Export: Command {
    static let name = "export"
    static let abstract = "Print a session's history, or a Swift Testing test of it, from the database."
    static let synopsis = "export --db PATH|URL SESSION [--as-test [--versions LIST]]"
    static let discussion = """
        Prints the events of SESSION, one JSON object per line, as GET /v1/sessions/{id}/export
        writes them; with --as-test, a Swift Testing test that replays them on the core library
        and checks the state after each event (or after those --versions lists), as
        ?format=swift-testing does. Opens the database read-only, so it can run beside a server.
        """
    static let flags = [
        Flag(name: "db", valueName: "PATH|URL", help: "SQLite file, or postgres://user@host:port/db, to read."),
        Flag(name: "as-test", valueName: "", help: "Print a Swift Testing test instead of the events.", isSwitch: true),
        Flag(name: "versions", valueName: "LIST", help: "With --as-test: the events to check after, such as 1,5,9."),
    ]

    var databasePath: String
    var session: String
    var asTest: Bool
    var versions: Set<Int64>?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        (databasePath, session) = try arguments.databaseAndSession(of: Self.name)
        asTest = arguments["as-test"] != nil
        if let list = arguments["versions"] {
            guard asTest else { throw UsageError("--versions needs --as-test") }
            let numbers = list.split(separator: ",", omittingEmptySubsequences: false).map { Int64($0) }
            guard !numbers.isEmpty, numbers.allSatisfy({ ($0 ?? 0) >= 1 }) else {
                throw UsageError("--versions must list event numbers of at least 1, such as 1,5,9, not '\(list)'")
            }
            versions = Set(numbers.compactMap { $0 })
        }
    }

    func run() async throws -> Int32 {
        do {
            try await SessionReplay.export(
                SessionID(session), asTest: asTest, versions: versions, databasePath: databasePath, write: Console.out)
        } catch {
            throw CommandFailure(reading: databasePath, error)
        }
        return 0
    }
}
