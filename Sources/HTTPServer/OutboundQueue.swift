/// Bytes waiting to be written to one socket. Small writes are coalesced into one buffer, so a
/// response usually leaves in a single `send`. For streams, each entry remembers how many
/// payload bytes it carries, which are reported back to the writer for back-pressure.
struct OutboundQueue {
    /// Appends to the last buffer while it stays under this size.
    static let coalescingLimit = 64 * 1024

    struct Progress {
        /// Stream payload bytes whose entries were completely written.
        var payload = 0
        /// Bytes written to the socket by this flush.
        var written = 0
    }

    private var buffers: [[UInt8]] = []
    private var payloads: [Int] = []
    private var first = 0
    /// Bytes of `buffers[first]` already written.
    private var offset = 0

    var isEmpty: Bool { first == buffers.count }

    mutating func append(_ bytes: [UInt8], payload: Int = 0) {
        guard !bytes.isEmpty else { return }
        if first < buffers.count, buffers[buffers.count - 1].count + bytes.count <= Self.coalescingLimit {
            buffers[buffers.count - 1].append(contentsOf: bytes)
            payloads[payloads.count - 1] += payload
        } else {
            if first == buffers.count {
                buffers.removeAll(keepingCapacity: true)
                payloads.removeAll(keepingCapacity: true)
                first = 0
            }
            buffers.append(bytes)
            payloads.append(payload)
        }
    }

    /// Writes until done or the socket would block, through `tls` when the connection has it.
    /// - Throws: `SocketError` when the peer is gone.
    mutating func flush(to fd: Int32, tls: TLSStream? = nil) throws(SocketError) -> Progress {
        var progress = Progress()
        while first < buffers.count {
            let start = offset
            let result = buffers[first].withUnsafeBytes { bytes in
                Result { () throws(SocketError) in
                    let pending = UnsafeRawBufferPointer(rebasing: bytes[start...])
                    if let tls { return try tls.write(pending) }
                    return try Socket.send(fd, pending)
                }
            }
            guard case .processed(let written) = try result.get() else { break }
            offset += written
            progress.written += written
            if offset == buffers[first].count {
                progress.payload += payloads[first]
                buffers[first] = []
                first += 1
                offset = 0
            }
        }
        if first == buffers.count {
            buffers.removeAll(keepingCapacity: buffers.capacity <= 16)
            payloads.removeAll(keepingCapacity: payloads.capacity <= 16)
            first = 0
        } else if first > 32 {
            buffers.removeFirst(first)
            payloads.removeFirst(first)
            first = 0
        }
        return progress
    }
}
