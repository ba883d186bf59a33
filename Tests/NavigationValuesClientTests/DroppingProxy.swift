import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP relay on 127.0.0.1 in front of a server that can lose an answer on purpose: for the next
/// request whose first line starts with `dropAnswer(to:)`'s prefix, it forwards the request, waits
/// until the server starts answering (so the server has done the work), then closes the client's
/// connection without a byte of the answer. Everything else is relayed as it is. Real sockets, one
/// thread per direction of each connection.
final class DroppingProxy: Sendable {
    /// The port clients connect to.
    let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let state = Mutex<State>(State())

    private struct State {
        var dropPrefix: String?
        var dropped = 0
        var requests: [String] = []
        /// Each request line with the connection it came on (from 0, in accept order) and its
        /// place among that connection's requests (0: the first; more: a reused connection).
        var placed: [RelayedRequest] = []
        var connections = 0
        /// While true, every connection is closed as soon as it is accepted: the server looks gone.
        var isDown = false
        var sockets: [Int32] = []
        var isClosed = false
    }

    /// Relays to 127.0.0.1:`upstreamPort`.
    init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProxyError("socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            Glibc.close(fd)
            throw ProxyError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Loses the answer of the next request whose request line starts with `prefix`
    /// (`POST /v1/sessions/s_…/push`).
    func dropAnswer(to prefix: String) {
        state.withLock { $0.dropPrefix = prefix }
    }

    /// Takes the server away (every open connection cut, every new one closed at once) or
    /// brings it back.
    func setReachable(_ reachable: Bool) {
        state.withLock { state in
            state.isDown = !reachable
            // Shut down under the lock `forget(_:)` takes before a relay closes its sockets.
            if !reachable { for fd in state.sockets { shutdown(fd, Int32(SHUT_RDWR)) } }
        }
    }

    /// How many answers were lost so far.
    var droppedCount: Int { state.withLock { $0.dropped } }

    /// The request lines relayed (the dropped ones included), in arrival order.
    var requestLines: [String] { state.withLock { $0.requests } }

    /// A relayed request: its line, its connection, its place on that connection, and whether its
    /// answer was lost.
    struct RelayedRequest: Sendable, Equatable {
        var line: String
        var connection: Int
        var index: Int
        var dropped: Bool
    }

    /// The requests relayed, in arrival order, with their connections.
    var requests: [RelayedRequest] { state.withLock { $0.placed } }

    /// Stops accepting and ends every connection.
    ///
    /// Only shuts sockets down, which wakes the threads blocked on them; each is closed by the
    /// thread that uses it, once it is done with it (the listener by the accepting thread). A
    /// descriptor closed here could be handed out again at once, in this test process full of
    /// other suites' sockets and files, and the thread still using the old number would then
    /// accept, read or write on someone else's: another test's server would lose connections.
    /// The shutdowns run under the lock that ``forget(_:)`` takes before a relay closes its two
    /// sockets, so none is shut down after it was closed.
    func close() {
        state.withLock { state in
            // Once only: after the first, the accepting thread may have closed the listener.
            guard !state.isClosed else { return }
            state.isClosed = true
            shutdown(listener, Int32(SHUT_RDWR))
            for fd in state.sockets { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    // MARK: - Relaying

    private func acceptLoop() {
        // The only thread that uses the listener closes it, once accept fails for good (`close()`
        // shut it down).
        defer { Glibc.close(listener) }
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            if state.withLock({ $0.isDown }) {
                Glibc.close(client)
                continue
            }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                Glibc.close(client)
                Glibc.close(upstream)
                continue
            }
            let (isClosed, number) = state.withLock { state in
                state.sockets += [client, upstream]
                state.connections += 1
                return (state.isClosed, state.connections - 1)
            }
            if isClosed {
                shutdown(client, Int32(SHUT_RDWR))
                shutdown(upstream, Int32(SHUT_RDWR))
            }
            let connection = Connection(client: client, upstream: upstream, number: number)
            Thread { [self] in relayRequests(connection) }.start()
            Thread { [self] in relayAnswers(connection) }.start()
        }
    }

    /// One relayed connection; `dropNextAnswer` is set by the request side, read by the answer side.
    private final class Connection: Sendable {
        let client: Int32
        let upstream: Int32
        let number: Int
        let dropNextAnswer = Mutex(false)
        /// Requests seen on this connection so far.
        let requestCount = Mutex(0)
        private let relaysDone = Mutex(0)

        init(client: Int32, upstream: Int32, number: Int) {
            self.client = client
            self.upstream = upstream
            self.number = number
        }

        /// Called by each relay thread as it ends: the last one closes both sockets, so that
        /// neither thread ever uses a descriptor number the system may have handed out again.
        func relayEnded(_ proxy: DroppingProxy) {
            let done = relaysDone.withLock { count in
                count += 1
                return count
            }
            guard done == 2 else { return }
            proxy.forget(client, upstream)
            Glibc.close(client)
            Glibc.close(upstream)
        }
    }

    private func forget(_ sockets: Int32...) {
        state.withLock { state in state.sockets.removeAll { sockets.contains($0) } }
    }

    private func relayRequests(_ connection: Connection) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(connection.client, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            let chunk = Array(buffer[..<count])
            if let line = Self.requestLine(chunk) {
                let index = connection.requestCount.withLock { count in
                    defer { count += 1 }
                    return count
                }
                let drops = state.withLock { state in
                    state.requests.append(line)
                    let drops = state.dropPrefix.map { line.hasPrefix($0) } ?? false
                    if drops { state.dropPrefix = nil }
                    state.placed.append(
                        RelayedRequest(line: line, connection: connection.number, index: index, dropped: drops))
                    return drops
                }
                if drops { connection.dropNextAnswer.withLock { $0 = true } }
            }
            guard Self.sendAll(connection.upstream, chunk) else { break }
        }
        shutdown(connection.upstream, Int32(SHUT_WR))
        connection.relayEnded(self)
    }

    private func relayAnswers(_ connection: Connection) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(connection.upstream, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            if connection.dropNextAnswer.withLock({ $0 }) {
                // The server answered, so it has committed: lose the answer and the connection.
                state.withLock { $0.dropped += 1 }
                break
            }
            guard Self.sendAll(connection.client, Array(buffer[..<count])) else { break }
        }
        shutdown(connection.client, Int32(SHUT_RDWR))
        shutdown(connection.upstream, Int32(SHUT_RDWR))
        connection.relayEnded(self)
    }

    private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// The request line, when `chunk` starts a request (`GET `, `POST `, …).
    private static func requestLine(_ chunk: [UInt8]) -> String? {
        guard let end = chunk.firstIndex(of: 0x0D) ?? chunk.firstIndex(of: 0x0A) else { return nil }
        let line = String(decoding: chunk[..<end], as: UTF8.self)
        let methods = ["GET ", "POST ", "PUT ", "PATCH ", "DELETE ", "HEAD "]
        return methods.contains(where: line.hasPrefix) ? line : nil
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

struct ProxyError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
