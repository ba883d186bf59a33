#if canImport(Glibc)
    import Glibc
#endif

/// Encodes response heads (RFC 9112 §4, §6) and chunk framing straight into a connection's
/// outbound buffer.
enum ResponseEncoder {
    enum Framing {
        case length(Int)
        case chunked
        /// The body ends when the connection closes (a stream to an HTTP/1.0 client).
        case untilClose
        /// No body and no length (1xx, 204, 304).
        case none
    }

    /// Appends a head to `out`.
    static func appendHead(
        status: HTTPStatus,
        headers: HTTPHeaders,
        framing: Framing,
        keepAlive: Bool,
        minorVersion: Int,
        date: [UInt8],
        to out: inout [UInt8]
    ) {
        append("HTTP/1.1 ", to: &out)
        appendDecimal(status.code, to: &out)
        out.append(0x20)
        appendSafe(status.reasonPhrase, to: &out)
        append("\r\n", to: &out)
        for field in headers where !isManaged(field.name) && isSafeName(field.name) {
            appendBytes(of: field.name, to: &out)
            append(": ", to: &out)
            appendSafe(field.value, to: &out)
            append("\r\n", to: &out)
        }
        switch framing {
        case .length(let length):
            append("Content-Length: ", to: &out)
            appendDecimal(length, to: &out)
            append("\r\n", to: &out)
        case .chunked:
            append("Transfer-Encoding: chunked\r\n", to: &out)
        case .untilClose, .none:
            break
        }
        append("Date: ", to: &out)
        out.append(contentsOf: date)
        append("\r\n", to: &out)
        if !keepAlive {
            append("Connection: close\r\n", to: &out)
        } else if minorVersion == 0 {
            append("Connection: keep-alive\r\n", to: &out)
        }
        append("\r\n", to: &out)
    }

    /// Appends a literal's bytes in one copy (a string's `utf8` view is appended byte by byte).
    @inline(__always)
    private static func append(_ literal: StaticString, to out: inout [UInt8]) {
        literal.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// Appends a string's UTF-8 bytes, in one copy when they are contiguous (a native string's are).
    private static func appendBytes(of text: String, to out: inout [UInt8]) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { out.append(contentsOf: $0) }
        if copied == nil { out.append(contentsOf: text.utf8) }
    }

    /// About how many bytes `appendHead` writes for `headers`: at least that many, unless a
    /// reason phrase is very long, so that the buffer grows once.
    static func estimatedHeadSize(_ headers: HTTPHeaders) -> Int {
        // Status line, Content-Length or Transfer-Encoding, Date, Connection and the empty line.
        var size = 160
        for field in headers { size += field.name.utf8.count + field.value.utf8.count + 4 }
        return size
    }

    /// Chunks larger than this are queued without being copied into the outbound buffer.
    static let chunkCopyLimit = 4 * 1024

    /// Appends a chunk's size line: size in hex, CRLF.
    static func appendChunkHead(_ size: Int, to out: inout [UInt8]) {
        var digits = 0
        var rest = size
        repeat {
            digits += 1
            rest >>= 4
        } while rest > 0
        for index in stride(from: digits - 1, through: 0, by: -1) {
            let nibble = UInt8((size >> (index * 4)) & 0xF)
            out.append(nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10)
        }
        out.append(contentsOf: "\r\n".utf8)
    }

    /// Appends a whole chunk: size line, data, CRLF.
    static func appendChunk(_ bytes: [UInt8], to out: inout [UInt8]) {
        appendChunkHead(bytes.count, to: &out)
        out.append(contentsOf: bytes)
        out.append(contentsOf: "\r\n".utf8)
    }

    static let crlf: [UInt8] = Array("\r\n".utf8)
    static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)
    static let continueHead: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Fields the server writes itself.
    private static func isManaged(_ name: String) -> Bool {
        switch name.utf8.count {
        case 4: name.equalsIgnoringASCIICase("date")
        case 10: name.equalsIgnoringASCIICase("connection")
        case 14: name.equalsIgnoringASCIICase("content-length")
        case 17: name.equalsIgnoringASCIICase("transfer-encoding")
        default: false
        }
    }

    private static func isSafeName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(HeadParser.isTokenCharacter)
    }

    /// Appends a value with CR, LF and other controls replaced by spaces, so that no handler can
    /// split a response (RFC 9110 §5.5).
    private static func appendSafe(_ value: String, to out: inout [UInt8]) {
        // Usually every byte is fine: then one copy.
        let copied = value.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard bytes.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if copied == true { return }
        for byte in value.utf8 {
            out.append(byte < 0x20 && byte != 0x09 || byte == 0x7F ? 0x20 : byte)
        }
    }

    /// Appends `value` in decimal, digit by digit, without making a string of it.
    private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        guard value >= 0 else {
            out.append(contentsOf: String(value).utf8)
            return
        }
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        while divisor > 0 {
            out.append(0x30 + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }
}

/// The `Date` field (RFC 9110 §5.6.7, IMF-fixdate), formatted once per second per loop.
struct DateCache {
    private var second: time_t = -1
    private var formatted: [UInt8] = []

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    mutating func current() -> [UInt8] {
        let now = time(nil)
        if now != second {
            second = now
            formatted = Array(Self.format(now).utf8)
        }
        return formatted
    }

    static func format(_ seconds: time_t) -> String {
        var seconds = seconds
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let day = days[Int(parts.tm_wday) % 7]
        let month = months[Int(parts.tm_mon) % 12]
        return "\(day), \(two(parts.tm_mday)) \(month) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
