import Foundation
import HTTPCore
import NavigationValues
import NavigationValuesSessions
import NavigationValuesStore

// The one place where errors become RFC 9457 problem+json (CONTRIBUTING.md, Conventions). Anything a client
// can cause is a 4xx that says what was wrong; a 500 is our bug (or damaged data) and shows
// nothing internal.

/// The kinds of problem the API answers: status, `type` (as `/problems/<slug>`) and title.
struct ProblemKind: Sendable, Hashable {
    var status: Int
    var slug: String
    var title: String

    static let badRequest = ProblemKind(status: 400, slug: "malformed-request", title: "Malformed request")
    static let malformedJSON = ProblemKind(status: 400, slug: "malformed-json", title: "Malformed JSON")
    static let unauthorized = ProblemKind(status: 401, slug: "unauthorized", title: "Missing or invalid token")
    static let forbidden = ProblemKind(status: 403, slug: "forbidden", title: "Token not allowed here")
    static let notFound = ProblemKind(status: 404, slug: "not-found", title: "Not found")
    static let conflict = ProblemKind(status: 409, slug: "conflict", title: "Conflict")
    static let gone = ProblemKind(status: 410, slug: "gone", title: "Gone")
    static let preconditionFailed = ProblemKind(status: 412, slug: "precondition-failed", title: "Version mismatch")
    static let unsupportedMediaType = ProblemKind(
        status: 415, slug: "unsupported-media-type", title: "Body must be JSON")
    static let unprocessable = ProblemKind(
        status: 422, slug: "unprocessable-content", title: "Invalid request content")
    static let limitExceeded = ProblemKind(status: 422, slug: "limit-exceeded", title: "Limit exceeded")
    static let compacted = ProblemKind(status: 410, slug: "events-compacted", title: "Events compacted")
    static let tooManyRequests = ProblemKind(status: 429, slug: "too-many-requests", title: "Too many requests")
    static let handoffInvalid = ProblemKind(
        status: 400, slug: "handoff-code-invalid", title: "Not a hand-off code of this server")
    static let handoffUnknown = ProblemKind(status: 404, slug: "handoff-code-unknown", title: "Unknown hand-off code")
    static let handoffUsed = ProblemKind(status: 409, slug: "handoff-code-used", title: "Hand-off code already used")
    static let handoffExpired = ProblemKind(status: 410, slug: "handoff-code-expired", title: "Hand-off code expired")
    static let handoffSessionEnded = ProblemKind(
        status: 410, slug: "handoff-session-ended", title: "Hand-off session ended")
    static let handoffSessionPurged = ProblemKind(
        status: 410, slug: "handoff-session-purged", title: "Hand-off session purged")
    static let tooManyHandoffs = ProblemKind(status: 429, slug: "too-many-handoffs", title: "Too many hand-offs")
    static let tooManyDevices = ProblemKind(status: 409, slug: "too-many-devices", title: "Too many devices")
    static let internalError = ProblemKind(status: 500, slug: "internal-error", title: "Internal Server Error")
    static let unavailable = ProblemKind(status: 503, slug: "store-unavailable", title: "Store unavailable")
    static let tooManySubscribers = ProblemKind(
        status: 503, slug: "too-many-subscribers", title: "Too many subscribers")
}

/// A problem as the API builds it, before it becomes `ProblemDetails` (the server's one shape).
struct Problem {
    var kind: ProblemKind
    var detail: String
    var fieldErrors: [SessionError.FieldError] = []
    var headers: HTTPHeaders = [:]
    /// Extension members: `limit` (the limit a request passed), `oldestSeq` (after compaction).
    var members: [String: ProblemDetails.Member] = [:]

    var details: ProblemDetails {
        ProblemDetails(
            type: "/problems/\(kind.slug)", title: kind.title, status: HTTPStatus(code: kind.status), detail: detail,
            errors: fieldErrors.map { ProblemDetails.FieldError(pointer: $0.pointer, detail: $0.detail) },
            headers: headers, members: members)
    }

    var response: Response { details.response }
}

enum ProblemMapping {
    /// The error responder the server is started with.
    @Sendable
    static func response(for error: any Error, request: Request?) -> Response {
        problem(for: error).response
    }

    static func problem(for error: any Error) -> Problem {
        switch error {
        case let error as SessionError:
            return problem(for: error)
        case let error as APIError:
            var headers = HTTPHeaders()
            for (name, value) in error.headers { headers[name] = value }
            return Problem(
                kind: error.kind, detail: error.detail, fieldErrors: error.fieldErrors, headers: headers,
                members: error.members)
        case let error as HTTPRequestError:
            let slug = error.status.reasonPhrase.lowercased().replacingOccurrences(of: " ", with: "-")
            return Problem(
                kind: ProblemKind(status: error.status.code, slug: slug, title: error.status.reasonPhrase),
                detail: error.detail, headers: error.headers)
        case let error as JSONParsingError:
            return Problem(kind: .malformedJSON, detail: "\(error)")
        case let error as StoreError where error.code == .unavailable || error.code == .closed:
            return Problem(
                kind: .unavailable, detail: "the database cannot take requests right now", headers: ["Retry-After": "1"]
            )
        case let error as StoreError where error.code == .tooLarge:
            return Problem(
                kind: .limitExceeded, detail: "this change is too large for the database to store",
                members: ["limit": .string("sqlite-max-length")])
        case let error as SubscriberLimitError:
            return Problem(
                kind: .tooManySubscribers, detail: "\(error); try again later", headers: ["Retry-After": "5"],
                members: ["limit": .string(error.scope == .session ? "max-subscribers-per-session" : "max-subscribers")]
            )
        case let error as StoreError where error.code == .conflict:
            // Other instances kept moving the session on while this one retried (SessionActor).
            return Problem(
                kind: .unavailable, detail: "the session is changing too fast on other instances; retry",
                headers: ["Retry-After": "1"])
        default:
            return Problem(kind: .internalError, detail: "the server failed to answer this request")
        }
    }

    private static func problem(for error: SessionError) -> Problem {
        var headers = HTTPHeaders()
        let kind: ProblemKind
        switch error.code {
        case .unauthorized:
            kind = .unauthorized
            headers["WWW-Authenticate"] = "Bearer"
        case .forbidden: kind = .forbidden
        case .notFound: kind = .notFound
        case .conflict: kind = .conflict
        case .gone: kind = .gone
        case .versionMismatch:
            kind = .preconditionFailed
            if let version = error.currentVersion { headers["ETag"] = "\"\(version)\"" }
        case .invalid: kind = .unprocessable
        case .limitExceeded: kind = .limitExceeded
        case .compacted: kind = .compacted
        case .handoffInvalid: kind = .handoffInvalid
        case .handoffUnknown: kind = .handoffUnknown
        case .handoffUsed: kind = .handoffUsed
        case .handoffExpired: kind = .handoffExpired
        case .handoffSessionEnded: kind = .handoffSessionEnded
        case .handoffSessionPurged: kind = .handoffSessionPurged
        case .tooManyHandoffs:
            kind = .tooManyHandoffs
            if let seconds = error.retryAfterSeconds { headers["Retry-After"] = String(seconds) }
        case .tooManyDevices: kind = .tooManyDevices
        default: kind = .internalError
        }
        var members: [String: ProblemDetails.Member] = [:]
        if let limit = error.limit { members["limit"] = .string(limit) }
        if let oldest = error.oldestSeq { members["oldestSeq"] = .integer(oldest) }
        return Problem(
            kind: kind, detail: error.detail, fieldErrors: error.fieldErrors, headers: headers, members: members)
    }
}
