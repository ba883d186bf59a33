/// One server-sent event (its `id:`, `event:` and `data:` fields), or one comment line.
public struct SSEFrame: Sendable, Equatable {
    /// The `id:` field.
    public var id: String?
    /// The `event:` field.
    public var event: String?
    /// The `data:` lines, joined with newlines.
    public var data: String?
    /// The text of a `:` comment line, trimmed (`keep-alive` for `: keep-alive`); such a frame has
    /// no other field.
    public var comment: String?

    /// A frame with these fields.
    public init(id: String? = nil, event: String? = nil, data: String? = nil, comment: String? = nil) {
        self.id = id
        self.event = event
        self.data = data
        self.comment = comment
    }
}

/// Splits an event stream's text into frames as bytes arrive (HTML Living Standard §9.2.6: a
/// field name, a colon, one optional space, the value; a blank line ends an event). A comment is
/// a frame of its own, in the order it came.
///
/// ```swift
/// var parser = SSEParser()
/// let frames = parser.consume(Array("id: 1\nevent: session.created\ndata: {}\n\n".utf8))
/// ```
public struct SSEParser: Sendable {
    private var line: [UInt8] = []
    private var frame = SSEFrame()

    /// A parser at the start of a stream.
    public init() {}

    /// Feeds the next bytes of the stream; returns the frames they complete.
    public mutating func consume(_ bytes: some Sequence<UInt8>) -> [SSEFrame] {
        var frames: [SSEFrame] = []
        for byte in bytes {
            guard byte == 0x0A else {
                line.append(byte)
                continue
            }
            if line.last == 0x0D { line.removeLast() }
            let text = String(decoding: line, as: UTF8.self)
            line.removeAll(keepingCapacity: true)
            if let done = endLine(text) { frames.append(done) }
        }
        return frames
    }

    private mutating func endLine(_ text: String) -> SSEFrame? {
        if text.isEmpty {
            defer { frame = SSEFrame() }
            return frame == SSEFrame() ? nil : frame
        }
        if text.hasPrefix(":") {
            return SSEFrame(comment: text.dropFirst().trimmingSpaces())
        }
        let name: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            name = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            name = text[...]
            value = ""
        }
        switch name {
        case "id": frame.id = String(value)
        case "event": frame.event = String(value)
        case "data": frame.data = frame.data.map { $0 + "\n" + value } ?? String(value)
        default: break  // unknown fields are ignored (§9.2.6)
        }
        return nil
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
