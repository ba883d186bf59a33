import Foundation
import Logging
import NavigationValues
import NavigationValuesWire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request to the API, before it becomes a `URLRequest`.
struct APIRequest: Sendable {
    var method: String
    /// The percent-encoded path below the base URL (`/v1/sessions/s_1/push`).
    var path: String
    var query: [(name: String, value: String)] = []
    var body: JSONValue?
    /// A body that is not JSON (an export's lines), with its `Content-Type`; `body` wins over it.
    var rawBody: (data: Data, contentType: String)?
    /// Whose bearer token it carries; nil: none.
    var credential: Credential?
    var ifMatch: Int64?
    /// Sent on every attempt: a retry is recognised by the server and applied once.
    var idempotencyKey: String?
    var accept = "application/json"
    /// How long the server may take to answer (for a stream: the longest silence); nil: the
    /// configuration's `requestTimeout`.
    var timeout: Duration?
    /// `Last-Event-ID`, for an event stream resuming after this seq.
    var lastEventID: Int64?

    /// `POST /v1/sessions/s_1/push`, for errors and retry notices.
    var label: String { "\(method) \(path)" }

    var transportQuery: [TransportRequest.QueryItem] { query.map { .init(name: $0.name, value: $0.value) } }
}

/// An answer: its status, its headers (names lowercased) and its body.
struct APIAnswer: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data
    /// How many times the request was sent.
    var attempts: Int
    /// Whether an earlier attempt was sent and its answer lost (it may have been applied).
    var earlierAttemptWasUnanswered = false

    func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The version an `ETag: "<version>"` names.
    var etagVersion: Int64? { header("etag").flatMap(Self.version(inETag:)) }

    static func version(inETag tag: String) -> Int64? {
        var text = tag.trimmingSpaces
        if text.hasPrefix("W/") { text.removeFirst(2) }
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
        return Int64(text)
    }
}

/// The client's side of the transport seam: builds each request's headers and body, sends it
/// through the configuration's `ClientTransport`, retries what the policy allows and turns error
/// answers into `RemoteError`s, whatever the transport. Shared by every handle a client gives out.
final class HTTPTransport: Sendable {
    let baseURL: URL
    /// The base URL's text without its query, fragment or trailing slash: paths are appended to it.
    let base: String
    let configuration: NavigationValuesClient.Configuration
    /// What carries requests and streams: the configuration's transport, or the default one.
    let carrier: any ClientTransport
    /// The admin token, for the admin routes (as refreshed by the token provider).
    let admin: Credential
    /// Mutations kept while the server cannot be reached (`Configuration.offline`).
    let offlineQueue: OfflineQueue?

