import Foundation

#if canImport(Glibc)
    import CLibSSL
    import Glibc
#endif

/// HTTPS for a test client: the authority it trusts, and the name it asks for and checks.
public struct TLSClientOptions: Sendable {
    /// The PEM file of the certificate authority to trust (``TLSTestAuthority/certificate``).
    public var trusting: URL
    /// Sent as SNI and checked against the certificate.
    public var serverName: String

    public init(trusting: URL, serverName: String = "localhost") {
        self.trusting = trusting
        self.serverName = serverName
    }
}

/// Why a loopback client failed: the call and its `errno`, or what was wrong with the answer.
public struct ClientError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
    /// True when the connection was closed or reset before any byte of an answer arrived: a
    /// kept-alive connection the server had closed meanwhile, so the request may be sent again.
    public var isClosedBeforeAnswer = false

    /// An error that says what went wrong.
    public init(_ description: String, isClosedBeforeAnswer: Bool = false) {
        self.description = description
        self.isClosedBeforeAnswer = isClosedBeforeAnswer
    }

    static func system(_ call: String, _ code: Int32 = errno) -> ClientError {
        ClientError("\(call): \(String(cString: strerror(code))) (errno \(code))")
    }
}

/// A blocking TCP connection to 127.0.0.1 that sends exactly the bytes a test gives it and reads
/// HTTP/1.1 answers off the wire: the one socket client of the tests. ``HTTPClient`` and
/// ``SSEClient`` are built on it; tests of framing (hostile clients, pipelining) use it directly.
///
/// Reads wait at most `timeout` (nil: forever, for streams ended by ``shutdown()``), so a test
/// never hangs. Used by one task or thread at a time; the blocking calls belong off the
/// cooperative pool (see the `async` forms, which ``offload(_:)`` them).
///
/// ```swift
/// let client = try RawClient(port: server.port)
/// let response = try await client.exchange("GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
/// #expect(response.status == 200)
/// ```
public final class RawClient: @unchecked Sendable {
    // @unchecked: the read buffer belongs to the one task or thread using the client at a time;
    // `shutdown()` and `abort()` only make system calls, which may come from another thread.

    /// The socket, for tests that make calls of their own on it (`shutdown(fd, SHUT_WR)`).
    public let fd: Int32
    private var buffer: [UInt8] = []
    /// Whether any byte arrived since the last request was sent (or the last answer began).
    private var hasReadAnswerBytes = false
    /// OpenSSL's context and connection, over HTTPS.
    private var sslContext: OpaquePointer?
    private var ssl: OpaquePointer?
    /// Over HTTPS: the protocol (`TLSv1.3`), the ALPN protocol chosen, and the server
    /// certificate's subject (`CN=first`).
    public private(set) var tlsVersion: String?
    public private(set) var alpn: String?
    public private(set) var peerSubject: String?

