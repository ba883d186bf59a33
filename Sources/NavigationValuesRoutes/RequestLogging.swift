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
/// fields are gathered only when its level is enabled: a probe at `info` costs a level comparison.
///
/// When the logger's handler is the server's own ``NavigationValuesLogHandler`` with no metadata
/// of its own and no metadata provider (decided once, here), a line is written straight into the
/// handler's ``LogWriter`` buffer by the handler's formatter, without the swift-log metadata
/// dictionary a call would need (the one heap allocation a line cost); the level is checked
/// against the handler's `logLevel`, as `Logger` checks it. Any other handler (an embedder's, a
/// `MultiplexLogHandler`, one with metadata) gets every line through swift-log. The bytes are
/// the same either way.
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
    /// `logger`'s handler when request lines may bypass swift-log: the server's own, adding
    /// nothing to a line's fields (no metadata of its own, no metadata provider), so that writing
    /// a line to it directly changes nothing but the cost. The logger is a value held here, so its
    /// handler cannot change afterwards.
    let directHandler: NavigationValuesLogHandler?
    let metrics: Metrics
    let requestIDs: RequestIDGenerator

    /// Creates the middleware, which logs to `logger` (one whose handler drops everything, such as
    /// swift-log's `SwiftLogNoOpLogHandler`, leaves requests only counted). `identifiers` gives the
    /// random key request ids are derived from.
    public init(logger: Logger, metrics: Metrics, identifiers: IdentifierGenerator = .live) {
        self.logger = logger
        if let handler = logger.handler as? NavigationValuesLogHandler, handler.metadata.isEmpty,
            handler.metadataProvider == nil
        {
            self.directHandler = handler
        } else {
            self.directHandler = nil
        }
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
        log(request, route: route, status: status, duration: duration, requestID: requestID, failure: failure)
        return response
    }

    /// Writes the line of `request`, answered with `status` after `duration` seconds: at `error`
    /// for a 500 (with `failure`, the cause the client never sees), `debug` for a probe, else
    /// `info`; through ``directHandler`` when there is one, else through swift-log.
    func log(
        _ request: Request, route: String, status: Int, duration: Double, requestID: String, failure: (any Error)?
    ) {
        let level: Logger.Level = status >= 500 ? .error : Self.isProbe(route) ? .debug : .info
        if let directHandler {
            // What `Logger` does before calling a handler.
            guard directHandler.logLevel <= level else { return }
            let line = RequestLine(request, route: route, status: status, duration: duration, requestID: requestID)
            directHandler.logLine(level: level, message: "request", fields: line, error: failure)
        } else {
            logger.log(
                level: level, "request", error: failure,
                metadata: RequestLine(request, route: route, status: status, duration: duration, requestID: requestID)
                    .metadata)
        }
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

/// The fields of a request's log line: the one account of what the line carries, which the
/// direct path hands to ``NavigationValuesLogHandler``'s formatter as it is, and the swift-log
/// path turns into metadata.
struct RequestLine: LogLineFields {
    /// The fields' names, in the lines' order (``NavigationValuesLogHandler/fieldOrder``'s).
    static let names = ["method", "route", "status", "duration_ms", "request_id", "client"]

    var method: String
    var route: String
    var status: Int
    /// Milliseconds, to the microsecond.
    var durationMilliseconds: Double
    var requestID: String
    /// The client's host (the one a trusted proxy names), or `unknown`.
    var client: String

    init(_ request: Request, route: String, status: Int, duration: Double, requestID: String) {
        method = request.method.rawValue
        self.route = route
        self.status = status
        durationMilliseconds = (duration * 1_000_000).rounded() / 1_000
        self.requestID = requestID
        client = request.remoteAddress.map(TrustedProxies.host(of:)) ?? "unknown"
    }

    var count: Int { Self.names.count }

    func value(named name: String) -> Logger.MetadataValue? {
        switch name {
        case "method": .string(method)
        case "route": .string(route)
        case "status": .stringConvertible(status)
        case "duration_ms": .stringConvertible(durationMilliseconds)
        case "request_id": .string(requestID)
        case "client": .string(client)
        default: nil
        }
    }

    func otherNames() -> [String] { Self.names }

    /// The six fields in `names`' order, which is ``NavigationValuesLogHandler/fieldOrder``'s, with
    /// the values `value(named:)` gives as the formatter reads them, without looking each up.
    func forEachInLineOrder(_ body: (String, JSONValue) -> Void) -> Bool {
        body("method", .string(method))
        body("route", .string(route))
        body("status", .integer(Int64(status)))
        body("duration_ms", .number(durationMilliseconds))
        body("request_id", .string(requestID))
        body("client", .string(client))
        return true
    }

    /// The fields as swift-log metadata: one allocation, the dictionary's storage, sized once for
    /// the six (a dictionary literal would allocate the array of its pairs too).
    var metadata: Logger.Metadata {
        var fields = Logger.Metadata(minimumCapacity: Self.names.count)
        for name in Self.names { fields[name] = value(named: name) }
        return fields
    }
}

/// Request ids for requests that bring none: `r_` and 16 base64url characters (96 bits), as
/// before, but without a `getrandom(2)` per request. Each id is 96 bits of a keyed hash of a
/// per-process counter: SipHash-2-4 with its 128-bit output (Aumasson and Bernstein), under a
/// 128-bit key drawn once from `IdentifierGenerator`, computed here on the counter's one word (the
/// standard library's `Hasher` gives 64 bits a pass, so an id took two of its passes over four
/// words each). No two requests of a process share a counter value, so ids collide only by chance
/// (about n² / 2⁹⁷ for n ids), and without the key they cannot be predicted from earlier ones.
/// They correlate log lines with answers; they are not secrets and grant nothing.
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
        let (high, second) = Self.sipHash128(count, key: key)
        let low = UInt32(truncatingIfNeeded: second)
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

    /// SipHash-2-4 with a 128-bit output of one 8-byte message, `word` in little-endian order
    /// (the paper's and its reference code's definition: two compression rounds per block, four
    /// finalization rounds per half of the output).
    static func sipHash128(_ word: UInt64, key: (UInt64, UInt64)) -> (UInt64, UInt64) {
        var v0 = key.0 ^ 0x736f_6d65_7073_6575
        var v1 = key.1 ^ 0x646f_7261_6e64_6f6d ^ 0xee
        var v2 = key.0 ^ 0x6c79_6765_6e65_7261
        var v3 = key.1 ^ 0x7465_6462_7974_6573
        @inline(__always) func round() {
            v0 &+= v1
            v1 = v1.rotatedLeft(13) ^ v0
            v0 = v0.rotatedLeft(32)
            v2 &+= v3
            v3 = v3.rotatedLeft(16) ^ v2
            v0 &+= v3
            v3 = v3.rotatedLeft(21) ^ v0
            v2 &+= v1
            v1 = v1.rotatedLeft(17) ^ v2
            v2 = v2.rotatedLeft(32)
        }
        @inline(__always) func compress(_ block: UInt64) {
            v3 ^= block
            round()
            round()
            v0 ^= block
        }
        // The message's one block, then the last block: the message's length (8) in its top byte.
        compress(word)
        compress(8 << 56)
        v2 ^= 0xee
        for _ in 0..<4 { round() }
        let first = v0 ^ v1 ^ v2 ^ v3
        v1 ^= 0xdd
        for _ in 0..<4 { round() }
        return (first, v0 ^ v1 ^ v2 ^ v3)
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
