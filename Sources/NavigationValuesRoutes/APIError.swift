import HTTPCore
import NavigationValuesSessions

/// An error in an HTTP request itself, found before (or instead of) a session: a malformed or
/// non-JSON body, a bad header or query parameter, a credential an admin route does not take.
/// What a session refuses is a `SessionError`; both become problem+json in `ProblemMapping`.
///
/// ```swift
/// throw APIError(.unprocessable, "limit must be an integer from 1 to 1000")
/// ```
struct APIError: Error, Sendable, Equatable, CustomStringConvertible {
    var kind: ProblemKind
    var detail: String
    var fieldErrors: [SessionError.FieldError]
    var headers: [String: String]
    /// Extension members of the problem document, such as the `limit` a request passed.
    var members: [String: ProblemDetails.Member]

    init(
        _ kind: ProblemKind, _ detail: String, fieldErrors: [SessionError.FieldError] = [],
        headers: [String: String] = [:], members: [String: ProblemDetails.Member] = [:]
    ) {
        self.kind = kind
        self.detail = detail
        self.fieldErrors = fieldErrors
        self.headers = headers
        self.members = members
    }

    /// An error about one field of the body.
    init(_ kind: ProblemKind, _ detail: String, pointer: String) {
        self.init(kind, detail, fieldErrors: [.init(pointer: pointer, detail: detail)])
    }

    var description: String { "\(kind.status) \(kind.title): \(detail)" }
}
