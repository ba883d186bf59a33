/// Decodes a chunked request body incrementally (RFC 9112 §7.1), enforcing the body limit on
/// the decoded size and bounding chunk-size lines and trailers. Trailer fields are read and dropped.
struct ChunkedBodyDecoder {
    private enum Phase {
        case size
        case data(remaining: Int)
        case dataEnd
        case trailer(bytesSeen: Int)
    }

    private var phase = Phase.size
    private(set) var body: [UInt8] = []

    /// The longest chunk-size line accepted, extensions included.
    static let maxSizeLineBytes = 4096

    /// Consumes what it can of `bytes`; returns how many bytes it used and whether the body is complete.
    mutating func decode(_ bytes: UnsafeBufferPointer<UInt8>, limits: HTTPLimits) throws(HTTPRequestError)
        -> (consumed: Int, isDone: Bool)
    {
        var index = 0
        while index < bytes.count {
            switch phase {
            case .size:
                guard let lineEnd = bytes[index...].firstIndex(of: 0x0A) else {
                    if bytes.count - index > Self.maxSizeLineBytes {
                        throw HeadParser.bad("A chunk-size line is too long.")
                    }
                    return (index, false)
                }
                guard lineEnd - index <= Self.maxSizeLineBytes else {
                    throw HeadParser.bad("A chunk-size line is too long.")
                }
                let size = try Self.chunkSize(UnsafeBufferPointer(rebasing: bytes[index..<lineEnd]))
                index = lineEnd + 1
                if size == 0 {
                    phase = .trailer(bytesSeen: 0)
                } else {
                    guard size <= limits.maxBodyBytes - body.count else {
                        throw HTTPRequestError(
                            .contentTooLarge, detail: "The body is over \(limits.maxBodyBytes) bytes.")
                    }
                    body.reserveCapacity(body.count + size)
                    phase = .data(remaining: size)
                }
            case .data(let remaining):
                let count = min(remaining, bytes.count - index)
                body.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<index + count]))
                index += count
                phase = remaining == count ? .dataEnd : .data(remaining: remaining - count)
            case .dataEnd:
                if bytes[index] == 0x0A {
                    index += 1
                } else if bytes[index] == 0x0D {
                    guard index + 1 < bytes.count else { return (index, false) }
                    guard bytes[index + 1] == 0x0A else { throw HeadParser.bad("A chunk does not end with CRLF.") }
                    index += 2
                } else {
                    throw HeadParser.bad("A chunk is longer than its size.")
                }
                phase = .size
            case .trailer(let bytesSeen):
                guard let lineEnd = bytes[index...].firstIndex(of: 0x0A) else {
                    if bytesSeen + bytes.count - index > limits.maxHeadBytes {
                        throw HTTPRequestError(.headerFieldsTooLarge, detail: "The trailer section is too large.")
                    }
                    return (index, false)
                }
                let length = lineEnd - index
                let isEmpty = length == 0 || (length == 1 && bytes[index] == 0x0D)
                index = lineEnd + 1
                if isEmpty { return (index, true) }
                guard bytesSeen + length + 1 <= limits.maxHeadBytes else {
                    throw HTTPRequestError(.headerFieldsTooLarge, detail: "The trailer section is too large.")
                }
                phase = .trailer(bytesSeen: bytesSeen + length + 1)
            }
        }
        return (index, false)
    }

    /// `chunk-size [ chunk-ext ] CRLF`: 1*HEXDIG, then optional `;` extensions, which are ignored.
    private static func chunkSize(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPRequestError) -> Int {
        var size = 0
        var digits = 0
        var index = 0
        while index < line.count, let digit = hexValue(line[index]) {
            guard digits < 15 else { throw HeadParser.bad("A chunk size is too large.") }
            size = size << 4 | digit
            digits += 1
            index += 1
        }
        guard digits > 0 else { throw HeadParser.bad("A chunk size is not hexadecimal.") }
        var rest = UnsafeBufferPointer(rebasing: line[index...])
        if let last = rest.last, last == 0x0D { rest = UnsafeBufferPointer(rebasing: rest.dropLast()) }
        let trimmed = rest.drop { $0 == 0x20 || $0 == 0x09 }
        guard trimmed.isEmpty || trimmed.first == 0x3B else { throw HeadParser.bad("A chunk size is not hexadecimal.") }
        guard trimmed.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
            throw HeadParser.bad("A chunk extension contains a control character.")
        }
        return size
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case 0x30...0x39: Int(byte - 0x30)
        case 0x41...0x46: Int(byte - 0x41 + 10)
        case 0x61...0x66: Int(byte - 0x61 + 10)
        default: nil
        }
    }
}
