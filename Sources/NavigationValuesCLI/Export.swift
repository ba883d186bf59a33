import ArgumentParser
import Foundation
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesWire

/// `navigation-values export --db PATH SESSION [--as-test [--versions LIST]]`: a session's history
/// as `GET /v1/sessions/{id}/export` writes it, or as a Swift Testing test, from the database.
struct Export: Command {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print a session's history, or a Swift Testing test of it, from the database.",
        discussion: """
            Prints the events of SESSION, one JSON object per line, as GET /v1/sessions/{id}/export \
            writes them; with --as-test, a Swift Testing test that replays them on the core library \
            and checks the state after each event (or after those --versions lists), as \
            ?format=swift-testing does. Opens the database read-only, so it can run beside a server.
            """)

    @Option(.flag("db", "PATH|URL", "SQLite file, or postgres://user@host:port/db, to read."), completion: .file())
    var db: String?
    @Argument(help: ArgumentHelp("The session's id.", valueName: "SESSION"))
    var session: String?
    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Print a Swift Testing test instead of the events.", discussion: "env: \(FlagName.variable("as-test"))"))
    var asTest = false
    @Option(.flag("versions", "LIST", "With --as-test: the events to check after, such as 1,5,9."))
    var versions: String?

    func run(_ arguments: ParsedArguments) async throws {
        guard let databasePath = arguments["db"] else { throw UsageError("export needs --db PATH") }
        guard let session else { throw UsageError("export needs a SESSION id") }
        let asTest = try arguments.isOn("as-test")
        var checked: Set<Int64>?
        if let list = arguments["versions"] {
            let source = arguments.sources["versions"] ?? "--versions"
            let numbers = list.split(separator: ",", omittingEmptySubsequences: false).map { Int64($0) }
            guard !numbers.isEmpty, numbers.allSatisfy({ ($0 ?? 0) >= 1 }) else {
                throw UsageError("\(source) must list event numbers of at least 1, such as 1,5,9, not '\(list)'")
            }
            guard asTest else { throw UsageError("\(source) needs --as-test") }
            checked = Set(numbers.compactMap { $0 })
        }
        do {
            try await SessionReplay.export(
                SessionID(session), asTest: asTest, versions: checked, databasePath: databasePath, write: Console.out)
        } catch {
            throw CommandFailure(reading: databasePath, error)
        }
    }
}
