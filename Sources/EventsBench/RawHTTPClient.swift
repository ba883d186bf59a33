import Foundation
import NavigationValues

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking HTTP/1.1 client on one keep-alive connection: one request at a time, each read
/// with a 10 s timeout. Used from one thread at a time.
final class RawHTTPClient {
    struct Reply {
        var status: Int
        var body: [UInt8]
        /// When the whole response had been read (`ProcessFigures.now()`).
        var readAt: UInt64

        var json: JSONValue? { try? JSONValue(parsing: body) }
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 65_536)

    init(port: Int) throws {
        fd = try RawSocket.connect(port: port)
        RawSocket.setReceiveTimeout(fd, seconds: 10)
    }

    deinit {
        close(fd)
    }

    /// Sends one request and reads its whole response.
    func send(_ method: String, _ path: String, token: String? = nil, json: String? = nil) throws -> Reply {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        let body = Array((json ?? "").utf8)
        if json != nil { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        try RawSocket.sendAll(fd, Array((head + "\r\n").utf8) + body)
        return try readReply(for: "\(method) \(path)")
    }

    private func readReply(for request: String) throws -> Reply {
        let headEnd = try readUntilHeadEnd(request)
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        let lines = head.split(separator: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw BenchError("\(request): bad status line \(lines.first.map(String.init) ?? "")")
        }
        var length: Int?
        var isChunked = false
        for line in lines.dropFirst() {
            let field = line.lowercased()
            if field.hasPrefix("content-length:") {
                length = Int(field.dropFirst(15).trimmingCharacters(in: .whitespaces))
            }
            if field.hasPrefix("transfer-encoding:"), field.contains("chunked") { isChunked = true }
        }
        var body: [UInt8] = []
        if isChunked {
            body = try readChunkedBody(request)
        } else if let length {
            try fill(atLeast: length, request)
            body = Array(buffer[..<length])
            buffer.removeFirst(length)
        }
        return Reply(status: status, body: body, readAt: ProcessFigures.now())
    }

    private func readUntilHeadEnd(_ request: String) throws -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= 4 {
                for index in searchFrom...(buffer.count - 4)
                where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13
                    && buffer[index + 3] == 10
                {
                    return index
                }
                searchFrom = buffer.count - 3
            }
            try receive(request)
        }
    }

    private func readChunkedBody(_ request: String) throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let lineEnd = try readLineEnd(request)
            let sizeText = String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            buffer.removeFirst(lineEnd + 2)
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw BenchError("\(request): bad chunk size \(sizeText)")
            }
            try fill(atLeast: size + 2, request)
            body.append(contentsOf: buffer[..<size])
            buffer.removeFirst(size + 2)
            if size == 0 { return body }
        }
    }

    private func readLineEnd(_ request: String) throws -> Int {
        while true {
            if buffer.count >= 2 {
                for index in 0..<(buffer.count - 1) where buffer[index] == 13 && buffer[index + 1] == 10 {
                    return index
                }
            }
            try receive(request)
        }
    }

    private func fill(atLeast count: Int, _ request: String) throws {
        while buffer.count < count { try receive(request) }
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
