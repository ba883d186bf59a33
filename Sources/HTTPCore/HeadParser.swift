/// Parses one complete request head (request line and header fields, RFC 9112 §3 and §5)
/// and decides the body's framing (RFC 9112 §6).
package enum HeadParser {
    struct Head {
        var request: Request
        var keepAlive: Bool
        var framing: RequestParser.Framing
        var expectsContinue: Bool
    }

    /// The head in `bytes`, its request in the storage of `spare` when there is one (an earlier
    /// request of the connection, emptied: see `Request.resetForReuse()`).
    static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>, limits: HTTPLimits, reusing spare: inout Request?
    ) throws(HTTPRequestError) -> Head {
        var lines = LineIterator(bytes: bytes)
        guard let requestLine = lines.next() else { throw bad("The request line is missing.") }
        let (method, target, minorVersion) = try parseRequestLine(requestLine)
        var request = Request(method: method, target: target, minorVersion: minorVersion, reusing: &spare)
        let (path, query) = try request.withFieldsAndSegments { headers, segments throws(HTTPRequestError) in
            // One allocation for the fields at most instead of one per doubling: at most a field
            // per line after the request line, and never more than the limit lets through.
            var lineCount = 0
            for byte in bytes where byte == 0x0A { lineCount += 1 }
            headers.reserveCapacity(min(max(0, lineCount - 1), limits.maxHeaderCount))
            while let line = lines.next(), !line.isEmpty {
                if line[line.startIndex] == 0x20 || line[line.startIndex] == 0x09 {
                    throw bad("Obsolete line folding is not accepted (RFC 9112 §5.2).")
                }
                guard headers.count < limits.maxHeaderCount else {
                    throw HTTPRequestError(
                        .headerFieldsTooLarge, detail: "More than \(limits.maxHeaderCount) header fields.")
                }
                let (name, value) = try parseField(line)
                headers.add(name: name, value: value)
            }
            return try TargetParser.parse(target, segmentsInto: &segments)
        }
        request.path = path
        request.query = query
        return try makeHead(consume request)
    }

    /// The values of one field, in order: the first held without an array, since these fields
    /// rarely come twice.
    private struct FieldValues {
        private(set) var first: String?
        private var others: [String] = []

        var isEmpty: Bool { first == nil }
        /// The one value, when there is exactly one.
        var single: String? { others.isEmpty ? first : nil }
        /// Every value (an array: for the rare paths).
        var all: [String] { first.map { [$0] + others } ?? [] }

        mutating func append(_ value: String) {
            if first == nil {
                first = value
            } else {
                others.append(value)
            }
        }

        /// Whether an element of these comma-separated lists is `token`, in any case.
        func containsToken(_ token: String) -> Bool {
            guard let first else { return false }
            return Self.list(first, contains: token) || others.contains { Self.list($0, contains: token) }
        }

        private static func list(_ value: String, contains token: String) -> Bool {
            var start = value.startIndex
            while true {
                let end = value.utf8[start...].firstIndex(of: UInt8(ascii: ",")) ?? value.endIndex
                if value[start..<end].trimmingASCIIWhitespace().equalsIgnoringASCIICase(token) { return true }
                guard end < value.endIndex else { return false }
                start = value.utf8.index(after: end)
            }
        }
    }

    /// The fields that decide framing and connection handling, gathered in one pass without an
    /// allocation for the usual single values.
    private struct ControlFields {
        var hostCount = 0
        var connection = FieldValues()
        var contentLength = FieldValues()
        var transferEncoding = FieldValues()
        var expect: String?

        init(_ headers: HTTPHeaders) {
            for field in headers {
                let name = field.name
                switch name.utf8.count {
                case 4 where name.equalsIgnoringASCIICase("host"): hostCount += 1
                case 6 where name.equalsIgnoringASCIICase("expect"): expect = expect ?? field.value
                case 10 where name.equalsIgnoringASCIICase("connection"): connection.append(field.value)
                case 14 where name.equalsIgnoringASCIICase("content-length"): contentLength.append(field.value)
                case 17 where name.equalsIgnoringASCIICase("transfer-encoding"): transferEncoding.append(field.value)
                default: break
                }
            }
        }

        func connectionHas(_ token: String) -> Bool {
            connection.containsToken(token)
        }
    }

    private static func makeHead(_ request: consuming Request) throws(HTTPRequestError) -> Head {
        let fields = ControlFields(request.headers)
        if fields.hostCount > 1 || (request.minorVersion == 1 && fields.hostCount == 0) {
            throw bad("An HTTP/1.1 request needs exactly one Host field (RFC 9112 §3.2).")
        }
        let keepAlive =
            request.minorVersion == 1 ? !fields.connectionHas("close") : fields.connectionHas("keep-alive")
        let framing = try framing(fields, minorVersion: request.minorVersion)
        let expectsContinue =
            request.minorVersion == 1 && framing != .none
            && (fields.expect.map { $0.trimmingASCIIWhitespace().equalsIgnoringASCIICase("100-continue") } ?? false)
        return Head(request: consume request, keepAlive: keepAlive, framing: framing, expectsContinue: expectsContinue)
    }

    /// RFC 9112 §6.1–6.3. Both `Transfer-Encoding` and `Content-Length` is refused outright: it is
    /// how requests are smuggled past proxies.
    private static func framing(_ fields: ControlFields, minorVersion: Int) throws(HTTPRequestError)
        -> RequestParser.Framing
    {
        if !fields.transferEncoding.isEmpty {
            guard fields.contentLength.isEmpty else {
                throw bad("Both Transfer-Encoding and Content-Length are present.")
            }
            guard minorVersion == 1 else { throw bad("Transfer-Encoding in an HTTP/1.0 request.") }
            let codings = fields.transferEncoding.all.flatMap { $0.split(separator: ",") }.map {
                $0.trimmingASCIIWhitespace()
            }
            guard codings.count == 1, codings[0].equalsIgnoringASCIICase("chunked") else {
                throw HTTPRequestError(.notImplemented, detail: "Only the chunked transfer coding is supported.")
            }
            return .chunked
        }
        guard !fields.contentLength.isEmpty else { return .none }
        // The usual field, one value of up to 18 digits (already trimmed): read without splitting.
        if let single = fields.contentLength.single, !single.isEmpty, single.utf8.count <= 18,
            single.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(single)
        {
            return .length(value)
        }
        var length: Int?
        for item in fields.contentLength.all.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let digits = item.trimmingASCIIWhitespace()
            guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw bad("Content-Length is not a number.")
            }
            // Any length with more than 18 digits is far over every body limit.
            let value = digits.utf8.count > 18 ? Int.max : Int(digits) ?? Int.max
            guard length == nil || length == value else { throw bad("Conflicting Content-Length values.") }
            length = value
        }
        return .length(length ?? 0)
    }

    // MARK: - Lines

    private static func parseRequestLine(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPRequestError)
        -> (HTTPMethod, String, Int)
    {
        guard let firstSpace = line.firstIndex(of: 0x20) else { throw bad("The request line has no target.") }
        let rest = UnsafeBufferPointer(rebasing: line[(firstSpace + 1)...])
        guard let secondSpace = rest.firstIndex(of: 0x20) else { throw bad("The request line has no version.") }
        let methodBytes = UnsafeBufferPointer(rebasing: line[..<firstSpace])
        let targetBytes = UnsafeBufferPointer(rebasing: rest[..<secondSpace])
        let versionBytes = UnsafeBufferPointer(rebasing: rest[(secondSpace + 1)...])
        guard !methodBytes.isEmpty, methodBytes.allSatisfy(isTokenCharacter) else {
            throw bad("The method is not a token.")
        }
        guard !targetBytes.isEmpty, targetBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw bad("The request target is empty or has characters outside visible ASCII.")
        }
        let minorVersion: Int
        if versionBytes.elementsEqual("HTTP/1.1".utf8) {
            minorVersion = 1
        } else if versionBytes.elementsEqual("HTTP/1.0".utf8) {
            minorVersion = 0
        } else if versionBytes.count == 8, versionBytes.starts(with: "HTTP/".utf8), versionBytes[6] == 0x2E {
            throw HTTPRequestError(.versionNotSupported, detail: "Only HTTP/1.0 and HTTP/1.1 are supported.")
        } else {
            throw bad("The request line does not end with an HTTP version.")
        }
        let method = knownMethod(methodBytes) ?? HTTPMethod(rawValue: String(decoding: methodBytes, as: UTF8.self))
        return (method, String(decoding: targetBytes, as: UTF8.self), minorVersion)
    }

    private static func knownMethod(_ bytes: UnsafeBufferPointer<UInt8>) -> HTTPMethod? {
        if bytes.elementsEqual("GET".utf8) { return .get }
        if bytes.elementsEqual("POST".utf8) { return .post }
        return nil
    }

    private static func parseField(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPRequestError) -> (String, String) {
        guard let colon = line.firstIndex(of: 0x3A) else { throw bad("A header line has no colon.") }
        let name = UnsafeBufferPointer(rebasing: line[..<colon])
        guard !name.isEmpty, name.allSatisfy(isTokenCharacter) else {
            throw bad("A header name is empty or not a token (RFC 9112 §5.1 allows no space before the colon).")
        }
        var start = colon + 1
        var end = line.count
        while start < end, line[start] == 0x20 || line[start] == 0x09 { start += 1 }
        while end > start, line[end - 1] == 0x20 || line[end - 1] == 0x09 { end -= 1 }
        let value = UnsafeBufferPointer(rebasing: line[start..<end])
        // field-value: VCHAR, SP, HTAB and obs-text; no other control characters (RFC 9110 §5.5).
        guard value.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
            throw bad("A header value contains a control character.")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    /// tchar (RFC 9110 §5.6.2).
    package static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    static func bad(_ detail: String) -> HTTPRequestError {
        HTTPRequestError(.badRequest, detail: detail)
    }
}

/// Splits a head into lines ending in LF, dropping a CR before it (RFC 9112 §2.2 lets a
/// recipient accept a bare LF).
struct LineIterator {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    mutating func next() -> UnsafeBufferPointer<UInt8>? {
        guard position < bytes.count else { return nil }
        var end = position
        while end < bytes.count, bytes[end] != 0x0A { end += 1 }
        var lineEnd = end
        if lineEnd > position, bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
        let line = UnsafeBufferPointer(rebasing: bytes[position..<lineEnd])
        position = end + 1
        return line
    }
}
