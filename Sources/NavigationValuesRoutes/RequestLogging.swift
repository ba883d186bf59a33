import Foundation
import HTTPCore
import Logging
import NavigationValues
import NavigationValuesSessions
import NavigationValuesWire
import Synchronization

/// The product's middleware: gives each request an id (`X-Request-Id`, echoed when the client
/// sent a usable one, else generated), answers errors as problem+json, counts the request in
/// ``Metrics`` and writes one log line per request: method, route pattern, status, duration in
/// milliseconds, request id and the client's address (the one a trusted proxy names, see
/// ``TrustedProxies``). The route is the one the router's lookup found
/// (`request.route`), or `unmatched`.
///
/// Probes (`/healthz`, `/readyz`, `/metrics`) log at `debug`, other requests at `info`, and a 500
/// at `error` with what went wrong, which the client never sees (CONTRIBUTING.md, Conventions). All of it is
/// synchronous, so a synchronous handler such as `/healthz` is still answered without a task. A line's
/// metadata is built only when its level is enabled (swift-log's autoclosures): a probe at `info`
/// costs a level comparison.
///
/// ```swift
/// let router = Router()
/// router.add(middleware: RequestLogging(logger: logger, metrics: metrics))
/// let http = HTTPServer(configuration: configuration, responder: router.buildResponder())
/// ```
public struct RequestLogging: Middleware {
    /// The routes answered at `debug` level, being polled by machines.
    static let probeRoutes: Set<String> = ["/healthz", "/readyz", "/metrics"]

    let logger: Logger
    let metrics: Metrics
    let requestIDs: RequestIDGenerator

    /// Creates the middleware, which logs to `logger` (one whose handler drops everything, such as
    /// swift-log's `SwiftLogNoOpLogHandler`, leaves requests only counted). `identifiers` gives the
    /// random key request ids are derived from.
    public init(logger: Logger, metrics: Metrics, identifiers: IdentifierGenerator = .live) {
        self.logger = logger
        self.metrics = metrics
        self.requestIDs = RequestIDGenerator(identifiers: identifiers)
    }

    /// Hands the request on, then stamps, counts and logs what comes back.
    public func respond(to request: Request, next: Next) -> ResponseFuture {
        let started = ContinuousClock.now
        let requestID = Self.usableRequestID(request.headers["x-request-id"]) ?? requestIDs.next()
        let future = next(request)
        switch consume future {
        case .ready(let result):
            // Answered already (a synchronous handler such as /healthz): finished here, without
            // the closure `map` would keep, and with the response owned once, so that adding
            // X-Request-Id to its fields does not copy them.
            return .ready(.success(finish(result, of: request, requestID: requestID, startedAt: started)))
        case .deferred(let work):
            return ResponseFuture.deferred(work).map { result in
                finish(result, of: request, requestID: requestID, startedAt: started)
            }
        }
    }

    private func finish(
        _ result: consuming Result<Response, any Error>, of request: Request, requestID: String,
        startedAt started: ContinuousClock.Instant
    ) -> Response {
        let route = request.route ?? "unmatched"
        var response: Response
        var failure: (any Error)?
        switch consume result {
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
        let level: Logger.Level = status >= 500 ? .error : Self.isProbe(route) ? .debug : .info
        logger.log(
            level: level, "request", error: failure,
            metadata: Self.fields(of: request, route: route, status: status, duration: duration, requestID: requestID))
        return response
    }

    /// A request line's fields, built only when its level is on: one allocation, the dictionary's
    /// storage, sized once for the six (a dictionary literal would allocate the array of its pairs
    /// too; a 500's cause goes as the call's `error`).
    private static func fields(
        of request: Request, route: String, status: Int, duration: Double, requestID: String
    ) -> Logger.Metadata {
        var fields = Logger.Metadata(minimumCapacity: 6)
        fields["method"] = .string(request.method.rawValue)
        fields["route"] = .string(route)
        fields["status"] = .stringConvertible(status)
        fields["duration_ms"] = .stringConvertible((duration * 1_000_000).rounded() / 1_000)
        fields["request_id"] = .string(requestID)
        fields["client"] = .string(request.remoteAddress.map(TrustedProxies.host(of:)) ?? "unknown")
        return fields
    }

    /// Whether `route` is one of `probeRoutes` (compared without hashing, once per request).
    static func isProbe(_ route: String) -> Bool {
        route == "/healthz" || route == "/readyz" || route == "/metrics"
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

/// Request ids for requests that bring none: `r_` and 16 base64url characters (96 bits), as
/// before, but without a `getrandom(2)` per request. Each id is a keyed hash (SipHash, Swift's
/// `Hasher`, under a 128-bit key drawn once from `IdentifierGenerator`) of a per-process counter:
/// no two requests of a process share a counter value, so ids collide only by chance (about
/// n² / 2⁹⁷ for n ids), and without the key they cannot be predicted from earlier ones. They
/// correlate log lines with answers; they are not secrets and grant nothing.
final class RequestIDGenerator: Sendable {
    private let key: (UInt64, UInt64)
    private let counter = Atomic<UInt64>(0)
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    init(identifiers: IdentifierGenerator) {
        let bytes = identifiers.randomBytes(16)
        var first: UInt64 = 0
        var second: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { first = first << 8 | UInt64(byte) } else { second = second << 8 | UInt64(byte) }
        }
        key = (first, second)
    }

    /// The next id.
    func next() -> String {
        let count = counter.add(1, ordering: .relaxed).newValue
        let high = hash(count, salt: 0)
        let low = UInt32(truncatingIfNeeded: hash(count, salt: 1))
        return String(unsafeUninitializedCapacity: 18) { output in
            output[0] = UInt8(ascii: "r")
            output[1] = UInt8(ascii: "_")
            // 96 bits, 6 at a time: 64 from `high`, then 32 from `low`.
            var at = 2
            var bits = high
            for _ in 0..<10 {  // 60 bits of `high`
                output[at] = Self.alphabet[Int(bits >> 58)]
                bits <<= 6
                at += 1
            }
            // The last 4 bits of `high` and 32 of `low`: 36 bits, 6 characters.
            var rest = (high & 0xF) << 32 | UInt64(low)
            for _ in 0..<6 {
                output[at] = Self.alphabet[Int(rest >> 30 & 0x3F)]
                rest <<= 6
                at += 1
            }
            return at
        }
    }

    private func hash(_ count: UInt64, salt: UInt64) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(key.0)
        hasher.combine(key.1)
        hasher.combine(salt)
        hasher.combine(count)
        return UInt64(UInt(bitPattern: hasher.finalize()))
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
