import NavigationValues
import NavigationValuesWire

/// Why a session refused a request: a stable code, a sentence for the client, and the fields of
/// the request it points at. The domain knows no HTTP; `Problem+Mapping.swift` in the API turns
/// each code into its status and problem type.
///
/// ```swift
/// throw SessionError(.invalid, "unknown value key", pointer: "/values/colour")
/// ```
public struct SessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of refusal; stable, so that callers can match on it.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No credential, or one that could not have been issued.
        public static let unauthorized = Code("unauthorized")
        /// A credential that is not allowed here (another session's token).
        public static let forbidden = Code("forbidden")
        /// No such session, screen or handler.
        public static let notFound = Code("notFound")
        /// The request does not fit the session as it is (popping the root).
        public static let conflict = Code("conflict")
        /// The session has ended, or its events were purged or compacted.
        public static let gone = Code("gone")
        /// `If-Match` named another version than the session's (`currentVersion`).
        public static let versionMismatch = Code("versionMismatch")
        /// Valid JSON of the wrong shape, type or size.
        public static let invalid = Code("invalid")
        /// The request is valid but its result would pass one of the server's limits (`limit`
        /// names it): an answer or event too large, a session grown past its size.
        public static let limitExceeded = Code("limitExceeded")
        /// The session's events before the one asked for were compacted away (`oldestSeq` is
        /// the oldest seq still available).
        public static let compacted = Code("compacted")
        /// A hand-off code that is damaged or was not signed by this server (tampered with).
        public static let handoffInvalid = Code("handoffInvalid")
        /// A genuine hand-off code the database has no record of.
        public static let handoffUnknown = Code("handoffUnknown")
        /// A hand-off code past its expiry.
        public static let handoffExpired = Code("handoffExpired")
        /// A hand-off code redeemed before (codes are single-use).
        public static let handoffUsed = Code("handoffUsed")
        /// The hand-off's session was ended since the code was made.
        public static let handoffSessionEnded = Code("handoffSessionEnded")
        /// The hand-off's session was purged since the code was made.
        public static let handoffSessionPurged = Code("handoffSessionPurged")
        /// The session has as many unused hand-offs as it may (`limit`).
        public static let tooManyHandoffs = Code("tooManyHandoffs")
        /// The session has as many device tokens as it may (`limit`).
        public static let tooManyDevices = Code("tooManyDevices")
    }

    /// A field of the request the error points at (RFC 6901 pointer into the body).
    public struct FieldError: Sendable, Equatable {
        public var pointer: String
        public var detail: String

        public init(pointer: String, detail: String) {
            self.pointer = pointer
            self.detail = detail
        }
    }

    public var code: Code
    /// What was wrong, for the client.
    public var detail: String
    public var fieldErrors: [FieldError]
    /// With `.versionMismatch`: the version the session is at.
    public var currentVersion: Int64?
    /// With `.limitExceeded`: the limit's name, as the `serve` flag that sets it (`max-event-bytes`).
    public var limit: String?
    /// With `.compacted`: the oldest seq a reader may still name (`after` or `at`).
    public var oldestSeq: Int64?
    /// With `.tooManyHandoffs`: the seconds after which the same request succeeds, unless more
    /// codes are made meanwhile (`Retry-After`).
    public var retryAfterSeconds: Int?

    public init(_ code: Code, _ detail: String, fieldErrors: [FieldError] = [], currentVersion: Int64? = nil) {
        self.code = code
        self.detail = detail
        self.fieldErrors = fieldErrors
        self.currentVersion = currentVersion
    }

    /// An error about one field of the body.
    public init(_ code: Code, _ detail: String, pointer: String) {
        self.init(code, detail, fieldErrors: [FieldError(pointer: pointer, detail: detail)])
    }

    /// A request whose result would pass `limit` (a `serve` flag's name, such as `max-event-bytes`).
    public static func limitExceeded(_ limit: String, _ detail: String) -> SessionError {
        var error = SessionError(.limitExceeded, detail)
        error.limit = limit
        return error
    }

    /// A read of events that were compacted; `oldestSeq` is the oldest seq still available.
    public static func compacted(_ detail: String, oldestSeq: Int64) -> SessionError {
        var error = SessionError(.compacted, detail)
        error.oldestSeq = oldestSeq
        return error
    }

    public var description: String { "\(code): \(detail)" }

    /// A refusal that depends on the session's state (not on the credential or the body's
    /// shape alone), so a stale copy may have judged it wrongly.
    var isJudgedOnTheCopy: Bool {
        code == .notFound || code == .conflict || code == .gone || code == .versionMismatch || code == .invalid
    }
}

/// Stored data that cannot be turned back into a session: a damaged or hand-edited database, or
/// our bug, never a client's doing. Loading, replay and applying a stored event throw it instead of
/// stopping the process.
public struct CorruptSessionError: Error, Sendable, Equatable, CustomStringConvertible {
    public var session: SessionID
    public var reason: String

    public init(session: SessionID, reason: String) {
        self.session = session
        self.reason = reason
    }

    public var description: String { "session \(session.rawValue) cannot be loaded: \(reason)" }
}
