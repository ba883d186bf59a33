import Synchronization

/// Answers requests. `Router` is the usual responder; anything else that answers a request
/// can be handed to the server.
public protocol HTTPResponder: Sendable {
    /// Answers one request. Thrown errors go to the server's error responder.
    func respond(to request: Request) async throws -> Response
}

/// Routes requests by method and path pattern. `{name}` matches one path segment and is
/// available, percent-decoded, as `request.parameters["name"]`. A literal segment wins over a
/// parameter. An unknown path is 404; a known path with another method is 405 with `Allow`.
///
/// ```swift
/// let router = Router()
/// router.get("/healthz") { _ in Response(body: Array(#"{"status":"ok"}"#.utf8)) }
/// router.post("/v1/sessions/{id}/push") { request in try await push(request.parameters["id"], request.body) }
/// ```
///
/// Handlers that do not `await` run synchronously on the connection's event-loop thread, and
/// async handlers start there too: neither may block the thread (no blocking I/O, no long CPU work).
public final class Router: HTTPResponder {
    enum Handler: Sendable {
        case synchronous(@Sendable (Request) throws -> Response)
        case asynchronous(@Sendable (Request) async throws -> Response)
    }

    private enum Segment: Hashable {
        case literal(String)
        case parameter(String)
    }

    private struct Route {
        var pattern: String
        var segments: [Segment]
        var handlers: [HTTPMethod: Handler]
    }

    /// Routes, most specific pattern first.
    private let routes = Mutex<[Route]>([])

    /// Creates an empty router.
    public init() {}

    // MARK: - Registering

    /// Registers a handler for a method and path pattern, replacing an earlier one for the same pair.
    public func on(
        _ method: HTTPMethod, _ path: String, use handler: @escaping @Sendable (Request) async throws -> Response
    ) {
        add(method, path, .asynchronous(handler))
    }

    /// Registers a synchronous handler, which the server calls without starting a task.
    public func on(_ method: HTTPMethod, _ path: String, use handler: @escaping @Sendable (Request) throws -> Response)
    {
        add(method, path, .synchronous(handler))
    }

    /// Registers a `GET` handler; it also answers `HEAD` unless a `HEAD` handler exists.
    public func get(_ path: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        on(.get, path, use: handler)
    }
    /// Registers a synchronous `GET` handler.
    public func get(_ path: String, _ handler: @escaping @Sendable (Request) throws -> Response) {
        on(.get, path, use: handler)
    }
    /// Registers a `POST` handler.
    public func post(_ path: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        on(.post, path, use: handler)
    }
    /// Registers a synchronous `POST` handler.
    public func post(_ path: String, _ handler: @escaping @Sendable (Request) throws -> Response) {
        on(.post, path, use: handler)
    }
    /// Registers a `PUT` handler.
    public func put(_ path: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        on(.put, path, use: handler)
    }
    /// Registers a synchronous `PUT` handler.
    public func put(_ path: String, _ handler: @escaping @Sendable (Request) throws -> Response) {
        on(.put, path, use: handler)
    }
    /// Registers a `PATCH` handler.
    public func patch(_ path: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        on(.patch, path, use: handler)
    }
    /// Registers a synchronous `PATCH` handler.
    public func patch(_ path: String, _ handler: @escaping @Sendable (Request) throws -> Response) {
        on(.patch, path, use: handler)
    }
    /// Registers a `DELETE` handler.
    public func delete(_ path: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        on(.delete, path, use: handler)
    }
    /// Registers a synchronous `DELETE` handler.
    public func delete(_ path: String, _ handler: @escaping @Sendable (Request) throws -> Response) {
        on(.delete, path, use: handler)
    }

    private func add(_ method: HTTPMethod, _ path: String, _ handler: Handler) {
        let segments: [Segment] = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            $0.hasPrefix("{") && $0.hasSuffix("}") && $0.count > 2
                ? .parameter(String($0.dropFirst().dropLast())) : .literal(String($0))
        }
        routes.withLock { routes in
            if let index = routes.firstIndex(where: { $0.segments == segments }) {
                routes[index].handlers[method] = handler
            } else {
                routes.append(Route(pattern: path, segments: segments, handlers: [method: handler]))
                routes.sort { Self.isMoreSpecific($0.segments, than: $1.segments) }
            }
        }
    }

    private static func isMoreSpecific(_ left: [Segment], than right: [Segment]) -> Bool {
        for (a, b) in zip(left, right) {
            switch (a, b) {
            case (.literal, .parameter): return true
            case (.parameter, .literal): return false
            default: continue
            }
        }
        return left.count > right.count
    }

    // MARK: - Routing

    /// Finds the handler for a request and fills in its path parameters.
    /// - Throws: `HTTPRequestError` `.notFound` or `.methodNotAllowed` (with `Allow`).
    func handler(for request: inout Request) throws(HTTPRequestError) -> Handler {
        let segments = request.pathSegments
        let method = request.method
        let found: (Handler, [Segment])? = routes.withLock { routes in
            for route in routes where route.segments.count == segments.count && Self.matches(route.segments, segments) {
                if let handler = route.handlers[method] ?? (method == .head ? route.handlers[.get] : nil) {
                    return (handler, route.segments)
                }
            }
            return nil
        }
        if let (handler, pattern) = found {
            for (segment, value) in zip(pattern, segments) {
                if case .parameter(let name) = segment { request.parameters.append(name: name, value: value) }
            }
            return handler
        }
        let allowed: Set<String> = routes.withLock { routes in
            var methods = Set<String>()
            for route in routes where route.segments.count == segments.count && Self.matches(route.segments, segments) {
                for method in route.handlers.keys { methods.insert(method.rawValue) }
                if route.handlers[.get] != nil { methods.insert(HTTPMethod.head.rawValue) }
            }
            return methods
        }
        guard !allowed.isEmpty else {
            throw HTTPRequestError(.notFound, detail: "No route matches \(request.path).")
        }
        let allow = allowed.sorted().joined(separator: ", ")
        throw HTTPRequestError(
            .methodNotAllowed,
            detail: "\(request.path) does not allow \(request.method.rawValue).",
            headers: ["Allow": allow]
        )
    }

    /// The pattern of the most specific route whose path matches the request's (whatever its
    /// method), such as `/v1/sessions/{id}`; nil when none does. Logs and metrics label requests
    /// with it, so that their labels do not grow with every id.
    public func routePattern(for request: Request) -> String? {
        let segments = request.pathSegments
        return routes.withLock { routes in
            routes.first { $0.segments.count == segments.count && Self.matches($0.segments, segments) }?.pattern
        }
    }

    private static func matches(_ pattern: [Segment], _ segments: [String]) -> Bool {
        for (segment, value) in zip(pattern, segments) {
            if case .literal(let literal) = segment, literal != value { return false }
        }
        return true
    }

    /// Answers a request through the matching handler.
    /// - Throws: what the handler throws, or `HTTPRequestError` 404/405.
    public func respond(to request: Request) async throws -> Response {
        var request = request
        switch try handler(for: &request) {
        case .synchronous(let handler): return try handler(request)
        case .asynchronous(let handler): return try await handler(request)
        }
    }
}
