import Foundation
import HTTPServer
import Logging
import NavigationValues
import NavigationValuesPostgres
// The routes, middleware, metrics and problem mapping are NavigationValuesRoutes' (no sockets, no
// database library, any platform); every user of the server names them through this module, as
// before they moved.
@_exported import NavigationValuesRoutes
import NavigationValuesSQLite
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire

/// The whole server: a store, the session API (`SessionAPI`) and the HTTP server, wired together.
///
/// ```swift
/// var configuration = NavigationValuesServer.Configuration()
/// configuration.port = 0
/// let signals = SignalCatcher([SIGTERM, SIGINT])   // before the port is announced
/// let server = try await NavigationValuesServer.start(configuration)
/// print("listening on http://127.0.0.1:\(server.port)")
/// try await server.runUntilSignal(signals)
/// ```
public final class NavigationValuesServer: Sendable {
    /// Everything `serve` can be told (docs/API.md, The executable): where it listens and where it
    /// keeps its data here, and the API's own settings in `api`, which read and write as
    /// properties of this configuration too (`configuration.createRate = 5`).
    @dynamicMemberLookup
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var port = 8080
        /// When set, `/metrics` is served on a listener of its own on this port (0 picks a free
        /// one), and no longer on `port`: so that it can be kept off the public network.
        public var metricsPort: Int?
        /// The address of that listener; nil for `host`.
        public var metricsHost: String?
        /// The SQLite file, `:memory:` to keep nothing, or a PostgreSQL URL (`postgres://…` or
        /// `postgresql://…`, as libpq takes it) that several instances may share.
        public var databasePath = "./navigation-values.sqlite"
        /// SQLite's durability (PostgreSQL's is the server's own `synchronous_commit`).
        public var sync: SQLiteSessionStore.SyncMode = .normal
        /// The largest the database file may grow (SQLite's `max_page_count`); past it, writes
        /// answer 503 and `/readyz` is not ready. Nil: no limit but the disk's.
        public var maxDatabaseBytes: Int?
        /// SQLite: write-ahead-log pages after which the log is copied whole and restarts (it is
        /// copied into the database file off the writer's thread, in rounds of a tenth of this);
        /// four times as many force a checkpoint.
        public var walCheckpointPages = 10_000
        /// How far the state rows may lag the event log (log-first commits), on SQLite and
        /// PostgreSQL; `.inline` writes them with each event.
        public var writeBehind = WriteBehind.standard
        /// How the PostgreSQL store connects, when `databasePath` is a PostgreSQL URL.
        public var postgres = PostgresSessionStore.Configuration()
        /// Event-loop threads; nil for one per core.
        public var eventLoopCount: Int?
        public var headerTimeout: Duration = .seconds(10)
        public var idleTimeout: Duration = .seconds(60)
        public var shutdownGracePeriod: Duration = .seconds(10)
        /// The kernel's send buffer of each connection (`SO_SNDBUF`), which a client that stops
        /// reading fills; nil keeps the kernel's default, which grows up to 4 MiB per connection.
        public var sendBufferSize: Int?
        /// When set, `port` serves HTTPS only, with this certificate and key (`reload()` reads
        /// them again); nil: plain HTTP. The `/metrics` listener of `metricsPort` stays plain HTTP.
        public var tls: TLSIdentity?
        /// The API's settings: tokens, limits, retention, logging, the clock.
        public var api = SessionAPI.Configuration()

        public init() {}

