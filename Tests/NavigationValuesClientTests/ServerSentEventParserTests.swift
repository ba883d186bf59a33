import Testing

@testable import NavigationValuesClient

/// The event-stream framing of HTML Living Standard §9.2.6, byte by byte.
@Suite struct ServerSentEventParserTests {
    func events(_ text: String, splitEvery size: Int? = nil) -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        let bytes = Array(text.utf8)
        guard let size else { return parser.consume(bytes) }
        var events: [ServerSentEvent] = []
        var start = 0
        while start < bytes.count {
            events += parser.consume(bytes[start..<min(start + size, bytes.count)])
            start += size
        }
        return events
    }

    func event(_ id: String?, _ type: String?, _ data: String) -> ServerSentEvent {
        ServerSentEvent(id: id, event: type, data: Array(data.utf8))
    }

    @Test func eventsAreSplitAtBlankLinesWhateverTheChunks() {
        let stream = "id: 1\nevent: screen.pushed\ndata: {\"seq\":1}\n\n: keep-alive\n\nid: 2\nevent: x\ndata: {}\n\n"
        let expected = [event("1", "screen.pushed", "{\"seq\":1}"), event("2", "x", "{}")]
        #expect(events(stream) == expected)
        for size in [1, 2, 3, 7, 16] { #expect(events(stream, splitEvery: size) == expected, "chunks of \(size)") }
    }

    @Test func lineEndingsMayBeCRLFOrCR() {
        #expect(events("id: 1\r\ndata: a\r\n\r\n") == [event("1", nil, "a")])
        #expect(events("id: 1\rdata: a\r\r") == [event("1", nil, "a")])
        #expect(events("data: a\r", splitEvery: 1) == [])
        #expect(events("data: a\r\n\r\n", splitEvery: 1) == [event(nil, nil, "a")])
    }

    @Test func dataLinesJoinAndOneSpaceAfterTheColonIsDropped() {
        #expect(events("data: a\ndata:b\ndata:  c\n\n") == [event(nil, nil, "a\nb\n c")])
        #expect(events("data\n\n") == [event(nil, nil, "")])
    }

    @Test func commentsUnknownFieldsAndEventsWithoutDataAreNotDispatched() {
        #expect(events(": keep-alive\n\n") == [])
        #expect(events("retry: 10\nfoo: bar\n\n") == [])
        #expect(events("event: x\n\ndata: y\n\n") == [event(nil, nil, "y")])
    }

    @Test func theLastIDCarriesOverAndAnIDWithNULIsIgnored() {
        #expect(events("id: 7\ndata: a\n\ndata: b\n\n") == [event("7", nil, "a"), event("7", nil, "b")])
        #expect(events("id: 7\ndata: a\n\nid: 8\u{0}\ndata: b\n\n").map(\.id) == ["7", "7"])
    }
}
