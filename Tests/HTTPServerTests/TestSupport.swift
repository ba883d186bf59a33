import Dispatch
import Foundation
import HTTPServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Starts a server on 127.0.0.1, port 0, runs `body`, and shuts the server down on success
/// and on failure (Hummingbird's `LiveTestFramework`).
func withRunningServer(
    _ router: Router,
    headerTimeout: Duration = .seconds(5),
    idleTimeout: Duration = .seconds(5),
    streamHighWaterMark: Int = 64 * 1024,
    _ body: (HTTPServer) async throws -> Void
) async throws {
    let configuration = HTTPServer.Configuration(
        host: "127.0.0.1",
        port: 0,
        eventLoopCount: 2,
        headerTimeout: headerTimeout,
        idleTimeout: idleTimeout,
        shutdownGracePeriod: .seconds(5),
        streamHighWaterMark: streamHighWaterMark
    )
    let server = HTTPServer(configuration: configuration, responder: router)
    try await server.start()
    do {
        try await body(server)
    } catch {
        await server.shutdown()
        throw error
    }
    await server.shutdown()
}

/// Runs blocking socket work off the cooperative pool.
func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

/// Waits for the first element of a stream, failing after `timeout`.
func first<T: Sendable>(of stream: AsyncStream<T>, timeout: Duration = .seconds(5)) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let value = try await group.next() ?? nil else { throw TestTimeout() }
        return value
    }
}

/// Collects the first `count` elements of a stream (one iterator, so the stream is consumed
/// by one task), failing after `timeout`.
func collect<T: Sendable>(_ count: Int, of stream: AsyncStream<T>, timeout: Duration = .seconds(5)) async throws -> [T]
{
    try await withThrowingTaskGroup(of: [T]?.self) { group in
        group.addTask {
            var values: [T] = []
            for await value in stream {
                values.append(value)
                if values.count == count { break }
            }
            return values
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let values = try await group.next() ?? nil, values.count == count else { throw TestTimeout() }
        return values
    }
}

/// Waits, yielding, until `condition` holds; fails after `timeout`.
func waitUntil(timeout: Duration = .seconds(5), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TestTimeout() }
        try await Task.sleep(for: .milliseconds(1))
    }
}

struct TestTimeout: Error {}
struct TestClientError: Error, CustomStringConvertible {
    var description: String
}

/// A response as read off the wire by `RawClient`.
struct RawResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
    }
}

/// A blocking HTTP/1.1 client on a raw socket, for sending exactly the bytes a test wants.
/// Every read has a 5 s timeout, so a test never hangs. Used by one task at a time.
final class RawClient: @unchecked Sendable {
    // @unchecked: a test uses one client from one task at a time.
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, timeout: Duration = .seconds(5)) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestClientError(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            // No close here: a class whose init throws after its properties are set still runs
            // deinit, which closes `fd`. Closing twice could close a descriptor reused meanwhile.
            throw TestClientError(description: "connect: errno \(errno)")
        }
        let seconds = timeout.components.seconds
        var time = timeval(tv_sec: Int(seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw TestClientError(description: "send: errno \(errno)") }
            sent += count
        }
    }

    /// Closes abruptly (RST when unread data remains).
    func abort() {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Reads more bytes; returns false at end of stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
        if count == 0 || errno == ECONNRESET { return false }
        throw TestClientError(description: "recv: errno \(errno) (timeout?)")
    }

    private func readLine() throws -> String {
        while true {
            if let index = buffer.firstIndex(of: 0x0A) {
                var line = Array(buffer[..<index])
                buffer.removeFirst(index + 1)
                if line.last == 0x0D { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            guard try fill() else { throw TestClientError(description: "closed while reading a line") }
        }
    }

    private func readBytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw TestClientError(description: "closed while reading a body") }
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer[..<count])
    }

    /// Reads a status line and header fields.
    func readHead() throws -> (status: Int, headers: [(name: String, value: String)]) {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw TestClientError(description: "bad status line: \(statusLine)")
        }
        var headers: [(name: String, value: String)] = []
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw TestClientError(description: "bad header \(line)") }
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return (status, headers)
    }

    /// Reads one whole response (Content-Length, chunked, or until close).
    func readResponse(isHead: Bool = false) throws -> RawResponse {
        let (status, headers) = try readHead()
        var response = RawResponse(status: status, headers: headers, body: [])
        if isHead || status == 204 || status == 304 || status < 200 { return response }
        if let length = response.header("content-length").flatMap(Int.init) {
            response.body = try readBytes(length)
        } else if response.header("transfer-encoding")?.lowercased() == "chunked" {
            response.body = try readChunkedBody()
        } else {
            while try fill() {}
            response.body = buffer
            buffer = []
        }
        return response
    }

    func readChunkedBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while let chunk = try readChunk() { body += chunk }
        return body
    }

    /// Reads one chunk; nil for the last chunk (after its trailer).
    func readChunk() throws -> [UInt8]? {
        let sizeLine = try readLine()
        guard let size = Int(sizeLine.split(separator: ";")[0], radix: 16) else {
            throw TestClientError(description: "bad chunk size \(sizeLine)")
        }
        if size == 0 {
            while try !readLine().isEmpty {}
            return nil
        }
        let data = try readBytes(size)
        _ = try readBytes(2)
        return data
    }

    /// Waits until the server closes the connection; returns what arrived before. Throws on timeout.
    func readUntilClosed() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }
}

extension RawClient {
    /// Sends `text` and reads one response, off the cooperative pool.
    func exchange(_ text: String, isHead: Bool = false) async throws -> RawResponse {
        try await offload {
            try self.send(text)
            return try self.readResponse(isHead: isHead)
        }
    }

    func response(isHead: Bool = false) async throws -> RawResponse {
        try await offload { try self.readResponse(isHead: isHead) }
    }

    func untilClosed() async throws -> [UInt8] {
        try await offload { try self.readUntilClosed() }
    }

    func write(_ text: String) async throws {
        try await offload { try self.send(text) }
    }
}

/// `GET path` with a Host header.
func get(_ path: String, _ extra: String = "") -> String {
    "GET \(path) HTTP/1.1\r\nHost: test\r\n\(extra)\r\n"
}
