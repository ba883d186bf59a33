/// Collects routes and middleware while a server is being set up; `buildResponder()` turns them
/// into the immutable `RouterResponder` the server answers with (Hummingbird's `Router` and
/// `RouterResponder`).
///
/// `{name}` in a pattern matches one path segment and is available, percent-decoded, as
/// `request.parameters["name"]`. A literal segment wins over a parameter. An unknown path is 404;
/// a known path with another method is 405 with `Allow`.
///
/// ```swift
/// let router = Router()
/// router.add(middleware: ServerHeader())     // see `Middleware`
/// router.get("/healthz") { _ in Response(body: Array(#"{"status":"ok"}"#.utf8)) }
/// router.post("/v1/sessions/{id}/push") { request in try await push(request.parameters["id"], request.body) }
/// let server = HTTPServer(configuration: configuration, responder: router.buildResponder())
/// ```
///
/// Handlers that do not `await` run synchronously on the connection's event-loop thread: keep
/// them for constant or trivial answers (`/healthz`), since they delay every connection of that
/// loop. Async handlers run in tasks on the server's worker threads, never on an event loop, and only
/// their responses go back to the loop to be written.
public final class Router {
    private var routes = RouteTree()
    private var middleware: [any Middleware] = []

    /// Creates a router with no routes and no middleware.
    public init() {}

    /// Adds `middleware` after (inside) those added before; it runs for every request.
    public func add(middleware: some Middleware) {
        self.middleware.append(middleware)
    }

    /// The routes and middleware as they are now, fixed; later registrations do not change it.
    public func buildResponder() -> RouterResponder {
        RouterResponder(routes: routes, middleware: middleware)
    }

    // MARK: - Registering

    /// Registers a handler for a method and path pattern, replacing an earlier one for the same pair.
    public func on(
        _ method: HTTPMethod, _ path: String, use handler: @escaping @Sendable (Request) async throws -> Response
    ) {
        routes.add(method, path, .asynchronous(handler))
    }

    /// Registers a synchronous handler, which the server calls without starting a task.
    public func on(_ method: HTTPMethod, _ path: String, use handler: @escaping @Sendable (Request) throws -> Response)
    {
        routes.add(method, path, .synchronous(handler))
    }

    /// Registers a handler that decides per request whether to answer at once or later: it
    /// returns `.ready` for an answer it has now (sent from the event-loop thread, as a
    /// synchronous handler's is, so it must not block) or `.async { … }` for work to run in a
    /// task on the worker threads. For a read served from memory when it can be, and from an
    /// actor or a database otherwise.
    ///
    /// ```swift
    /// router.on(.get, "/items/{id}", future: { request in
    ///     if let cached = cache[request.parameters["id"] ?? ""] { return .ready(.success(cached)) }
    ///     return .async { try await load(request) }
    /// })
    /// ```
    public func on(
        _ method: HTTPMethod, _ path: String, future handler: @escaping @Sendable (Request) -> ResponseFuture
    ) {
        routes.add(method, path, .either(handler))
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
}

/// A router is set up on one thread, then built into a (Sendable) `RouterResponder`.
@available(*, unavailable)
extension Router: Sendable {}
