/// Code that runs around every request's handler: request ids, logging, metrics, error mapping.
///
/// Middleware see each request once it has been routed, with `request.route` and
/// `request.parameters` filled in, and also requests no route answers (the rest of the chain then
/// answers 404 or 405). They run in the order they were added to the `Router`, the first added
/// outermost, whatever the order of `add(middleware:)` among the routes.
///
/// `respond(to:next:)` is called on the connection's event-loop thread and must not block it.
/// Hand the request on with `next` and change what comes back with `ResponseFuture.map`: the
/// chain then stays synchronous for synchronous handlers (no task is started) and waits for
/// asynchronous ones. A middleware that must itself wait before calling `next` returns
/// `.async { … }`, which makes every request through it asynchronous. Hand on the request you
/// were given (changed as you like): it carries what the lookup found, which a `Request` built
/// anew does not (the chain would then answer 404).
///
/// ```swift
/// struct ServerHeader: Middleware {
///     func respond(to request: Request, next: Next) -> ResponseFuture {
///         next(request).map { result in
///             var response = try result.get()
///             response.headers["Server"] = "example"
///             return response
///         }
///     }
/// }
/// router.add(middleware: ServerHeader())
/// ```
public protocol Middleware: Sendable {
    /// The rest of the chain: the next middleware, and after the last one the route's handler
    /// (or the 404 or 405 when no route answers).
    typealias Next = @Sendable (Request) -> ResponseFuture

    /// Answers `request`, usually by handing it on with `next` and adjusting what comes back.
    func respond(to request: Request, next: Next) -> ResponseFuture
}
