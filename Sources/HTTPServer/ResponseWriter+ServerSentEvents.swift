extension ResponseWriter {
    /// Sends one server-sent event (HTML Living Standard §9.2.6): `id:`, `event:`, one `data:`
    /// line per line of `data`, then a blank line. Line breaks in `id` and `event` are removed.
    ///
    /// ```swift
    /// try await writer.writeEvent(id: "4", event: "screen.pushed", data: #"{"seq":4}"#)
    /// ```
    /// - Throws: `ResponseWriter.ClosedError` once the client is gone or the stream has ended.
    public func writeEvent(id: String? = nil, event: String? = nil, data: String) async throws {
        var text = ""
        if let id { text += "id: \(Self.singleLine(id))\n" }
        if let event { text += "event: \(Self.singleLine(event))\n" }
        for line in data.split(
            omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
        {
            text += "data: \(line)\n"
        }
        text += "\n"
        try await write(text)
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
