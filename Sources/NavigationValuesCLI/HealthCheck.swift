import ArgumentParser
import Foundation

#if canImport(Glibc)
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
            sends GET /healthz and exits 0 on a 200 answer within 5 seconds, 1 otherwise.
            """)

    @Option(.flag("host", "H", "Server address (default 127.0.0.1; 0.0.0.0 means this machine)."))
    var host: String?
    @Option(.flag("port", "P", "Server port (default 8080)."))
    var port: String?

    func run(_ arguments: ParsedArguments) async throws {
        let host = arguments["host"] ?? "127.0.0.1"
        let port = try arguments.integer("port", in: 1...65_535) ?? 8080
        let target = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host
        let statusLine = try Self.fetchStatusLine(host: target, port: port)
        guard statusLine.hasPrefix("HTTP/1.1 200") || statusLine.hasPrefix("HTTP/1.0 200") else {
            throw CommandFailure("GET /healthz answered '\(statusLine)'")
        }
        Console.out("ok")
    }

    /// Sends `GET /healthz` and returns the status line of the answer.
    static func fetchStatusLine(host: String, port: Int) throws -> String {
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
        let line = String(decoding: answer, as: UTF8.self).split(separator: "\r\n").first.map(String.init) ?? ""
        guard !line.isEmpty else { throw CommandFailure("no answer from \(host):\(port)") }
        return line
    }
}
