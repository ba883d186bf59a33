/// A response that is ready now, or the asynchronous work that will produce it.
///
/// Handlers that do not `await` and middleware that only look at the request and the response
/// make `.ready` values, so the server answers on the event-loop thread without starting a task;
/// an `async` handler makes `.deferred`, which the server runs in a task. `map` keeps what it is
/// given: it transforms a ready response at once and a deferred one after its work.
///
/// ```swift
/// next(request).map { result in
///     var response = try result.get()
///     response.headers["Server"] = "example"
///     return response
/// }
/// ```
public enum ResponseFuture: Sendable {
    /// The response, or the error that stands in for it, known now.
    case ready(Result<Response, any Error>)
    /// Work that produces the response; the server runs it in a task on its worker threads,
    /// off the event loops.
    case deferred(@Sendable () async -> Result<Response, any Error>)

    /// A deferred response made by `work`, for middleware that must wait before handing a request on.
    ///
    /// ```swift
    /// .async {
    ///     try await limiter.waitForTurn()
    ///     return try await next(request).response
    /// }
    /// ```
    public static func async(_ work: @escaping @Sendable () async throws -> Response) -> ResponseFuture {
        .deferred {
            do {
                return .success(try await work())
            } catch {
                return .failure(error)
            }
        }
    }

    /// This response passed through `transform`: now when it is ready, else once its work is done.
    /// What `transform` throws becomes the response's error.
    public func map(
        _ transform: @escaping @Sendable (Result<Response, any Error>) throws -> Response
    ) -> ResponseFuture {
        switch self {
        case .ready(let result):
            return .ready(Result { try transform(result) })
        case .deferred(let work):
            return .deferred {
                let result = await work()
                return Result { try transform(result) }
            }
        }
    }

    /// The response, once its work (if any) is done.
    /// - Throws: the error that stands in for the response.
    public var response: Response {
        get async throws {
            switch self {
            case .ready(let result): try result.get()
            case .deferred(let work): try await work().get()
            }
        }
    }
}
