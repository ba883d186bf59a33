import HTTPCore
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire

/// `GET /metrics` (Prometheus text format) and `GET /openapi.json` (docs/API.md, Endpoints). Both
/// are open: they carry no session data. `/metrics` is among the API's routes unless it has a
/// listener of its own (`--metrics-port`), whose router gets it from `registerMetrics(on:)`
/// (`SessionAPI.metricsResponder`).
struct OperationalRoutes: Sendable {
    let metrics: Metrics
    let service: SessionService
    let store: any SessionStore
    let hub: EventHub
    /// Whether the API's routes include `/metrics`.
    var servesMetrics = true

    func register(on router: Router) {
        if servesMetrics { registerMetrics(on: router) }
        let document = Array(OpenAPIDocument.json.utf8)
        router.get("/openapi.json") { _ in
            Response(status: .ok, headers: ["Content-Type": "application/json; charset=utf-8"], body: document)
        }
    }

    /// `GET /metrics` on `router`.
    func registerMetrics(on router: Router) {
        router.get("/metrics") { _ in
            let figures = Metrics.Figures(
                loadedSessions: service.loadedSessionCount, eventsAppended: hub.publishedEventCount,
                subscribers: hub.subscriberCount, droppedSubscribers: hub.droppedSubscriberCount,
                cachedSessions: service.sessions.cachedSessionCount, cachedReads: service.sessions.cachedReadCount,
                hotSessions: service.hotSessionCount)
            let text = metrics.exposition(figures, store: store.metrics)
            return Response(
                status: .ok, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
                body: Array(text.utf8))
        }
    }
}

/// The OpenAPI 3.1 description of the HTTP API, served at `/openapi.json`.
public enum OpenAPIDocument {
    /// The document as this binary carries it (`openapi/openapi.json`, embedded by
    /// `scripts/embed-openapi.sh`).
    public static var json: String { embeddedJSON }
}
