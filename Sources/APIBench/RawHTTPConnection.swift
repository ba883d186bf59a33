import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The smallest keep-alive HTTP/1.1 client that serves the benchmark: blocking POSIX socket, one
/// request at a time, `Content-Length` bodies only. Owned by one thread.
final class RawHTTPConnection {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private let host: String

    init(port: Int) throws {
        host = "127.0.0.1:\(port)"
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw Failure(description: "connect: errno \(errno)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        buffer.reserveCapacity(16 * 1024)
    }

    deinit { close(fd) }

    /// Sends one request and reads its answer: the status and the body.
    func send(_ method: String, _ path: String, token: String?, body: [UInt8]?) throws -> (status: Int, body: [UInt8]) {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        head += "\r\n"
        var request = Array(head.utf8)
        if let body { request += body }
        try writeAll(request)
        return try readResponse()
    }

    private func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "send: errno \(errno)")
            }
            offset += written
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
        if count < 0 {
            if errno == EINTR { return }
            throw Failure(description: "recv: errno \(errno)")
        }
        guard count > 0 else { throw Failure(description: "connection closed by the server") }
        buffer.append(contentsOf: chunk[0..<count])
    }

    private func readResponse() throws -> (status: Int, body: [UInt8]) {
        // Answers are read one at a time, so what is left of the last one can go.
        if readIndex > 0 {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        // The head ends at the first CRLFCRLF.
        var headEnd: Int?
        var searchFrom = readIndex
        while headEnd == nil {
            if buffer.count - searchFrom >= 4 {
                var index = searchFrom
                while index + 3 < buffer.count {
                    if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13, buffer[index + 3] == 10 {
                        headEnd = index
                        break
                    }
                    index += 1
                }
                if headEnd == nil { searchFrom = max(readIndex, buffer.count - 3) }
            }
            if headEnd == nil { try fill() }
        }
        guard let headEnd else { throw Failure(description: "no head") }
        let head = String(decoding: buffer[readIndex..<headEnd], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.count >= 12,
            let status = Int(statusLine.dropFirst(9).prefix(3))
        else { throw Failure(description: "bad status line") }
        var length = 0
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                length = Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        let bodyStart = headEnd + 4
        while buffer.count - bodyStart < length { try fill() }
        let body = Array(buffer[bodyStart..<(bodyStart + length)])
        readIndex = bodyStart + length
        return (status, body)
    }
}
