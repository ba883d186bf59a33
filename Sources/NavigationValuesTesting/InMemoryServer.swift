import Foundation
import NavigationValues
import NavigationValuesClient
import NavigationValuesRoutes
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire

/// A NavigationValues server in this process, kept in memory, for an app's unit tests and SwiftUI
/// previews: the same client code (`NavigationValuesClient`, `RemoteSession`, `RemoteStack`)
/// runs against it as against a real server, on any platform (iOS, macOS, Linux), with no network
/// and no database.
///
/// It is the server's own API (`SessionAPI`: its routes, validation, events, answers and
/// problem documents) on an `InMemorySessionStore`, reached through an ``InMemoryTransport``
/// instead of a socket: what it accepts, refuses and streams is what `navigation-values serve`
/// would. Ids are reproducible by default (the same each run) and the clock can be set (``ManualClock``).
///
/// ```swift
/// let server = try await InMemoryServer(sessions: [SessionSeed(root: ScreenSeed("Inbox"))])
/// let session = server.sessions[0]
/// try await session.push("Message", values: ["id": 42])
/// #expect(try await session.get().screens.map(\.name) == ["Inbox", "Message"])
/// ```
///
/// Nothing needs shutting down: a server no client, session or mirror uses any more goes away
/// with its sessions.
public final class InMemoryServer: Sendable {
    /// What the server holds at start, and the API's settings.
    ///
    /// The clock, the ids and the admin token are set here; the API's other settings
    /// (`SessionAPI.Configuration`: limits, retention, …) read and write as properties of this
    /// configuration too (import `NavigationValuesRoutes` to name them where member imports are
    /// checked):
    ///
    /// ```swift
    /// var configuration = InMemoryServer.Configuration()
    /// configuration.now = { clock.now }
    /// configuration.service.limits.maxDepth = 8
    /// ```
    @dynamicMemberLookup
    public struct Configuration: Sendable {
        /// Sessions created at start, in this order (``InMemoryServer/sessions``).
        public var sessions: [SessionSeed]
        /// The API's settings, as `serve` takes them; here with the admin token
        /// ``defaultAdminToken`` and ids drawn from `IdentifierGenerator.seeded(0)`, the same each run.
        public var api: SessionAPI.Configuration

        /// The admin token of an in-memory server unless the configuration names another.
        public static let defaultAdminToken = "in-memory-admin-token"

        /// A server holding `sessions` at start.
        public init(sessions: [SessionSeed] = []) {
            self.sessions = sessions
            api = SessionAPI.Configuration()
            api.adminToken = Self.defaultAdminToken
            api.identifiers = .seeded(0)
        }

        /// The clock: event times, expiry of idempotency keys, tokens and tickets, retention.
        public var now: @Sendable () -> Date {
            get { api.now }
            set { api.now = newValue }
        }

        /// Where ids and tokens come from: `.seeded(0)` unless set (`.seeded(n)` for another
        /// reproducible sequence, `.live` for the system's random source).
        public var identifiers: IdentifierGenerator {
            get { api.identifiers }
            set { api.identifiers = newValue }
        }

        /// The admin token (``defaultAdminToken`` unless set).
        public var adminToken: String? {
            get { api.adminToken }
            set { api.adminToken = newValue }
        }

        /// A setting of `api`, by its name (`configuration.createRate`).
        public subscript<Value>(dynamicMember keyPath: WritableKeyPath<SessionAPI.Configuration, Value>) -> Value {
            get { api[keyPath: keyPath] }
            set { api[keyPath: keyPath] = newValue }
        }
    }

    /// Where the client's requests go: give it to a client of your own
    /// (`NavigationValuesClient.Configuration.transport`), or use ``client(configuration:)``.
    public let transport: InMemoryTransport
    /// A client of this server, with its admin token.
    public let client: NavigationValuesClient
    /// The sessions of `Configuration.sessions`, created at start, in order.
    public let sessions: [RemoteSession]

    /// The API the server answers with: its service, store, event hub and metrics.
    public var api: SessionAPI { transport.api }
    /// The admin token in force.
    public var adminToken: String { api.adminToken }