    init(baseURL: URL, configuration: NavigationValuesClient.Configuration) {
        self.baseURL = baseURL
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)
        components?.query = nil
        components?.fragment = nil
        var text = components?.string ?? baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        base = text
        self.configuration = configuration
        carrier = configuration.transport ?? Self.defaultTransport(for: baseURL, configuration)
        admin = Credential(session: nil, token: configuration.adminToken)
        offlineQueue = configuration.offline.map { OfflineQueue(options: $0, logger: configuration.logger) }
        offlineQueue?.startDelivering(through: self)
    }

    /// The transport a configuration without one gets: on Linux, for an `http://` server reached
    /// without a proxy, HTTP/1.1 over sockets (FoundationNetworking re-sends a request by itself,
    /// without its body, when a kept-alive connection dies: see `SocketTransport`); else
    /// `URLSession` (TLS, proxies, and on Apple platforms the system's networking policies).
    static func defaultTransport(
        for baseURL: URL, _ configuration: NavigationValuesClient.Configuration
    ) -> any ClientTransport {
        #if canImport(Glibc)
            if SocketTransport.canCarry(baseURL) {
                return SocketTransport(maxConnectionsPerHost: configuration.maxConnectionsPerHost)
            }
        #endif
        return URLSessionTransport(
            maxConnectionsPerHost: configuration.maxConnectionsPerHost, requestTimeout: configuration.requestTimeout,
            streamIdleTimeout: configuration.streams.idleTimeout)
    }

    // MARK: - Requests

    /// Sends `request` and returns its 2xx answer.
    ///
    /// - Throws: `RemoteError` for an error status (after the retries the policy allows), for no
    ///   answer at all, or `CancellationError`.
    func perform(_ request: APIRequest) async throws -> APIAnswer {
        let answer = try await send(request)
        guard answer.status < 300 else { throw error(for: answer, of: request) }
        return answer
    }

    /// Sends a mutation of `credential`'s session and returns its 2xx answer; with an offline queue,
    /// queues it when the server cannot be reached or something is queued before it, and waits.
    func performMutation(_ request: APIRequest) async throws -> APIAnswer {
        guard let queue = offlineQueue, let session = request.credential?.session else {
            return try await perform(request)
        }
        if !queue.isHoldingMutations {
            do {
                return try await perform(request)
            } catch let error as RemoteError where error.code == .connectionFailed {
                // Kept with its key: however often it was sent already, the server applies it once.
            }
        }
        return try await queue.enqueueAndWait(
            request, session: session, token: request.credential?.token, through: self)
    }

    /// Sends `request` until it gets an answer the policy (the configuration's, or `retry`) does not
    /// retry, and returns it, whatever its status. After a 401, a token provider that gives another
    /// token gets the request sent once more with it.
    func send(_ request: APIRequest, retry: RetryPolicy? = nil) async throws -> APIAnswer {
        let policy = retry ?? configuration.retry
        var attempts = Attempts()
        let token = try await token(for: request.credential)
        var answer = try await send(request, token: token, policy: policy, attempts: &attempts)
        if answer.status == 401, let fresh = try await refreshedToken(for: request.credential, rejected: token) {
            retrying(RetryNotice(request: request.label, attempt: attempts.count, reason: .status(401), delay: .zero))
            answer = try await send(request, token: fresh, policy: policy, attempts: &attempts)
        }
        return answer
    }

    /// What the attempts of one call share.
    struct Attempts {
        var count = 0
        /// Whether an attempt was sent and its answer lost.
        var unanswered = false
    }

    private func send(
        _ request: APIRequest, token: String?, policy: RetryPolicy, attempts: inout Attempts
    ) async throws -> APIAnswer {
        let transportRequest = try makeTransportRequest(request, token: token)
        let logger = configuration.logger
        while true {
            attempts.count += 1
            let attempt = attempts.count
            try Task.checkCancellation()
            let reason: RetryNotice.Reason
            var delay: Duration
            let started = logger == nil ? nil : ContinuousClock.now
            do {
                let response = try await deliver(transportRequest)
                let answer = APIAnswer(
                    status: response.status, headers: response.headers, body: response.body, attempts: attempt,
                    earlierAttemptWasUnanswered: attempts.unanswered)
                if let logger, let started {
                    logger.debug(
                        "answered",
                        metadata: [
                            "request": "\(request.label)", "status": "\(answer.status)", "attempt": "\(attempt)",
                            "duration": "\(ContinuousClock.now - started)",
                        ])
                }
                guard policy.retriedStatuses.contains(answer.status), attempt < policy.maxAttempts,
                    let wait = policy.delay(
                        after: attempt, retryAfter: answer.header("retry-after"))
                else { return answer }
                reason = .status(answer.status)
                delay = wait
            } catch let error as URLError where error.code == .cancelled {
                throw CancellationError()
            } catch let error as URLError where Self.isRetryable(error) {
                guard attempt < policy.maxAttempts, !Task.isCancelled else {
                    logger?.warning(
                        "no answer",
                        metadata: [
                            "request": "\(request.label)", "attempts": "\(attempt)", "error": "\(error.code.rawValue)",
                        ])
                    throw RemoteError(
                        .connectionFailed, request: request.label, detail: Self.describe(error), attempts: attempt,
                        underlying: error)
                }
                reason = .connection(error.code)
                delay = policy.backoff(after: attempt)
                // A refused connection carried nothing; any other failure may have come after the
                // server read (and applied) the request.
                if error.code != .cannotConnectToHost { attempts.unanswered = true }
            } catch let error as URLError {
                logger?.warning(
                    "no answer",
                    metadata: [
                        "request": "\(request.label)", "attempts": "\(attempt)", "error": "\(error.code.rawValue)",
                    ])
                throw RemoteError(
                    .connectionFailed, request: request.label, detail: Self.describe(error), attempts: attempt,
                    underlying: error)
            }
            retrying(RetryNotice(request: request.label, attempt: attempt, reason: reason, delay: delay))
            try await Task.sleep(for: delay)
        }
    }

    /// Sends one attempt through the middleware, outermost first, then the transport.
    private func deliver(_ request: TransportRequest, from index: Int = 0) async throws -> TransportResponse {
        let middleware = configuration.middleware
        guard index < middleware.count else { return try await carrier.send(request) }
        return try await middleware[index].intercept(request) { request in
            try await deliver(request, from: index + 1)
        }
    }

    /// Tells `onRetry` and the logger of a request about to be sent again.
    func retrying(_ notice: RetryNotice) {
        configuration.onRetry?(notice)
        configuration.logger?.notice(
            "retrying",
            metadata: [
                "request": "\(notice.request)", "attempt": "\(notice.attempt)", "reason": "\(notice.reason)",
                "delay": "\(notice.delay)",
            ])
    }

    // MARK: - Tokens

    /// The token to send for `credential`: the token provider's answer, else the one it holds.
    func token(for credential: Credential?) async throws -> String? {
        let held = credential?.token
        guard let provider = configuration.tokenProvider else { return held }
        return try await provider.provide(TokenProvider.Request(session: credential?.session, token: held))
    }

    /// After a 401 with `rejected` (empty when no token was sent): the token provider's other token,
    /// which the credential keeps, or nil when there is no provider or it has no other.
    func refreshedToken(for credential: Credential?, rejected: String?) async throws -> String? {
        guard let provider = configuration.tokenProvider else { return nil }
        let asked = TokenProvider.Request(
            session: credential?.session, token: credential?.token, rejected: rejected ?? "")
        guard let fresh = try await provider.provide(asked), fresh != rejected else { return nil }
        credential?.replace(with: fresh)
        configuration.logger?.info(
            "token refreshed after 401", metadata: ["session": "\(credential?.session?.rawValue ?? "-")"])
        return fresh
    }

    // MARK: - Streams

    /// Opens `request` as a streaming answer through the transport, holding at most
    /// `maxBufferedBytes` unread; `token` is sent, or the credential's (asked of the token
    /// provider) when nil.
    func openStream(_ request: APIRequest, token: String?, maxBufferedBytes: Int) async throws -> TransportStream {
        var transportRequest = try makeTransportRequest(request, token: token)
        for middleware in configuration.middleware {
            transportRequest = try await middleware.intercept(stream: transportRequest)
        }
        let stream = TransportStream(maxBufferedBytes: maxBufferedBytes)
        carrier.openStream(transportRequest, into: stream)
        configuration.logger?.debug("stream opened", metadata: ["request": "\(request.label)"])
        return stream
    }

    /// Whether a transport failure may be gone on the next attempt: anything but a request that
    /// can never work (a bad URL, a refused certificate, a cancelled task). A server that dies
    /// mid-answer surfaces in FoundationNetworking (libcurl) as `.unknown` ("transfer closed with
    /// outstanding read data remaining"), so the list is of what is not retried.
    static func isRetryable(_ error: URLError) -> Bool {
        switch error.code {
        case .cancelled, .badURL, .unsupportedURL, .userCancelledAuthentication, .userAuthenticationRequired,
            .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired, .appTransportSecurityRequiresSecureConnection, .dataLengthExceedsMaximum,
            .fileDoesNotExist, .noPermissionsToReadFile:
            false
        default: true
        }
    }

    static func describe(_ error: URLError) -> String {
        let text = (error as NSError).localizedDescription
        return "no answer (URLError \(error.code.rawValue)\(text.isEmpty ? "" : ": \(text)"))"
    }

    // MARK: - Building requests

    func url(for request: APIRequest) throws -> URL {
        var text = base + request.path
        if !request.query.isEmpty { text += "?" + TransportRequest.encodedQuery(request.transportQuery) }
        guard let url = URL(string: text) else {
            throw RemoteError(.badRequest, request: request.label, detail: "no URL for \(text)")
        }
        return url
    }

    /// `request` as the transport sends it, with `token`: its URL, every header, its body as
    /// JSON, its timeout.
    func makeTransportRequest(_ request: APIRequest, token: String?) throws -> TransportRequest {
        var headers = ["Accept": request.accept, "User-Agent": configuration.userAgent]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if let version = request.ifMatch { headers["If-Match"] = "\"\(version)\"" }
        if let key = request.idempotencyKey { headers["Idempotency-Key"] = key }
        var body: Data?
        if let json = request.body {
            body = Data(json.serialized().utf8)
            headers["Content-Type"] = "application/json; charset=utf-8"
        } else if let raw = request.rawBody {
            body = raw.data
            headers["Content-Type"] = raw.contentType
        }
        if let seq = request.lastEventID { headers["Last-Event-ID"] = String(seq) }
        return TransportRequest(
            method: request.method, path: request.path, query: request.transportQuery, headers: headers, body: body,
            timeout: request.timeout ?? configuration.requestTimeout, url: try url(for: request))
    }

    /// A path segment (a session or screen id, a key name), percent-encoded: ids are URL-safe
    /// already; anything else outside RFC 3986's unreserved characters is escaped.
    static func encoded(_ segment: String) -> String {
        let isUnreserved = segment.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
        }
        return isUnreserved ? segment : segment.addingPercentEncoding(withAllowedCharacters: unreserved) ?? segment
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    // MARK: - Answers

    /// The `RemoteError` for an error answer: its problem document (or a stand-in when the body is
    /// not one) and, for 412, the version the server is at.
    func error(for answer: APIAnswer, of request: APIRequest) -> RemoteError {
        var problem: ProblemDocument?
        if let json = try? JSONValue(parsing: Array(answer.body)) {
            problem = try? ProblemDocument(json: json, status: answer.status)
        }
        let detail =
            problem?.detail.isEmpty == false
            ? problem?.detail ?? "" : "HTTP \(answer.status) without a problem document"
        var error = RemoteError(
            .forProblemType(problem?.type) ?? .forStatus(answer.status), request: request.label, detail: detail, status: answer.status, problem: problem,
            currentVersion: answer.status == 412 ? answer.etagVersion : nil, attempts: answer.attempts)
        error.earlierAttemptWasUnanswered = answer.earlierAttemptWasUnanswered
        return error
    }

    /// The answer's body as JSON.
    func json(of answer: APIAnswer, for request: APIRequest) throws -> JSONValue {
        do {
            return try JSONValue(parsing: Array(answer.body))
        } catch {
            throw RemoteError(
                .invalidResponse, request: request.label, detail: "the answer is not JSON: \(error)",
                status: answer.status, attempts: answer.attempts)
        }
    }

    /// Decodes the answer's JSON with a wire decoder, turning its error into a `RemoteError`.
    func decode<T>(
        _ answer: APIAnswer, for request: APIRequest, _ decode: (JSONValue) throws(WireDecodingError) -> T
    ) throws -> T {
        let json = try json(of: answer, for: request)
        do {
            return try decode(json)
        } catch {
            throw RemoteError(
                .invalidResponse, request: request.label, detail: "unexpected answer: \(error)", status: answer.status,
                attempts: answer.attempts)
        }
    }
}

/// A request about to be sent again, and why: for logs and metrics (`Configuration.onRetry`).
public struct RetryNotice: Sendable, Equatable {
    /// Why the attempt did not count.
    public enum Reason: Sendable, Equatable {
        /// The server answered this status (503, 429, 502 or 504).
        case status(Int)
        /// No answer: the connection failed this way.
        case connection(URLError.Code)
    }

    /// `METHOD /path`.
    public var request: String
    /// The attempt that failed, from 1.
    public var attempt: Int
    /// Why it is retried.
    public var reason: Reason
    /// How long the client waits before the next attempt.
    public var delay: Duration
}

extension Duration {
    /// The duration in seconds, as `TimeInterval`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
