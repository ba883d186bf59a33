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
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == 0x0A { continue }  // the LF of a CR LF
            }
            switch byte {
            case 0x0A:
                if let event = endLine() { events.append(event) }
            case 0x0D:
                afterCarriageReturn = true
                if let event = endLine() { events.append(event) }
            default:
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else { return dispatch() }
        guard line[0] != 0x3A else { return nil }  // ": keep-alive"
        let colon = line.firstIndex(of: 0x3A) ?? line.endIndex
        var valueStart = colon == line.endIndex ? colon : line.index(after: colon)
        if valueStart < line.endIndex, line[valueStart] == 0x20 { valueStart += 1 }
        let value = line[valueStart...]
        switch line[..<colon].elementsEqual("data".utf8) ? "data" : String(decoding: line[..<colon], as: UTF8.self) {
        case "data":
            if hasData { data.append(0x0A) }
            data.append(contentsOf: value)
            hasData = true
        case "id":
            // An id with NUL is ignored (§9.2.6).
            if !value.contains(0) { id = String(decoding: value, as: UTF8.self) }
        case "event":
            event = String(decoding: value, as: UTF8.self)
        default:
            break  // `retry` and unknown fields: the client keeps its own reconnection policy
        }
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
