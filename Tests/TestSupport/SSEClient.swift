import Foundation
import Synchronization

/// An event-stream subscriber: sends one `GET` with `Accept: text/event-stream` on a
/// ``RawClient``, then reads the chunked body on a thread of its own (never on the cooperative
/// pool, which an in-process server needs) and parses it into ``SSEFrame``s.
///
/// ```swift
/// let stream = try SSEClient(port: server.port, path: "/v1/sessions/\(id)/events", headers: ["Authorization": "Bearer \(token)"])
/// defer { stream.close() }
/// #expect(await stream.status() == 200)
/// let frames = await stream.frames.events(1)
/// ```
public final class SSEClient: Sendable {
    /// The frames as they arrive; the stream finishes when the response ends or ``close()``.
    public let frames: AsyncStream<SSEFrame>
    private let connection: RawClient
    private let head = Mutex<(status: Int?, waiters: [CheckedContinuation<Int, Never>])>((nil, []))

    /// Connects to 127.0.0.1:`port` (over HTTPS with `tls`) and requests `path` with `headers` added.
    public init(port: Int, path: String, headers: [String: String] = [:], tls: TLSClientOptions? = nil) throws {
        connection = try RawClient(port: port, timeout: nil, tls: tls)
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try connection.send(request + "\r\n")
        let (stream, continuation) = AsyncStream.makeStream(of: SSEFrame.self)
        frames = stream
        let thread = Thread { [self] in
            self.read(into: continuation)
        }
        thread.start()
    }

    /// The response's status once its head arrived (0 when the connection closed first).
    public func status() async -> Int {
        await withCheckedContinuation { continuation in
            let known = head.withLock { head -> Int? in
                if let status = head.status { return status }
                head.waiters.append(continuation)
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
    }

    /// Stops reading: the connection is shut down and ``frames`` finishes.
    public func close() {
        connection.shutdown()
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

    /// The reading thread: the head, then every chunk through the parser.
    private func read(into continuation: AsyncStream<SSEFrame>.Continuation) {
        defer {
            setStatus(0)
            continuation.finish()
        }
        guard let (status, headers) = try? connection.readHead() else { return }
        setStatus(status)
        let isChunked = headers.contains {
            $0.name.lowercased() == "transfer-encoding" && $0.value.lowercased().contains("chunked")
        }
        guard isChunked else { return }
        var parser = SSEParser()
        while let chunk = try? connection.readChunk() {
            for frame in parser.consume(chunk) { continuation.yield(frame) }
        }
    }
}

extension AsyncStream where Element == SSEFrame {
    /// The next `count` event frames (comments skipped); fewer when the stream ends first or when
    /// `timeout` passes first (then those that did arrive). A timeout ends the stream: iterating an
    /// `AsyncStream` from a task that is cancelled finishes it.
    public func events(_ count: Int, timeout: Duration = .seconds(10)) async -> [SSEFrame] {
        let collected = FrameBox()
        _ = try? await withTimeout(timeout, "\(count) events") {
            for await frame in self where frame.comment == nil {
                if collected.append(frame) >= count { break }
            }
            return true
        }
        return collected.frames
    }
}

/// Frames collected by one task and read by another once it is done.
private final class FrameBox: Sendable {
    private let state = Mutex<[SSEFrame]>([])

    /// Appends a frame and returns how many there are now.
    func append(_ frame: SSEFrame) -> Int {
        state.withLock { frames in
            frames.append(frame)
            return frames.count
        }
    }

    var frames: [SSEFrame] { state.withLock { $0 } }
}
