import Foundation
import NavigationValuesAPI
import TestSupport

// The code of the client's DocC articles (Sources/NavigationValuesClient/NavigationValuesClient.docc),
// each block verbatim between a BEGIN marker naming its article and an END marker: the tests below
// run them, and `everySwiftBlockOfTheArticlesIsOneOfThese` fails when an article's Swift block is
// not one of them (but for SwiftUI, which this toolchain cannot build, marked as such).

// DOCC-SNIPPET-BEGIN GettingStarted.md
import NavigationValues
import NavigationValuesClient
import NavigationValuesWire  // the API's shapes: sessions, screens, events

/// A value the app's screens read: "subject" on the server.
struct Subject: ValueKey { static let defaultValue = "" }

@MainActor
func startComposing(on server: URL) async throws -> RemoteStack {
    // One client per server: it is Sendable, share it.
    let client = NavigationValuesClient(baseURL: server)
    // The server shows a session's token once: keep `session.token` to come back to it.
    let session = try await client.createSession(root: ScreenSeed("Inbox"))

    // Typed keys and calls; every mutation carries an Idempotency-Key, so a retry is applied once.
    try await session.root.set(Subject.self, "Hello")
    try await session.push("Compose")

    // A live mirror: reads are local and observed, and it follows the session's events.
    let stack = try await RemoteStack.connect(to: session)
    // stack.path == ["Compose"]; stack.top?.resolved(Subject.self) == "Hello", inherited from the root
    return stack
}
// DOCC-SNIPPET-END

// DOCC-SNIPPET-BEGIN GettingStarted.md
func followEvents(of session: RemoteSession) async throws -> [String] {
    var kinds: [String] = []
    // Every event after 0, in order; the stream resumes by itself after a lost connection and
    // ends after the session ends.
    for try await item in session.events(after: 0) {
        if case .event(let recorded) = item { kinds.append(recorded.event.kind.rawValue) }
    }
    return kinds
}
// DOCC-SNIPPET-END

// DOCC-SNIPPET-BEGIN MirroringATabApp.md
/// The app's routes, as `NavigationStack(path:)` holds them.
enum MailRoute: RemoteRoute {
    case mailbox(name: String)  // the screen "mailbox", values {"name": …}
    case message(id: Int)  // the screen "message", values {"id": …}
}

@MainActor
func mirrorTheMailApp(_ session: RemoteSession) async throws -> RemoteTree {
    // A second tab beside the main stack (made here; another client may have made it).
    try await session.createStack(StackID("search"), root: ScreenSeed("Search"))
    let tree = try await RemoteTree.connect(to: session)
    // tree.tabs.map(\.id) == [.main, StackID("search")]: a TabView's tabs, the main stack first

    // Each change is one request and one event, and reads as set while it flies.
    try await tree.main.setRoutes([MailRoute.mailbox(name: "Inbox"), .message(id: 7)])
    try await tree.select(StackID("search"))
    if let search = tree.stack(StackID("search"))?.top {
        try await tree.present(ScreenSeed("Filters"), style: .sheet, from: search.id)
    }
    // tree.main.routes(MailRoute.self) == [.mailbox(name: "Inbox"), .message(id: 7)]
    // tree.visibleScreen?.name == "Filters": the sheet over the selected tab
    return tree
}
// DOCC-SNIPPET-END

// DOCC-SNIPPET-BEGIN TestingWithTheInMemoryServer.md
import NavigationValuesTesting
import Testing

@Test @MainActor func openingAMessageShowsIt() async throws {
    // The server's own API in this process: no network, no database, the same answers and events.
    let server = try await InMemoryServer(sessions: [
        SessionSeed(root: ScreenSeed("Inbox"), operations: [.createStack(StackID("search"))])
    ])
    let tree = try await RemoteTree.connect(to: server.sessions[0])

    try await tree.main.setRoutes([MailRoute.message(id: 7)])

    #expect(tree.visibleScreen?.name == "message")
    #expect(tree.tabs.map(\.id) == [.main, StackID("search")])
    #expect(try await server.sessions[0].get().version == 3)  // created, the tab, the path
}

/// A preview's data: the inbox with a message open, mirrored live.
@MainActor
func mailPreviewTree() async throws -> RemoteTree {
    let server = try await InMemoryServer(sessions: [
        SessionSeed(root: ScreenSeed("Inbox"), path: [ScreenSeed("message", values: ["id": 7])])
    ])
    return try await RemoteTree.connect(to: server.sessions[0])
}
// DOCC-SNIPPET-END

// DOCC-SNIPPET-BEGIN WorkingOffline.md
func makeOfflineClient(server: URL, documents: URL) -> NavigationValuesClient {
    var configuration = NavigationValuesClient.Configuration()
    // Mutations made while the server cannot be reached wait in this file, in order, until it can.
    configuration.offline = OfflineOptions(limit: 500, file: documents.appendingPathComponent("pending.json"))
    return NavigationValuesClient(baseURL: server, configuration: configuration)
}
// DOCC-SNIPPET-END

@Suite struct DocumentationSnippetTests {
    /// The DocC catalogs of the client's products.
    static let catalogs = ["NavigationValuesClient", "NavigationValuesTesting"].map { module in
        repositoryRoot.appendingPathComponent("Sources/\(module)/\(module).docc")
    }

