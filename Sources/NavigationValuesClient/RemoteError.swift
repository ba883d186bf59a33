import Foundation
import NavigationValuesWire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Why a call to the server failed: what the server answered (its problem+json, RFC 9457), or why
/// no usable answer came. A stable `code` plus context, so a new kind of failure is a new code, not
/// a breaking change.
///
/// ```swift
/// do {
///     try await session.push("Detail", ifMatch: 7)
/// } catch let error as RemoteError where error.code == .versionMismatch {
///     print("the session moved on to version \(error.currentVersion ?? -1)")
/// }
/// ```
public struct RemoteError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name (`versionMismatch`).
        public var rawValue: String
        /// A code with this name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// 400: the request was malformed (a bug in the caller or in this client).
        public static let badRequest = Code(rawValue: "badRequest")
        /// 401: no token, or one that is not a token.
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// 403: a token of another session, or a session token on an admin route.
        public static let forbidden = Code(rawValue: "forbidden")
        /// 404: no such session, screen or route (also a purged session).
        public static let notFound = Code(rawValue: "notFound")
        /// 409: the change conflicts with the session's state (popping the root).
        public static let conflict = Code(rawValue: "conflict")
        /// 410: the session has ended, or the events asked for were purged.
        public static let gone = Code(rawValue: "gone")
        /// 412: `If-Match` named another version than the session's; `currentVersion` is the server's.
        public static let versionMismatch = Code(rawValue: "versionMismatch")
        /// 422: valid JSON that breaks the schema or a limit; `problem.errors` point at each field.
        public static let invalid = Code(rawValue: "invalid")
        /// 429: too many requests, still so after every retry the policy allowed.
        public static let rateLimited = Code(rawValue: "rateLimited")
        /// 503 (or 502, 504): the server could not take the request, still so after every retry.
        public static let unavailable = Code(rawValue: "unavailable")
        /// Any other error status (`problem` says what the server meant).
        public static let problem = Code(rawValue: "problem")
        /// No answer arrived: the connection failed or was lost on every attempt (`underlying` says how).
        public static let connectionFailed = Code(rawValue: "connectionFailed")
        /// An answer arrived that is not what the API promises (not JSON, or not the expected shape).
        public static let invalidResponse = Code(rawValue: "invalidResponse")
        /// The server cannot be reached and the offline queue holds `OfflineOptions.limit` mutations
        /// already (or its file cannot be written): this one was not kept.
        public static let offlineQueueFull = Code(rawValue: "offlineQueueFull")
        /// A typed value could not be encoded to JSON, or what the server holds does not decode as
        /// the key's value type.
        public static let invalidValue = Code(rawValue: "invalidValue")

        /// 400: the hand-off code is damaged or not of this server (mistyped, or tampered with).
        public static let handoffInvalid = Code(rawValue: "handoffInvalid")
        /// 404: a genuine hand-off code the server has no record of.
        public static let handoffUnknown = Code(rawValue: "handoffUnknown")
        /// 409: the hand-off code was redeemed before (codes work once).
        public static let handoffUsed = Code(rawValue: "handoffUsed")
        /// 410: the hand-off code expired.
        public static let handoffExpired = Code(rawValue: "handoffExpired")
        /// 410: the hand-off's session ended since the code was made.
        public static let handoffSessionEnded = Code(rawValue: "handoffSessionEnded")
        /// 410: the hand-off's session was purged since the code was made.
        public static let handoffSessionPurged = Code(rawValue: "handoffSessionPurged")
        /// 429: the session has as many unused hand-offs as the server allows (`--max-handoffs`).
        public static let tooManyHandoffs = Code(rawValue: "tooManyHandoffs")
        /// 409: the session has as many devices joined by hand-offs as the server allows (`--max-devices`).
        public static let tooManyDevices = Code(rawValue: "tooManyDevices")

        /// The code for a problem `type` that has one of its own (hand-offs' refusals), which
        /// says more than its status.
        static func forProblemType(_ type: String?) -> Code? {
            switch type {
            case "/problems/handoff-code-invalid": .handoffInvalid
            case "/problems/handoff-code-unknown": .handoffUnknown
            case "/problems/handoff-code-used": .handoffUsed
            case "/problems/handoff-code-expired": .handoffExpired
            case "/problems/handoff-session-ended": .handoffSessionEnded
            case "/problems/handoff-session-purged": .handoffSessionPurged
            case "/problems/too-many-handoffs": .tooManyHandoffs
            case "/problems/too-many-devices": .tooManyDevices
            default: nil
            }
        }

        /// The code for an error status.
        static func forStatus(_ status: Int) -> Code {
            switch status {
            case 400: .badRequest
            case 401: .unauthorized
            case 403: .forbidden
            case 404: .notFound
            case 409: .conflict
            case 410: .gone
            case 412: .versionMismatch
            case 422: .invalid
            case 429: .rateLimited
            case 502, 503, 504: .unavailable
            default: .problem
            }
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// The request, as `METHOD /path` (no query, no token).
    public var request: String
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// The server's problem document, when it answered with one.
    public var problem: ProblemDocument?
    /// For `.versionMismatch`: the session's version on the server (its `ETag`).
    public var currentVersion: Int64?
    /// How many times the request was sent (retries included).
    public var attempts: Int
    /// For `.connectionFailed`: the last transport error.
    public var underlying: URLError?
    /// What went wrong, in words (the problem's `detail`, or the client's own reason).
    public var detail: String
    /// Whether an earlier attempt was sent and its answer lost, so it may have been applied.
    var earlierAttemptWasUnanswered = false

    /// An error with its code, the request and what went wrong.
    public init(
        _ code: Code, request: String, detail: String, status: Int? = nil, problem: ProblemDocument? = nil,
        currentVersion: Int64? = nil, attempts: Int = 1, underlying: URLError? = nil
    ) {
        self.code = code
        self.request = request
        self.detail = detail
        self.status = status
        self.problem = problem
        self.currentVersion = currentVersion
        self.attempts = attempts
        self.underlying = underlying
    }

    /// The RFC 6901 pointers of the fields the server said were wrong (`/values/counter`).
    public var pointers: [String] { problem?.errors.map(\.pointer) ?? [] }

    /// `POST /v1/sessions/s_…/push: 412 Version mismatch: session s_… is at version 8, not 7`.
    public var description: String {
        var text = "\(request): "
        if let status { text += "\(status) " }
        if let title = problem?.title, !title.isEmpty {
            text += "\(title): "
        } else if status == nil {
            text += "\(code): "
        }
        text += detail
        if attempts > 1 { text += " (after \(attempts) attempts)" }
        return text
    }
}
