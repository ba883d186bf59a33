/// Splits a request-target into a percent-decoded path, its decoded segments and the decoded
/// query (RFC 9112 §3.2, RFC 3986 §2.1).
enum TargetParser {
    static func parse(_ target: String) throws(HTTPRequestError) -> (
        path: String, segments: [String], query: Parameters
    ) {
        var segments: [String] = []
        let (path, query) = try parse(target, segmentsInto: &segments)
        return (path, segments, query)
    }

    /// The same, with the segments appended to `segments` (empty: a reused array keeps its room).
    static func parse(_ target: String, segmentsInto segments: inout [String]) throws(HTTPRequestError) -> (
        path: String, query: Parameters
    ) {
        if target == "*" { return ("*", Parameters()) }
        var rest = Substring(target)
        if rest.utf8.first != UInt8(ascii: "/") {
            // absolute-form (RFC 9112 §3.2.2): keep what follows the authority.
            let lowered = rest.prefix(8).lowercased()
            guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"),
                let colon = rest.firstIndex(of: ":")
            else {
                throw HeadParser.bad("The request target is not a path.")
            }
            let afterAuthority = rest[colon...].dropFirst(3)
            rest = afterAuthority.firstIndex(where: { $0 == "/" || $0 == "?" }).map { afterAuthority[$0...] } ?? "/"
            if rest.hasPrefix("?") { rest = "/" + rest }
        }
        // From here on the work is on bytes: `/`, `?`, `&` and `=` are ASCII, so every index
        // found is a character boundary, and no grapheme breaking is needed.
        let bytes = rest.utf8
        let mark = bytes.firstIndex(of: UInt8(ascii: "?"))
        let rawPath = rest[..<(mark ?? rest.endIndex)]
        var query = Parameters()
        if let mark {
            var pairStart = bytes.index(after: mark)
            var cursor = pairStart
            while true {
                let atEnd = cursor == bytes.endIndex
                if atEnd || bytes[cursor] == UInt8(ascii: "&") {
                    if pairStart != cursor { try appendPair(rest[pairStart..<cursor], to: &query) }
                    if atEnd { break }
                    pairStart = bytes.index(after: cursor)
                }
                cursor = bytes.index(after: cursor)
            }
        }
        // The segments after the leading `/`, split before decoding so that `%2F` stays inside one.
        let pathBytes = rawPath.utf8
        // One allocation for the array at most, not one per doubling: a segment after each `/`.
        var slashes = 0
        for byte in pathBytes where byte == UInt8(ascii: "/") { slashes += 1 }
        segments.reserveCapacity(slashes)
        var segmentStart = pathBytes.isEmpty ? pathBytes.endIndex : pathBytes.index(after: pathBytes.startIndex)
        var cursor = segmentStart
        while cursor != pathBytes.endIndex {
            if pathBytes[cursor] == UInt8(ascii: "/") {
                segments.append(try decode(rawPath[segmentStart..<cursor], plusAsSpace: false))
                segmentStart = pathBytes.index(after: cursor)
            }
            cursor = pathBytes.index(after: cursor)
        }
        if !pathBytes.isEmpty { segments.append(try decode(rawPath[segmentStart...], plusAsSpace: false)) }
        // A plain path with no query and nothing to decode is the target itself: shared, not copied.
        if mark == nil, target.utf8.first == UInt8(ascii: "/"), !pathBytes.contains(UInt8(ascii: "%")) {
            return (target, query)
        }
        return (try decode(rawPath, plusAsSpace: false), query)
    }

    /// Appends `name=value` (or a bare `name`, with an empty value), decoded.
    private static func appendPair(_ pair: Substring, to query: inout Parameters) throws(HTTPRequestError) {
        if let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")) {
            query.append(
                name: try decode(pair[..<equals], plusAsSpace: true),
                value: try decode(pair[pair.utf8.index(after: equals)...], plusAsSpace: true)
            )
        } else {
            query.append(name: try decode(pair, plusAsSpace: true), value: "")
        }
    }

    /// Decodes `%XX` escapes (and `+` in queries, as form encoding does); refuses malformed escapes,
    /// `%00` and bytes that are not UTF-8.
    static func decode(_ text: Substring, plusAsSpace: Bool) throws(HTTPRequestError) -> String {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == 0x25 || (plusAsSpace && $0 == 0x2B) }) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == 0x25 {
                let first = utf8.index(after: index)
                guard first != utf8.endIndex, utf8.index(after: first) != utf8.endIndex,
                    let high = hexValue(utf8[first]), let low = hexValue(utf8[utf8.index(after: first)])
                else {
                    throw HeadParser.bad("Malformed percent-encoding in the request target.")
                }
                let decoded = high << 4 | low
                guard decoded != 0 else { throw HeadParser.bad("The request target encodes a NUL byte.") }
                bytes.append(decoded)
                index = utf8.index(index, offsetBy: 3)
            } else {
                bytes.append(plusAsSpace && byte == 0x2B ? 0x20 : byte)
                index = utf8.index(after: index)
            }
        }
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw HeadParser.bad("The request target does not decode to UTF-8.")
        }
        return string
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
