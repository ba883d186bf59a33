#if canImport(Glibc)
    import Foundation
    import Glibc
    import Synchronization

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// One HTTP/1.1 connection over a non-blocking TCP socket, used by one thread at a time: every
    /// wait is a `poll` bounded by the caller's timeout (the longest silence), so nothing spins and
    /// nothing waits forever. Failures are `URLError`s: `.cannotConnectToHost` when nothing was
    /// sent, `.networkConnectionLost` when the connection ended before the whole answer,
    /// `.timedOut` after the timeout of silence.
    final class SocketConnection: Sendable {
        private let descriptor: Int32
        /// Bytes read past the answer's end (a server never sends them unasked; kept for the head).
        private let buffer = Mutex<[UInt8]>([])
        private let isClosed = Atomic<Bool>(false)

        /// The longest head an answer may have, and the largest body the client takes.
        static let maxHeadBytes = 64 << 10
        static let maxBodyBytes = 1 << 30

        private init(descriptor: Int32) {
            self.descriptor = descriptor
        }

        deinit {
            close()
        }

        // MARK: - Connecting

        /// A connection to `endpoint`, trying each of its addresses within `timeout`.
        static func connect(to endpoint: Endpoint, timeout: Duration) throws -> SocketConnection {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            hints.ai_family = AF_UNSPEC
            var list: UnsafeMutablePointer<addrinfo>?
            let resolved = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list)
            guard resolved == 0, let first = list else { throw URLError(.cannotFindHost) }
            defer { freeaddrinfo(list) }
            var address: UnsafeMutablePointer<addrinfo>? = first
            var failure = URLError(.cannotConnectToHost)
            while let info = address {
                address = info.pointee.ai_next
                let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                guard fd >= 0 else { continue }
                let flags = fcntl(fd, F_GETFL)
                _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
                var one: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                let connection = SocketConnection(descriptor: fd)
                if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return connection }
                guard errno == EINPROGRESS else { continue }
                do {
                    try connection.wait(for: Int16(POLLOUT), timeout: timeout, lost: .cannotConnectToHost)
                } catch let error as URLError {
                    // A connect that timed out sent nothing either.
                    failure = URLError(error.code == .timedOut ? .cannotConnectToHost : error.code)
                    continue
                }
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                if error == 0 { return connection }
            }
            throw failure
        }

        // MARK: - State

        /// Whether the server has not closed (or written on) this idle connection: a kept-alive
        /// connection the server closed is readable (its end of stream) before any request.
        var isStillOpen: Bool {
            guard !isClosed.load(ordering: .relaxed) else { return false }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            return poll(&entry, 1, 0) == 0
        }

        /// Ends any wait on the socket at once (from another thread); `close()` releases it.
        func shutDown() {
            if !isClosed.load(ordering: .acquiring) { Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }
        }

        func close() {
            if !isClosed.exchange(true, ordering: .acquiringAndReleasing) { Glibc.close(descriptor) }
        }

        // MARK: - Writing

        /// Writes all of `bytes`.
        func write(_ bytes: [UInt8], timeout: Duration) throws {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if sent > 0 {
                    offset += sent
                } else if sent < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                    try wait(for: Int16(POLLOUT), timeout: timeout, lost: .networkConnectionLost)
                } else if sent < 0, errno == EINTR {
                    continue
                } else {
                    throw URLError(.networkConnectionLost)
                }
            }
        }

        // MARK: - Reading

        /// Reads up to 64 KiB that have arrived, waiting up to `timeout` for the first; empty at
        /// the end of the stream.
        private func readSome(timeout: Duration) throws -> ArraySlice<UInt8> {
            let pending = buffer.withLock { buffer in
                defer { buffer = [] }
                return buffer
            }
            if !pending.isEmpty { return pending[...] }
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = chunk.withUnsafeMutableBytes { Glibc.recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count >= 0 { return chunk[..<count] }
                if errno == EINTR { continue }
                guard errno == EAGAIN || errno == EWOULDBLOCK else { throw URLError(.networkConnectionLost) }
                try wait(for: Int16(POLLIN), timeout: timeout, lost: .networkConnectionLost)
            }
        }

        /// Keeps `bytes` for the next read.
        private func unread(_ bytes: ArraySlice<UInt8>) {
            guard !bytes.isEmpty else { return }
            buffer.withLock { $0 = Array(bytes) + $0 }
        }

        /// The answer's head, after any interim (1xx) answer.
        func readHead(timeout: Duration) throws -> AnswerHead {
            var bytes: [UInt8] = []
            while true {
                if let end = AnswerHead.endOfHead(in: bytes) {
                    unread(bytes[end...])
                    guard let head = AnswerHead(bytes[..<end]) else { throw URLError(.cannotParseResponse) }
                    if head.status >= 100, head.status < 200 {
                        bytes = []
                        continue
                    }
                    return head
                }
                guard bytes.count <= Self.maxHeadBytes else { throw URLError(.cannotParseResponse) }
                let more = try readSome(timeout: timeout)
                // The end of the stream before a whole head: the answer was lost.
                guard !more.isEmpty else { throw URLError(.networkConnectionLost) }
                bytes += more
            }
        }

        /// The whole body of the answer whose head is `head`.
        func readBody(of head: AnswerHead, method: String, timeout: Duration) throws -> Data {
            var body = Data()
            try streamBody(of: head, method: method, timeout: timeout) { bytes in
                guard body.count + bytes.count <= Self.maxBodyBytes else { return false }
                body.append(bytes)
                return true
            }
            guard body.count <= Self.maxBodyBytes else { throw URLError(.dataLengthExceedsMaximum) }
            return body
        }

        /// Hands the body of the answer whose head is `head` to `deliver` as it arrives (chunked
        /// coding removed) until its end; `deliver` returns false to stop early.
        func streamBody(
            of head: AnswerHead, method: String, timeout: Duration, _ deliver: (Data) -> Bool
        ) throws {
            if method == "HEAD" || head.status == 204 || head.status == 304 { return }
            if head.isChunked {
                var decoder = ChunkedDecoder()
                while !decoder.isDone {
                    let bytes = try readSome(timeout: timeout)
                    guard !bytes.isEmpty else { throw URLError(.networkConnectionLost) }
                    let (payload, rest) = try decoder.decode(bytes)
                    unread(rest)
                    if !payload.isEmpty, !deliver(Data(payload)) { return }
                }
            } else if let length = head.contentLength {
                var remaining = length
                while remaining > 0 {
                    var bytes = try readSome(timeout: timeout)
                    guard !bytes.isEmpty else { throw URLError(.networkConnectionLost) }
                    if bytes.count > remaining {
                        unread(bytes[(bytes.startIndex + remaining)...])
                        bytes = bytes[..<(bytes.startIndex + remaining)]
                    }
                    remaining -= bytes.count
                    if !deliver(Data(bytes)) { return }
                }
            } else {
                // Delimited by the end of the connection.
                while true {
                    let bytes = try readSome(timeout: timeout)
                    if bytes.isEmpty { return }
                    if !deliver(Data(bytes)) { return }
                }
            }
        }

        /// Waits until the socket is ready for `events`; `.timedOut` after `timeout`, `lost` when the
        /// socket failed or was shut down.
        private func wait(for events: Int16, timeout: Duration, lost: URLError.Code) throws {
            let milliseconds = Int32(
                clamping: timeout.components.seconds * 1_000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            while true {
                let ready = poll(&entry, 1, max(1, milliseconds))
                if ready > 0 {
                    // An error or hang-up is read (or written) as what it is by the call that follows.
                    return
                }
                if ready == 0 { throw URLError(.timedOut) }
                if errno == EINTR { continue }
                throw URLError(lost)
            }
        }
    }

    // MARK: - The request

    enum HTTPRequestHead {
        /// `request` as HTTP/1.1 bytes: the request line, `Host`, its headers, `Content-Length`,
        /// then its body.
        static func encode(_ request: TransportRequest, host: String) -> [UInt8] {
            var text = "\(request.method) \(request.target) HTTP/1.1\r\nHost: \(host)\r\n"
            for (name, value) in request.headers where !Self.isFramed(name) {
                // A header value never carries a line break into the request.
                text += "\(name): \(value.filter { $0 != "\r" && $0 != "\n" })\r\n"
            }
            let body = request.body ?? Data()
            if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method) {
                text += "Content-Length: \(body.count)\r\n"
            }
            text += "\r\n"
            var bytes = Array(text.utf8)
            bytes.append(contentsOf: body)
            return bytes
        }

        /// Headers this transport writes itself.
        private static func isFramed(_ name: String) -> Bool {
            let lowered = name.lowercased()
            return lowered == "host" || lowered == "content-length" || lowered == "transfer-encoding"
                || lowered == "connection"
        }
    }

    // MARK: - The answer

    /// An answer's status line and headers.
    struct AnswerHead: Sendable {
        var status: Int
        /// Names lowercased; repeated headers joined with ", ".
        var headers: [String: String]
        var isHTTP10: Bool

        var isChunked: Bool { headers["transfer-encoding"]?.lowercased().contains("chunked") == true }
        var contentLength: Int? { headers["content-length"].flatMap { Int($0.trimmingSpaces) } }

        /// Whether the connection may carry another request after this answer.
        var keepsAlive: Bool {
            let connection = headers["connection"]?.lowercased() ?? ""
            if connection.contains("close") { return false }
            if isHTTP10 { return connection.contains("keep-alive") }
            return isChunked || contentLength != nil || status == 204 || status == 304
        }

        /// The index just past the blank line that ends the head, if `bytes` holds it.
        static func endOfHead(in bytes: [UInt8]) -> Int? {
            guard bytes.count >= 4 else { return nil }
            for index in 3..<bytes.count
            where bytes[index] == 0x0A && bytes[index - 1] == 0x0D && bytes[index - 2] == 0x0A
                && bytes[index - 3] == 0x0D
            {
                return index + 1
            }
            return nil
        }

        /// Parses `HTTP/1.1 200 OK` and the header lines; nil when it is not an HTTP/1.x head.
        init?(_ bytes: ArraySlice<UInt8>) {
            let text = String(decoding: bytes, as: UTF8.self)
            var lines = text.split(separator: "\r\n", omittingEmptySubsequences: true)[...]
            guard let statusLine = lines.popFirst() else { return nil }
            let parts = statusLine.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else { return nil }
            self.status = status
            isHTTP10 = parts[0] == "HTTP/1.0"
            headers = [:]
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].lowercased()
                let value = String(line[line.index(after: colon)...]).trimmingSpaces
                if let earlier = headers[name] {
                    headers[name] = earlier + ", " + value
                } else {
                    headers[name] = value
                }
            }
        }
    }

    /// Removes chunked transfer coding (RFC 9112 §7.1) from bytes as they arrive, a piece at a time.
    struct ChunkedDecoder {
        private enum State {
            /// Reading the size line (hex digits, optional extensions, CRLF).
            case size(line: [UInt8])
            /// Inside a chunk's data, this many bytes left.
            case data(remaining: Int)
            /// The CRLF after a chunk's data: how many of its two bytes are still to come.
            case dataEnd(remaining: Int)
            /// The trailer section after the last chunk, up to its blank line.
            case trailer(line: [UInt8])
            case done
        }

        private var state = State.size(line: [])

        var isDone: Bool {
            if case .done = state { true } else { false }
        }

        /// The payload in `bytes`, and what comes after the coded body (if it ended inside them).
        mutating func decode(_ bytes: ArraySlice<UInt8>) throws -> (payload: [UInt8], rest: ArraySlice<UInt8>) {
            var payload: [UInt8] = []
            var index = bytes.startIndex
            while index < bytes.endIndex {
                switch state {
                case .size(var line):
                    let byte = bytes[index]
                    index += 1
                    if byte == 0x0A {
                        guard let size = Self.size(of: line) else { throw URLError(.cannotParseResponse) }
                        state = size == 0 ? .trailer(line: []) : .data(remaining: size)
                    } else {
                        guard line.count < 1_024 else { throw URLError(.cannotParseResponse) }
                        line.append(byte)
                        state = .size(line: line)
                    }
                case .data(let remaining):
                    let take = min(remaining, bytes.endIndex - index)
                    payload.append(contentsOf: bytes[index..<(index + take)])
                    index += take
                    state = remaining == take ? .dataEnd(remaining: 2) : .data(remaining: remaining - take)
                case .dataEnd(let remaining):
                    index += 1
                    state = remaining == 1 ? .size(line: []) : .dataEnd(remaining: remaining - 1)
                case .trailer(var line):
                    let byte = bytes[index]
                    index += 1
                    if byte == 0x0A {
                        if line.isEmpty || line == [0x0D] {
                            state = .done
                            return (payload, bytes[index...])
                        }
                        line = []
                    } else {
                        guard line.count < 8_192 else { throw URLError(.cannotParseResponse) }
                        line.append(byte)
                    }
                    state = .trailer(line: line)
                case .done:
                    return (payload, bytes[index...])
                }
            }
            return (payload, bytes[bytes.endIndex...])
        }

        /// The chunk size of a size line (hex, before any `;` extension and the CR).
        private static func size(of line: [UInt8]) -> Int? {
            var size = 0
            var digits = 0
            for byte in line {
                let value: Int
                switch byte {
                case 0x30...0x39: value = Int(byte) - 0x30
                case 0x41...0x46: value = Int(byte) - 0x41 + 10
                case 0x61...0x66: value = Int(byte) - 0x61 + 10
                case 0x3B, 0x0D, 0x20, 0x09:
                    return digits > 0 ? size : nil
                default: return nil
                }
                guard digits < 15 else { return nil }
                size = size * 16 + value
                digits += 1
            }
            return digits > 0 ? size : nil
        }
    }
#endif
