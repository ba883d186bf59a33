import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One server-sent event, or a comment line.
struct SSEFrame: Sendable, Equatable {
    var id: String?
    var event: String?
    var data: String?
    var comment: String?
}

/// A raw-socket client for event streams: sends one GET, then reads the chunked body on its own
/// thread (never on the cooperative pool, which the server needs) and parses frames.
final class SSEClient: Sendable {
    let fd: Int32
    let frames: AsyncStream<SSEFrame>
    private let head = Mutex<(status: Int?, waiters: [CheckedContinuation<Int, Never>])>((nil, []))

    init(port: Int, path: String, headers: [String: String] = [:]) throws {
        let (descriptor, connected) = connectToLoopback(port: port)
        fd = descriptor
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let (stream, continuation) = AsyncStream.makeStream(of: SSEFrame.self)
        frames = stream
        guard connected else {
            continuation.finish()
            Glibc.close(descriptor)  // no deinit closes it: the reading thread never started
            throw CocoaError(.fileReadUnknown)
        }
        _ = request.utf8CString.withUnsafeBufferPointer {
            send(descriptor, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL))
        }
        let thread = Thread { [self] in
            self.readLoop(fd: descriptor, continuation: continuation)
            Glibc.close(descriptor)
        }
        thread.start()
    }

    /// The response status, once the head arrived (0 when the connection closed first).
    func status() async -> Int {
        await withCheckedContinuation { continuation in
            let known = head.withLock { head -> Int? in
                if let status = head.status { return status }
                head.waiters.append(continuation)
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
    }

    /// Stops reading; the reading thread closes the socket.
    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    private func setStatus(_ status: Int) {
        let waiters = head.withLock { head -> [CheckedContinuation<Int, Never>] in
            guard head.status == nil else { return [] }
            head.status = status
            defer { head.waiters = [] }
            return head.waiters
        }
        for waiter in waiters { waiter.resume(returning: status) }
    }

    private func readLoop(fd: Int32, continuation: AsyncStream<SSEFrame>.Continuation) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        func fill() -> Bool {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return false }
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
        func line() -> String? {
            while true {
                if let index = buffer.firstIndex(of: 0x0A) {
                    var bytes = Array(buffer[..<index])
                    buffer.removeFirst(index + 1)
                    if bytes.last == 0x0D { bytes.removeLast() }
                    return String(decoding: bytes, as: UTF8.self)
                }
                guard fill() else { return nil }
            }
        }
        defer {
            setStatus(0)
            continuation.finish()
        }
        guard let statusLine = line() else { return }
        let parts = statusLine.split(separator: " ")
        let status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        var isChunked = false
        while let header = line(), !header.isEmpty {
            if header.lowercased().hasPrefix("transfer-encoding:"), header.lowercased().contains("chunked") {
                isChunked = true
            }
        }
        setStatus(status)
        guard isChunked else { return }
        // De-chunk into a text stream, then split frames on blank lines.
        var text: [UInt8] = []
        var frame = SSEFrame()
        while let sizeLine = line(), let size = Int(sizeLine.split(separator: ";")[0], radix: 16) {
            if size == 0 { return }
            while buffer.count < size + 2 { guard fill() else { return } }
            text.append(contentsOf: buffer[0..<size])
            buffer.removeFirst(size + 2)
            while let index = text.firstIndex(of: 0x0A) {
                let lineText = String(decoding: text[..<index], as: UTF8.self)
                text.removeFirst(index + 1)
                if lineText.isEmpty {
                    if frame != SSEFrame() { continuation.yield(frame) }
                    frame = SSEFrame()
                } else if lineText.hasPrefix(":") {
                    continuation.yield(SSEFrame(comment: String(lineText.dropFirst()).trimmingCharacters(in: .whitespaces)))
                } else if lineText.hasPrefix("id: ") {
                    frame.id = String(lineText.dropFirst(4))
                } else if lineText.hasPrefix("event: ") {
                    frame.event = String(lineText.dropFirst(7))
                } else if lineText.hasPrefix("data: ") {
                    frame.data = String(lineText.dropFirst(6))
                }
            }
        }
    }
}

extension AsyncStream where Element == SSEFrame {
    /// The next `count` event frames (comments skipped), or fewer if the stream ends or `timeout` passes.
    func events(_ count: Int, timeout: Duration = .seconds(10)) async -> [SSEFrame] {
        await withTaskGroup(of: [SSEFrame]?.self) { group in
            group.addTask {
                var result: [SSEFrame] = []
                for await frame in self where frame.comment == nil {
                    result.append(frame)
                    if result.count == count { break }
                }
                return result
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
    }
}

/// A TCP socket connected to 127.0.0.1:`port` (blocking); `receiveBuffer` shrinks its receive
/// buffer first. The socket is returned even when the connection failed, for the caller to close.
func connectToLoopback(port: Int, receiveBuffer: Int32? = nil) -> (socket: Int32, connected: Bool) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    if var size = receiveBuffer {
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    return (descriptor, result == 0)
}
