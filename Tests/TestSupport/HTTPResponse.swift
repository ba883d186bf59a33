import NavigationValues

/// An HTTP response as read off the wire: status, header fields in order, body bytes.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The header fields in the order they came, names as sent.
    public var headers: [(name: String, value: String)]
    /// The body, de-chunked.
    public var body: [UInt8]

    /// A response with these parts.
    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first field named `name` (case-insensitive, RFC 9110 §5.1).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as JSON, or nil when it is not JSON.
    public var json: JSONValue? { try? JSONValue(parsing: body) }
}
