import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesClient
import NavigationValuesWire
import TestSupport
import Testing

let adminToken = "client-admin-secret"

/// A retry policy for tests: the same rules, shorter waits.
let quickRetries = RetryPolicy(maxAttempts: 6, initialDelay: .milliseconds(20), maxDelay: .milliseconds(200))

/// A client of `url` with the admin token, quick retries and quick reconnections.
func makeClient(
    _ url: URL, configure: (inout NavigationValuesClient.Configuration) -> Void = { _ in }
) -> NavigationValuesClient {
    var configuration = NavigationValuesClient.Configuration(retry: quickRetries, adminToken: adminToken)
    configuration.streams.initialReconnectDelay = .milliseconds(20)
    configuration.streams.maxReconnectDelay = .milliseconds(500)
    configure(&configuration)
    return NavigationValuesClient(baseURL: url, configuration: configuration)
}

/// `http://127.0.0.1:PORT`.
func loopbackURL(port: Int) -> URL {
    URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
}

/// Starts the server in this process on 127.0.0.1, port 0, on a SQLite file in a fresh temp
/// folder, runs `body` with a client of it, and shuts the server down on success and on failure.
func withServer<T>(
    isolation: isolated (any Actor)? = #isolation,
    configure: (inout NavigationValuesServer.Configuration) -> Void = { _ in },
    client configureClient: (inout NavigationValuesClient.Configuration) -> Void = { _ in },
    _ body: (NavigationValuesClient, NavigationValuesServer) async throws -> T
) async throws -> T {
    try await withTemporaryFolder { folder in
        var configuration = NavigationValuesServer.Configuration()
        configuration.port = 0
        configuration.eventLoopCount = 2
        configuration.adminToken = adminToken
        configuration.databasePath = folder.appendingPathComponent("client.sqlite").path
        configure(&configuration)
        let server = try await NavigationValuesServer.start(configuration)
        let client = makeClient(loopbackURL(port: server.port), configure: configureClient)
        do {
            let result = try await body(client, server)
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }
}

/// Runs `body` with a fresh temp folder, removed afterwards.
func withTemporaryFolder<T>(
    isolation: isolated (any Actor)? = #isolation, _ body: (URL) async throws -> T
) async throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-client-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try await body(folder)
}

/// The Demo's schema (docs/SEMANTICS.md §4): a forward text value and a backward preference.
let demoSchema = SchemaResource(
    values: ["text": .init(type: .string, defaultValue: "initial value")],
    preferences: ["preference": .init(type: .string, defaultValue: "")])

/// Typed keys of the tests, named `title`, `counter`, `selection` on the server.
struct Title: ValueKey { static let defaultValue = "" }
struct Counter: ValueKey { static let defaultValue = 0 }
struct Selection: PreferenceKey { static let defaultValue = "" }

/// Expects `body` to throw a `RemoteError` with `code` (and `status`), and returns it.
@discardableResult
func expectRemoteError<T>(
    _ code: RemoteError.Code, status: Int? = nil, isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T
) async -> RemoteError? {
    do {
        let value = try await body()
        Issue.record("expected \(code), got \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as RemoteError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        if let status { #expect(error.status == status, "\(error)", sourceLocation: sourceLocation) }
        return error
    } catch {
        Issue.record("expected RemoteError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The kinds of the events of `session` after `after`, in order.
func eventKinds(of session: RemoteSession, after: Int64) async throws -> [String] {
    let page = try await session.history(after: after, limit: 1_000)
    return page.events.map { event in
        switch event {
        case .event(let recorded): recorded.event.kind.rawValue
        case .unrecognized(let other): other.type
        }
    }
}

/// Collects `count` items of `stream` within `timeout`.
func collect(_ count: Int, of stream: SessionEventStream, timeout: Duration = .seconds(60)) async throws
    -> [SessionStreamItem]
{
    try await withTimeout(timeout, "\(count) items of the event stream") {
        var items: [SessionStreamItem] = []
        for try await item in stream {
            items.append(item)
            if items.count == count { break }
        }
        return items
    }
}

/// Waits, polling, until `condition` holds on the caller's actor (the main actor, for a mirror);
/// throws `TestTimeout` after `timeout`. Never a sleep to synchronise: it returns as soon as it holds.
func waitFor(
    _ what: String, timeout: Duration = .seconds(30), isolation: isolated (any Actor)? = #isolation,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(5))
    }
    if try await condition() { return }
    throw TestTimeout("\(what) did not hold within \(timeout)")
}

/// Sends a request to a session's path (`suffix`, after `/v1/sessions/{id}`) with its token over a
/// raw loopback client, and requires a 2xx answer; its JSON.
@discardableResult
func sendRaw(
    _ http: HTTPClient, _ session: RemoteSession, _ method: String, _ suffix: String, _ body: JSONValue? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> JSONValue {
    let answer = try await http.send(
        method, "/v1/sessions/\(session.id.rawValue)\(suffix)",
        headers: ["Authorization": "Bearer \(session.token)", "Content-Type": "application/json"],
        body: body.map { Array($0.serialized().utf8) })
    try #require(
        (200..<300).contains(answer.status),
        "\(method) \(suffix) answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))",
        sourceLocation: sourceLocation)
    return answer.json ?? .null
}
