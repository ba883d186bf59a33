import Foundation
import NavigationValues

#if canImport(Glibc)
    import Glibc
#endif

/// The benchmarks' HTTP/1.1 client: one blocking keep-alive connection to 127.0.0.1, one request
/// at a time, each answer read with a 10 s timeout (`Content-Length` or chunked bodies). Kept
/// small, so the client's own cost stays out of what the benchmarks measure. Used from one thread.
///
/// ```swift
/// let connection = try HTTPConnection(port: server.port)
/// let reply = try connection.send("POST", "/v1/sessions", json: #"{"root":{"name":"Home"}}"#)
/// ```
public final class HTTPConnection {
    /// An answer: its status, its body, and when it had been read.
    public struct Reply {
        /// The status code.
        public var status: Int
        /// The body, de-chunked.
        public var body: [UInt8]
        /// When the whole answer had been read (``ProcessFigures/now()``).
        public var readAt: UInt64

        /// The body parsed as JSON, or nil.
        public var json: JSONValue? { try? JSONValue(parsing: body) }
        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    private let fd: Int32
    private let host: String
    /// Bytes read but not used yet start at `readIndex`; what is before it is dropped lazily.
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var chunk = [UInt8](repeating: 0, count: 65_536)

    /// Connects to 127.0.0.1:`port` (Nagle off).
    public init(port: Int) throws {
        host = "127.0.0.1:\(port)"
        fd = try RawSocket.connect(port: port)
        RawSocket.setReceiveTimeout(fd, seconds: 10)
        buffer.reserveCapacity(65_536)
    }

    deinit { close(fd) }

    /// Sends one request (`body` labelled JSON, `headers` added as given) and reads its whole answer.
    public func send(
        _ method: String, _ path: String, token: String? = nil, headers: [String: String] = [:], body: [UInt8]? = nil
    ) throws -> Reply {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        try RawSocket.sendAll(fd, Array((head + "\r\n").utf8) + (body ?? []))
        return try readReply(for: "\(method) \(path)")
    }

    /// Sends one request with `json` as its body and reads its whole answer.
    public func send(_ method: String, _ path: String, token: String? = nil, json: String) throws -> Reply {
        try send(method, path, token: token, body: Array(json.utf8))
    }

    // MARK: - Reading

    private func readReply(for request: String) throws -> Reply {
        // Answers are read one at a time, so what is left of the last one can go.
        if readIndex > 0 {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        let headEnd = try find([13, 10, 13, 10], request)
        let head = String(decoding: buffer[readIndex..<headEnd], as: UTF8.self)
        readIndex = headEnd + 4
        let lines = head.split(separator: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw BenchError("\(request): bad status line \(lines.first.map(String.init) ?? "")")
        }
        var length = 0
        var isChunked = false
        for line in lines.dropFirst() {
            let field = line.lowercased()
            if field.hasPrefix("content-length:") {
                length = Int(field.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0
            }
            if field.hasPrefix("transfer-encoding:"), field.contains("chunked") { isChunked = true }
        }
        let body = isChunked ? try readChunkedBody(request) : try take(length, request)
        return Reply(status: status, body: body, readAt: ProcessFigures.now())
    }

    private func readChunkedBody(_ request: String) throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let lineEnd = try find([13, 10], request)
            let sizeText =
                String(decoding: buffer[readIndex..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            readIndex = lineEnd + 2
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw BenchError("\(request): bad chunk size \(sizeText)")
            }
            body += try take(size, request)
            _ = try take(2, request)
            if size == 0 { return body }
        }
    }

    /// The index where `pattern` starts, at or after `readIndex`, reading until it arrives.
    private func find(_ pattern: [UInt8], _ request: String) throws -> Int {
        var from = readIndex
        while true {
            if buffer.count - from >= pattern.count {
                for index in from...(buffer.count - pattern.count)
                where buffer[index] == pattern[0] && buffer[index..<(index + pattern.count)].elementsEqual(pattern) {
                    return index
                }
                from = buffer.count - pattern.count + 1
            }
            try receive(request)
        }
    }

    /// The next `count` bytes, reading until they arrive.
    private func take(_ count: Int, _ request: String) throws -> [UInt8] {
        while buffer.count - readIndex < count { try receive(request) }
        defer { readIndex += count }
        return Array(buffer[readIndex..<(readIndex + count)])
    }

    private func receive(_ request: String) throws {
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[..<count])
                return
            }
            if count == 0 { throw BenchError("\(request): the server closed the connection") }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { throw BenchError("\(request): no answer within 10 s") }
            throw BenchError.system("recv (\(request))", errno: code)
        }
    }
}

extension HTTPConnection {
    /// The server's `/metrics` samples (Prometheus text format), by name with labels: the
    /// benchmarks read the server's own counters over HTTP, as an operator would.
    public func metrics() throws -> [String: Double] {
        let reply = try send("GET", "/metrics")
        guard reply.status == 200 else { throw BenchError("GET /metrics answered \(reply.status)") }
        var samples: [String: Double] = [:]
        for line in reply.text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// The value of the `/metrics` sample `name` (0 when absent).
    public func metric(_ name: String) throws -> Double {
        try metrics()[name] ?? 0
    }
}
