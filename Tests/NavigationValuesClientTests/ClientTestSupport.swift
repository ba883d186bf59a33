import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesClient
import NavigationValuesTesting
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
    NavigationValuesClient(baseURL: url, configuration: clientConfiguration(configure))
}

/// Another client of the server `client` talks to, through the same transport (an in-memory
/// server has no URL of its own), with the tests' configuration and what `configure` changes.
func makeClient(
    sameServerAs client: NavigationValuesClient,
    configure: (inout NavigationValuesClient.Configuration) -> Void = { _ in }
) -> NavigationValuesClient {
    makeClient(client.baseURL) { configuration in
        configuration.transport = client.configuration.transport
        configure(&configuration)
    }
}

/// The tests' client configuration: the admin token, quick retries and quick reconnections, then
/// what `configure` changes.
func clientConfiguration(
    _ configure: (inout NavigationValuesClient.Configuration) -> Void = { _ in }
) -> NavigationValuesClient.Configuration {
    var configuration = NavigationValuesClient.Configuration(retry: quickRetries, adminToken: adminToken)
    configuration.streams.initialReconnectDelay = .milliseconds(20)
    configuration.streams.maxReconnectDelay = .milliseconds(500)
    configure(&configuration)
    return configuration
}

/// The servers the client's suite runs against: this package's server on 127.0.0.1 and a SQLite
/// file (`real`), and the same API in process through the in-memory transport (`inMemory`, what an
/// app's tests and previews use). A test that needs no real network runs on both
/// (`@Test(arguments: ServerKind.allCases)`); one that drops connections or kills the server
/// (relays, crashes, a child process) runs on the real one only.
enum ServerKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case real
    case inMemory

    var testDescription: String { rawValue }
}

/// The server a test runs against.
enum TestServer: Sendable {
    case real(NavigationValuesServer)
    case inMemory(InMemoryServer)

    /// The API it answers with.
    var api: SessionAPI {
        switch self {
        case .real(let server): server.api
        case .inMemory(let server): server.api
        }
    }
}

/// Requests a test sends beside the client, as another app would (its own connections, no
/// retries): over a loopback socket to the real server, through the transport of the in-memory one.
struct RawHTTP: Sendable {
    private let exchange: @Sendable (String, String, [String: String], [UInt8]?) async throws -> HTTPResponse

    /// Sends `method target` (a path with its query) and reads the whole answer.
    func send(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8]? = nil)
        async throws -> HTTPResponse
    {
        try await exchange(method, target, headers, body)
    }

    /// Over its own kept-alive connections to `port` on 127.0.0.1.
    init(port: Int) {
        let http = HTTPClient(port: port)
        exchange = { method, target, headers, body in
            try await http.send(method, target, headers: headers, body: body)
        }
    }

    /// Through `transport`, as the in-memory server's clients send.
    init(_ transport: any ClientTransport, baseURL: URL) {
        exchange = { method, target, headers, body in
            let components = URLComponents(string: target)
            let request = TransportRequest(
                method: method, path: components?.percentEncodedPath ?? target,
                query: (components?.queryItems ?? []).map { .init(name: $0.name, value: $0.value ?? "") },
                headers: headers, body: body.map { Data($0) },
                url: URL(string: target, relativeTo: baseURL) ?? baseURL)
            let answer = try await transport.send(request)
            return HTTPResponse(
                status: answer.status, headers: answer.headers.map { (name: $0.key, value: $0.value) },
                body: Array(answer.body))
        }
    }
}

extension TestServer {
    /// A raw client of this server, with connections of its own.
    func rawHTTP() -> RawHTTP {
        switch self {
        case .real(let server): RawHTTP(port: server.port)
        case .inMemory(let server): RawHTTP(server.transport, baseURL: InMemoryServer.baseURL)
        }
    }
}

/// Runs `body` with a client of a fresh server of `kind` (with the tests' admin token), and shuts
/// the server down on success and on failure. `configureClient` sees the configuration with the
/// transport set (nil: the client's default), so that a transport of the test's own can wrap it.
func withServer<T>(
    _ kind: ServerKind,
    isolation: isolated (any Actor)? = #isolation,
    client configureClient: (inout NavigationValuesClient.Configuration) -> Void = { _ in },
    _ body: (NavigationValuesClient, TestServer) async throws -> T
) async throws -> T {
    switch kind {
    case .real:
        return try await withServer(client: configureClient) { client, server in try await body(client, .real(server)) }
    case .inMemory:
        var configuration = InMemoryServer.Configuration()
        configuration.adminToken = adminToken
        let server = try await InMemoryServer(configuration: configuration)
        let client = server.client(
            configuration: clientConfiguration { configuration in
                configuration.transport = server.transport
                configureClient(&configuration)
            })
        do {
            let result = try await body(client, .inMemory(server))
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }
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
/// raw client, and requires a 2xx answer; its JSON.
@discardableResult
func sendRaw(
    _ http: RawHTTP, _ session: RemoteSession, _ method: String, _ suffix: String, _ body: JSONValue? = nil,
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