        /// A setting of `api`, by its name (`configuration.adminToken`).
        public subscript<Value>(dynamicMember keyPath: WritableKeyPath<SessionAPI.Configuration, Value>) -> Value {
            get { api[keyPath: keyPath] }
            set { api[keyPath: keyPath] = newValue }
        }
    }

    /// The session API this server answers with.
    public let api: SessionAPI
    let http: HTTPServer
    /// The listener of `/metrics`, when it has one of its own.
    let metricsHTTP: HTTPServer?

    /// The admin token in force (generated when none was configured).
    public var adminToken: String { api.adminToken }
    /// Whether `adminToken` was generated at start.
    public var isAdminTokenGenerated: Bool { api.isAdminTokenGenerated }
    /// The store: SQLite, or PostgreSQL shared with other instances.
    public var store: any SessionStore { api.store }
    public var service: SessionService { api.service }
    /// The fan-out of committed events to stream subscribers.
    public var hub: EventHub { api.hub }
    /// The request figures behind `/metrics`.
    public var metrics: Metrics { api.metrics }

    private init(api: SessionAPI, http: HTTPServer, metricsHTTP: HTTPServer?) {
        self.api = api
        self.http = http
        self.metricsHTTP = metricsHTTP
    }

    /// Opens (and migrates) the database, then binds and starts serving. On PostgreSQL it also
    /// follows other instances' commits, so its event streams carry theirs too.
    ///
    /// - Throws: `StoreError` when the database cannot be opened or migrated; `SocketError` when
    ///   the address cannot be bound.
    public static func start(_ configuration: Configuration) async throws -> NavigationValuesServer {
        let store = try await openStore(configuration)
        var apiConfiguration = configuration.api
        apiConfiguration.servesMetrics = configuration.metricsPort == nil
        let api = SessionAPI(store: store, configuration: apiConfiguration)
        var httpConfiguration = HTTPServer.Configuration(host: configuration.host, port: configuration.port)
        if let loops = configuration.eventLoopCount { httpConfiguration.eventLoopCount = max(1, loops) }
        httpConfiguration.headerTimeout = configuration.headerTimeout
        httpConfiguration.idleTimeout = configuration.idleTimeout
        httpConfiguration.shutdownGracePeriod = configuration.shutdownGracePeriod
        httpConfiguration.limits = api.limits
        httpConfiguration.sendBufferSize = configuration.sendBufferSize
        httpConfiguration.tls = configuration.tls
        let metrics = api.metrics
        let logger = configuration.logger
        httpConfiguration.tlsHandshakeFailed = { peer, reason in
            metrics.recordTLSHandshakeFailure()
            logger.info("tls handshake failed", metadata: ["peer": .string(peer ?? ""), "reason": .string(reason)])
        }
        let http = HTTPServer(
            configuration: httpConfiguration, responder: api.responder, errorResponder: api.errorResponder)
        let metricsHTTP = configuration.metricsPort.map { port in
            metricsServer(port: port, api: api, configuration: configuration)
        }
        do {
            try await metricsHTTP?.start()
            try await http.start()
        } catch {
            await metricsHTTP?.shutdown()
            await api.shutdown()
            await store.close()
            throw error
        }
        return NavigationValuesServer(api: api, http: http, metricsHTTP: metricsHTTP)
    }

    /// The listener of `/metrics` alone on `port`: one event loop and one worker; anything but
    /// `GET /metrics` is 404.
    private static func metricsServer(port: Int, api: SessionAPI, configuration: Configuration) -> HTTPServer {
        var httpConfiguration = HTTPServer.Configuration(
            host: configuration.metricsHost ?? configuration.host, port: port)
        httpConfiguration.eventLoopCount = 1
        httpConfiguration.workerCount = 1
        httpConfiguration.headerTimeout = configuration.headerTimeout
        httpConfiguration.idleTimeout = configuration.idleTimeout
        httpConfiguration.shutdownGracePeriod = configuration.shutdownGracePeriod
        return HTTPServer(
            configuration: httpConfiguration, responder: api.metricsResponder, errorResponder: api.errorResponder)
    }

    /// The store `configuration.databasePath` names: PostgreSQL for a `postgres://` URL, else SQLite.
    static func openStore(_ configuration: Configuration) async throws -> any SessionStore {
        if PostgresSessionStore.isDatabaseURL(configuration.databasePath) {
            var postgres = configuration.postgres
            postgres.now = configuration.now
            postgres.writeBehind = configuration.writeBehind
            return try await PostgresSessionStore.open(url: configuration.databasePath, configuration: postgres)
        }
        var storeConfiguration = SQLiteSessionStore.Configuration()
        storeConfiguration.sync = configuration.sync
        storeConfiguration.maxDatabaseBytes = configuration.maxDatabaseBytes
        storeConfiguration.walCheckpointPages = configuration.walCheckpointPages
        storeConfiguration.writeBehind = configuration.writeBehind
        storeConfiguration.now = configuration.now
        return try await SQLiteSessionStore.open(path: configuration.databasePath, configuration: storeConfiguration)
    }

    /// The bound port (useful with port 0).
    public var port: Int { http.port }

    /// The bound port of the `/metrics` listener, when it has one of its own.
    public var metricsPort: Int? { metricsHTTP?.port }

    /// Stops accepting, finishes requests in flight, closes streams, then closes the database.
    public func shutdown() async {
        await api.shutdown()  // streams end first, so that the HTTP server need not wait for them
        await http.shutdown()
        await metricsHTTP?.shutdown()
        await store.close()
    }

    /// Serves until `signals` catches one, then shuts down gracefully and returns it. Create the
    /// catcher before starting the server, so that a signal sent once the port is announced is
    /// never lost.
    ///
    /// ```swift
    /// let signals = SignalCatcher([SIGTERM, SIGINT])
    /// let server = try await NavigationValuesServer.start(configuration)
    /// print("listening on http://127.0.0.1:\(server.port)")
    /// try await server.runUntilSignal(signals)
    /// ```
    ///
    /// - Throws: `CancellationError` when the task is cancelled first; the server then keeps running.
    @discardableResult
    public func runUntilSignal(_ signals: SignalCatcher) async throws -> Int32 {
        let signal = try await signals.next()
        await shutdown()
        return signal
    }
}
