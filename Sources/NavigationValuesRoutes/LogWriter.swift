import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes log lines to a file descriptor from a thread of its own, so that no request's thread
/// waits for a `write(2)`: a line is formatted straight into a shared buffer (under a lock, no
/// string of its own), and the writer thread writes everything that accumulated since its last
/// write in one call. Lines appear promptly: the first line after a quiet spell wakes the
/// thread, which writes at once; under load it writes every millisecond what came meanwhile.
///
/// Bounded: at most `maxBufferedBytes` wait to be written. When the descriptor cannot keep up (a
/// slow disk, a pipe nobody reads), lines that do not fit are dropped and counted in
/// ``droppedLines`` (`navigation_values_log_lines_dropped_total` in `/metrics`); the thread that
/// logs never blocks and memory never grows past the bound.
///
/// ```swift
/// let writer = LogWriter(fileDescriptor: 2)
/// let logger = Logger(label: "navigation-values") { _ in NavigationValuesLogHandler(writer: writer) }
/// logger.info("started")
/// writer.close()  // writes what is left, then stops the thread
/// ```
public final class LogWriter: Sendable {
    private struct State {
        /// Lines waiting for the thread, each ending in a newline.
        var pending: [UInt8] = []
        /// The buffer the thread last wrote, emptied, to be swapped in next (no allocation).
        var spare: [UInt8] = []
        /// Whether the thread has been woken and not yet taken `pending`.
        var isWakePending = false
        /// Whether the thread sleeps until woken (it found nothing to write); otherwise it looks
        /// again after `pollInterval` on its own, and lines need not wake it.
        var isIdle = true
        var isClosed = false
        /// Bytes appended (and not dropped) since the start, and bytes written or given up.
        var appended = 0
        var finished = 0
        /// `flush` callers waiting until `finished` reaches their mark.
        var waiters: [(mark: Int, semaphore: DispatchSemaphore)] = []
    }

    /// The most bytes of lines waiting to be written; a line past it is dropped.
    public let maxBufferedBytes: Int
    private let fileDescriptor: Int32
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    /// Set once `close` saw the thread stop.
    private let hasStopped = Atomic<Bool>(false)
    private let dropped = Atomic<Int>(0)

    /// Starts the writer thread for `fileDescriptor` (2 for stderr), which stays open; at most
    /// `maxBufferedBytes` (at least 4 KiB) wait to be written.
    public init(fileDescriptor: Int32 = 2, maxBufferedBytes: Int = 1024 * 1024) {
        self.fileDescriptor = fileDescriptor
        self.maxBufferedBytes = max(4096, maxBufferedBytes)
        let thread = Thread { [self] in run() }
        thread.name = "log-writer"
        thread.start()
    }

    /// Lines dropped because the buffer was full (or the descriptor failed), since the start.
    public var droppedLines: Int { dropped.load(ordering: .relaxed) }

    /// Appends one line: `format` writes it (without its newline) into the buffer, under the lock.
    /// A line that would take the buffer past `maxBufferedBytes` is dropped and counted.
    func append(_ format: (inout [UInt8]) -> Void) {
        let mustWake = state.withLock { state -> Bool in
            guard !state.isClosed else { return false }
            let start = state.pending.count
            format(&state.pending)
            state.pending.append(0x0A)
            if state.pending.count > maxBufferedBytes {
                state.pending.removeSubrange(start...)
                dropped.add(1, ordering: .relaxed)
                return false
            }
            state.appended += state.pending.count - start
            guard state.isIdle, !state.isWakePending else { return false }
            state.isWakePending = true
            return true
        }
        if mustWake { wake.signal() }
    }

    /// Appends one line of text (without its newline).
    public func write(_ line: String) {
        append { $0.append(contentsOf: line.utf8) }
    }

    /// Returns once every line appended before the call is written, or after `timeout` (a
    /// descriptor that blocks must not hold up an exit for ever); whether it was all written.
    @discardableResult
    public func flush(timeout: Duration = .seconds(5)) -> Bool {
        let semaphore = DispatchSemaphore(value: 0)
        let (isDone, mustWake) = state.withLock { state -> (Bool, Bool) in
            if state.finished >= state.appended { return (true, false) }
            state.waiters.append((state.appended, semaphore))
            defer { state.isWakePending = true }
            return (false, !state.isWakePending)
        }
        if isDone { return true }
        if mustWake { wake.signal() }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        return semaphore.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
    }

    /// Writes what is left (waiting at most `timeout`), then stops the thread; lines appended
    /// afterwards are dropped silently.
    ///
    /// - Returns: whether the thread has stopped (it is given a second more). Only then is the
    ///   descriptor written no more, so that a caller may close it: a write to a closed number
    ///   could land in whatever file or socket got that number next.
    @discardableResult
    public func close(timeout: Duration = .seconds(5)) -> Bool {
        flush(timeout: timeout)
        let mustWake = state.withLock { state -> Bool in
            guard !state.isClosed else { return false }
            state.isClosed = true
            return true
        }
        if mustWake {
            wake.signal()
            if stopped.wait(timeout: .now() + .seconds(1)) == .success { hasStopped.store(true, ordering: .releasing) }
        }
        return hasStopped.load(ordering: .acquiring)
    }

    // MARK: - The thread

    /// How long the thread waits for more lines after a write before it looks again. Under load
    /// it writes every `pollInterval` whatever came meanwhile, and no line wakes it (a wake-up per
    /// line costs more than the write it saves); once a look finds nothing, it sleeps until the
    /// next line wakes it, which it writes at once.
    static let pollInterval: DispatchTimeInterval = .milliseconds(1)

    private func run() {
        var isIdle = true
        while true {
            if isIdle {
                wake.wait()
            } else {
                _ = wake.wait(timeout: .now() + Self.pollInterval)
            }
            var (batch, isClosed) = state.withLock { state -> ([UInt8], Bool) in
                state.isWakePending = false
                var batch: [UInt8] = []
                swap(&batch, &state.spare)  // the spare buffer becomes `pending`, no copy shared
                swap(&batch, &state.pending)
                state.isIdle = batch.isEmpty
                return (batch, state.isClosed)
            }
            isIdle = batch.isEmpty
            if !batch.isEmpty {
                if !writeAll(batch) {
                    dropped.add(batch.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }, ordering: .relaxed)
                }
            }
            let written = batch.count
            batch.removeAll(keepingCapacity: true)  // in place: it is the only reference
            // The emptied buffer is the next spare, unless it grew past twice the bound.
            let spare = batch.capacity <= maxBufferedBytes * 2 ? batch : []
            state.withLock { state in
                state.finished += written
                if state.spare.isEmpty { state.spare = spare }
                state.waiters.removeAll { waiter in
                    guard waiter.mark <= state.finished else { return false }
                    waiter.semaphore.signal()
                    return true
                }
            }
            if isClosed && written == 0 {
                stopped.signal()
                return
            }
        }
    }

    /// Writes every byte, across short writes and interruptions; false when the descriptor fails.
    private func writeAll(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return true }
            var offset = 0
            while offset < buffer.count {
                let result = systemWrite(fileDescriptor, base + offset, buffer.count - offset)
                if result > 0 {
                    offset += result
                } else if result < 0, errno == EINTR {
                    continue
                } else if result < 0, errno == EAGAIN {
                    var descriptor = pollfd(fd: fileDescriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&descriptor, 1, 100)
                } else {
                    return false
                }
            }
            return true
        }
    }
}

/// write(2), named apart from ``LogWriter/write(_:)``.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
    #else
        Darwin.write(descriptor, bytes, count)
    #endif
}
