import BenchmarkSupport
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Holds many SSE connections and reads them all on ONE thread with poll(2): no thread per
/// connection. Each connection's event ids and arrival times are kept for the caller, who reads
/// them after `stop()`.
///
/// ```swift
/// let reader = try StreamReader.open(count: 1_000, port: port, path: "/v1/sessions/\(id)/events?after=1", token: token)
/// reader.start()
/// try reader.waitForHeads(timeout: .seconds(30))
/// let streams = reader.stop()
/// ```
final class StreamReader: @unchecked Sendable {
    // @unchecked: `parsers` and `pollSet` belong to the reader thread between `start()` and the
    // end of `stop()`; the caller touches them only before `start()` and after `stop()` has
    // waited for the thread. Everything shared while it runs is atomic or behind a Mutex.
    private var parsers: [EventStreamParser]
    private var pollSet: [pollfd]
    private let descriptors: [Int32]

    /// Connections whose 200 head has arrived.
    let headCount = Atomic<Int>(0)
    /// Event ids read, over all connections.
    let eventCount = Atomic<Int>(0)
    /// Connections that ended (closed, refused or malformed) before `stop()`.
    let endedCount = Atomic<Int>(0)
    private let firstFailure = Mutex<String?>(nil)
    private let isStopping = Atomic<Bool>(false)
    /// The event count `waitForEvents` waits for (`Int.max` when none), and its wake-up.
    private let wanted = Atomic<Int>(.max)
    private let reached = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    private init(descriptors: [Int32], expectedEvents: Int) {
        self.descriptors = descriptors
        parsers = descriptors.map { _ in EventStreamParser(expectedEvents: expectedEvents) }
        pollSet = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    }

    /// Opens `count` connections and sends each the stream request; nothing is read yet.
    static func open(
        count: Int, port: Int, path: String, token: String, expectedEvents: Int = 0
    ) throws -> StreamReader {
        let request = Array(
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(token)\r\n\r\n"
                .utf8)
        var descriptors: [Int32] = []
        descriptors.reserveCapacity(count)
        do {
            for _ in 0..<count {
                let fd = try RawSocket.connect(port: port)
                descriptors.append(fd)
                try RawSocket.setNonBlocking(fd)
                try RawSocket.sendAll(fd, request)
            }
        } catch {
            for fd in descriptors { close(fd) }
            throw BenchError("opening stream \(descriptors.count + 1) of \(count): \(error)")
        }
        return StreamReader(descriptors: descriptors, expectedEvents: expectedEvents)
    }

    /// Starts the reader thread.
    func start() {
        let thread = Thread { [self] in
            self.run()
            self.finished.signal()
        }
        thread.name = "stream-reader"
        thread.start()
    }

    /// The first failure seen on any connection.
    var failure: String? { firstFailure.withLock { $0 } }

    /// Waits until every connection has its 200 head, or throws after `timeout`.
    func waitForHeads(timeout: Duration) throws {
        try wait(timeout: timeout, what: "stream heads") { headCount.load(ordering: .acquiring) >= descriptors.count }
    }

    /// Waits until `total` event ids were read over all connections, or throws after `timeout`.
    ///
    /// Sleeps until the reader thread says the count is reached (or 50 ms pass, to look for
    /// failures) rather than polling: the waiting thread then takes no CPU from the server and
    /// the reader while a fan-out is under way on the cores they share.
    func waitForEvents(_ total: Int, timeout: Duration) throws {
        wanted.store(total, ordering: .sequentiallyConsistent)
        defer { wanted.store(.max, ordering: .sequentiallyConsistent) }
        let deadline = ContinuousClock.now + timeout
        while eventCount.load(ordering: .sequentiallyConsistent) < total {
            if let failure { throw BenchError("waiting for \(total) events: \(failure)") }
            if endedCount.load(ordering: .relaxed) > 0 {
                throw BenchError("waiting for \(total) events: \(endedCount.load(ordering: .relaxed)) streams ended early")
            }
            guard ContinuousClock.now < deadline else {
                throw BenchError(
                    "waiting for \(total) events: timed out after \(timeout) (events \(eventCount.load(ordering: .relaxed)))")
            }
            _ = reached.wait(timeout: .now() + .milliseconds(50))
        }
    }

    private func wait(timeout: Duration, what: String, until isDone: () -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while !isDone() {
            if let failure { throw BenchError("waiting for \(what): \(failure)") }
            if endedCount.load(ordering: .relaxed) > 0 {
                throw BenchError("waiting for \(what): \(endedCount.load(ordering: .relaxed)) streams ended early")
            }
            guard ContinuousClock.now < deadline else {
                throw BenchError(
                    "waiting for \(what): timed out after \(timeout) (heads \(headCount.load(ordering: .relaxed)), "
                        + "events \(eventCount.load(ordering: .relaxed)))")
            }
            usleep(200)
        }
    }

    /// Stops the reader thread, closes every connection, and returns what each one read.
    func stop() -> [EventStreamParser] {
        isStopping.store(true, ordering: .releasing)
        if finished.wait(timeout: .now() + 10) == .timedOut {
            // The thread polls with a 50 ms timeout, so this means it is stuck in our own code.
            preconditionFailure("the stream reader thread did not stop within 10 s")
        }
        for fd in descriptors { close(fd) }
        return parsers
    }

    // MARK: - The reader thread

    private func run() {
        nameCurrentThread("stream-reader")
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !isStopping.load(ordering: .acquiring) {
            let ready = poll(&pollSet, nfds_t(pollSet.count), 50)
            if ready < 0 {
                if errno == EINTR { continue }
                record(BenchError.system("poll").description)
                return
            }
            guard ready > 0 else { continue }
            for index in pollSet.indices where pollSet[index].revents != 0 {
                pollSet[index].revents = 0
                drain(index, into: &buffer)
            }
        }
    }

    /// Reads everything waiting on connection `index`.
    private func drain(_ index: Int, into buffer: inout [UInt8]) {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(pollSet[index].fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                let time = ProcessFigures.now()
                let hadHead = parsers[index].hasHead
                let before = parsers[index].ids.count
                buffer.withUnsafeBytes {
                    parsers[index].consume(UnsafeRawBufferPointer(rebasing: $0[..<count]), at: time)
                }
                if !hadHead, parsers[index].hasHead { headCount.add(1, ordering: .releasing) }
                let added = parsers[index].ids.count - before
                if added > 0 {
                    let total = eventCount.add(added, ordering: .sequentiallyConsistent).newValue
                    let target = wanted.load(ordering: .sequentiallyConsistent)
                    if total >= target,
                        wanted.compareExchange(expected: target, desired: .max, ordering: .sequentiallyConsistent)
                            .exchanged
                    {
                        reached.signal()
                    }
                }
                if let failure = parsers[index].failure { record("stream \(index): \(failure)") }
                if parsers[index].hasEnded {
                    retire(index)
                    return
                }
                if count < buffer.count { return }
                continue
            }
            if count == 0 {
                record("stream \(index): the server closed the connection")
                retire(index)
                return
            }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return }
            record("stream \(index): " + BenchError.system("recv", errno: code).description)
            retire(index)
            return
        }
    }

    /// Stops polling connection `index` (its descriptor stays open until `stop()`).
    private func retire(_ index: Int) {
        guard pollSet[index].fd >= 0 else { return }
        pollSet[index].fd = -1
        endedCount.add(1, ordering: .releasing)
    }

    private func record(_ failure: String) {
        firstFailure.withLock { if $0 == nil { $0 = failure } }
    }
}
