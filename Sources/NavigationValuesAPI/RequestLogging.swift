import Foundation
import HTTPServer
import NavigationValues
import NavigationValuesSessions
import NavigationValuesWire

/// The product's middleware: gives each request an id (`X-Request-Id`, echoed when the client
/// sent a usable one, else generated), answers errors as problem+json, counts the request in
/// ``Metrics`` and writes one log line per request: method, route pattern, status, duration in
/// milliseconds and request id. The route is the one the router's lookup found
/// (`request.route`), or `unmatched`.
///
/// Probes (`/healthz`, `/readyz`, `/metrics`) log at `debug`, other requests at `info`, and a 500
/// at `error` with what went wrong, which the client never sees (STYLE.md, Errors). All of it is
/// synchronous, so a synchronous handler such as `/healthz` is still answered without a task.
///
/// ```swift
/// let router = Router()
/// router.add(middleware: RequestLogging(logger: logger, metrics: metrics))
/// let http = HTTPServer(configuration: configuration, responder: router.buildResponder())
/// ```
public struct RequestLogging: Middleware {
    /// The routes answered at `debug` level, being polled by machines.
    static let probeRoutes: Set<String> = ["/healthz", "/readyz", "/metrics"]

    let logger: Logger?
    let metrics: Metrics
    let identifiers: IdentifierGenerator

    /// Creates the middleware; with no logger, requests are only counted.
    public init(logger: Logger?, metrics: Metrics, identifiers: IdentifierGenerator = .live) {
        self.logger = logger
        self.metrics = metrics
        self.identifiers = identifiers
    }

    /// Hands the request on, then stamps, counts and logs what comes back.
    public func respond(to request: Request, next: Next) -> ResponseFuture {
        let started = ContinuousClock.now
        let requestID = Self.usableRequestID(request.headers["x-request-id"]) ?? identifiers.requestID()
        return next(request).map { result in
            finish(result, of: request, requestID: requestID, startedAt: started)
        }
    }

    private func finish(
        _ result: Result<Response, any Error>, of request: Request, requestID: String,
        startedAt started: ContinuousClock.Instant
    ) -> Response {
        let route = request.route ?? "unmatched"
        var response: Response
        var failure: (any Error)?
        switch result {
        case .success(let answer):
            response = answer
        case .failure(let error):
            response = ProblemMapping.response(for: error, request: request)
            if response.status.code >= 500 { failure = error }
        }
        response.headers["X-Request-Id"] = requestID
        let duration = (ContinuousClock.now - started).seconds
        let status = response.status.code
        metrics.recordRequest(method: request.method.rawValue, route: route, status: status, duration: duration)
        let level: Logger.Level = status >= 500 ? .error : Self.probeRoutes.contains(route) ? .debug : .info
        if let logger, logger.isEnabled(level) {
            var fields: [(String, JSONValue)] = [
                ("method", .string(request.method.rawValue)), ("route", .string(route)),
                ("status", .integer(Int64(status))), ("duration_ms", .number((duration * 1_000_000).rounded() / 1_000)),
                ("request_id", .string(requestID)),
            ]
            if let failure { fields.append(("error", .string(String(describing: failure)))) }
            logger.log(level, "request", fields: fields)
        }
        return response
    }

    /// A client's request id, kept when it is 1-128 visible ASCII characters (so it cannot
    /// break a log line or a header).
    static func usableRequestID(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.utf8.count <= 128,
            value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        return value
    }
}

extension IdentifierGenerator {
    func requestID() -> String { Base64URL.encode(randomBytes(12), prefix: "r_") }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