    /// Starts a server with `configuration`, creating its sessions through its own API.
    ///
    /// - Throws: `RemoteError` when the API refuses a session of `configuration.sessions` (a
    ///   schema or a value it does not accept, an operation that does not apply), as it would
    ///   refuse the same requests from an app.
    public init(configuration: Configuration = Configuration()) async throws {
        var storeConfiguration = InMemorySessionStore.Configuration()
        storeConfiguration.now = configuration.api.now
        let api = SessionAPI(
            store: InMemorySessionStore(configuration: storeConfiguration), configuration: configuration.api)
        transport = InMemoryTransport(api: api)
        client = Self.client(of: transport, adminToken: api.adminToken, configuration: .init())
        var sessions: [RemoteSession] = []
        for seed in configuration.sessions {
            sessions.append(try await seed.create(with: client))
        }
        self.sessions = sessions
    }

    /// Starts a server holding `sessions` (``init(configuration:)``, with the defaults otherwise).
    public convenience init(sessions: [SessionSeed]) async throws {
        try await self.init(configuration: Configuration(sessions: sessions))
    }

    /// A client of this server with `configuration` (your retry policy, your `onRetry`, …); its
    /// transport and its admin token are this server's unless it names its own (a transport of
    /// yours in front of ``transport``, say).
    public func client(configuration: NavigationValuesClient.Configuration) -> NavigationValuesClient {
        Self.client(of: transport, adminToken: adminToken, configuration: configuration)
    }

    /// Creates a session as `seed` says, through this server's API, and returns a handle on it.
    ///
    /// - Throws: `RemoteError` when the API refuses it.
    public func createSession(_ seed: SessionSeed) async throws -> RemoteSession {
        try await seed.create(with: client)
    }

    /// Ends every event stream, and refuses later requests as a server that is gone
    /// (`RemoteError.Code.connectionFailed` after the client's retries).
    public func shutdown() async {
        await transport.shutdown()
    }

    /// The base URL of an in-memory server's clients: requests never leave the process.
    public static let baseURL = URL(string: "http://in-memory.invalid") ?? URL(fileURLWithPath: "/")

    private static func client(
        of transport: InMemoryTransport, adminToken: String, configuration: NavigationValuesClient.Configuration
    ) -> NavigationValuesClient {
        var configuration = configuration
        if configuration.transport == nil { configuration.transport = transport }
        if configuration.adminToken == nil { configuration.adminToken = adminToken }
        return NavigationValuesClient(baseURL: baseURL, configuration: configuration)
    }
}

/// A session to start an ``InMemoryServer`` with: its root and schema, the screens of its main
/// stack, and a starting tree (tabs, presentations and their paths) as batch operations.
///
/// ```swift
/// SessionSeed(
///     root: ScreenSeed("Inbox"), schema: schema, path: [ScreenSeed("Message", values: ["id": 42])],
///     operations: [.createStack(StackID("search"), root: ScreenSeed("Search")), .present(ScreenSeed("Compose"))])
/// ```
///
/// It is made through the API as an app would make it: `POST /v1/sessions`, then the path
/// (`PUT …/path`) and the operations (`POST …/batch`), each one event.
public struct SessionSeed: Sendable {
    /// The root screen; nil for the server's default.
    public var root: ScreenSeed?
    /// The schema; nil for the server's default.
    public var schema: SchemaResource?
    /// The screens pushed on the main stack above the root, in order.
    public var path: [ScreenSeed]
    /// Operations applied after the path, in one step (docs/Stacks.md, Batches).
    public var operations: [BatchOperation]

    public init(
        root: ScreenSeed? = nil, schema: SchemaResource? = nil, path: [ScreenSeed] = [],
        operations: [BatchOperation] = []
    ) {
        self.root = root
        self.schema = schema
        self.path = path
        self.operations = operations
    }

    func create(with client: NavigationValuesClient) async throws -> RemoteSession {
        let session = try await client.createSession(root: root, schema: schema)
        if !path.isEmpty { try await session.replacePath(path) }
        if !operations.isEmpty { try await session.batch(operations) }
        return session
    }
}
