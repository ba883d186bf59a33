import BenchmarkSupport
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension Bench {
    /// The floor under the fan-out figure on this machine, in the same run: the same reader
    /// thread and 1,000 loopback connections, fed by a writer that does nothing but the sends.
    ///
    /// Two threads (one per event loop of the server's default on two cores) each write one
    /// ready chunk, an SSE frame of an event's size, to 500 sockets; the next push starts once
    /// the reader has every frame. The stand-in for the push's 2xx is when this thread wakes to
    /// the first thread's end: the server answers right after its event loop has written its
    /// share of the fan-out (the answer is queued behind those writes on the same loop). What
    /// remains from there to the last subscriber is the other half's sends and the reader's
    /// backlog, which a server that sends at all pays too.
    static func fanOutFloor() throws {
        say("\n== Fan-out floor: the same reader and \(fanOutSubscribers) connections, two threads that only send ==")
        let listener = try FloorListener()
        defer { listener.close() }
        let reader = try StreamReader.open(
            count: fanOutSubscribers, port: listener.port, path: "/floor", token: "floor", expectedEvents: fanOutPushes)
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        let head = Array("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for _ in 0..<fanOutSubscribers {
            let fd = try listener.accept()
            sockets.append(fd)
            try RawSocket.sendAll(fd, head)
        }
        reader.start()
        var answered: [Int64: UInt64] = [:]
        do {
            try reader.waitForHeads(timeout: .seconds(30))
            let halves = [Array(sockets[..<(sockets.count / 2)]), Array(sockets[(sockets.count / 2)...])]
            let senders = halves.map { FloorSender(sockets: $0) }
            for sender in senders { sender.start() }
            defer { for sender in senders { sender.stop() } }
            let before = ThreadCPU.now()
            for push in 0..<fanOutPushes {
                let seq = Int64(push) + 2
                let chunk = floorChunk(seq: seq)
                for sender in senders { sender.send(chunk) }
                // Taken when this thread wakes to the first half's end, as the pushing thread
                // takes the 2xx's when it wakes to read it.
                try senders[0].waitUntilSent()
                answered[seq] = ProcessFigures.now()
                try senders[1].waitUntilSent()
                try reader.waitForEvents(fanOutSubscribers * (push + 1), timeout: .seconds(10))
            }
            let deliveries = Double(fanOutSubscribers * fanOutPushes)
            let spent = ThreadCPU.now().since(before).filter { ["floor-sender", "stream-reader"].contains($0.key) }
            say(
                "  CPU per delivery, µs by thread: "
                    + spent.sorted { $0.key < $1.key }.map { String(format: "%@ %.2f", $0.key, Double($0.value) / 1_000 / deliveries) }
                    .joined(separator: ", "))
        } catch {
            _ = reader.stop()
            throw error
        }
        var last: [Int64: UInt64] = [:]
        for stream in reader.stop() {
            for (id, arrival) in zip(stream.ids, stream.arrivals) { last[id] = max(last[id] ?? 0, arrival) }
        }
        let toLast = answered.compactMap { seq, at -> UInt64? in
            guard let arrival = last[seq] else { return nil }
            return arrival > at ? arrival - at : 0
        }.sorted()
        say(
            "  first half written -> frame at the last of the \(fanOutSubscribers) subscribers, per push: "
                + "p50 \(Statistics.milliseconds(Statistics.quantile(toLast, 0.5))), "
                + "p99 \(Statistics.milliseconds(Statistics.quantile(toLast, 0.99))) "
                + "(the floor under maxLastSubscriberFanOutP99Milliseconds here; load \(ProcessFigures.loadAverage()))")
    }

    /// One event as the server frames it (`id`, `event`, one `data` line of about a push event's
    /// JSON), as one HTTP chunk.
    private static func floorChunk(seq: Int64) -> [UInt8] {
        let json = #"{"seq":\#(seq),"type":"screen.pushed","at":"2026-01-01T00:00:00.000Z","screen":{"id":"s\#(seq)","name":"Detail \#(seq)","values":{"index":\#(seq)},"handlers":{},"preferences":{}},"stack":"main"}"#
        let frame = Array("id: \(seq)\nevent: screen.pushed\ndata: \(json)\n\n".utf8)
        return Array(String(frame.count, radix: 16).utf8) + [13, 10] + frame + [13, 10]
    }
}

/// A listening socket on 127.0.0.1 with an ephemeral port, for the floor's connections.
private final class FloorListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError.system("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 4_096) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            let error = BenchError.system("bind/listen on 127.0.0.1")
            Glibc.close(fd)
            throw error
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// The next connection, blocking, with Nagle off as the server's.
    func accept() throws -> Int32 {
        while true {
            let connection = Glibc.accept(fd, nil, nil)
            if connection >= 0 {
                var one: Int32 = 1
                setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return connection
            }
            if errno == EINTR { continue }
            throw BenchError.system("accept")
        }
    }

    func close() { Glibc.close(fd) }
}

/// A thread that writes each chunk it is given to its sockets, one `send` each, and says when
/// it has written them all.
private final class FloorSender: @unchecked Sendable {
    // @unchecked: `chunk` is written by the caller before `go` is signalled and read by the
    // thread after it waits on `go`; `failure` the other way round, through `done`.
    private let sockets: [Int32]
    private var chunk: [UInt8] = []
    private var failure: String?
    private let go = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let isStopping = Atomic<Bool>(false)

    init(sockets: [Int32]) { self.sockets = sockets }

    func start() {
        let thread = Thread { [self] in
            nameCurrentThread("floor-sender")
            while true {
                go.wait()
                if isStopping.load(ordering: .acquiring) { return }
                for fd in sockets {
                    do {
                        try RawSocket.sendAll(fd, chunk)
                    } catch {
                        failure = "\(error)"
                        break
                    }
                }
                done.signal()
            }
        }
        thread.start()
    }

    func send(_ chunk: [UInt8]) {
        self.chunk = chunk
        go.signal()
    }

    /// Returns once the thread has written the chunk to every socket.
    func waitUntilSent() throws {
        guard done.wait(timeout: .now() + 10) == .success else { throw BenchError("floor sender stuck") }
        if let failure { throw BenchError("floor sender: \(failure)") }
    }

    func stop() {
        isStopping.store(true, ordering: .releasing)
        go.signal()
    }
}
