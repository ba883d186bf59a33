import Foundation
import NavigationValues
import NavigationValuesClient
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

/// Every error a client can meet arrives as a typed `RemoteError`: the server's problem+json
/// (status, type, title, detail, pointers), a version mismatch with the server's version, or why no
/// answer came.
@Suite struct ErrorTests {
    @Test(arguments: ServerKind.allCases) func aVersionMismatchSaysTheServersVersion(server: ServerKind) async throws {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let pushed = try await session.push("A", ifMatch: 1)
            #expect(pushed.version == 2)
            let error = await expectRemoteError(.versionMismatch, status: 412) {
                try await session.push("B", ifMatch: 1)
            }
            #expect(error?.currentVersion == 2)
            #expect(error?.problem?.type == "/problems/precondition-failed")
            #expect(error?.detail.contains("version 2") == true)
            #expect(try await session.get().version == 2)  // nothing applied
            // Every mutation takes it.
            await expectRemoteError(.versionMismatch) { try await session.root.set(Title.self, "x", ifMatch: 1) }
            await expectRemoteError(.versionMismatch) { try await session.end(ifMatch: 9) }
            try await session.root.set(Title.self, "x", ifMatch: 2)
        }
    }

    @Test(arguments: ServerKind.allCases) func invalidContentPointsAtEachField(server: ServerKind) async throws {
        try await withServer(server) { client, _ in
            var strict = demoSchema
            strict.isStrict = true
            strict.values["counter"] = .init(type: .integer, defaultValue: 0)
            let session = try await client.createSession(root: ScreenSeed("Home"), schema: strict)
            let error = await expectRemoteError(.invalid, status: 422) {
                try await session.root.setValues(["counter": "many", "undeclared": 1])
            }
            #expect(Set(error?.pointers ?? []) == ["/counter", "/undeclared"])
            #expect(error?.problem?.title == "Invalid request content")
            #expect(error?.problem?.status == 422)
            let badSchema = await expectRemoteError(.invalid, status: 422) {
                try await client.createSession(
                    schema: SchemaResource(values: ["x": .init(type: .init(rawValue: "geometry"))]))
            }
            #expect(badSchema?.pointers == ["/schema/values/x/type"])
        }
    }

    @Test(arguments: ServerKind.allCases) func statusesBecomeTheirCodes(server: ServerKind) async throws {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let other = try await client.createSession()
            await expectRemoteError(.conflict, status: 409) { try await session.pop() }
            await expectRemoteError(.notFound, status: 404) { try await session.screen(id: ScreenID("c_none")).get() }
            await expectRemoteError(.notFound, status: 404) { try await client.session(id: SessionID("s_none")).get() }
            await expectRemoteError(.forbidden, status: 403) {
                try await client.session(id: session.id, token: other.token).get()
            }
            let unauthorized = await expectRemoteError(.unauthorized, status: 401) {
                try await client.session(id: session.id, token: "not-a-token").push("X")
            }
            #expect(unauthorized?.description.hasPrefix("POST /v1/sessions/\(session.id.rawValue)/push: 401 ") == true)
            await expectRemoteError(.notFound, status: 404) {
                try await session.root.removePreferenceHandler(named: "nothing")
            }
            await expectRemoteError(.notFound, status: 404) { try await session.replay(at: 99) }
        }
    }

    @Test(arguments: ServerKind.allCases) func aValueThatDoesNotDecodeAsTheKeysTypeSaysSo(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            try await session.root.setValues(["counter": "seven"])
            let error = await expectRemoteError(.invalidValue) { try await session.root.resolved(Counter.self) }
            #expect(error?.detail.contains("'counter'") == true)
            struct NotJSON: ValueKey { static let defaultValue = Double.nan }
            await expectRemoteError(.invalidValue) { try await session.root.set(NotJSON.self, .infinity) }
        }
    }

    @Test func noServerIsAConnectionFailureAfterEveryAttempt() async throws {
        let retries = RetryNoticeLog()
        let client = makeClient(loopbackURL(port: 1)) { configuration in
            configuration.retry = RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(1))
            configuration.onRetry = { retries.record($0) }
        }
        let error = await expectRemoteError(.connectionFailed) {
            try await client.session(id: SessionID("s_x"), token: "t").push("A")
        }
        #expect(error?.attempts == 3)
        #expect(error?.underlying?.code == .cannotConnectToHost)
        #expect(retries.notices.map(\.attempt) == [1, 2])
        #expect(retries.notices.allSatisfy { $0.reason == .connection(.cannotConnectToHost) })
    }
}

/// The retry notices a client reported.
final class RetryNoticeLog: Sendable {
    private let log = Mutex<[RetryNotice]>([])
    func record(_ notice: RetryNotice) { log.withLock { $0.append(notice) } }
    var notices: [RetryNotice] { log.withLock { $0 } }
}
