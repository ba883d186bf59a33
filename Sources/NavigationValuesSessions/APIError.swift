import Foundation
import NavigationValuesWire

/// An error a client caused, with everything its problem+json answer needs (API.md, General).
///
/// ```swift
/// throw APIError(.unprocessable, "unknown value key", pointer: "/values/colour")
/// ```
public struct APIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem; decides the status and the problem `type`.
    public struct Kind: Sendable, Hashable {
        public var status: Int
        public var slug: String
        public var title: String

        public static let badRequest = Kind(status: 400, slug: "malformed-request", title: "Malformed request")
        public static let unauthorized = Kind(status: 401, slug: "unauthorized", title: "Missing or invalid token")
        public static let forbidden = Kind(status: 403, slug: "forbidden", title: "Token not allowed here")
        public static let notFound = Kind(status: 404, slug: "not-found", title: "Not found")
        public static let conflict = Kind(status: 409, slug: "conflict", title: "Conflict")
        public static let gone = Kind(status: 410, slug: "gone", title: "Gone")
        public static let preconditionFailed = Kind(
            status: 412, slug: "precondition-failed", title: "Version mismatch")
        public static let unsupportedMediaType = Kind(
            status: 415, slug: "unsupported-media-type", title: "Body must be JSON")
        public static let unprocessable = Kind(
            status: 422, slug: "unprocessable-content", title: "Invalid request content")
        public static let unavailable = Kind(
            status: 503, slug: "store-unavailable", title: "Store unavailable")
    }

    /// A field the problem points at (RFC 6901 pointer into the request body).
    public struct FieldError: Sendable, Equatable {
        public var pointer: String
        public var detail: String
        public init(pointer: String, detail: String) {
            self.pointer = pointer
            self.detail = detail
        }
    }

    public var kind: Kind
    public var detail: String
    public var errors: [FieldError]
    public var headers: [String: String]

    public init(_ kind: Kind, _ detail: String, errors: [FieldError] = [], headers: [String: String] = [:]) {
        self.kind = kind
        self.detail = detail
        self.errors = errors
        self.headers = headers
    }

    /// An error about one field of the body.
    public init(_ kind: Kind, _ detail: String, pointer: String) {
        self.init(kind, detail, errors: [FieldError(pointer: pointer, detail: detail)])
    }

    public var description: String { "\(kind.status) \(kind.title): \(detail)" }
}

/// Escapes a key for use inside a JSON pointer (RFC 6901 §3).
package func pointerEscaped(_ key: String) -> String {
    guard key.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return key }
    return key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
}
