import Foundation
import HTTPServer
import NavigationValues
import NavigationValuesPostgres
import NavigationValuesSQLite
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire

/// The whole server: a store, the session service and the HTTP server, wired together.
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
    /// Everything `serve` can be told (API.md, The executable).
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var port = 8080
        /// The SQLite file, `:memory:` to keep nothing, or a PostgreSQL URL (`postgres://…` or
        /// `postgresql://…`, as libpq takes it) that several instances may share.
        public var databasePath = "./navigation-values.sqlite"
        /// The admin token; when nil one is generated (read it back from `adminToken`).
        public var adminToken: String?
        /// SQLite's durability (PostgreSQL's is the server's own `synchronous_commit`).
        public var sync: SQLiteSessionStore.SyncMode = .normal
        /// The largest the database file may grow (SQLite's `max_page_count`); past it, writes
        /// answer 503 and `/readyz` is not ready. Nil: no limit but the disk's.
        public var maxDatabaseBytes: Int?
        /// SQLite: write-ahead-log pages that start a checkpoint, which copies them into the
        /// database file off the writer's thread; four times as many force one.
        public var walCheckpointPages = 10_000
        /// How the PostgreSQL store connects, when `databasePath` is a PostgreSQL URL.
        public var postgres = PostgresSessionStore.Configuration()
        public var service = ServiceConfiguration()
        /// Event-loop threads; nil for one per core.
        public var eventLoopCount: Int?
        public var headerTimeout: Duration = .seconds(10)
        public var idleTimeout: Duration = .seconds(60)
        public var shutdownGracePeriod: Duration = .seconds(10)
        /// The kernel's send buffer of each connection (`SO_SNDBUF`), which a client that stops
        /// reading fills; nil keeps the kernel's default, which grows up to 4 MiB per connection.
        public var sendBufferSize: Int?
        /// How often event streams get a keep-alive comment (API.md: at least every 15 s).
        public var keepAliveInterval: Duration = .seconds(15)
        /// Events a stream subscriber may have waiting before it is dropped (it resumes by id).
        public var subscriberBufferLimit: Int {
            get { subscribers.bufferLimit }
            set { subscribers.bufferLimit = newValue }
        }
        /// Subscribers per session and in total, and how far behind each may fall.
        public var subscribers = EventHub.Limits()
        /// Session creations per second per client address without the admin token (the bucket refills at this rate).
        public var createRate: Double = 20
        /// Session creations at once per client address without the admin token.
        public var createBurst = 200
        /// When set, creating a session needs this token (or the admin token).
        public var createToken: String?
        /// The balancers whose `X-Forwarded-For` names the client, for the creation limit and the
        /// logs (`--trusted-proxies`); none by default.
        public var trustedProxies = TrustedProxies()
        /// Bytes of events one page of history, a long poll or a stream's catch-up holds at most.
        public var maxPageBytes = 1024 * 1024
        /// What old data goes away, and when.
        public var retention = RetentionPolicy(
            idleTimeout: .seconds(30 * 86_400), endedRetention: .seconds(30 * 86_400),
            compaction: CompactionRule(keepEvents: 10_000))
        /// How often retention runs (nil: never; `navigation-values prune` runs it on demand).
        public var retentionInterval: Duration? = .seconds(60)
        /// Where request lines and server messages go; nil writes none.
        public var logger: Logger?
        /// The web origins browsers may call the API from (`--cors-origins`); none by default.
        public var crossOriginPolicy = CrossOriginPolicy()
        /// The body of `POST /v1/sessions/import` (an export), in bytes (`--max-import-bytes`);
        /// every other request keeps API.md's 1 MiB.
        public var maxImportBytes = 64 * 1024 * 1024
        /// Bytes of bodies over 1 MiB (imports) the server holds at once (`--max-large-body-memory`);
        /// an import that does not fit is 503 with `Retry-After`.
        public var maxLargeBodyBytesInFlight = 256 * 1024 * 1024
        /// The clock: event times, ticket and observer-token expiry, idempotency expiry,
        /// retention's idle and age rules.
        public var now: @Sendable () -> Date = { Date() }

        public init() {}
    }

    /// The admin token in force (generated when none was configured).
    public let adminToken: String
    /// Whether `adminToken` was generated at start.
    public let isAdminTokenGenerated: Bool
    /// The store: SQLite, or PostgreSQL shared with other instances.
    public let store: any SessionStore
    public let service: SessionService
    /// The fan-out of committed events to stream subscribers.
    public let hub: EventHub
    /// The request figures behind `/metrics`.
    public let metrics: Metrics
    let http: HTTPServer
    private let ticker: Task<Void, Never>
    private let retention: Task<Void, Never>?
    /// Other instances' commits, followed on a shared store.
    private let follower: CommitFollower

    private init(
        adminToken: String, generated: Bool, store: any SessionStore, service: SessionService, hub: EventHub,
        metrics: Metrics, http: HTTPServer, configuration: Configuration, follower: CommitFollower
    ) {
        self.follower = follower
        let keepAliveInterval = configuration.keepAliveInterval
        self.adminToken = adminToken
        self.isAdminTokenGenerated = generated
        self.store = store
        self.service = service
        self.hub = hub
        self.metrics = metrics
        self.http = http
        self.ticker = Task { [hub] in
            while !Task.isCancelled {
                try? await Task.sleep(for: keepAliveInterval)
                hub.tick()
            }
        }
        self.retention = Self.retentionTask(service: service, configuration: configuration)
    }

    /// Runs retention every `retentionInterval`, logging what each pass removed.
    private static func retentionTask(service: SessionService, configuration: Configuration) -> Task<Void, Never>? {
        guard let interval = configuration.retentionInterval, configuration.retention.isActive else { return nil }
        let policy = configuration.retention
        let logger = configuration.logger
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { return }
                do {
                    let report = try await service.retention.run(policy)
                    if !report.isEmpty {
                        logger?.log(
                            .info, "retention",
                            [
                                "ended": .integer(Int64(report.ended)), "purged": .integer(Int64(report.purged)),
                                "compacted_events": .integer(Int64(report.compactedEvents)),
                                "expired_records": .integer(Int64(report.expiredRecords)),
                            ])
                    }
                } catch {
                    logger?.log(.warning, "retention failed", ["error": .string(String(describing: error))])
                }
            }
        }
    }

    /// Opens (and migrates) the database, then binds and starts serving. On PostgreSQL it also
    /// follows other instances' commits, so its event streams carry theirs too.
    ///
    /// - Throws: `StoreError` when the database cannot be opened or migrated; `SocketError` when
    ///   the address cannot be bound.
    public static func start(_ configuration: Configuration) async throws -> NavigationValuesServer {
        let store = try await openStore(configuration)
        let generated = configuration.adminToken == nil
        let adminToken = configuration.adminToken ?? IdentifierGenerator.live.token()
        let hub = EventHub(limits: configuration.subscribers)
        var serviceConfiguration = configuration.service
        // Every server sharing the admin token accepts the stream tickets of the others.
        serviceConfiguration.ticketSecret = serviceConfiguration.ticketSecret ?? adminToken
        let service = SessionService(
            store: store, configuration: serviceConfiguration, now: configuration.now,
            eventCommitted: { hub.publish($0, $1) })
        let metrics = Metrics(logger: configuration.logger)
        let router = Router()
        // CORS headers outermost, so that they mark every answer, errors included; preflights are
        // answered inside the logging, so that they are logged and counted like any request.
        router.add(middleware: configuration.crossOriginPolicy.responseHeaders)
        // The client a trusted balancer names, before the log and the creation limit read it.
        router.add(middleware: ForwardedClient(trusted: configuration.trustedProxies))
        router.add(middleware: RequestLogging(logger: configuration.logger, metrics: metrics))
        router.add(middleware: configuration.crossOriginPolicy.preflight)
        router.add(
            middleware: CreationRateLimit(
                adminToken: adminToken, rate: configuration.createRate, burst: configuration.createBurst))
        SessionRoutes(
            service: service, adminToken: adminToken, hub: hub, createToken: configuration.createToken,
            maxPageBytes: configuration.maxPageBytes
        ).register(on: router)
        OperationalRoutes(metrics: metrics, service: service, store: store, hub: hub).register(on: router)
        InspectorRoutes().register(on: router)
        var httpConfiguration = HTTPServer.Configuration(host: configuration.host, port: configuration.port)
        if let loops = configuration.eventLoopCount { httpConfiguration.eventLoopCount = max(1, loops) }
        httpConfiguration.headerTimeout = configuration.headerTimeout
        httpConfiguration.idleTimeout = configuration.idleTimeout
        httpConfiguration.shutdownGracePeriod = configuration.shutdownGracePeriod
        httpConfiguration.limits.largeBodies = [
            .init(method: .post, path: "/v1/sessions/import", maxBodyBytes: configuration.maxImportBytes)
        ]
        httpConfiguration.limits.maxLargeBodyBytesInFlight = configuration.maxLargeBodyBytesInFlight
        httpConfiguration.sendBufferSize = configuration.sendBufferSize
        let http = HTTPServer(
            configuration: httpConfiguration,
            responder: router.buildResponder(),
            errorResponder: ProblemMapping.response)
        let follower = CommitFollower(store: store, service: service, hub: hub)
        do {
            try await http.start()
        } catch {
            follower.stop()
            await store.close()
            throw error
        }
        return NavigationValuesServer(
            adminToken: adminToken, generated: generated, store: store, service: service, hub: hub, metrics: metrics,
            http: http, configuration: configuration, follower: follower)
    }

    /// The store `configuration.databasePath` names: PostgreSQL for a `postgres://` URL, else SQLite.
    static func openStore(_ configuration: Configuration) async throws -> any SessionStore {
        if PostgresSessionStore.isDatabaseURL(configuration.databasePath) {
            var postgres = configuration.postgres
            postgres.now = configuration.now
            return try await PostgresSessionStore.open(url: configuration.databasePath, configuration: postgres)
        }
        var storeConfiguration = SQLiteSessionStore.Configuration()
        storeConfiguration.sync = configuration.sync
        storeConfiguration.maxDatabaseBytes = configuration.maxDatabaseBytes
        storeConfiguration.walCheckpointPages = configuration.walCheckpointPages
        storeConfiguration.now = configuration.now
        return try await SQLiteSessionStore.open(path: configuration.databasePath, configuration: storeConfiguration)
    }

    /// The bound port (useful with port 0).
    public var port: Int { http.port }

    /// Stops accepting, finishes requests in flight, closes streams, then closes the database.
    public func shutdown() async {
        ticker.cancel()
        retention?.cancel()
        await retention?.value  // a pass under way finishes before the store closes
        follower.stop()
        hub.finishAll()
        await http.shutdown()
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
