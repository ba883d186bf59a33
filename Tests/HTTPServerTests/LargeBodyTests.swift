import TestSupport
import Testing

@testable import HTTPServer

/// Routes allowed bodies over the usual limit (`HTTPLimits.largeBodies`), and the memory budget
/// every connection shares for them.
@Suite struct LargeBodyTests {
    private let limits = HTTPLimits(
        maxBodyBytes: 10,
        largeBodies: [.init(method: .post, path: "/upload", maxBodyBytes: 100)],
        maxLargeBodyBytesInFlight: 150)

    private func head(_ method: String, _ path: String, length: Int, extra: String = "") -> [UInt8] {
        Array("\(method) \(path) HTTP/1.1\r\nHost: h\r\nContent-Length: \(length)\r\n\(extra)\r\n".utf8)
    }

    private func events(_ parser: RequestParser) throws(HTTPRequestError) -> [RequestParser.Event] {
        var events: [RequestParser.Event] = []
        while let event = try parser.next() { events.append(event) }
        return events
    }

    @Test func aLargeBodyRouteTakesUpToItsOwnLimitAndNoMore() throws {
        let budget = BodyBudget(bytes: limits.maxLargeBodyBytesInFlight)
        let parser = RequestParser(limits: limits, budget: budget)
        parser.append(head("POST", "/upload", length: 100) + Array(repeating: 0x61, count: 100))
        let received = try events(parser)
        guard case .request(let request, _)? = received.first else {
            Issue.record("expected a request, got \(received)")
            return
        }
        #expect(request.body.count == 100)
        #expect(budget.availableBytes == 50)

        let over = RequestParser(limits: limits, budget: budget)
        over.append(head("POST", "/upload", length: 101))
        #expect(throws: HTTPRequestError(.contentTooLarge, detail: "The body is over 100 bytes.")) {
            _ = try events(over)
        }
    }

    @Test func otherRoutesMethodsAndChunkedBodiesKeepTheUsualLimit() {
        let budget = BodyBudget(bytes: limits.maxLargeBodyBytesInFlight)
        for (method, path) in [("POST", "/upload/more"), ("PUT", "/upload"), ("POST", "/other")] {
            let parser = RequestParser(limits: limits, budget: budget)
            parser.append(head(method, path, length: 11))
            #expect(throws: HTTPRequestError(.contentTooLarge, detail: "The body is over 10 bytes.")) {
                _ = try events(parser)
            }
        }
        let chunked = RequestParser(limits: limits, budget: budget)
        chunked.append(
            Array(
                "POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nb\r\nhello world\r\n0\r\n\r\n"
                    .utf8))
        #expect(throws: HTTPRequestError.self) { _ = try events(chunked) }
        // Without a budget (a parser outside a server), no route gets more.
        let unbudgeted = RequestParser(limits: limits)
        unbudgeted.append(head("POST", "/upload", length: 11))
        #expect(throws: HTTPRequestError(.contentTooLarge, detail: "The body is over 10 bytes.")) {
            _ = try events(unbudgeted)
        }
        #expect(budget.availableBytes == 150)
    }

    @Test func aLargeBodyThatDoesNotFitIs503AndItsRoomReturnsWithTheLastCopyOfTheRequest() throws {
        let budget = BodyBudget(bytes: limits.maxLargeBodyBytesInFlight)
        let first = RequestParser(limits: limits, budget: budget)
        // The room is taken when the head arrives, before the body does.
        first.append(head("POST", "/upload", length: 100, extra: "Expect: 100-continue\r\n"))
        let waiting = try events(first)
        #expect(waiting.count == 1)
        #expect(budget.availableBytes == 50)

        let second = RequestParser(limits: limits, budget: budget)
        second.append(head("POST", "/upload", length: 60))
        do {
            _ = try events(second)
            Issue.record("a body over the room left was taken")
        } catch {
            #expect(error.code == .serviceUnavailable)
            #expect(error.status.code == 503)
            #expect(error.headers["retry-after"] == "1")
        }
        // A small body on the same route needs no room.
        let small = RequestParser(limits: limits, budget: budget)
        small.append(head("POST", "/upload", length: 5) + Array("hello".utf8))
        #expect(try events(small).count == 1)
        #expect(budget.availableBytes == 50)

        first.append(Array(repeating: 0x62, count: 100))
        var request: Request? = nil
        if case .request(let received, _)? = try events(first).first { request = received }
        #expect(request?.body.count == 100)
        #expect(budget.availableBytes == 50, "held while the request is")
        request = nil
        #expect(budget.availableBytes == 150, "given back with the request")
        _ = request
    }

    @Test func aConnectionGoneMidBodyGivesItsRoomBack() throws {
        let budget = BodyBudget(bytes: limits.maxLargeBodyBytesInFlight)
        do {
            let parser = RequestParser(limits: limits, budget: budget)
            parser.append(head("POST", "/upload", length: 100) + Array(repeating: 0x63, count: 40))
            #expect(try events(parser).isEmpty)
            #expect(budget.availableBytes == 50)
        }
        #expect(budget.availableBytes == 150)
    }
}