    /// Connects to 127.0.0.1:`port`. `receiveBufferSize` shrinks the socket's receive buffer
    /// first (a reader that stalls sooner); `noDelay` turns Nagle's algorithm off.
    /// With `tls`, the TLS handshake is done before `init` returns (a server that refuses it throws).
    public init(
        port: Int, timeout: Duration? = .seconds(5), receiveBufferSize: Int32? = nil, noDelay: Bool = false,
        tls: TLSClientOptions? = nil
    ) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ClientError.system("socket") }
        // No close on the throwing paths below: a class whose init throws after its properties
        // are set still runs deinit, which closes `fd`. Closing twice could close a reused one.
        if var size = receiveBufferSize {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        while true {
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if result == 0 { break }
            if errno == EINTR { continue }
            throw ClientError.system("connect to 127.0.0.1:\(port)")
        }
        if noDelay {
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        if let timeout {
            var time = timeval(
                tv_sec: Int(timeout.components.seconds),
                tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        }
        if let tls { try startTLS(tls) }
    }

    deinit {
        if let ssl { SSL_free(ssl) }
        if let sslContext { SSL_CTX_free(sslContext) }
        Glibc.close(fd)
    }

    /// The client side of the handshake, checking the server's certificate against the authority.
    private func startTLS(_ options: TLSClientOptions) throws {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw ClientError("SSL_CTX_new failed") }
        sslContext = context
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        guard SSL_CTX_load_verify_locations(context, options.trusting.path, nil) == 1 else {
            throw ClientError("cannot load \(options.trusting.path)")
        }
        guard let ssl = SSL_new(context) else { throw ClientError("SSL_new failed") }
        self.ssl = ssl
        let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
        guard clibssl_set_fd_without_sigpipe(ssl, fd) == 1, clibssl_set_server_name(ssl, options.serverName) == 1,
            SSL_set1_host(ssl, options.serverName) == 1,
            SSL_set_alpn_protos(ssl, alpn, UInt32(alpn.count)) == 0
        else { throw ClientError("cannot set up the TLS connection") }
        guard Self.callingAgainIfInterrupted(ssl, { SSL_connect(ssl) }).result == 1 else {
            let code = ERR_get_error()
            let reason = code == 0 ? "closed" : ERR_reason_error_string(code).map { String(cString: $0) } ?? "\(code)"
            throw ClientError("TLS handshake failed: \(reason)")
        }
        tlsVersion = String(cString: SSL_get_version(ssl))
        var selected: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &selected, &length)
        if let selected { self.alpn = String(decoding: UnsafeBufferPointer(start: selected, count: Int(length)), as: UTF8.self) }
        if let certificate = SSL_get1_peer_certificate(ssl) {
            defer { X509_free(certificate) }
            var name = [CChar](repeating: 0, count: 256)
            if X509_NAME_oneline(X509_get_subject_name(certificate), &name, Int32(name.count)) != nil {
                peerSubject = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
    }

    // MARK: - Writing

    /// Sends `text` as UTF-8, all of it.
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends all of `bytes`.
    public func send(_ bytes: [UInt8]) throws {
        hasReadAnswerBytes = !buffer.isEmpty
        var sent = 0
        if let ssl {
            while sent < bytes.count {
                var count = 0
                let (result, code) = Self.callingAgainIfInterrupted(ssl) {
                    bytes[sent...].withUnsafeBytes { SSL_write_ex(ssl, $0.baseAddress, $0.count, &count) }
                }
                if result == 1 {
                    sent += count
                    continue
                }
                let error = SSL_get_error(ssl, result)
                throw ClientError(
                    "SSL_write failed: SSL error \(error), \(String(cString: strerror(code)))",
                    isClosedBeforeAnswer: !hasReadAnswerBytes)
            }
            return
        }
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let code = errno
                throw ClientError(
                    ClientError.system("send", code).description,
                    isClosedBeforeAnswer: !hasReadAnswerBytes && (code == EPIPE || code == ECONNRESET))
            }
            sent += count
        }
    }

    /// Closes abruptly: the server sees a reset when unread data remains.
    public func abort() {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Shuts both directions down, which wakes a thread blocked reading; `deinit` closes.
    public func shutdown() {
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    // MARK: - Reading

    /// Reads more bytes; false at the end of the stream (or a reset).
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        if let ssl {
            var count = 0
            let (result, code) = Self.callingAgainIfInterrupted(ssl) {
                chunk.withUnsafeMutableBytes { SSL_read_ex(ssl, $0.baseAddress, $0.count, &count) }
            }
            if result == 1 {
                buffer.append(contentsOf: chunk[..<count])
                hasReadAnswerBytes = true
                return true
            }
            let error = SSL_get_error(ssl, result)
            if error == SSL_ERROR_ZERO_RETURN || (error == SSL_ERROR_SYSCALL && (code == 0 || code == ECONNRESET)) {
                return false
            }
            // The socket's SO_RCVTIMEO passed: the socket BIO reports it as a retry, a blocking socket's
            // WANT_READ.
            if code == EAGAIN || code == EWOULDBLOCK {
                throw ClientError("SSL_read: no answer in time")
            }
            let queued = ERR_get_error()
            let reason = ERR_reason_error_string(queued).map { String(cString: $0) } ?? "SSL error \(error)"
            throw ClientError("SSL_read failed: \(reason), \(String(cString: strerror(code)))")
        }
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[..<count])
                hasReadAnswerBytes = true
                return true
            }
            if count == 0 || errno == ECONNRESET { return false }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw ClientError("recv: no answer in time") }
            throw ClientError.system("recv")
        }
    }

    /// Makes an OpenSSL call on this blocking socket, and makes it again while it stopped only
    /// because a signal interrupted its system call, as `recv` and `send` are made again: a socket
    /// with SO_RCVTIMEO or SO_SNDTIMEO is never restarted after a signal, SA_RESTART or not
    /// (signal(7)), and other tests of this process send it signals. Returns the last call's result
    /// and the `errno` it left.
    private static func callingAgainIfInterrupted(
        _ ssl: OpaquePointer, _ call: () -> Int32
    ) -> (result: Int32, errno: Int32) {
        while true {
            ERR_clear_error()
            errno = 0
            let result = call()
            let code = errno
            guard result != 1, code == EINTR else { return (result, code) }
            let error = SSL_get_error(ssl, result)
            guard error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_SYSCALL else {
                return (result, code)
            }
        }
    }

    private func closedError(_ what: String) -> ClientError {
        ClientError("closed while reading \(what)", isClosedBeforeAnswer: !hasReadAnswerBytes)
    }

    /// Reads one line (CRLF or LF, not included).
    public func readLine() throws -> String {
        var searched = 0
        while true {
            if let index = buffer[searched...].firstIndex(of: 0x0A) {
                var line = Array(buffer[..<index])
                buffer.removeFirst(index + 1)
                if line.last == 0x0D { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            searched = buffer.count
            guard try fill() else { throw closedError("a line") }
        }
    }

    /// Reads exactly `count` bytes.
    public func readBytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw closedError("a body") }
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer[..<count])
    }

    /// Reads a status line and the header fields.
    public func readHead() throws -> (status: Int, headers: [(name: String, value: String)]) {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw ClientError("bad status line: \(statusLine)")
        }
        var headers: [(name: String, value: String)] = []
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw ClientError("bad header \(line)") }
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return (status, headers)
    }

    /// Reads one whole response: its body by `Content-Length`, chunked, or up to the close.
    /// `isHead`: the answer to a HEAD request, which has no body whatever its fields say.
    public func readResponse(isHead: Bool = false) throws -> HTTPResponse {
        hasReadAnswerBytes = !buffer.isEmpty
        let (status, headers) = try readHead()
        var response = HTTPResponse(status: status, headers: headers, body: [])
        if isHead || status == 204 || status == 304 || status < 200 { return response }
        if let length = response.header("content-length").flatMap(Int.init) {
            response.body = try readBytes(length)
        } else if response.header("transfer-encoding")?.lowercased() == "chunked" {
            response.body = try readChunkedBody()
        } else {
            response.body = try readUntilClosed()
        }
        return response
    }

    /// Reads a chunked body to its last chunk.
    public func readChunkedBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while let chunk = try readChunk() { body += chunk }
        return body
    }

    /// Reads one chunk; nil for the last chunk (after its trailer).
    public func readChunk() throws -> [UInt8]? {
        let sizeLine = try readLine()
        guard let field = sizeLine.split(separator: ";").first, let size = Int(field, radix: 16) else {
            throw ClientError("bad chunk size \(sizeLine)")
        }
        if size == 0 {
            while try !readLine().isEmpty {}
            return nil
        }
        let data = try readBytes(size)
        _ = try readBytes(2)
        return data
    }

    /// Waits until the server closes the connection; returns what arrived before. Throws when
    /// nothing closes it within the timeout.
    public func readUntilClosed() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }
}

extension RawClient {
    /// Sends `text` and reads one response, off the cooperative pool.
    public func exchange(_ text: String, isHead: Bool = false) async throws -> HTTPResponse {
        try await offload {
            try self.send(text)
            return try self.readResponse(isHead: isHead)
        }
    }

    /// Reads one response, off the cooperative pool.
    public func response(isHead: Bool = false) async throws -> HTTPResponse {
        try await offload { try self.readResponse(isHead: isHead) }
    }

    /// Waits for the server to close the connection, off the cooperative pool; returns what
    /// arrived before.
    public func untilClosed() async throws -> [UInt8] {
        try await offload { try self.readUntilClosed() }
    }

    /// Sends `text`, off the cooperative pool.
    public func write(_ text: String) async throws {
        try await offload { try self.send(text) }
    }
}
