import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Client-side socket calls for the benchmarks: plain blocking connects to 127.0.0.1, then either
/// blocking reads with a timeout (the HTTP client) or non-blocking reads under poll(2) (the
/// stream readers).
public enum RawSocket {
    /// A TCP connection to 127.0.0.1:`port`, blocking, with Nagle off (each request is one write).
    public static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError.system("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        while true {
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if result == 0 { break }
            let code = errno
            if code == EINTR { continue }
            Glibc.close(fd)
            throw BenchError.system("connect to 127.0.0.1:\(port)", errno: code)
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// Makes reads on `fd` give up after `seconds` (they then fail with `EAGAIN`).
    public static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Makes calls on `fd` return `EAGAIN` instead of waiting.
    public static func setNonBlocking(_ fd: Int32) throws {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { throw BenchError.system("fcntl") }
    }

    /// Writes all of `bytes`, waiting up to 10 s for room when the socket is non-blocking.
    public static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                let rest = UnsafeRawBufferPointer(rebasing: buffer[offset...])
                return send(fd, rest.baseAddress, rest.count, Int32(MSG_NOSIGNAL))
            }
            if sent >= 0 {
                offset += sent
                continue
            }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                guard poll(&entry, 1, 10_000) > 0 else { throw BenchError("send: no room in 10 s") }
            default: throw BenchError.system("send", errno: code)
            }
        }
    }
}
