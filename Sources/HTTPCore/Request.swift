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
///
/// A request is one reference to storage it shares until it is changed (copy on write, as an
/// array is): the server hands it from its parser through the middleware to the handler, and a
/// struct of its fields was copied at each step (about 170 bytes moved and a dozen references
/// retained and released each time).
public struct Request: Sendable {
    /// The fields. Changed only through a request that holds the only reference (see
    /// `uniqueStorage()`), so that sharing it between threads is as safe as sharing an array's.
    /// Their accesses are not checked for exclusivity at run time: only a uniquely held request
    /// changes them, and overlapping accesses to one request are refused by the compiler.
    private final class Storage: @unchecked Sendable {
        @exclusivity(unchecked) var method: HTTPMethod
        @exclusivity(unchecked) var target: String
        @exclusivity(unchecked) var path: String
        @exclusivity(unchecked) var query: Parameters
        @exclusivity(unchecked) var headers: HTTPHeaders
        @exclusivity(unchecked) var body: [UInt8]
        @exclusivity(unchecked) var parameters: Parameters
        @exclusivity(unchecked) var route: String?
        @exclusivity(unchecked) var minorVersion: Int
        @exclusivity(unchecked) var remoteAddress: String?
        @exclusivity(unchecked) var pathSegments: [String]
        @exclusivity(unchecked) var bodyReservation: BodyReservation?
        @exclusivity(unchecked) var routeTarget: RouteMatch.Target?

        init(
            method: HTTPMethod, target: String, path: String, query: Parameters, headers: HTTPHeaders,
            body: [UInt8], parameters: Parameters, route: String?, minorVersion: Int, remoteAddress: String?,
            pathSegments: [String], bodyReservation: BodyReservation?, routeTarget: RouteMatch.Target?
        ) {
            self.method = method
            self.target = target
            self.path = path
            self.query = query
            self.headers = headers
            self.body = body
            self.parameters = parameters
            self.route = route
            self.minorVersion = minorVersion
            self.remoteAddress = remoteAddress
            self.pathSegments = pathSegments
            self.bodyReservation = bodyReservation
            self.routeTarget = routeTarget
        }

        /// Empties every field for the connection's next request, keeping the room of the header
        /// and segment arrays when it is small (a request with many fields or segments gives it back).
        func reset() {
            method = .get
            target = ""
            path = ""
            query = Parameters()
            headers.removeAll(keepingCapacityUpTo: Request.reusedFieldCapacity)
            body = []
            parameters = Parameters()
            route = nil
            minorVersion = 1
            remoteAddress = nil
            pathSegments.removeAll(keepingCapacity: pathSegments.capacity <= Request.reusedSegmentCapacity)
            bodyReservation = nil
            routeTarget = nil
        }

        func copy() -> Storage {
            Storage(
                method: method, target: target, path: path, query: query, headers: headers, body: body,
                parameters: parameters, route: route, minorVersion: minorVersion, remoteAddress: remoteAddress,
                pathSegments: pathSegments, bodyReservation: bodyReservation, routeTarget: routeTarget)
        }
    }

    private var storage: Storage

