#if canImport(Glibc)
    import Glibc
#endif

/// Bytes waiting to be written to one socket, in order.
///
/// Response heads, small bodies and chunk framing are encoded straight into the queue's own
/// buffers (`encode`, `append(copying:)`), which it writes and then reuses for the next response
/// instead of allocating a buffer per response: a connection answering one small response after
/// another allocates nothing here once its first response is written. A large body or chunk is
/// queued as the array it came in (`append(sharing:)`), never copied. Pipelined responses share
/// the buffers, and on a plain socket one `sendmsg` writes several entries at once (a head and
/// the large body after it, say). For streams, each entry remembers how many payload bytes it
/// carries, which are reported back to the writer for back-pressure.
struct OutboundQueue {
    /// Encoded bytes go into the last buffer while it holds less than this.
    static let coalescingLimit = 64 * 1024
    /// Bodies up to this size are copied behind their head, so that the response is one
    /// contiguous write (one TLS record when it fits); larger ones are queued as they are.
    static let bodyCopyLimit = 16 * 1024
    /// A written buffer is kept for the next response up to this capacity; a larger one (a burst
    /// of pipelined responses) is freed.
    static let retainedCapacity = 64 * 1024
    /// Entries one `sendmsg` writes at most.
    static let maxVectors = 8

    struct Progress {
        /// Stream payload bytes whose entries were completely written.
        var payload = 0
        /// Bytes written to the socket by this flush.
        var written = 0
        /// Calls to `send`, `sendmsg` or `SSL_write` this flush made, the last that would block
        /// included.
        var calls = 0
    }

    private struct Entry {
        var bytes: [UInt8]
        var payload: Int
        /// The queue's own buffer, appended to while it is last and reused once written; a shared
        /// entry is someone else's array, never changed.
        var isOwned: Bool
    }

    private var entries: [Entry] = []
    private var first = 0
    /// Bytes of `entries[first]` already written.
    private var offset = 0
    /// A written buffer, emptied, waiting to be the next one.
    private var spare: [UInt8] = []
    /// Bytes queued and not yet written.
    private(set) var count = 0
    /// Whether bytes were queued since the last `releaseIfIdle()`.
    private var wasUsed = false

    var isEmpty: Bool { first == entries.count }

    /// The capacity of the written buffer kept for the next bytes.
    var spareCapacity: Int { spare.capacity }

    // MARK: - Queuing

    /// Appends to the queue's last buffer through `encode`, which may only append. `reserving`
    /// is how many bytes it is expected to add, so that the buffer grows once; `payload` how many
    /// of them are a stream's.
    mutating func encode(reserving expected: Int, payload: Int = 0, _ encode: (inout [UInt8]) -> Void) {
        let last = ownedTail()
        let before = entries[last].bytes.count
        let needed = before + expected
        if needed > entries[last].bytes.capacity {
            // Doubling at least, as appending would: reserving exactly what is needed each time
            // would reallocate on every response of a pipelined burst.
            entries[last].bytes.reserveCapacity(max(needed, entries[last].bytes.capacity * 2))
        }
        encode(&entries[last].bytes)
        entries[last].payload += payload
        count += entries[last].bytes.count - before
    }

    /// Appends a copy of `bytes` to the queue's last buffer.
    mutating func append(copying bytes: [UInt8], payload: Int = 0) {
        guard !bytes.isEmpty else { return }
        encode(reserving: bytes.count, payload: payload) { $0.append(contentsOf: bytes) }
    }

    /// Queues `bytes` as they are, without copying them.
    mutating func append(sharing bytes: [UInt8], payload: Int = 0) {
        guard !bytes.isEmpty else { return }
        startEntriesIfDrained()
        entries.append(Entry(bytes: bytes, payload: payload, isOwned: false))
        count += bytes.count
        wasUsed = true
    }

    /// The index of the owned buffer to append to: the last entry when it is one with room,
    /// else a new entry on the spare buffer (or a new one).
    private mutating func ownedTail() -> Int {
        wasUsed = true
        if first < entries.count, entries[entries.count - 1].isOwned,
            entries[entries.count - 1].bytes.count < Self.coalescingLimit
        {
            return entries.count - 1
        }
        startEntriesIfDrained()
        var buffer: [UInt8] = []
        swap(&buffer, &spare)
        entries.append(Entry(bytes: buffer, payload: 0, isOwned: true))
        return entries.count - 1
    }

