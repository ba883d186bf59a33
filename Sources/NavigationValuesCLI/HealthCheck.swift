import ArgumentParser
import Foundation

#if canImport(Glibc)
    import CLibSSL
    import Glibc
#endif

/// `navigation-values healthcheck`: GETs `/healthz` of a local server and exits 0 when it answers
/// 200, else 1. For Docker's HEALTHCHECK, since slim images have no curl; it speaks HTTP over a
/// plain socket so the static binary needs no libcurl.
struct HealthCheck: Command {
    static let configuration = CommandConfiguration(
        commandName: "healthcheck",
        abstract: "Exit 0 when the server at --host/--port answers GET /healthz with 200.",
        discussion: """
            Connects to the server (default 127.0.0.1:8080, read from the same variables as 'serve'), \
            sends GET /healthz and exits 0 on a 200 answer within 5 seconds, 1 otherwise. With \
            --tls-cert (as 'serve' is given it, NAVIGATION_VALUES_TLS_CERT in a container) it speaks \
            HTTPS, without checking the certificate: it probes this machine's server, not its identity.
            """)

    @Option(.flag("host", "H", "Server address (default 127.0.0.1; 0.0.0.0 means this machine)."))
    var host: String?
    @Option(.flag("port", "P", "Server port (default 8080)."))
    var port: String?
    @Option(.flag("tls-cert", "PEM", "When set (to serve's certificate), speak HTTPS."), completion: .file())
    var tlsCert: String?

    func run(_ arguments: ParsedArguments) async throws {
        let host = arguments["host"] ?? "127.0.0.1"
        let port = try arguments.integer("port", in: 1...65_535) ?? 8080
        let usesTLS = arguments["tls-cert"] != nil
        let target = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host
        let statusLine = try Self.fetchStatusLine(host: target, port: port, usesTLS: usesTLS)
        guard statusLine.hasPrefix("HTTP/1.1 200") || statusLine.hasPrefix("HTTP/1.0 200") else {
            throw CommandFailure("GET /healthz answered '\(statusLine)'")
        }
        Console.out("ok")
    }

    /// Sends `GET /healthz` and returns the status line of the answer.
    static func fetchStatusLine(host: String, port: Int, usesTLS: Bool = false) throws -> String {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw CommandFailure("cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        let descriptor = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw CommandFailure("socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            throw CommandFailure("cannot connect to \(host):\(port): \(String(cString: strerror(errno)))")
        }
        let request = Array("GET /healthz HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8)
        let answer = try usesTLS
            ? exchangeOverTLS(descriptor, request) : exchange(descriptor, request)
        let line = String(decoding: answer, as: UTF8.self).split(separator: "\r\n").first.map(String.init) ?? ""
        guard !line.isEmpty else { throw CommandFailure("no answer from \(host):\(port)") }
        return line
    }

    /// Sends `request` and reads the answer's first line (or what came before the socket closed).
    private static func exchange(_ descriptor: Int32, _ request: [UInt8]) throws -> [UInt8] {
        guard send(descriptor, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else {
            throw CommandFailure("cannot send the request: \(String(cString: strerror(errno)))")
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while !answer.contains(UInt8(ascii: "\n")) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            answer += buffer[0..<count]
        }
        return answer
    }

    /// The same over TLS (1.2 or 1.3), on the blocking socket with its timeouts, the certificate unchecked.
    private static func exchangeOverTLS(_ descriptor: Int32, _ request: [UInt8]) throws -> [UInt8] {
        #if canImport(Glibc)
            guard let context = SSL_CTX_new(TLS_client_method()) else { throw CommandFailure("cannot make a TLS context") }
            defer { SSL_CTX_free(context) }
            guard let ssl = SSL_new(context) else { throw CommandFailure("cannot make a TLS connection") }
            defer { SSL_free(ssl) }
            guard clibssl_set_fd_without_sigpipe(ssl, descriptor) == 1, SSL_connect(ssl) == 1 else {
                throw CommandFailure("TLS handshake failed")
            }
            var written = 0
            guard SSL_write_ex(ssl, request, request.count, &written) == 1, written == request.count else {
                throw CommandFailure("cannot send the request over TLS")
            }
            var answer: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 1024)
            while !answer.contains(UInt8(ascii: "\n")) {
                var count = 0
                guard SSL_read_ex(ssl, &buffer, buffer.count, &count) == 1, count > 0 else { break }
                answer += buffer[0..<count]
            }
            return answer
        #else
            throw CommandFailure("HTTPS health checks need OpenSSL (Linux)")
        #endif
    }
}
