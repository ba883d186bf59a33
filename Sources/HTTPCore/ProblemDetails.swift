/// An RFC 9457 problem details document: the one shape every error answer of the server takes,
/// whoever builds it (the server for its own `HTTPRequestError`s, an application's error mapping
/// for the rest).
///
/// ```swift
/// ProblemDetails(type: "/problems/not-found", title: "Not found", status: .notFound, detail: "no session s_1")
///     .response    // 404, application/problem+json
/// ```
public struct ProblemDetails: Sendable, Equatable {
    /// One field of the request a problem points at (RFC 9457 §3.2's `errors` extension member).
    public struct FieldError: Sendable, Equatable {
        /// An RFC 6901 JSON pointer into the request body.
        public var pointer: String
        public var detail: String

        public init(pointer: String, detail: String) {
            self.pointer = pointer
            self.detail = detail
        }
    }

    /// The value of an extension member (RFC 9457 §3.2).
    public enum Member: Sendable, Equatable {
        case string(String)
        case integer(Int64)
    }

    /// A URI reference naming the kind of problem (`about:blank` when the status says it all).
    public var type: String
    public var title: String
    public var status: HTTPStatus
    /// What went wrong with this request, for the client.
    public var detail: String
    /// The fields at fault; omitted from the document when empty.
    public var errors: [FieldError]
    /// Headers the answer carries besides `Content-Type` (`Allow`, `Retry-After`, …).
    public var headers: HTTPHeaders
    /// Extension members beside the standard ones (RFC 9457 §3.2), such as the name of the limit a
    /// request passed; a name of a standard member is ignored.
    public var members: [String: Member]

    public init(
        type: String = "about:blank", title: String, status: HTTPStatus, detail: String, errors: [FieldError] = [],
        headers: HTTPHeaders = [:], members: [String: Member] = [:]
    ) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.errors = errors
        self.headers = headers
        self.members = members
    }

    /// The document as compact JSON, members sorted by name.
    public var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + detail.utf8.count)
        out.append(contentsOf: #"{"detail":"#.utf8)
        Self.writeString(detail, to: &out)
        if !errors.isEmpty {
            out.append(contentsOf: #","errors":["#.utf8)
            for (position, error) in errors.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: #"{"detail":"#.utf8)
                Self.writeString(error.detail, to: &out)
                out.append(contentsOf: #","pointer":"#.utf8)
                Self.writeString(error.pointer, to: &out)
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
        }
        // Members sort between "errors" and "status" only when their names do; keep the order.
        let standard: Set<String> = ["detail", "errors", "status", "title", "type"]
        let extra = members.filter { !standard.contains($0.key) }.sorted { $0.key < $1.key }
        func writeMembers(_ range: (String) -> Bool) {
            for (name, value) in extra where range(name) {
                out.append(UInt8(ascii: ","))
                Self.writeString(name, to: &out)
                out.append(UInt8(ascii: ":"))
                switch value {
                case .string(let text): Self.writeString(text, to: &out)
                case .integer(let number): out.append(contentsOf: String(number).utf8)
                }
            }
        }
        writeMembers { $0 < "status" }
        out.append(contentsOf: #","status":\#(status.code)"#.utf8)
        writeMembers { $0 > "status" && $0 < "title" }
        out.append(contentsOf: #","title":"#.utf8)
        Self.writeString(title, to: &out)
        writeMembers { $0 > "title" && $0 < "type" }
        out.append(contentsOf: #","type":"#.utf8)
        Self.writeString(type, to: &out)
        writeMembers { $0 > "type" }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The answer: the status, the headers and the document as `application/problem+json`.
    public var response: Response {
        var headers = headers
        headers["Content-Type"] = "application/problem+json"
        return Response(status: status, headers: headers, body: json)
    }

    /// A JSON string literal with the escapes RFC 8259 §7 requires.
    private static func writeString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case 0x0A: out.append(contentsOf: #"\n"#.utf8)
            case 0x0D: out.append(contentsOf: #"\r"#.utf8)
            case 0x09: out.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// Turns an error into a response: what a server answers when a handler throws, or when it finds
/// an error in a request itself (`HTTPRequestError`). The request is nil when the error is in the
/// request's framing (it could not be parsed).
public typealias HTTPErrorResponder = @Sendable (_ error: any Error, _ request: Request?) -> Response

extension ProblemDetails {
    /// The default error responder: problem details. An `HTTPRequestError` keeps its status,
    /// detail and headers (such as `Allow`); any other error is a 500 whose detail reveals nothing
    /// of it.
    ///
    /// ```json
    /// {"detail":"The body is over 1048576 bytes.","status":413,"title":"Content Too Large","type":"about:blank"}
    /// ```
    @Sendable
    public static func response(for error: any Error, request: Request?) -> Response {
        guard let error = error as? HTTPRequestError else {
            return ProblemDetails(
                title: HTTPStatus.internalServerError.reasonPhrase, status: .internalServerError,
                detail: "The server failed to answer this request."
            ).response
        }
        return ProblemDetails(
            title: error.status.reasonPhrase, status: error.status, detail: error.detail, headers: error.headers
        ).response
    }
}