    @Test @MainActor func gettingStartedRunsAsItsCommentsSay() async throws {
        try await withServer { client, _ in
            let stack = try await startComposing(on: client.baseURL)
            #expect(stack.path == ["Compose"])
            #expect(stack.top?.resolved(Subject.self) == "Hello")
            let ended = try await stack.session.end()
            #expect(try await followEvents(of: stack.session) == ["session.created", "values.updated", "screen.pushed", "session.ended"])
            #expect(ended == 4)
            stack.stop()
        }
    }

    @Test(arguments: ServerKind.allCases) @MainActor func theTabAppIsMirroredAsItsCommentsSay(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Inbox"))
            let tree = try await mirrorTheMailApp(session)
            #expect(tree.tabs.map(\.id) == [.main, StackID("search")])
            #expect(tree.main.routes(MailRoute.self) == [.mailbox(name: "Inbox"), .message(id: 7)])
            #expect(tree.selectedStackID == StackID("search"))
            #expect(tree.visibleScreen?.name == "Filters")
            let resource = try await session.get()
            #expect(tree.resource == resource)
            #expect(try await eventKinds(of: session, after: 0).count == 5, "created, the tab, the path, selected, presented")
            tree.stop()
        }
    }

    @Test @MainActor func thePreviewsDataIsAMessageOpen() async throws {
        let tree = try await mailPreviewTree()
        #expect(tree.main.routes(MailRoute.self) == [.message(id: 7)])
        #expect(tree.visibleScreen?.name == "message")
        tree.stop()
    }

    /// The offline client, through a relay that drops the connection: a push made while the
    /// server cannot be reached waits in the file, and is applied once when it can.
    @Test func theOfflineClientKeepsAMutationInItsFileUntilTheServerIsBack() async throws {
        try await withServer { direct, server in
            try await withTemporaryFolder { documents in
                let proxy = try DroppingProxy(upstreamPort: server.port)
                defer { proxy.close() }
                let client = makeOfflineClient(server: loopbackURL(port: proxy.port), documents: documents)
                let created = try await direct.createSession(root: ScreenSeed("Inbox"))
                let session = client.session(id: created.id, token: created.token)

                proxy.setReachable(false)
                let push = Task { try await session.push("Draft") }
                let queue = try #require(client.offlineQueue)
                try await waitFor("the push queued") { queue.count == 1 }
                #expect(queue.mutations.map(\.label) == ["POST /v1/sessions/\(created.id.rawValue)/push"])
                let file = documents.appendingPathComponent("pending.json")
                try await waitFor("the queue in its file") { FileManager.default.fileExists(atPath: file.path) }
                #expect(try await created.get().version == 1, "nothing reached the server")

                proxy.setReachable(true)
                let pushed = try await push.value
                #expect(pushed.version == 2)
                try await queue.waitUntilEmpty()
                #expect(try await eventKinds(of: created, after: 1) == ["screen.pushed"], "applied once")
            }
        }
    }

    /// Each article's Swift blocks (in both catalogs) are the snippets above, verbatim, but for
    /// SwiftUI code, which this toolchain cannot build and which the article says is not built here.
    @Test func everySwiftBlockOfTheArticlesIsOneOfThese() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        var snippets: [String: [String]] = [:]
        var rest = source[...]
        // Markers start a line (which the strings here do not).
        while let begin = rest.range(of: "\n// DOCC-SNIPPET-BEGIN ") {
            let line = try #require(rest[begin.upperBound...].firstIndex(of: "\n"))
            let article = String(rest[begin.upperBound..<line])
            let end = try #require(rest[line...].range(of: "\n// DOCC-SNIPPET-END\n"))
            snippets[article, default: []].append(String(rest[rest.index(after: line)...end.lowerBound]))
            rest = rest[end.upperBound...]
        }
        #expect(snippets.count == 4)
        let articles = try Self.catalogs.flatMap { catalog in
            try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter { $0.hasSuffix(".md") }.map {
                catalog.appendingPathComponent($0)
            }
        }
        #expect(articles.count == 6)
        #expect(Set(snippets.keys).isSubset(of: Set(articles.map(\.lastPathComponent))), "\(articles)")
        var blocks = 0
        for file in articles {
            let article = file.lastPathComponent
            let text = try String(contentsOf: file, encoding: .utf8)
            let own = snippets[article] ?? []
            for snippet in own {
                #expect(text.contains("```swift\n" + snippet + "```\n"), "\(article) must show its snippet verbatim")
            }
            for block in Self.swiftBlocks(in: text) {
                blocks += 1
                let isSwiftUI = block.hasPrefix("import SwiftUI\n")
                #expect(isSwiftUI || own.contains(block), "\(article): a Swift block that no test compiles:\n\(block)")
                if isSwiftUI {
                    #expect(text.contains("not built here"), "\(article) must say its SwiftUI is not built here")
                }
            }
        }
        #expect(blocks >= 5)
    }

    /// The contents of the ```swift blocks of a Markdown text, each ending with its last newline.
    static func swiftBlocks(in text: String) -> [String] {
        var blocks: [String] = []
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = ""
            } else if let block = current, line == "```" {
                blocks.append(block)
                current = nil
            } else if current != nil {
                current? += line + "\n"
            }
        }
        return blocks
    }
}
