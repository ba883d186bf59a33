/// An error the server finds in a request itself (framing, limits, routing), carrying the status
/// it answers with. Handlers may throw it too. The error responder turns it into a response.
///
/// ```swift
/// catch let error as HTTPRequestError where error.code == .contentTooLarge { … }
/// throw HTTPRequestError(.badRequest, detail: "cursor is not a number")
/// ```
public struct HTTPRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, one value per status the server produces itself.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Kind: Sendable, Hashable {
            case badRequest, notFound, methodNotAllowed, requestTimeout, contentTooLarge, uriTooLong
            case headerFieldsTooLarge, notImplemented, versionNotSupported, serviceUnavailable
        }
        fileprivate let kind: Kind

        /// Malformed HTTP: bad request line, header, framing or percent-encoding (400).
        public static let badRequest = Code(kind: .badRequest)
        /// No route has that path (404).
        public static let notFound = Code(kind: .notFound)
        /// A route has that path, not that method (405, with `Allow`).
        public static let methodNotAllowed = Code(kind: .methodNotAllowed)
        /// The request was not received in time (408).
        public static let requestTimeout = Code(kind: .requestTimeout)
        /// The body is over the limit (413).
        public static let contentTooLarge = Code(kind: .contentTooLarge)
        /// The request line is over the limit (414).
        public static let uriTooLong = Code(kind: .uriTooLong)
        /// The request line and headers are over the limit (431).
        public static let headerFieldsTooLarge = Code(kind: .headerFieldsTooLarge)
        /// A transfer coding other than chunked (501).
        public static let notImplemented = Code(kind: .notImplemented)
        /// An HTTP version other than 1.0 and 1.1 (505).
        public static let versionNotSupported = Code(kind: .versionNotSupported)
        /// The server cannot take this request now, such as a large body while the memory set aside
        /// for large bodies is in use (503, with `Retry-After`).
        public static let serviceUnavailable = Code(kind: .serviceUnavailable)

        public var description: String { "\(kind)" }

        /// The status this code answers with.
        public var status: HTTPStatus {
            switch kind {
            case .badRequest: .badRequest
            case .notFound: .notFound
            case .methodNotAllowed: .methodNotAllowed
            case .requestTimeout: .requestTimeout
            case .contentTooLarge: .contentTooLarge
            case .uriTooLong: .uriTooLong
            case .headerFieldsTooLarge: .requestHeaderFieldsTooLarge
            case .notImplemented: .notImplemented
            case .versionNotSupported: .httpVersionNotSupported
            case .serviceUnavailable: .serviceUnavailable
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for the client saying what exactly.
    public var detail: String
    /// Headers the answer must carry, such as `Allow` for 405.
    public var headers: HTTPHeaders

    /// Creates an error; its status follows from `code`.
    public init(_ code: Code, detail: String, headers: HTTPHeaders = [:]) {
        self.code = code
        self.detail = detail
        self.headers = headers
    }

    /// The status to answer with.
    public var status: HTTPStatus { code.status }

    public var description: String { "\(status): \(detail)" }
}
