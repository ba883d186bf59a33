import CHTTPSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Thin wrappers over the socket calls, each going through `syscall` (System.swift).
enum Socket {
    /// Opens a non-blocking listening TCP socket on `host:port` (IPv4 or IPv6 literal, or `localhost`).
    static func listen(host: String, port: Int, backlog: Int32) throws(SocketError) -> Int32 {
        var storage = sockaddr_storage()
        let length = try makeAddress(host: host, port: port, into: &storage)
        let family = Int32(storage.ss_family)
        let fd = try blockingSyscall("socket") {
            socket(
                family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            try withUnsafePointer(to: &storage) { pointer throws(SocketError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SocketError) in
                    _ = try blockingSyscall("bind") { bind(fd, address, length) }
                }
            }
            _ = try blockingSyscall("listen") { Glibc.listen(fd, backlog) }
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// The port a bound socket listens on.
    static func localPort(_ fd: Int32) throws(SocketError) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        try withUnsafeMutablePointer(to: &storage) { pointer throws(SocketError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SocketError) in
                _ = try blockingSyscall("getsockname") { getsockname(fd, address, &length) }
            }
        }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        default:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            }
        }
    }

    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(SocketError) {
        var value = value
        _ = try blockingSyscall("setsockopt") {
            setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// Accepts one pending connection as a non-blocking socket, or `.wouldBlock` when none waits.
    /// The socket is close-on-exec from the start (accept4), so a child process spawned by another
    /// thread at that moment never inherits the connection (and keeps it open past our close).
    static func accept(_ listener: Int32) throws(SocketError) -> IOResult<(fd: Int32, peer: String?)> {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let accepted = try withUnsafeMutablePointer(to: &storage) { pointer throws(SocketError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SocketError) in
                try syscall("accept4") { chttp_accept_cloexec(listener, address, &length) }
            }
        }
        guard case .processed(let fd) = accepted else { return .wouldBlock }
        do {
            try setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        } catch {
            close(fd)
            throw error
        }
        return .processed((fd, describe(&storage)))
    }

    /// `192.0.2.1:80` or `[2001:db8::1]:80`.
    private static func describe(_ storage: inout sockaddr_storage) -> String? {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address -> String? in
                    var ip = address.pointee.sin_addr
                    guard inet_ntop(AF_INET, &ip, &text, socklen_t(text.count)) != nil else { return nil }
                    let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    return "\(host):\(UInt16(bigEndian: address.pointee.sin_port))"
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address -> String? in
                    var ip = address.pointee.sin6_addr
                    guard inet_ntop(AF_INET6, &ip, &text, socklen_t(text.count)) != nil else { return nil }
                    let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    return "[\(host)]:\(UInt16(bigEndian: address.pointee.sin6_port))"
                }
            }
        default:
            return nil
        }
    }

    static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> IOResult<Int> {
        try syscall("recv") { recv(fd, buffer.baseAddress, buffer.count, 0) }
    }

    /// Writes without raising `SIGPIPE` when the peer is gone (`MSG_NOSIGNAL`).
    static func send(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SocketError) -> IOResult<Int> {
        try syscall("send") { Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Gathers several buffers into one write, without `SIGPIPE`.
    static func send(_ fd: Int32, _ vectors: UnsafeMutableBufferPointer<iovec>) throws(SocketError) -> IOResult<Int> {
        var message = msghdr()
        message.msg_iov = vectors.baseAddress
        message.msg_iovlen = vectors.count
        return try syscall("sendmsg") { sendmsg(fd, &message, Int32(MSG_NOSIGNAL)) }
    }

    /// Closes a descriptor. Errors from `close` are not actionable (the descriptor is gone either way).
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Half-closes the sending side, so the peer sees the end of our response.
    static func shutdownWriting(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Raises the soft limit of open descriptors to the hard limit, so that thousands of
    /// connections fit (the default soft limit is often 1,024). Returns the new soft limit.
    @discardableResult
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(clamping: limit.rlim_cur)
    }

    private static func makeAddress(host: String, port: Int, into storage: inout sockaddr_storage) throws(SocketError)
        -> socklen_t
    {
        guard (0...65535).contains(port) else { throw SocketError(call: "bind", errno: EINVAL) }
        let name = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, name, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = UInt16(port).bigEndian
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee = v4 }
            }
            return socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        var v6 = sockaddr_in6()
        let bare = name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
        if inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = UInt16(port).bigEndian
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee = v6 }
            }
            return socklen_t(MemoryLayout<sockaddr_in6>.size)
        }
        throw SocketError(call: "inet_pton(\(host))", errno: EINVAL)
    }
}
