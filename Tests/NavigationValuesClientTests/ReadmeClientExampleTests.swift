import Foundation
import NavigationValues
import NavigationValuesClient
import NavigationValuesWire
import TestSupport
import Testing

// The client examples of docs/Client.md, verbatim between the markers; `readmeShowsThisExample` keeps the
// two the same, and the tests below run them against a real server. The README's taste of the
// client, further down, likewise (`theReadmeShowsTheTaste`).
// README-CLIENT-EXAMPLE-BEGIN
struct Heading: ValueKey { static let defaultValue = "" }  // "heading" on the server
struct Choice: PreferenceKey { static let defaultValue = "" }  // "choice"

@MainActor
func readmeClientExample(server: URL) async throws -> (heading: String, choice: String, path: [String]) {
    let client = NavigationValuesClient(baseURL: server)
    let session = try await client.createSession(root: ScreenSeed("Inbox"))  // keep session.token

    // Typed keys on the remote session. Every mutation carries an Idempotency-Key and is retried
    // after a lost connection or a 503; the server applies it once.
    try await session.root.set(Heading.self, "Inbox")
    let message = try await session.push("Message")
    try await session.root.setPreferenceHandler(Choice.self, passBack: true)
    try await session.top.updatePreference(Choice.self, value: "archive")

    // A conditional change: applied only at that version, else the error says the server's.
    do {
        try await session.push("Stale", ifMatch: 1)
    } catch let error as RemoteError where error.code == .versionMismatch {
        print("the session is at version \(error.currentVersion ?? 0)")
    }

    // A live mirror: reads are local and observed (Observation, SwiftUI); it follows the events.
    let stack = try await RemoteStack.connect(to: session)
    let heading = stack[id: message.screen.id]?.resolved(Heading.self) ?? ""  // "Inbox", inherited
    let choice = stack.root?.preference(Choice.self) ?? ""  // "archive"

    // NavigationStack(path: $stack.path) sets it; here, awaited: the fewest requests (one push).
    try await stack.setPath([ScreenSeed("Message"), ScreenSeed("Reply")])
    return (heading, choice, stack.path)
}

func readmeEventsExample(session: RemoteSession) async throws -> [Int64] {
    var seqs: [Int64] = []
    // Every event after 0, in order, resuming with Last-Event-ID after a lost connection;
    // the sequence ends after `session.ended`.
    for try await item in session.events(after: 0) {
        if case .event(let event) = item { seqs.append(event.seq) }
    }
    return seqs
}
// README-CLIENT-EXAMPLE-END

// README-CLIENT-TASTE-BEGIN
struct Note: ValueKey { static let defaultValue = "" }  // "note" on the server

// On the phone: the user's navigation is kept on the server as it happens.
func keepNavigation(server: URL) async throws -> (id: SessionID, token: String) {
    let session = try await NavigationValuesClient(baseURL: server).createSession(root: ScreenSeed("Inbox"))
    let message = try await session.push("Message")
    try await session.screen(id: message.screen.id).set(Note.self, "Dear Ann,")
    return (session.id, session.token)  // kept with the user's account
}

// On the tablet: the same navigation, as a live mirror to bind to NavigationStack(path:).
@MainActor
func restoreNavigation(server: URL, id: SessionID, token: String) async throws -> (path: [String], note: String) {
    let session = NavigationValuesClient(baseURL: server).session(id: id, token: token)
    let stack = try await RemoteStack.connect(to: session)
    return (stack.path, stack.top?.resolved(Note.self) ?? "")  // (["Message"], "Dear Ann,")
}
// README-CLIENT-TASTE-END

@Suite struct ReadmeClientExampleTests {
    /// On the real server only: the README's example makes its own client of a URL.
    @Test @MainActor func theClientExampleRunsAsTheReadmeSays() async throws {
        try await withServer { client, _ in
            let (heading, choice, path) = try await readmeClientExample(server: client.baseURL)
            #expect(heading == "Inbox")
            #expect(choice == "archive")
            #expect(path == ["Message", "Reply"])
            let session = try await client.sessions().sessions[0]
            let created = client.session(id: session.id)
            let kinds = try await eventKinds(of: created, after: 0)
            #expect(kinds.last == "screen.pushed", "the path change was one push: \(kinds)")
            #expect(kinds.count == 6)
        }
    }

    @Test(arguments: ServerKind.allCases) func theEventsExampleReadsToTheEnd(server: ServerKind) async throws {
        try await withServer(server) { client, _ in
            let session = try await client.createSession()
            try await session.push("A")
            try await session.end()
            #expect(try await readmeEventsExample(session: session) == [1, 2, 3])
        }
    }

    @Test @MainActor func theReadmeTasteRestoresWhatWasKept() async throws {
        try await withServer { client, _ in
            let (id, token) = try await keepNavigation(server: client.baseURL)
            let (path, note) = try await restoreNavigation(server: client.baseURL, id: id, token: token)
            #expect(path == ["Message"])
            #expect(note == "Dear Ann,")
        }
    }

    @Test func theReadmeShowsTheTaste() throws {
        let readme = try String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let begin = try #require(source.range(of: "// README-CLIENT-TASTE-BEGIN\n"))
        let end = try #require(source.range(of: "// README-CLIENT-TASTE-END"))
        let taste = String(source[begin.upperBound..<end.lowerBound])
        #expect(readme.contains(taste), "README.md must contain README-CLIENT-TASTE of this file verbatim")
    }

    @Test func readmeShowsThisExample() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let page = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/Client.md"), encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)
        let begin = try #require(source.range(of: "// README-CLIENT-EXAMPLE-BEGIN\n"))
        let end = try #require(source.range(of: "// README-CLIENT-EXAMPLE-END"))
        let example = String(source[begin.upperBound..<end.lowerBound])
        #expect(page.contains(example), "docs/Client.md must contain README-CLIENT-EXAMPLE of this file verbatim")
    }
}