    /// The storage, copied first when another request shares it.
    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// The method, such as `.get`.
    public var method: HTTPMethod {
        get { storage.method }
        set { uniqueStorage().method = newValue }
    }
    /// The request-target exactly as received (RFC 9112 §3.2).
    public var target: String {
        get { storage.target }
        set { uniqueStorage().target = newValue }
    }
    /// The percent-decoded path, such as `/v1/sessions/s 1`.
    public var path: String {
        get { storage.path }
        set { uniqueStorage().path = newValue }
    }
    /// The percent-decoded query parameters (`+` decodes to a space), in order.
    public var query: Parameters {
        get { storage.query }
        _modify { yield &uniqueStorage().query }
    }
    /// The header fields, looked up case-insensitively.
    public var headers: HTTPHeaders {
        get { storage.headers }
        _modify { yield &uniqueStorage().headers }
    }
    /// The body, de-chunked; empty when there is none.
    public var body: [UInt8] {
        get { storage.body }
        _modify { yield &uniqueStorage().body }
    }
    /// The route's path parameters, such as `id` for `/v1/sessions/{id}`.
    public var parameters: Parameters {
        get { storage.parameters }
        _modify { yield &uniqueStorage().parameters }
    }
    /// The pattern of the route that answers the request, such as `/v1/sessions/{id}`, set by the
    /// lookup before any middleware runs; nil when no route matches the path (404). For a 405 it
    /// is the pattern of the most specific route matching the path. Logs and metrics label
    /// requests with it, so that their labels do not grow with every id.
    public package(set) var route: String? {
        get { storage.route }
        set { uniqueStorage().route = newValue }
    }
    /// The minor HTTP version: 1 for HTTP/1.1, 0 for HTTP/1.0.
    public var minorVersion: Int {
        get { storage.minorVersion }
        set { uniqueStorage().minorVersion = newValue }
    }
    /// The client's address and port, such as `127.0.0.1:52100` or `[::1]:52100`, when known.
    public var remoteAddress: String? {
        get { storage.remoteAddress }
        set { uniqueStorage().remoteAddress = newValue }
    }
    /// The decoded path segments, split on `/` before decoding so that `%2F` stays inside a segment.
    var pathSegments: [String] {
        get { storage.pathSegments }
        _modify { yield &uniqueStorage().pathSegments }
    }
    /// The memory set aside for a body over the usual limit, given back with the last copy.
    var bodyReservation: BodyReservation? {
        get { storage.bodyReservation }
        set { uniqueStorage().bodyReservation = newValue }
    }
    /// What answers the request once the middleware hand it on: set by the responder.
    var routeTarget: RouteMatch.Target? {
        get { storage.routeTarget }
        set { uniqueStorage().routeTarget = newValue }
    }

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
        var query = query
        for (name, value) in parsed?.query ?? Parameters() { query.append(name: name, value: value) }
        storage = Storage(
            method: method, target: path, path: parsed?.path ?? path, query: query, headers: headers, body: body,
            parameters: Parameters(), route: nil, minorVersion: 1, remoteAddress: nil,
            pathSegments: parsed?.segments
                ?? path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init),
            bodyReservation: nil, routeTarget: nil)
    }

    /// A request with this head line and no fields yet, for the parser to fill in: in the storage
    /// of `spare` when there is one (see `reset()`), so that a connection's requests reuse one
    /// storage and its arrays rather than allocating three per request.
    init(method: HTTPMethod, target: String, minorVersion: Int, reusing spare: inout Request?) {
        if var reused = spare.take() {
            let storage = reused.uniqueStorage()
            storage.method = method
            storage.target = target
            storage.minorVersion = minorVersion
            self = reused
        } else {
            storage = Storage(
                method: method, target: target, path: "", query: Parameters(), headers: HTTPHeaders(), body: [],
                parameters: Parameters(), route: nil, minorVersion: minorVersion, remoteAddress: nil,
                pathSegments: [], bodyReservation: nil, routeTarget: nil)
        }
    }

    /// Calls `body` with the header fields and path segments to fill in, in place, through one
    /// check that the storage is held once (rather than one per field appended).
    mutating func withFieldsAndSegments<Result>(
        _ body: (inout HTTPHeaders, inout [String]) throws(HTTPRequestError) -> Result
    ) throws(HTTPRequestError) -> Result {
        let storage = uniqueStorage()
        return try body(&storage.headers, &storage.pathSegments)
    }

    /// Header fields a reused storage keeps room for; a request with more gives its array back.
    static let reusedFieldCapacity = 32
    /// Path segments a reused storage keeps room for.
    static let reusedSegmentCapacity = 16

    /// Empties the request for reuse by the next request of its connection, when nothing else
    /// holds its storage (a handler or stream that kept a copy); answers whether it did. A reset
    /// request lets go of everything it referred to: its body, its large-body reservation, its
    /// route's handler.
    package mutating func resetForReuse() -> Bool {
        guard isKnownUniquelyReferenced(&storage) else { return false }
        storage.reset()
        return true
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
