import Foundation
import HTTPCore
import Logging
import NavigationValues
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire

/// The session API on a store, whatever carries its requests: the session service, the event
/// hub, the metrics, and a responder with every route and middleware, wired once. The server
/// (`NavigationValuesServer`) answers with it on sockets; the in-memory server of
/// `NavigationValuesTesting` answers with it in process. Both parse requests with the same
/// `limits` and turn errors into the same problem documents (`errorResponder`).
///
/// ```swift
/// let api = SessionAPI(store: InMemorySessionStore(), configuration: SessionAPI.Configuration())
/// let response = try await api.responder.respond(to: Request(method: .get, path: "/healthz"))
/// await api.shutdown()
/// ```
public final class SessionAPI: Sendable {
    /// Everything about the API that does not depend on how requests arrive or where the store
    /// keeps its data (docs/API.md, The executable).
    public struct Configuration: Sendable {
        /// The admin token; when nil one is generated (read it back from `adminToken`).
        public var adminToken: String?
        public var service = ServiceConfiguration()
        /// How event streams get a keep-alive comment (docs/API.md: at least every 15 s).
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
        /// Where request lines and server messages go: a swift-log logger, which drops everything
        /// by default. With a ``NavigationValuesLogHandler`` on a ``LogWriter``, the lines that writer
        /// drops are counted in `/metrics`.
        public var logger = Logger(label: "navigation-values") { _ in SwiftLogNoOpLogHandler() }
        /// The web origins browsers may call the API from (`--cors-origins`); none by default.
        public var crossOriginPolicy = CrossOriginPolicy()
        /// The body of `POST /v1/sessions/import` (an export), in bytes (`--max-import-bytes`);
        /// every other request keeps docs/API.md's 1 MiB.
        public var maxImportBytes = 64 * 1024 * 1024
        /// Bytes of bodies over 1 MiB (imports) the server holds at once (`--max-large-body-memory`);
        /// an import that does not fit is 503 with `Retry-After`.
        public var maxLargeBodyBytesInFlight = 256 * 1024 * 1024
        /// The clock: event times, ticket and observer-token expiry, idempotency expiry,
        /// retention's idle and age rules.
        public var now: @Sendable () -> Date = { Date() }
        /// Where session, screen and observer ids, session tokens and the generated admin token
        /// come from: the system's random source, or a generator of the caller's for
        /// reproducible ids in tests.
        public var identifiers: IdentifierGenerator = .live
        /// Whether `responder` answers `GET /metrics`; false when a listener of its own serves it
        /// (`metricsResponder`), so that the public one does not.
        public var servesMetrics = true

        public init() {}
    }

    /// The admin token in force (generated when none was configured).
    public let adminToken: String
    /// Whether `adminToken` was generated.
    public let isAdminTokenGenerated: Bool
    /// The store the sessions live in.
    public let store: any SessionStore
    public let service: SessionService
    /// The fan-out of committed events to stream subscribers.
    public let hub: EventHub
    /// The request figures behind `/metrics`.
    public let metrics: Metrics
    /// Every route behind the middleware: CORS, request logging, preflights, the creation rate limit.
    public let responder: RouterResponder
    /// `GET /metrics` alone, its requests logged and counted as the others are: for a listener of
    /// its own (`--metrics-port`).
    public let metricsResponder: RouterResponder
    /// What an error becomes: a problem document (`ProblemMapping`).
    public let errorResponder: HTTPErrorResponder = ProblemMapping.response
    /// The size limits a request is parsed with: docs/API.md's, and `maxImportBytes` for an import.
    public let limits: HTTPLimits
    private let ticker: Task<Void, Never>
    private let retention: Task<Void, Never>?
    /// Other instances' commits, followed on a shared store.
    private let follower: CommitFollower

    /// The API on `store`, which it does not close (its owner does, after `shutdown()`). Starts
    /// the streams' keep-alive ticks, retention (every `retentionInterval`) and, on a shared
    /// store, following other instances' commits.
    public init(store: any SessionStore, configuration: Configuration) {
        self.store = store
        isAdminTokenGenerated = configuration.adminToken == nil
        let adminToken = configuration.adminToken ?? configuration.identifiers.token()
        self.adminToken = adminToken
        let hub = EventHub(limits: configuration.subscribers)
        self.hub = hub
        var serviceConfiguration = configuration.service
        // Every server sharing the admin token accepts the stream tickets of the others.
        serviceConfiguration.ticketSecret = serviceConfiguration.ticketSecret ?? adminToken
        service = SessionService(
            store: store, configuration: serviceConfiguration, now: configuration.now,
            identifiers: configuration.identifiers, eventCommitted: { hub.publish($0, $1) })
        metrics = Metrics(logWriter: (configuration.logger.handler as? NavigationValuesLogHandler)?.writer)
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
        let operational = OperationalRoutes(
            metrics: metrics, service: service, store: store, hub: hub, servesMetrics: configuration.servesMetrics)
        operational.register(on: router)
        InspectorRoutes().register(on: router)
        responder = router.buildResponder()
        let metricsRouter = Router()
        metricsRouter.add(middleware: RequestLogging(logger: configuration.logger, metrics: metrics))
        operational.registerMetrics(on: metricsRouter)
        metricsResponder = metricsRouter.buildResponder()
        var limits = HTTPLimits()
        limits.largeBodies = [
            .init(method: .post, path: "/v1/sessions/import", maxBodyBytes: configuration.maxImportBytes)
        ]
        limits.maxLargeBodyBytesInFlight = configuration.maxLargeBodyBytesInFlight
        self.limits = limits
        follower = CommitFollower(store: store, service: service, hub: hub)
        let keepAliveInterval = configuration.keepAliveInterval
        ticker = Task { [hub] in
            while !Task.isCancelled {
                try? await Task.sleep(for: keepAliveInterval)
                hub.tick()
            }
        }
        retention = Self.retentionTask(service: service, configuration: configuration)
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
                        logger.info(
                            "retention",
                            metadata: [
                                "ended": .stringConvertible(report.ended), "purged": .stringConvertible(report.purged),
                                "compacted_events": .stringConvertible(report.compactedEvents),
                                "expired_records": .stringConvertible(report.expiredRecords),
                            ])
                    }
                } catch {
                    logger.warning("retention failed", error: error)
                }
            }
        }
    }

    /// Stops the keep-alive ticks, retention (a pass under way finishes first) and following
    /// other instances, and ends every event stream. The store stays open.
    public func shutdown() async {
        ticker.cancel()
        retention?.cancel()
        await retention?.value  // a pass under way finishes before the store closes
        stop()
    }

    /// What `shutdown()` does, without waiting for a retention pass under way: for an owner that
    /// cannot wait (one going away).
    public func stop() {
        ticker.cancel()
        retention?.cancel()
        follower.stop()
        hub.finishAll()
    }
}
