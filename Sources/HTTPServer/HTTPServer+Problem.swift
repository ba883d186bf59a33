import Foundation

extension HTTPServer {
    /// The default error responder: RFC 9457 problem details as `application/problem+json`.
    /// An `HTTPRequestError` keeps its status, detail and headers (such as `Allow`); any other
    /// error is a 500 whose detail reveals nothing of it.
    ///
    /// ```json
    /// {"type":"about:blank","title":"Content Too Large","status":413,"detail":"The body is over 1048576 bytes."}
    /// ```
    @Sendable
    public static func problemResponse(for error: any Error, request: Request?) -> Response {
        let status: HTTPStatus
        let detail: String
        var headers: HTTPHeaders
        if let error = error as? HTTPRequestError {
            status = error.status
            detail = error.detail
            headers = error.headers
        } else {
            status = .internalServerError
            detail = "The server failed to answer this request."
            headers = HTTPHeaders()
        }
        headers["Content-Type"] = "application/problem+json"
        let problem = Problem(type: "about:blank", title: status.reasonPhrase, status: status.code, detail: detail)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(problem)).map { Array($0) } ?? Array(#"{"status":\#(status.code)}"#.utf8)
        return Response(status: status, headers: headers, body: body)
    }

    private struct Problem: Encodable {
        var type: String
        var title: String
        var status: Int
        var detail: String
    }
}
