/// A request method, compared case-sensitively as RFC 9110 §9.1 requires.
///
/// ```swift
/// if request.method == .post { … }
/// ```
public struct HTTPMethod: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    /// The method token, such as `GET`.
    public var rawValue: String

    /// Creates a method from its token.
    /// Creates a method from its token.
    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// `GET`.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `POST`.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `PATCH`.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `OPTIONS`.
    public static let options = HTTPMethod(rawValue: "OPTIONS")
}
