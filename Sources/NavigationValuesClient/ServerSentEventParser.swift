/// One server-sent event: its `id:`, `event:` and `data:` fields (the data lines joined with `\n`).
struct ServerSentEvent: Sendable, Equatable {
    var id: String?
    var event: String?
    var data: [UInt8]
}

/// Splits an event stream into events as its bytes arrive (HTML Living Standard §9.2.6): lines end
/// with LF, CR LF or CR; a line is `field: value` (one optional space after the colon) or a `:`
/// comment, ignored; a blank line dispatches the event; an event without data is not dispatched.
/// Unknown fields are ignored. A pure value: feed it bytes, take the events.
struct ServerSentEventParser: Sendable {
    private var line: [UInt8] = []
    private var afterCarriageReturn = false
    private var id: String?
    private var event: String?
    private var data: [UInt8] = []
    private var hasData = false

    /// Bytes held for an unfinished line or event.
    var bufferedByteCount: Int { line.count + data.count }

    /// Feeds the next bytes; returns the events they complete, in order.
    mutating func consume(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        if let events = bytes.withContiguousStorageIfAvailable({ consume(UnsafeRawBufferPointer($0)) }) {
            return events
        }
        return Array(bytes).withUnsafeBytes { consume($0) }
    }

    /// Splits `bytes` at line ends, handing each whole line to `endLine` as one run of bytes: a
    /// chunk of a stream holds many events, and copying it byte by byte into `line` cost more than
    /// the rest of reading an event (client-bench, perf).
    private mutating func consume(_ bytes: UnsafeRawBufferPointer) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        var start = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == 0x0A {  // the LF of a CR LF
                    index += 1
                    start = index
                    continue
                }
            }
            guard byte == 0x0A || byte == 0x0D else {
                index += 1
                continue
            }
            afterCarriageReturn = byte == 0x0D
            let rest = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
            if line.isEmpty {
                if let event = endLine(rest) { events.append(event) }
            } else {
                // The line began in an earlier chunk: finish it there.
                var whole = line
                line = []
                whole.append(contentsOf: rest)
                if let event = whole.withUnsafeBytes({ endLine($0) }) { events.append(event) }
                whole.removeAll(keepingCapacity: true)
                line = whole
            }
            index += 1
            start = index
        }
        line.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<bytes.count]))
        return events
    }

    private mutating func endLine(_ line: UnsafeRawBufferPointer) -> ServerSentEvent? {
        guard !line.isEmpty else { return dispatch() }
        guard line[0] != 0x3A else { return nil }  // ": keep-alive"
        let colon = line.firstIndex(of: 0x3A) ?? line.endIndex
        var valueStart = colon == line.endIndex ? colon : colon + 1
        if valueStart < line.endIndex, line[valueStart] == 0x20 { valueStart += 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[valueStart...])
        let field = UnsafeRawBufferPointer(rebasing: line[..<colon])
        if field.elementsEqual("data".utf8) {
            if hasData { data.append(0x0A) }
            data.append(contentsOf: value)
            hasData = true
        } else if field.elementsEqual("id".utf8) {
            // An id with NUL is ignored (§9.2.6).
            if !value.contains(0) { id = String(decoding: value, as: UTF8.self) }
        } else if field.elementsEqual("event".utf8) {
            event = String(decoding: value, as: UTF8.self)
        }
        // `retry` and unknown fields: the client keeps its own reconnection policy.
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            event = nil
            data.removeAll(keepingCapacity: true)
            hasData = false
        }
        guard hasData else { return nil }
        // The last event id persists across events (§9.2.6); ours carries one on every event.
        return ServerSentEvent(id: id, event: event, data: data)
    }
}
