import Foundation
import HTTPCore
import NavigationValues

/// Which web origins a browser may call the API from (CORS: the Fetch Standard, §3.2), and the
/// two middleware that apply it. None by default: browsers then reach the API only from pages the
/// server serves itself (the inspector at `/inspector/`).
///
/// `responseHeaders` goes first (outermost), so that it marks every answer, errors included, after
/// `RequestLogging` has made them; `preflight` goes after `RequestLogging`, so that preflights are
/// logged and counted like any request, and answers them before they reach the routes' 405.
///
/// ```swift
/// let policy = try CrossOriginPolicy(origins: ["https://support.example.com"])
/// router.add(middleware: policy.responseHeaders)
/// router.add(middleware: RequestLogging(logger: logger, metrics: metrics))
/// router.add(middleware: policy.preflight)
/// ```
public struct CrossOriginPolicy: Sendable, Equatable {
    /// An origin the policy cannot take: not `scheme://host[:port]`.
    public struct InvalidOrigin: Error, Sendable, Equatable, CustomStringConvertible {
        public var origin: String
        public var description: String {
            "'\(origin)' is not an origin: write scheme://host[:port] (no path, no trailing slash), or *"
        }
    }

    /// The allowed origins, serialized as browsers send them in `Origin` (lowercase).
    public let origins: Set<String>
    /// Whether every origin is allowed (`*`).
    public let allowsEveryOrigin: Bool

    /// No origin is allowed.
    public init() {
        origins = []
        allowsEveryOrigin = false
    }

    /// Allows `origins`, each `scheme://host[:port]` (`https://support.example.com`,
    /// `http://localhost:3000`), or every origin with `*`.
    ///
    /// - Throws: `InvalidOrigin` for the first one that is not an origin.
    public init(origins: [String]) throws(InvalidOrigin) {
        var allowed: Set<String> = []
        var every = false
        for origin in origins.map({ HeaderValue.trimmed($0) }) where !origin.isEmpty {
            if origin == "*" {
                every = true
                continue
            }
            guard let normalized = Self.normalized(origin) else { throw InvalidOrigin(origin: origin) }
            allowed.insert(normalized)
        }
        self.origins = allowed
        allowsEveryOrigin = every
    }

    /// Whether any origin is allowed at all.
    public var isEnabled: Bool { allowsEveryOrigin || !origins.isEmpty }

    /// Whether a request's `Origin` may read the answer.
    public func allows(_ origin: String) -> Bool {
        allowsEveryOrigin || origins.contains(origin.lowercased())
    }

    /// `scheme://host[:port]`, lowercased; nil when it is something else. `null` (sandboxed
    /// pages, files) is never an allowed origin.
    static func normalized(_ text: String) -> String? {
        let lowered = text.lowercased()
        guard let separator = lowered.range(of: "://") else { return nil }
        let scheme = lowered[..<separator.lowerBound]
        let authority = lowered[separator.upperBound...]
        guard ["http", "https"].contains(scheme), !authority.isEmpty,
            authority.allSatisfy({ $0.isLetter || $0.isNumber || "-._:[]".contains($0) }),
            !authority.hasPrefix(":"), !authority.hasSuffix(":")
        else { return nil }
        return lowered
    }

    // MARK: - What browsers are told

    /// Response headers a page may read (`Access-Control-Expose-Headers`): beyond the safelisted
    /// ones, those the API's answers carry.
    static let exposedHeaders = [
        "ETag", "Location", "Retry-After", "X-Request-Id", "Idempotent-Replayed", "WWW-Authenticate", "Allow",
        "Content-Disposition",
    ].joined(separator: ", ")
    /// Request headers a page may send (`Access-Control-Allow-Headers`).
    static let allowedHeaders = [
        "Authorization", "Content-Type", "If-Match", "Idempotency-Key", "Last-Event-ID", "X-Request-Id", "Accept",
    ].joined(separator: ", ")
    /// Methods a page may use (`Access-Control-Allow-Methods`).
    static let allowedMethods = "GET, HEAD, POST, PUT, PATCH, DELETE"
    /// How long a browser may keep a preflight's answer, in seconds (`Access-Control-Max-Age`).
    static let maxAge = "600"

    /// The middleware that marks answers to allowed origins as readable; add it first.
    public var responseHeaders: some Middleware { ResponseHeaders(policy: self) }

    /// The middleware that answers preflight requests; add it after `RequestLogging`.
    public var preflight: some Middleware { Preflight(policy: self) }

    private struct ResponseHeaders: Middleware {
        let policy: CrossOriginPolicy

        func respond(to request: Request, next: Next) -> ResponseFuture {
            guard policy.isEnabled else { return next(request) }
            let origin = request.headers["origin"]
            return next(request).map { result in
                var response = try result.get()
                // The answer depends on Origin unless every origin gets the same one (caches).
                if !policy.allowsEveryOrigin { response.headers.add(name: "Vary", value: "Origin") }
                if let origin, policy.allows(origin) {
                    response.headers["Access-Control-Allow-Origin"] = policy.allowsEveryOrigin ? "*" : origin
                    response.headers["Access-Control-Expose-Headers"] = CrossOriginPolicy.exposedHeaders
                }
                return response
            }
        }
    }

    private struct Preflight: Middleware {
        let policy: CrossOriginPolicy

        /// A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) to a known
        /// path is answered here: 204 for an allowed origin, 403 otherwise. Any other request,
        /// and a preflight to an unknown path (404), goes on.
        func respond(to request: Request, next: Next) -> ResponseFuture {
            guard request.method == .options, request.route != nil, let origin = request.headers["origin"],
                request.headers["access-control-request-method"] != nil
            else { return next(request) }
            guard policy.allows(origin) else {
                let detail =
                    policy.isEnabled
                    ? "origin \(origin) may not call this server from a browser (allowed: --cors-origins)"
                    : "this server allows no cross-origin calls (start it with --cors-origins)"
                return .ready(.failure(APIError(.forbidden, detail)))
            }
            var headers: HTTPHeaders = [
                "Access-Control-Allow-Methods": CrossOriginPolicy.allowedMethods,
                "Access-Control-Allow-Headers": CrossOriginPolicy.allowedHeaders,
                "Access-Control-Max-Age": CrossOriginPolicy.maxAge,
            ]
            if !policy.allowsEveryOrigin {
                headers.add(name: "Vary", value: "Access-Control-Request-Method, Access-Control-Request-Headers")
            }
            return .ready(.success(Response(status: .noContent, headers: headers)))
        }
    }
}
