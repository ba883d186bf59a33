extension ResponseWriter {
    /// Sends one server-sent event (HTML Living Standard §9.2.6): `id:`, `event:`, one `data:`
    /// line per line of `data`, then a blank line. Line breaks in `id` and `event` are removed.
    ///
    /// ```swift
    /// try await writer.writeEvent(id: "4", event: "screen.pushed", data: #"{"seq":4}"#)
    /// ```
    /// - Throws: `ResponseWriter.ClosedError` once the client is gone or the stream has ended.
    public func writeEvent(id: String? = nil, event: String? = nil, data: String) async throws {
        try await write(Self.eventFrame(id: id, event: event, data: data))
    }

    /// The bytes `writeEvent(id:event:data:)` sends, built in one buffer (the data's bytes are
    /// copied once): for a frame made once and written to many streams.
    ///
    /// ```swift
    /// let frame = ResponseWriter.eventFrame(id: "4", event: "screen.pushed", data: json)
    /// try await writer.write(frame)
    /// ```
    public static func eventFrame(id: String?, event: String?, data: String) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(data.utf8.count + 64)
        if let id { frame += Array("id: \(singleLine(id))\n".utf8) }
        if let event { frame += Array("event: \(singleLine(event))\n".utf8) }
        // One `data:` line per line of `data`, whatever its line breaks (LF, CRLF or CR).
        let prefix = Array("data: ".utf8)
        frame += prefix
        if !data.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) {
            frame.append(contentsOf: data.utf8)  // one line, such as an event's JSON
            frame.append(0x0A)
            frame.append(0x0A)
            return frame
        }
        var previous: UInt8 = 0
        for byte in data.utf8 {
            defer { previous = byte }
            if byte == 0x0A, previous == 0x0D { continue }  // the LF of a CRLF
            if byte == 0x0A || byte == 0x0D {
                frame.append(0x0A)
                frame += prefix
            } else {
                frame.append(byte)
            }
        }
        frame.append(0x0A)
        frame.append(0x0A)
        return frame
    }

    /// Sends a comment line, such as the `: keep-alive` that stops proxies from timing out a quiet stream.
    /// - Throws: `ResponseWriter.ClosedError` once the client is gone or the stream has ended.
    public func writeComment(_ comment: String) async throws {
        try await write(": \(Self.singleLine(comment))\n\n")
    }

    private static func singleLine(_ text: String) -> String {
        String(text.filter { $0 != "\n" && $0 != "\r" && $0 != "\r\n" })
    }
}
