import TestSupport
import Testing

@testable import HTTPCore
@testable import HTTPServer

@Suite struct RequestParserTests {
    private func parse(_ text: String, limits: HTTPLimits = HTTPLimits()) throws(HTTPRequestError) -> [RequestParser
        .Event]
    {
        let parser = RequestParser(limits: limits)
        parser.append(Array(text.utf8))
        var events: [RequestParser.Event] = []
        while let event = try parser.next() { events.append(event) }
        return events
    }

    private func request(_ text: String) throws -> (Request, Bool) {
        let events = try parse(text)
        guard events.count == 1, case .request(let request, let keepAlive) = events[0] else {
            Issue.record("expected one request, got \(events)")
            throw TestTimeout()
        }
        return (request, keepAlive)
    }

    private func error(_ text: String, limits: HTTPLimits = HTTPLimits()) -> HTTPRequestError? {
        do {
            _ = try parse(text, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test func parsesRequestLineHeadersPathAndQuery() throws {
        let (request, keepAlive) = try request(
            "GET /v1/sessions/a%20b%2Fc/push?after=3&q=x+y%26z&flag HTTP/1.1\r\nHost: h\r\nIf-Match: \"7\"  \r\n\r\n"
        )
        #expect(request.method == .get)
        #expect(request.target == "/v1/sessions/a%20b%2Fc/push?after=3&q=x+y%26z&flag")
        #expect(request.path == "/v1/sessions/a b/c/push")
        #expect(request.pathSegments == ["v1", "sessions", "a b/c", "push"])
        #expect(request.query == ["after": "3", "q": "x y&z", "flag": ""])
        #expect(request.headers["if-match"] == "\"7\"")
        #expect(request.headers["IF-MATCH"] == "\"7\"")
        #expect(request.body.isEmpty)
        #expect(keepAlive)
    }

    /// A request given back to the parser lends its storage to the next one, which carries
    /// nothing of the first (fields, segments, query, body, route, address); a request that
    /// someone still holds is left as it is.
    @Test func aRecycledRequestsStorageCarriesNothingIntoTheNext() throws {
        let parser = RequestParser()
        parser.append(
            Array(
                "POST /a/b/c?x=1 HTTP/1.1\r\nHost: h\r\nX-One: 1\r\nX-Two: 2\r\nContent-Length: 3\r\n\r\nabc".utf8))
        guard case .request(var first, _)? = try parser.next() else { throw TestTimeout() }
        first.remoteAddress = "127.0.0.1:1"
        first.route = "/a/b/c"
        first.parameters.append(name: "id", value: "7")
        parser.recycle(consume first)
        #expect(parser.hasSpareRequest)
        parser.append(Array("GET /d HTTP/1.0\r\nX-Three: 3\r\n\r\n".utf8))
        guard case .request(let second, false)? = try parser.next() else { throw TestTimeout() }
        #expect(second.method == .get)
        #expect(second.target == "/d")
        #expect(second.path == "/d")
        #expect(second.pathSegments == ["d"])
        #expect(second.query.isEmpty)
        #expect(second.minorVersion == 0)
        #expect(Array(second.headers.map(\.name)) == ["X-Three"])
        #expect(second.body.isEmpty)
        #expect(second.route == nil)
        #expect(second.parameters.isEmpty)
        #expect(second.remoteAddress == nil)
        #expect(second.routeTarget == nil)
        #expect(!parser.hasSpareRequest)

        // Held elsewhere (here by `kept`): not emptied, and the next request has storage of its own.
        let kept = second
        parser.recycle(second)
        #expect(!parser.hasSpareRequest)
        parser.append(Array("GET /e HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        guard case .request(let third, true)? = try parser.next() else { throw TestTimeout() }
        #expect(kept.target == "/d")
        #expect(Array(kept.headers.map(\.name)) == ["X-Three"])
        #expect(third.target == "/e")
        #expect(third.headers["host"] == "h")

        // A quiet connection gives its recycled request back at the second sweep without a request.
        parser.recycle(consume third)
        #expect(parser.hasSpareRequest)
        parser.releaseIdleSpare()  // a head was parsed since the last sweep
        #expect(parser.hasSpareRequest)
        parser.releaseIdleSpare()
        #expect(!parser.hasSpareRequest)
    }

    @Test func aHeadFedOneByteAtATimeGivesTheSameRequest() throws {
        let text = "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
        let parser = RequestParser()
        var events: [RequestParser.Event] = []
        for byte in Array(text.utf8) {
            parser.append([byte])
            while let event = try parser.next() { events.append(event) }
        }
        #expect(events.count == 1)
        guard case .request(let request, true)? = events.first else { throw TestTimeout() }
        #expect(request.body == Array("hello".utf8))
        #expect(request.method == .post)
    }

    @Test func decodesChunkedBodiesWithExtensionsAndTrailers() throws {
        let (request, _) = try request(
            "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;name=value\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n"
        )
        #expect(String(decoding: request.body, as: UTF8.self) == "hello 0123456789")
    }

    @Test func answersPipelinedRequestsInOrder() throws {
        let events = try parse(
            "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nPOST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nokGET /3 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
        )
        let targets = events.compactMap { event -> String? in
            if case .request(let request, _) = event { return request.target }
            return nil
        }
        #expect(targets == ["/1", "/2", "/3"])
        guard case .request(_, let keepAlive)? = events.last else { throw TestTimeout() }
        #expect(!keepAlive)
    }

    @Test func decidesKeepAliveByVersionAndConnectionField() throws {
        #expect(try request("GET / HTTP/1.1\r\nHost: h\r\n\r\n").1)
        #expect(try !request("GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Close\r\n\r\n").1)
        #expect(try !request("GET / HTTP/1.0\r\n\r\n").1)
        #expect(try request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").1)
    }

    @Test func asksForContinueBeforeTheBodyArrives() throws {
        let parser = RequestParser()
        parser.append(Array("PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8))
        #expect(try parser.next() == .sendContinue(Request(method: .put, path: "/x")))
        #expect(try parser.next() == nil)
        parser.append(Array("abc".utf8))
        guard case .request(let request, _)? = try parser.next() else { throw TestTimeout() }
        #expect(request.body == Array("abc".utf8))
    }

    @Test func refusesARequestLineOverItsLimitWith414EvenWhenTheHeadIsTooLarge() {
        let limits = HTTPLimits(maxHeadBytes: 100, maxRequestLineBytes: 50)
        let longTarget = "/" + String(repeating: "a", count: 200)
        #expect(error("GET \(longTarget) HTTP/1.1\r\nHost: h\r\n\r\n", limits: limits)?.code == .uriTooLong)
        #expect(error("GET \(longTarget)", limits: limits)?.code == .uriTooLong)
        #expect(
            error("GET /\r\nHost: h\r\nX: \(String(repeating: "b", count: 200))\r\n\r\n", limits: limits)?.code
                == .headerFieldsTooLarge)
        #expect(
            error("GET / HTTP/1.1\r\nHost: h\r\nX: \(String(repeating: "b", count: 200))", limits: limits)?.code
                == .headerFieldsTooLarge)
    }

    @Test func refusesTooManyHeaderFieldsWith431() {
        let fields = (0..<101).map { "X-\($0): v\r\n" }.joined()
        #expect(error("GET / HTTP/1.1\r\nHost: h\r\n\(fields)\r\n")?.code == .headerFieldsTooLarge)
    }

    @Test func refusesBodiesOverTheLimitWith413() {
        let limits = HTTPLimits(maxBodyBytes: 10)
        #expect(
            error("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n", limits: limits)?.code == .contentTooLarge)
        #expect(
            error("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n")?.code
                == .contentTooLarge)
        #expect(
            error(
                "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n5\r\nabcde\r\n",
                limits: limits)?
                .code == .contentTooLarge
        )
    }

    @Test(arguments: [
        "\u{1}\u{2}garbage\r\n\r\n",
        "GET / HTTP/1.1\r\nHost : h\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nNo-Colon\r\n\r\n",
        "GET  / HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "GET / FTP/1.1\r\nHost: h\r\n\r\n",
        "GET nopath HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /%00 HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /%ff HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX: a\u{0}b\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -3\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
    ])
    func refusesMalformedRequestsWith400(_ text: String) {
        #expect(error(text)?.code == .badRequest)
    }

    @Test func refusesUnknownCodingsAndVersions() {
        #expect(
            error("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n")?.code == .notImplemented)
        #expect(error("GET / HTTP/2.0\r\nHost: h\r\n\r\n")?.code == .versionNotSupported)
    }

    @Test func acceptsBareLineFeedsAndLeadingEmptyLines() throws {
        let (request, _) = try request("\r\n\nGET /x HTTP/1.1\nHost: h\n\n")
        #expect(request.path == "/x")
    }

    @Test func takesThePathOfAnAbsoluteFormTarget() throws {
        let (request, _) = try request("GET http://example.com:80/a/b?c=d HTTP/1.1\r\nHost: example.com\r\n\r\n")
        #expect(request.path == "/a/b")
        #expect(request.query["c"] == "d")
    }
}

extension RequestParserTests {
    @Test func releasesALargeBufferOnceParsedButKeepsUnparsedBytes() throws {
        let parser = RequestParser()
        let body = String(repeating: "b", count: 10000)
        parser.append(
            Array("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 10000\r\n\r\n\(body)GET /y HTTP/1.1\r\n".utf8))
        guard case .request(let first, _)? = try parser.next() else { throw TestTimeout() }
        #expect(first.body.count == 10000)
        parser.releaseIdleBuffer()  // unparsed bytes of the next request remain
        #expect(parser.hasBufferedBytes)
        parser.append(Array("Host: h\r\n\r\n".utf8))
        guard case .request(let second, _)? = try parser.next() else { throw TestTimeout() }
        #expect(second.path == "/y")
        parser.releaseIdleBuffer()
        #expect(!parser.hasBufferedBytes)
        #expect(!parser.hasPartialRequest)
    }

    @Test func aStreamingConnectionGivesBackEvenASmallBufferButNotUnparsedBytes() throws {
        let parser = RequestParser()
        parser.append(Array("GET /events HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        guard case .request? = try parser.next() else { throw TestTimeout() }
        parser.releaseIdleBuffer()  // an idle connection keeps a small buffer for its next request
        #expect(parser.bufferCapacity > 0)
        parser.releaseIdleBuffer(keepingUpTo: 0)  // a stream's connection reads no request for long
        #expect(parser.bufferCapacity == 0)

        parser.append(Array("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b".utf8))
        guard case .request? = try parser.next() else { throw TestTimeout() }
        parser.releaseIdleBuffer(keepingUpTo: 0)
        #expect(parser.hasBufferedBytes)  // the next request's first bytes stay
        parser.append(Array(" HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        guard case .request(let second, _)? = try parser.next() else { throw TestTimeout() }
        #expect(second.path == "/b")
    }
}
