#if canImport(Glibc)
    import Foundation
    import NavigationValues
    import NavigationValuesAPI
    import NavigationValuesWire
    import TestSupport
    import Testing

    @testable import NavigationValuesClient

    /// The HTTP/1.1 transport over sockets the client uses for `http://` on Linux: which base URLs
    /// it takes, its chunked decoding, and kept-alive connections the server closed meanwhile.
    @Suite struct SocketTransportTests {
        @Test func itCarriesPlainHTTPWithoutAProxyAndLeavesTheRestToURLSession() throws {
            let plain = try #require(URL(string: "http://127.0.0.1:8080/prefix"))
            let tls = try #require(URL(string: "https://example.com"))
            #expect(SocketTransport.canCarry(plain, environment: [:]))
            #expect(!SocketTransport.canCarry(tls, environment: [:]))
            #expect(!SocketTransport.canCarry(plain, environment: ["http_proxy": "http://proxy:3128"]))
            #expect(!SocketTransport.canCarry(plain, environment: ["ALL_PROXY": "socks5://proxy"]))
            #expect(SocketTransport.canCarry(plain, environment: ["http_proxy": "", "no_proxy": ""]))
            #expect(
                SocketTransport.canCarry(
                    plain, environment: ["http_proxy": "http://p", "no_proxy": "localhost,127.0.0.1"]))
            let inside = try #require(URL(string: "http://api.internal.example:80"))
            #expect(SocketTransport.canCarry(inside, environment: ["HTTP_PROXY": "http://p", "NO_PROXY": ".example"]))
            #expect(SocketTransport.canCarry(inside, environment: ["HTTP_PROXY": "http://p", "NO_PROXY": "*"]))
            #expect(!SocketTransport.canCarry(inside, environment: ["HTTP_PROXY": "http://p", "NO_PROXY": "other"]))
            #expect(HTTPTransport.defaultTransport(for: plain, .init()) is SocketTransport)
            #expect(HTTPTransport.defaultTransport(for: tls, .init()) is URLSessionTransport)
        }

        @Test func chunkedBodiesDecodeWhateverPiecesTheyArriveIn() throws {
            let coded = Array(
                "4;ext=1\r\nWiki\r\n7\r\npedia i\r\nB\r\nn \r\nchunks.\r\n0\r\nTrailer: x\r\n\r\nNEXT".utf8)
            for size in [1, 2, 3, 5, 8, 13, coded.count] {
                var decoder = ChunkedDecoder()
                var payload: [UInt8] = []
                var rest: [UInt8] = []
                var start = 0
                while start < coded.count {
                    let piece = coded[start..<min(coded.count, start + size)]
                    start += size
                    if decoder.isDone {
                        rest += piece
                        continue
                    }
                    let (decoded, after) = try decoder.decode(piece)
                    payload += decoded
                    rest += after
                }
                #expect(decoder.isDone)
                #expect(String(decoding: payload, as: UTF8.self) == "Wikipedia in \r\nchunks.", "pieces of \(size)")
                #expect(String(decoding: rest, as: UTF8.self) == "NEXT", "pieces of \(size)")
            }
            var bad = ChunkedDecoder()
            #expect(throws: URLError.self) { try bad.decode(Array("zz\r\n".utf8)[...]) }
        }

        @Test func answerHeadsKeepTheConnectionOnlyWhenTheyMay() throws {
            func head(_ text: String) throws -> AnswerHead {
                try #require(AnswerHead(Array(text.utf8)[...]))
            }
            #expect(try head("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n").keepsAlive)
            #expect(try head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n").keepsAlive)
            #expect(try !head("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n").keepsAlive)
            #expect(try !head("HTTP/1.1 200 OK\r\n").keepsAlive, "delimited by the connection's end")
            #expect(try !head("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n").keepsAlive)
            let joined = try head("HTTP/1.1 204 No Content\r\nVary: a\r\nvary: b\r\nX-Y:  z \r\n")
            #expect(joined.headers["vary"] == "a, b" && joined.headers["x-y"] == "z" && joined.keepsAlive)
            #expect(AnswerHead(Array("SSH-2.0 hello\r\n".utf8)[...]) == nil)
        }

        @Test func aConnectionTheServerClosedWhileIdleIsNotALostAnswer() async throws {
            let retries = RetryNoticeLog()
            let configure: (inout NavigationValuesServer.Configuration) -> Void = {
                $0.idleTimeout = .milliseconds(200)
            }
            let configureClient: (inout NavigationValuesClient.Configuration) -> Void = {
                $0.onRetry = { retries.record($0) }
            }
            try await withServer(configure: configure, client: configureClient) { client, _ in
                let session = try await client.createSession(root: ScreenSeed("Home"))
                try await session.push("A")
                // The server closes the kept-alive connection after 200 ms of silence.
                try await Task.sleep(for: .milliseconds(600))
                try await session.push("B")
                #expect(retries.notices.isEmpty, "\(retries.notices)")
                #expect(try await session.get().version == 3)
            }
        }

        @Test func cancellingACallEndsItsWaitAtOnce() async throws {
            try await withServer { client, _ in
                let session = try await client.createSession(root: ScreenSeed("Home"))
                // A long poll waits up to 30 s for an event that never comes, until cancelled.
                let poll = Task { try await session.poll(after: 1, wait: .seconds(30)) }
                try await Task.sleep(for: .milliseconds(200))
                let started = ContinuousClock.now
                poll.cancel()
                let outcome = await poll.result
                // Well before the poll's 30 s (immediate on an idle machine; the bound leaves room
                // for a loaded one).
                #expect(ContinuousClock.now - started < .seconds(10))
                #expect(throws: CancellationError.self) { try outcome.get() }
                // The client still works (the cancelled connection was not handed back).
                #expect(try await session.push("A").version == 2)
            }
        }
    }
#endif
