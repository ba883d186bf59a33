extension HTTPServer {
    /// The default error responder: problem details (`ProblemDetails.response(for:request:)`).
    @Sendable
    public static func problemResponse(for error: any Error, request: Request?) -> Response {
        ProblemDetails.response(for: error, request: request)
    }
}
