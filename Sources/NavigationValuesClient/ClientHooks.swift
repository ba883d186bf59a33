import Foundation
import NavigationValuesWire
import Synchronization

/// Supplies the bearer token of each request, for apps whose tokens come from elsewhere (a
/// keychain, their own backend) or change (an observer token that expires, a rotated admin token).
/// It is asked before every request with the token the handle holds, and once more after a 401,
/// with the token the server refused: a different token it returns then is sent once more (the
/// same `Idempotency-Key`), and the handle keeps it (`RemoteSession.token` reads it).
///
/// ```swift
/// configuration.tokenProvider = TokenProvider { request in
///     if request.rejected != nil { return try await backend.refreshedToken(for: request.session) }
///     return request.token
/// }
/// ```
public struct TokenProvider: Sendable {
    /// What the provider is asked.
    public struct Request: Sendable, Equatable {
        /// The session the request is about; nil for the admin routes, creation and import.
        public var session: SessionID?
        /// The token the handle holds (the session's, or the admin token); nil when it has none.
        public var token: String?
        /// After a 401: the token the server refused. The provider returns another, or nil (or the
        /// same) to let the 401 stand.
        public var rejected: String?

        /// A request with these members.
        public init(session: SessionID?, token: String?, rejected: String? = nil) {
            self.session = session
            self.token = token
            self.rejected = rejected
        }
    }

    let provide: @Sendable (Request) async throws -> String?

    /// A provider that calls `token` for each request (nil: send no `Authorization`).
    public init(_ token: @escaping @Sendable (Request) async throws -> String?) {
        provide = token
    }
}

/// Sees every request the client sends, each attempt apart (retries included), and its answer:
/// add headers, measure, log, or change the answer, as swift-openapi-runtime's `ClientMiddleware`
/// does. Runs above the transport, so it sees the same whatever carries the request; the first in
/// `Configuration.middleware` is the outermost.
///
/// ```swift
/// struct TraceHeader: ClientMiddleware {
///     func intercept(
///         _ request: TransportRequest, next: (TransportRequest) async throws -> TransportResponse
///     ) async throws -> TransportResponse {
///         var request = request
///         request.headers["X-Trace-Id"] = UUID().uuidString
///         return try await next(request)
///     }
/// }
/// ```
public protocol ClientMiddleware: Sendable {
    /// Sends `request` through `next` (the next middleware, then the transport) and returns its
    /// answer; it may change either.
    func intercept(
        _ request: TransportRequest, next: (TransportRequest) async throws -> TransportResponse
    ) async throws -> TransportResponse

    /// Changes an event stream's request before each connection opens (headers); its answer is
    /// read as it streams and is not shown here. By default, the request as it is.
    func intercept(stream request: TransportRequest) async throws -> TransportRequest
}

extension ClientMiddleware {
    /// The stream's request as it is.
    public func intercept(stream request: TransportRequest) async throws -> TransportRequest { request }
}

/// Whose bearer token a request carries: a session's (kept by its handles, which share it), the
/// admin token, or one given for one call.
struct Credential: Sendable {
    /// The session it is about, for the token provider.
    let session: SessionID?
    private let holder: Holder

    private final class Holder: Sendable {
        let token: Mutex<String?>
        init(_ token: String?) { self.token = Mutex(token) }
    }

    init(session: SessionID?, token: String?) {
        self.session = session
        holder = Holder(token)
    }

    /// The token now (a refresh replaces it for every copy).
    var token: String? { holder.token.withLock { $0 } }

    /// Keeps a refreshed token.
    func replace(with token: String) {
        holder.token.withLock { $0 = token }
    }
}
