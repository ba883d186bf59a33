/// What a server answers requests with: the routes and middleware of a `Router`, fixed by
/// `Router.buildResponder()`.
///
/// Each request is looked up once. The lookup fills in `request.route` and `request.parameters`,
/// then the middleware run in order and the last hands the request to the route's handler, or
/// answers 404 or 405 when no route does. The whole chain runs synchronously on the event-loop
/// thread unless the handler (or a middleware) awaits; only then does the server start a task,
/// which runs on the server's worker threads, off the event loops.
/// For an `Expect: 100-continue` request, the server looks the head up before the body is sent
/// and refuses a 404 or 405 at once, through the same middleware; otherwise the lookup's result
/// answers the request once its body has arrived.
///
/// A class: the server reads it for every request, and a struct of routes, middleware and chain
/// was copied (each of its references retained and released) on each of those reads.
public final class RouterResponder: Sendable {
    let routes: RouteTree.Lookup
    let middleware: [any Middleware]
    /// The middleware chain composed once: each `Next` is built here, not per request (a request
    /// carries its own target), so that running the chain allocates no closure contexts.
    private let chain: @Sendable (Request) -> ResponseFuture

    init(routes: RouteTree, middleware: [any Middleware]) {
        self.routes = routes.lookup()
        self.middleware = middleware
        var next: @Sendable (Request) -> ResponseFuture = { request in
            switch request.routeTarget {
            case .handler(let handler)?: return handler.respond(to: request)
            case .refusal(let error)?: return .ready(.failure(error))
            case nil: return .ready(.failure(HTTPRequestError(.notFound, detail: "No route matches \(request.path).")))
            }
        }
        for item in middleware.reversed() {
            let inner = next
            next = { request in item.respond(to: request, next: inner) }
        }
        chain = next
    }

    /// Answers `request` through the middleware and the matching handler, as the server would.
    /// - Throws: what the chain ends with: the handler's error, or `HTTPRequestError` 404/405.
    public func respond(to request: Request) async throws -> Response {
        var request = request
        return try await respond(to: &request, routedBy: route(request)).response
    }

    /// Looks `request` up in the routes: its handler, or why it has none.
    package func route(_ request: Request) -> RouteMatch {
        switch routes.match(request.pathSegments, method: request.method) {
        case .found(let endpoint, let handler):
            var parameters = Parameters()
            for (index, name) in endpoint.parameters where index < request.pathSegments.count {
                parameters.append(name: name, value: request.pathSegments[index])
            }
            return RouteMatch(target: .handler(handler), pattern: endpoint.pattern, parameters: parameters)
        case .methodNotAllowed(let pattern, let allowed):
            let error = HTTPRequestError(
                .methodNotAllowed,
                detail: "\(request.path) does not allow \(request.method.rawValue).",
                headers: ["Allow": allowed.sorted().joined(separator: ", ")]
            )
            return RouteMatch(target: .refusal(error), pattern: pattern, parameters: Parameters())
        case .notFound:
            let error = HTTPRequestError(.notFound, detail: "No route matches \(request.path).")
            return RouteMatch(target: .refusal(error), pattern: nil, parameters: Parameters())
        }
    }

    /// Applies `match` to `request` (its route, parameters and target) and runs it through the
    /// middleware; the caller keeps the request, routed, for its error response (the server holds
    /// each request in one place rather than handing copies along).
    package func respond(to request: inout Request, routedBy match: consuming RouteMatch) -> ResponseFuture {
        match.apply(to: &request)
        request.routeTarget = match.target
        return chain(request)
    }
}

/// The result of looking a request up: what answers it, and what middleware learn about it.
package struct RouteMatch: Sendable {
    package enum Target: Sendable {
        case handler(RouteHandler)
        /// No route answers: 404, or 405 with `Allow`.
        case refusal(HTTPRequestError)
    }

    package var target: Target
    /// The matched route's pattern; for a 405 that of the most specific route matching the path.
    package var pattern: String?
    package var parameters: Parameters

    /// Whether no route answers the request.
    package var isRefusal: Bool {
        if case .refusal = target { return true }
        return false
    }

    /// Fills in `request.route` and the path parameters.
    package func apply(to request: inout Request) {
        request.route = pattern
        if request.parameters.isEmpty {
            request.parameters = parameters  // shared, not copied pair by pair into a new array
        } else {
            for (name, value) in parameters { request.parameters.append(name: name, value: value) }
        }
    }
}
