/// One HTTP request as a handler sees it: head, percent-decoded path and query, the whole body,
/// and the path parameters of the route that matched.
///
/// ```swift
/// router.post("/v1/sessions/{id}/push") { request in
///     let id = request.parameters["id"]          // decoded path segment
///     let after = request.query["after"]         // decoded query value
///     let etag = request.headers["if-match"]
///     return Response(status: .created, body: request.body)
/// }
/// ```
public struct Request: Sendable {
    /// The method, such as `.get`.
    public var method: HTTPMethod
    /// The request-target exactly as received (RFC 9112 §3.2).
    public var target: String
    /// The percent-decoded path, such as `/v1/sessions/s 1`.
    public var path: String
    /// The percent-decoded query parameters (`+` decodes to a space), in order.
    public var query: Parameters
    /// The header fields, looked up case-insensitively.
    public var headers: HTTPHeaders
    /// The body, de-chunked; empty when there is none.
    public var body: [UInt8]
    /// The route's path parameters, such as `id` for `/v1/sessions/{id}`.
    public var parameters: Parameters
    /// The pattern of the route that answers the request, such as `/v1/sessions/{id}`, set by the
    /// lookup before any middleware runs; nil when no route matches the path (404). For a 405 it
    /// is the pattern of the most specific route matching the path. Logs and metrics label
    /// requests with it, so that their labels do not grow with every id.
    public package(set) var route: String?
    /// The minor HTTP version: 1 for HTTP/1.1, 0 for HTTP/1.0.
    public var minorVersion: Int
    /// The client's address and port, such as `127.0.0.1:52100` or `[::1]:52100`, when known.
    public var remoteAddress: String?
    /// The decoded path segments, split on `/` before decoding so that `%2F` stays inside a segment.
    var pathSegments: [String]
    /// The memory set aside for a body over the usual limit, given back with the last copy.
    var bodyReservation: BodyReservation?
    /// What answers the request once the middleware hand it on: set by the responder.
    var routeTarget: RouteMatch.Target?

    /// Creates a request, for tests and for callers that build requests themselves. `path` is
    /// percent-encoded as on the wire and may carry a query, which is added to `query`.
    public init(
        method: HTTPMethod,
        path: String,
        query: Parameters = Parameters(),
        headers: HTTPHeaders = [:],
        body: [UInt8] = []
    ) {
        let parsed = try? TargetParser.parse(path)
        self.method = method
        self.target = path
        self.path = parsed?.path ?? path
        self.query = query
        for (name, value) in parsed?.query ?? Parameters() { self.query.append(name: name, value: value) }
        self.headers = headers
        self.body = body
        self.parameters = Parameters()
        self.minorVersion = 1
        self.pathSegments =
            parsed?.segments
            ?? path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
    }

    init(
        method: HTTPMethod,
        target: String,
        path: String,
        pathSegments: [String],
        query: Parameters,
        headers: HTTPHeaders,
        minorVersion: Int
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.pathSegments = pathSegments
        self.query = query
        self.headers = headers
        self.body = []
        self.parameters = Parameters()
        self.minorVersion = minorVersion
    }
}

/// An ordered list of name-value pairs: query parameters or path parameters.
///
/// ```swift
/// request.query["limit"].flatMap(Int.init) ?? 100
/// request.query.values(for: "tag")     // every `tag=` in order
/// ```
public struct Parameters: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    private var pairs: [(name: String, value: String)]

    /// Creates an empty list.
    public init() { pairs = [] }

    public init(dictionaryLiteral elements: (String, String)...) {
        pairs = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The first value named `name`, or nil.
    public subscript(name: String) -> String? {
        for pair in pairs where pair.name == name { return pair.value }
        return nil
    }

    /// Every value named `name`, in order.
    public func values(for name: String) -> [String] {
        pairs.filter { $0.name == name }.map(\.value)
    }

    /// The number of pairs.
    public var count: Int { pairs.count }

    /// Whether there are no pairs.
    public var isEmpty: Bool { pairs.isEmpty }

    /// Appends a pair.
    public mutating func append(name: String, value: String) {
        pairs.append((name: name, value: value))
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { pairs.makeIterator() }

    public static func == (lhs: Parameters, rhs: Parameters) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.name == $1.name && $0.value == $1.value }
    }
}
