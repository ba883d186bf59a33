import Foundation
import TestSupport
import Testing

// The client guide's example of an app's unit test and preview data on the in-memory server,
// verbatim between the markers (docs/Client.md, "Tests and previews"; the README links there):
// `theClientGuideShowsThisExample` keeps the two the same, and the test in the example runs here as
// any other.
// README-TESTING-EXAMPLE-BEGIN
import NavigationValues
import NavigationValuesClient
import NavigationValuesTesting
import NavigationValuesWire

struct MessageID: ValueKey { static let defaultValue = 0 }  // "messageID" on the server

/// The app's model: opening a message pushes it on the session's main stack.
struct InboxModel {
    let session: RemoteSession

    func open(message id: Int) async throws {
        var message = ScreenSeed("Message")
        try message.set(MessageID.self, id)
        try await session.push(message)
    }
}

@Test func openingAMessagePushesIt() async throws {
    // The server's own API in memory: no network, no database, the same answers and events.
    let server = try await InMemoryServer(sessions: [SessionSeed(root: ScreenSeed("Inbox"))])
    let session = server.sessions[0]

    try await InboxModel(session: session).open(message: 42)

    #expect(try await session.get().screens.map(\.name) == ["Inbox", "Message"])
    #expect(try await session.top.resolved(MessageID.self) == 42)
}

/// A preview's data: the inbox with a message open, mirrored live.
@MainActor
func inboxPreviewStack() async throws -> RemoteStack {
    let server = try await InMemoryServer(sessions: [
        SessionSeed(root: ScreenSeed("Inbox"), path: [ScreenSeed("Message", values: ["messageID": 42])])
    ])
    return try await RemoteStack.connect(to: server.sessions[0])
}
// README-TESTING-EXAMPLE-END

@Suite struct ReadmeTestingExampleTests {
    @Test @MainActor func thePreviewsDataIsTheInboxWithAMessageOpen() async throws {
        let stack = try await inboxPreviewStack()
        #expect(stack.path == ["Message"])
        #expect(stack.top?.resolved(MessageID.self) == 42)
        // Live: a change made through the session reaches the preview's mirror.
        let version = try await stack.session.push("Reply").version
        try await stack.sync(to: version)
        #expect(stack.path == ["Message", "Reply"])
        stack.stop()
    }

    @Test func theClientGuideShowsThisExample() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let begin = try #require(source.range(of: "// README-TESTING-EXAMPLE-BEGIN\n"))
        let end = try #require(source.range(of: "// README-TESTING-EXAMPLE-END"))
        let example = String(source[begin.upperBound..<end.lowerBound])
        let guide = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/Client.md"), encoding: .utf8)
        #expect(guide.contains(example), "docs/Client.md must contain README-TESTING-EXAMPLE of this file verbatim")
    }
}
