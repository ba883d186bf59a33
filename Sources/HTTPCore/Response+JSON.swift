import Foundation

extension Response {
    /// Creates a response whose body is `value` encoded as JSON, with
    /// `Content-Type: application/json; charset=utf-8`.
    ///
    /// ```swift
    /// router.get("/healthz") { _ in try Response(json: ["status": "ok"]) }
    /// ```
    /// - Throws: `EncodingError` when the value cannot be encoded.
    public init(
        status: HTTPStatus = .ok,
        headers: HTTPHeaders = [:],
        json value: some Encodable,
        encoder: JSONEncoder = JSONEncoder()
    ) throws {
        var headers = headers
        if headers["content-type"] == nil { headers["Content-Type"] = "application/json; charset=utf-8" }
        self.init(status: status, headers: headers, body: Array(try encoder.encode(value)))
    }
}
