import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Parses one SSE response as bytes arrive: the head (status 200 and chunked transfer coding
/// expected), then the chunked body, keeping only each event's `id:` and when its line arrived.
/// Other lines are skipped without being stored.
struct EventStreamParser {
    private enum Phase {
        case head
        case chunkSize
        case chunkData(remaining: Int)
        case chunkEnd(remaining: Int)
        case ended
    }

    private var phase = Phase.head
    private var head: [UInt8] = []
    private var sizeLine: [UInt8] = []
    /// The start of an SSE line that spans reads (enough to see `id: <seq>`).
    private var line: [UInt8] = []

    /// Whether the whole response head has arrived (with status 200).
    private(set) var hasHead = false
    /// Whether the body ended (last chunk) or the response was refused.
    var hasEnded: Bool {
        if case .ended = phase { return true }
        return false
    }
    /// The first thing that was wrong with the response, if any.
    private(set) var failure: String?
    /// Event ids in arrival order, and when each one's line was read.
    private(set) var ids: [Int64] = []
    private(set) var arrivals: [UInt64] = []

    init(expectedEvents: Int) {
        ids.reserveCapacity(expectedEvents)
        arrivals.reserveCapacity(expectedEvents)
        line.reserveCapacity(32)
    }

    /// Feeds bytes read at `time` (monotonic nanoseconds).
    mutating func consume(_ bytes: UnsafeRawBufferPointer, at time: UInt64) {
        var index = 0
        while index < bytes.count {
            switch phase {
            case .head:
                head.append(bytes[index])
                index += 1
                if head.count >= 4, head[head.count - 4] == 13, head[head.count - 3] == 10, head[head.count - 2] == 13,
                    head[head.count - 1] == 10
                {
                    finishHead()
                }
            case .chunkSize:
                let byte = bytes[index]
                index += 1
                if byte == 10 {
                    finishSizeLine()
                } else if byte != 13, sizeLine.count < 32 {
                    sizeLine.append(byte)
                }
            case .chunkData(let remaining):
                let end = min(bytes.count, index + remaining)
                text(UnsafeRawBufferPointer(rebasing: bytes[index..<end]), at: time)
                let left = remaining - (end - index)
                index = end
                phase = left == 0 ? .chunkEnd(remaining: 2) : .chunkData(remaining: left)
            case .chunkEnd(let remaining):
                index += 1
                phase = remaining == 1 ? .chunkSize : .chunkEnd(remaining: remaining - 1)
            case .ended:
                return
            }
        }
    }

    private mutating func finishHead() {
        let text = String(decoding: head, as: UTF8.self)
        head = []
        let lines = text.split(separator: "\r\n")
        let status = lines.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) }
        guard status == 200 else {
            fail("status line \(lines.first.map(String.init) ?? "(none)")")
            return
        }
        let isChunked = lines.contains {
            let field = $0.lowercased()
            return field.hasPrefix("transfer-encoding:") && field.contains("chunked")
        }
        guard isChunked else {
            fail("the event stream is not chunked")
            return
        }
        hasHead = true
        phase = .chunkSize
    }

    private mutating func finishSizeLine() {
        let text = String(decoding: sizeLine, as: UTF8.self)
        sizeLine.removeAll(keepingCapacity: true)
        guard let field = text.split(separator: ";").first, let size = Int(field, radix: 16), size >= 0 else {
            fail("bad chunk size line \(text)")
            return
        }
        phase = size == 0 ? .ended : .chunkData(remaining: size)
    }

    /// A piece of the de-chunked event stream: split into lines with memchr, keeping at most the
    /// first 32 bytes of a line that spans reads.
    private mutating func text(_ bytes: UnsafeRawBufferPointer, at time: UInt64) {
        guard let base = bytes.baseAddress else { return }
        var start = 0
        while start < bytes.count {
            guard let found = memchr(base + start, 10, bytes.count - start) else {
                keep(UnsafeRawBufferPointer(rebasing: bytes[start...]))
                return
            }
            let newline = base.distance(to: UnsafeRawPointer(found))
            if line.isEmpty {
                endLine(UnsafeRawBufferPointer(rebasing: bytes[start..<newline]), at: time)
            } else {
                keep(UnsafeRawBufferPointer(rebasing: bytes[start..<newline]))
                let whole = line
                whole.withUnsafeBytes { endLine($0, at: time) }
                line.removeAll(keepingCapacity: true)
            }
            start = newline + 1
        }
    }

    /// Keeps the start of a line whose end has not arrived yet.
    private mutating func keep(_ bytes: UnsafeRawBufferPointer) {
        let room = max(0, 32 - line.count)
        line.append(contentsOf: bytes.prefix(room))
        if bytes.count > room, line.count == 32 { line.append(0) }  // too long for an id line: the 0 byte spoils it
    }

    /// One whole line (without its newline): records `id: <seq>` lines.
    private mutating func endLine(_ line: UnsafeRawBufferPointer, at time: UInt64) {
        // "id: " then decimal digits (HTML Living Standard 9.2.6: the field name, a colon, one space).
        guard line.count > 4, line[0] == 105, line[1] == 100, line[2] == 58, line[3] == 32 else { return }
        var value: Int64 = 0
        for digit in line[4...] {
            guard digit >= 48, digit <= 57, value < Int64.max / 10 - 9 else {
                fail("bad id line \(String(decoding: line, as: UTF8.self))")
                return
            }
            value = value * 10 + Int64(digit - 48)
        }
        ids.append(value)
        arrivals.append(time)
    }

    private mutating func fail(_ reason: String) {
        if failure == nil { failure = reason }
        phase = .ended
    }
}