    private mutating func startEntriesIfDrained() {
        guard first == entries.count, first > 0 else { return }
        entries.removeAll(keepingCapacity: true)
        first = 0
        offset = 0
    }

    /// Frees the buffers kept for reuse when nothing was queued since the last call, so that a
    /// connection that has gone quiet holds no write buffer. Called by the loop's periodic sweep.
    mutating func releaseIfIdle() {
        defer { wasUsed = false }
        guard !wasUsed, isEmpty, spare.capacity > 0 || entries.capacity > 0 else { return }
        spare = []
        entries = []
        first = 0
        offset = 0
    }

    // MARK: - Writing

    /// Writes until done or the socket would block, through `tls` when the connection has it.
    /// - Throws: `SocketError` when the peer is gone.
    mutating func flush(to fd: Int32, tls: TLSStream? = nil) throws(SocketError) -> Progress {
        var progress = Progress()
        while first < entries.count {
            let result: IOResult<Int>
            progress.calls += 1
            if let tls {
                result = try writeFirst(through: tls)
            } else {
                result = try send(to: fd)
            }
            guard case .processed(let written) = result else { break }
            advance(by: written, progress: &progress)
        }
        if first == entries.count {
            entries.removeAll(keepingCapacity: entries.capacity <= 16)
            first = 0
            offset = 0
        } else if first > 32 {
            entries.removeFirst(first)
            first = 0
        }
        return progress
    }

    /// Marks `written` bytes from the front as written: entries done are dropped (an owned buffer
    /// becomes the spare) and their payload counted.
    private mutating func advance(by written: Int, progress: inout Progress) {
        progress.written += written
        count -= written
        var remaining = written
        while remaining > 0, first < entries.count {
            let left = entries[first].bytes.count - offset
            if remaining < left {
                offset += remaining
                return
            }
            remaining -= left
            progress.payload += entries[first].payload
            var done: [UInt8] = []
            swap(&done, &entries[first].bytes)
            if entries[first].isOwned, done.capacity <= Self.retainedCapacity, done.capacity > spare.capacity {
                done.removeAll(keepingCapacity: true)
                spare = done
            }
            first += 1
            offset = 0
        }
    }

    /// One `SSL_write` of the first entry's unwritten bytes (TLS needs them contiguous; a retry
    /// after `.wouldBlock` starts with the same bytes, as OpenSSL requires).
    private func writeFirst(through tls: TLSStream) throws(SocketError) -> IOResult<Int> {
        let start = offset
        return try entries[first].bytes.withUnsafeBytes { bytes in
            Result { () throws(SocketError) in try tls.write(UnsafeRawBufferPointer(rebasing: bytes[start...])) }
        }.get()
    }

    /// One `send`, or one `sendmsg` of up to `maxVectors` entries.
    private func send(to fd: Int32) throws(SocketError) -> IOResult<Int> {
        let vectorCount = min(entries.count - first, Self.maxVectors)
        if vectorCount == 1 {
            let start = offset
            return try entries[first].bytes.withUnsafeBytes { bytes in
                Result { () throws(SocketError) in
                    try Socket.send(fd, UnsafeRawBufferPointer(rebasing: bytes[start...]))
                }
            }.get()
        }
        return try withUnsafeTemporaryAllocation(of: iovec.self, capacity: vectorCount) { vectors in
            gather(entry: first, into: vectors, filled: 0, fd: fd)
        }.get()
    }

    /// Points `vectors[filled...]` at the entries from `entry` on, each inside its own
    /// `withUnsafeBytes`, and sends them once all are filled.
    private func gather(
        entry: Int, into vectors: UnsafeMutableBufferPointer<iovec>, filled: Int, fd: Int32
    ) -> Result<IOResult<Int>, SocketError> {
        if filled == vectors.count {
            return Result { () throws(SocketError) in try Socket.send(fd, vectors) }
        }
        let start = filled == 0 ? offset : 0
        return entries[entry].bytes.withUnsafeBytes { bytes in
            let pending = UnsafeRawBufferPointer(rebasing: bytes[start...])
            vectors[filled] = iovec(
                iov_base: UnsafeMutableRawPointer(mutating: pending.baseAddress), iov_len: pending.count)
            return gather(entry: entry + 1, into: vectors, filled: filled + 1, fd: fd)
        }
    }
}
