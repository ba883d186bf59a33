import NavigationValues

/// An RFC 9457 problem details document, as every error answer carries it
/// (`application/problem+json`, docs/API.md General):
///
/// ```json
/// {"type": "/problems/unprocessable-content", "title": "Invalid request content", "status": 422,
///  "detail": "value 'counter': expected integer",
///  "errors": [{"pointer": "/counter", "detail": "value 'counter': expected integer"}]}
/// ```
///
/// The server writes it with `HTTPServer`'s `ProblemDetails`; clients read it with this type.
/// Every member is optional in RFC 9457, so decoding fills what is missing (`type` `about:blank`,
/// RFC 9457 §4.2.1) and ignores members it does not know.
public struct ProblemDocument: Sendable, Equatable {
    /// One field that was wrong: an RFC 6901 pointer into the request body and what was wrong there.
    public struct FieldError: Sendable, Equatable {
        /// Where in the body (RFC 6901), `/values/counter`.
        public var pointer: String
        /// What was wrong there.
        public var detail: String

        /// A field error.
        public init(pointer: String, detail: String) {
            self.pointer = pointer
            self.detail = detail
        }
    }

    /// A URI reference naming the kind of problem (`/problems/not-found`).
    public var type: String
    /// A short summary of the kind of problem.
    public var title: String
    /// The HTTP status.
    public var status: Int
    /// What was wrong with this request.
    public var detail: String
    /// Each field that was wrong, where there is one to point at.
    public var errors: [FieldError]

    /// A problem with these members.
    public init(type: String, title: String, status: Int, detail: String, errors: [FieldError] = []) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.errors = errors
    }

    /// The document as JSON (`errors` only when there are some, as the server writes it).
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "type": .string(type), "title": .string(title), "status": .integer(Int64(status)),
            "detail": .string(detail),
        ]
        if !errors.isEmpty {
            members["errors"] = .array(
                errors.map { ["pointer": .string($0.pointer), "detail": .string($0.detail)] })
        }
        return .object(members)
    }

    /// Decodes a problem document; `status` is the answer's HTTP status, used when the document
    /// has none.
    ///
    /// - Throws: `WireDecodingError` when the document is not an object or a member has the wrong type.
    public init(json: JSONValue, status: Int) throws(WireDecodingError) {
        let fields = try JSONObjectReader(json)
        func text(_ name: String, default value: String) throws(WireDecodingError) -> String {
            fields.members[name] == nil ? value : try fields.string(name)
        }
        var errors: [FieldError] = []
        if fields.members["errors"] != nil {
            errors = try fields.list("errors") { item, pointer throws(WireDecodingError) in
                let error = try JSONObjectReader(item, at: pointer)
                return FieldError(pointer: try error.string("pointer"), detail: try error.string("detail"))
            }
        }
        var answered = status
        if fields.members["status"] != nil { answered = Int(clamping: try fields.integer("status")) }
        self.init(
            type: try text("type", default: "about:blank"), title: try text("title", default: ""), status: answered,
            detail: try text("detail", default: ""), errors: errors)
    }
}
