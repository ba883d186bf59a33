import Foundation
import HTTPCore
import Logging
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import Synchronization
import TestSupport
import Testing

@testable import NavigationValuesRoutes

/// Collects log lines in memory: a swift-log logger on the server's handler, made with
/// `Logger(label:factory:)` (tests never bootstrap the process's logging).
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }

    func logger(
        level: Logger.Level = .info, format: NavigationValuesLogHandler.Format = .text,
        metadataProvider: Logger.MetadataProvider? = nil
    ) -> Logger {
        Logger(label: "test") { _ in
            NavigationValuesLogHandler(
                format: format, level: level, metadataProvider: metadataProvider,
                now: { Date(timeIntervalSince1970: 1_796_000_000) }
            ) { line in
                self.lines.withLock { $0.append(line) }
            }
        }
    }
}

@Suite struct RequestLoggingTests {
    @Test func aClientRequestIDIsEchoedAndLogged() async throws {
        let log = LogLines()
        try await withRunningServer(configure: { $0.logger = log.logger() }) { client, _ in
            let answer = try await client.send("POST", "/v1/sessions", json: [:], headers: ["X-Request-Id": "client-7"])
            #expect(answer.header("X-Request-Id") == "client-7")
        }
        let line = try #require(log.all.first { $0.contains("request_id=client-7") })
        #expect(line.hasPrefix("2026-11-30T"))
        #expect(line.contains(" info request method=POST route=/v1/sessions status=201 duration_ms="))
    }

    @Test func anUnusableRequestIDIsReplacedByAGeneratedOne() async throws {
        let log = LogLines()
        try await withRunningServer(configure: { $0.logger = log.logger() }) { client, _ in
            let spaced = try await client.send("GET", "/v1/sessions/s_x", headers: ["X-Request-Id": "has space"])
            let generated = try #require(spaced.header("X-Request-Id"))
            #expect(generated.hasPrefix("r_"))
            let long = try await client.send(
                "GET", "/v1/sessions/s_x", headers: ["X-Request-Id": String(repeating: "a", count: 129)])
            #expect(long.header("X-Request-Id")?.hasPrefix("r_") == true)
            #expect(long.header("X-Request-Id") != generated)
        }
        // No token: 401, logged at info with the route pattern, never the id.
        #expect(
            log.all.filter { $0.contains(" info request method=GET route=/v1/sessions/{id} status=401 ") }.count == 2)
    }

    /// SipHash-2-4 with its 128-bit output, against the reference definition: key bytes 00…0f and
    /// the message 00…07 (computed with an independent implementation that reproduces the paper's
    /// 64-bit vector and the reference code's first 128-bit one).
    @Test func requestIDsAreSipHash128OfTheCounter() {
        let key: (UInt64, UInt64) = (0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908)
        let (first, second) = RequestIDGenerator.sipHash128(0x0706_0504_0302_0100, key: key)
        #expect(first == 0x61f5_5862_baa9_623b)
        #expect(second == 0xb497_14f3_64e2_830f)
    }

    /// Generated ids: `r_` and 16 base64url characters, each once; a generator's sequence follows
    /// from its key alone, and another key gives another sequence.
    @Test func generatedRequestIDsHaveTheirShapeAndFollowTheKey() {
        func generator(_ fill: UInt8) -> RequestIDGenerator {
            RequestIDGenerator(identifiers: IdentifierGenerator { [UInt8](repeating: fill, count: $0) })
        }
        let base64URL = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let one = generator(1)
        let ids = (0..<10_000).map { _ in one.next() }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.utf8.count == 18 && $0.hasPrefix("r_") && $0.utf8.dropFirst(2).allSatisfy(base64URL.contains) })
        let again = generator(1)
        #expect((0..<3).map { _ in again.next() } == Array(ids.prefix(3)))
        let other = generator(2)
        #expect(other.next() != ids[0])
    }

    @Test func probesLogAtDebugSoInfoHidesThem() async throws {
        let info = LogLines()
        let debug = LogLines()
        try await withRunningServer(configure: { $0.logger = info.logger(level: .info) }) { client, _ in
            try await client.send("GET", "/healthz")
            try await client.send("GET", "/metrics")
        }
        #expect(info.all.isEmpty)
        _ = try await withRunningServer(configure: { $0.logger = debug.logger(level: .debug) }) { client, _ in
            try await client.send("GET", "/healthz")
        }
        #expect(debug.all.count == 1)
        #expect(debug.all.first?.contains(" debug request method=GET route=/healthz status=200 ") == true)
    }

    @Test func jsonLinesCarryEveryFieldInOrder() async throws {
        let log = LogLines()
        _ = try await withRunningServer(configure: { $0.logger = log.logger(format: .json) }) { client, _ in
            try await client.send("DELETE", "/v1/sessions", headers: ["X-Request-Id": "abc"])
        }
        let line = try #require(log.all.first)
        #expect(line.hasPrefix(#"{"at":"2026-11-30T"#))
        #expect(
            line.contains(
                #""level":"info","message":"request","method":"DELETE","route":"/v1/sessions","status":405,"duration_ms":"#
            ))
        #expect(line.hasSuffix(#","request_id":"abc","client":"127.0.0.1"}"#))
        let object = try JSONValue(parsing: Array(line.utf8))
        #expect(object["status"] == 405)
    }
}

/// A value whose description is all a log shows of it.
private struct Opaque: CustomStringConvertible, Sendable {
    var description: String { "opaque thing" }
}

private struct Failure: Error, CustomStringConvertible {
    var description: String { "disk full" }
}

@Suite struct NavigationValuesLogHandlerTests {
    static let at = "2026-11-30T00:53:20.000Z"

    @Test func levelsBelowTheLoggersAreDroppedAndSevenLevelsCarryFourNames() {
        let log = LogLines()
        let logger = log.logger(level: .warning)
        logger.debug("a")
        logger.info("b")
        logger.notice("b2")
        logger.warning("c")
        logger.error("d")
        logger.critical("e")
        #expect(log.all == ["\(Self.at) warning c", "\(Self.at) error d", "\(Self.at) error e"])

        let all = LogLines()
        let every = all.logger(level: .trace)
        for level in Logger.Level.allCases { every.log(level: level, "\(level)") }
        #expect(
            all.all == [
                "\(Self.at) debug trace", "\(Self.at) debug debug", "\(Self.at) info info", "\(Self.at) info notice",
                "\(Self.at) warning warning", "\(Self.at) error error", "\(Self.at) error critical",
            ])
    }

    /// `--log-level NAME` sets the lowest swift-log level shown under NAME, so that a line named
    /// `debug` is never hidden at `--log-level debug`, and each name hides the ones below it.
    @Test func aLevelNameStandsForEverySwiftLogLevelItShows() throws {
        let names = NavigationValuesLogHandler.levelNames
        #expect(names == ["debug", "info", "warning", "error"])
        for (rank, name) in names.enumerated() {
            let lowest = try #require(NavigationValuesLogHandler.level(named: name))
            #expect(NavigationValuesLogHandler.name(of: lowest) == name)
            for level in Logger.Level.allCases {
                let levelRank = try #require(names.firstIndex(of: NavigationValuesLogHandler.name(of: level)))
                #expect((level >= lowest) == (levelRank >= rank), "\(level) under --log-level \(name)")
            }
        }
        #expect(NavigationValuesLogHandler.level(named: "notice") == nil)
        #expect(NavigationValuesLogHandler.level(named: "") == nil)
    }

    @Test func textValuesWithSpacesOrQuotesAreQuotedAndOtherFieldsSortedByName() {
        let log = LogLines()
        log.logger().info(
            "m",
            metadata: ["plain": "x", "spaced": "a b", "quoted": "say \"hi\"", "number": .stringConvertible(1.5), "empty": ""])
        #expect(
            log.all == [
                #"2026-11-30T00:53:20.000Z info m empty="" number=1.5 plain=x quoted="say \"hi\"" spaced="a b""#
            ])
    }

    /// Every kind of metadata value, in both formats: integers, floating-point numbers and Bools
    /// keep their type, arrays and dictionaries are JSON (keys sorted), anything else its description.
    @Test(arguments: NavigationValuesLogHandler.Format.allCases)
    func metadataOfEveryTypeKeepsItsShape(format: NavigationValuesLogHandler.Format) throws {
        let log = LogLines()
        let metadata: Logger.Metadata = [
            "a_string": "text", "b_int": .stringConvertible(-7), "c_int64": .stringConvertible(Int64.max),
            "d_uint8": .stringConvertible(UInt8(255)), "e_double": .stringConvertible(0.25),
            "f_whole": .stringConvertible(3.0), "g_float": .stringConvertible(Float(0.1)),
            "h_bool": .stringConvertible(true), "i_opaque": .stringConvertible(Opaque()),
            "j_array": [.stringConvertible(1), "x y"], "k_dictionary": ["z": "last", "a": .stringConvertible(1)],
            "l_huge": .stringConvertible(UInt64.max), "m_nan": .stringConvertible(Double.nan),
        ]
        log.logger(format: format).info("kinds", metadata: metadata)
        let line = try #require(log.all.first)
        switch format {
        case .text:
            #expect(
                line == "\(Self.at) info kinds a_string=text b_int=-7 c_int64=9223372036854775807 d_uint8=255"
                    + #" e_double=0.25 f_whole=3 g_float=0.1 h_bool=true i_opaque="opaque thing" j_array=[1,"x y"]"#
                    + #" k_dictionary={"a":1,"z":"last"} l_huge=18446744073709551615 m_nan=null"#)
        case .json:
            #expect(
                line
                    == #"{"at":"2026-11-30T00:53:20.000Z","level":"info","message":"kinds","a_string":"text","b_int":-7,"#
                    + #""c_int64":9223372036854775807,"d_uint8":255,"e_double":0.25,"f_whole":3,"g_float":0.1,"#
                    + #""h_bool":true,"i_opaque":"opaque thing","j_array":[1,"x y"],"k_dictionary":{"a":1,"z":"last"},"#
                    + #""l_huge":"18446744073709551615","m_nan":null}"#)
            let object = try JSONValue(parsing: Array(line.utf8))
            #expect(object["b_int"] == -7)
            #expect(object["h_bool"] == true)
        }
    }

    /// Quotes, backslashes, newlines and other control characters never split or forge a line: a
    /// value (and a message or name that has one) is a JSON string in text, escaped in JSON.
    @Test(arguments: NavigationValuesLogHandler.Format.allCases)
    func quotesNewlinesAndControlCharactersAreEscaped(format: NavigationValuesLogHandler.Format) throws {
        let log = LogLines()
        log.logger(format: format).warning(
            "two\nlines \"quoted\"",
            metadata: ["value": "a\nb\tc\u{1}d\u{7F}e\\f\"g", "key with space": "v", "plain-é": "é"])
        #expect(log.all.count == 1)
        let line = try #require(log.all.first)
        #expect(!line.contains("\n") && !line.contains("\t") && !line.contains("\u{1}"))
        switch format {
        case .text:
            #expect(
                line
                    == #"2026-11-30T00:53:20.000Z warning "two\nlines \"quoted\"" "key with space"=v plain-é=é value="a\nb\tc\u0001d"#
                    + "\u{7F}" + #"e\\f\"g""#)
        case .json:
            #expect(
                line
                    == #"{"at":"2026-11-30T00:53:20.000Z","level":"warning","message":"two\nlines \"quoted\"","key with space":"v","plain-é":"é","value":"a\nb\tc\u0001d"#
                    + "\u{7F}" + #"e\\f\"g"}"#)
            let object = try JSONValue(parsing: Array(line.utf8))
            #expect(object["value"] == "a\nb\tc\u{1}d\u{7F}e\\f\"g")
            #expect(object["message"] == "two\nlines \"quoted\"")
        }
    }

    /// A message with spaces but no control character stays bare in text, as the server's own
    /// messages always were.
    @Test func aPlainMessageIsWrittenAsItIs() {
        let log = LogLines()
        log.logger().error("tls certificate reload refused; the pair in force stays", error: Failure())
        #expect(log.all == ["\(Self.at) error tls certificate reload refused; the pair in force stays error=\"disk full\""])
    }

    /// The handler's own metadata, its provider's and the call's are merged (the call's wins),
    /// the server's fields come in their fixed order whatever the caller's, others sorted by
    /// name, and `error` last (the field, else the call's error).
    @Test(arguments: NavigationValuesLogHandler.Format.allCases)
    func aLoggersOwnMetadataIsMergedWithACallsInTheLinesOrder(format: NavigationValuesLogHandler.Format) throws {
        let log = LogLines()
        let provider = Logger.MetadataProvider { ["instance": "i-1", "zone": "provided"] }
        var logger = log.logger(format: format, metadataProvider: provider)
        logger[metadataKey: "zone"] = "own"
        logger[metadataKey: "component"] = "api"
        logger[metadataKey: "status"] = "overridden"
        logger.info(
            "request", error: Failure(),
            metadata: [
                "client": "127.0.0.1", "status": .stringConvertible(200), "method": "GET", "alpha": "first",
            ])
        logger.info("request", error: Failure(), metadata: ["error": "given"])
        #expect(logger[metadataKey: "zone"] == "own")
        let copy = logger
        logger[metadataKey: "component"] = "changed"
        #expect(copy[metadataKey: "component"] == "api", "metadata is a value, as swift-log asks")
        switch format {
        case .text:
            #expect(
                log.all == [
                    "\(Self.at) info request method=GET status=200 client=127.0.0.1 alpha=first component=api instance=i-1 zone=provided error=\"disk full\"",
                    "\(Self.at) info request status=overridden component=api instance=i-1 zone=provided error=given",
                ])
        case .json:
            #expect(
                log.all.first
                    == #"{"at":"2026-11-30T00:53:20.000Z","level":"info","message":"request","method":"GET","status":200,"client":"127.0.0.1","alpha":"first","component":"api","instance":"i-1","zone":"provided","error":"disk full"}"#
            )
        }
    }

    /// The request lines docs/Operations.md shows, byte for byte, from the fields RequestLogging
    /// gives (in another order: the lines' order is the handler's).
    @Test(arguments: NavigationValuesLogHandler.Format.allCases)
    func theDocumentedRequestLinesAreWrittenByteForByte(format: NavigationValuesLogHandler.Format) throws {
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "test") { _ in
            NavigationValuesLogHandler(format: format, now: { Date(timeIntervalSince1970: 1_796_032_801.25) }) { line in
                lines.withLock { $0.append(line) }
            }
        }
        logger.info(
            "request",
            metadata: [
                "client": "203.0.113.7", "request_id": "r_kq2VbWm1xYg9AaQe", "duration_ms": .stringConvertible(0.912),
                "status": .stringConvertible(201), "route": "/v1/sessions/{id}/push", "method": "POST",
            ])
        let operations = try String(
            contentsOf: repositoryRoot.appendingPathComponent("docs/Operations.md"), encoding: .utf8)
        let line = try #require(lines.withLock { $0.first })
        #expect(operations.contains("\n\(line)\n"), "\(line)")
        #expect(line.hasPrefix(format == .text ? "2026-11-30T10:00:01.250Z info request method=POST " : #"{"at":"#))
    }

    /// The writer's lines are exactly the ones the closure gets, for the same calls.
    @Test func aHandlerOnAWriterAndOneOnAClosureWriteTheSameLines() async throws {
        let pipe = try PipeCollector()
        pipe.startReading()
        let writer = LogWriter(fileDescriptor: pipe.writeEnd)
        let onWriter = Logger(label: "test") { _ in
            NavigationValuesLogHandler(format: .json, level: .trace, writer: writer, now: { LogWriterTests.instant })
        }
        let reference = Mutex<[String]>([])
        let onClosure = Logger(label: "test") { _ in
            NavigationValuesLogHandler(format: .json, level: .trace, now: { LogWriterTests.instant }) { line in
                reference.withLock { $0.append(line) }
            }
        }
        for logger in [onWriter, onClosure] {
            logger.notice("n", metadata: ["x": .stringConvertible(1)])
            logger.trace("t")
        }
        #expect(try await eventually(timeout: .seconds(30)) { pipe.lines.count == 2 })
        #expect(pipe.lines == reference.withLock { $0 })
        pipe.closeWriting(after: writer)
    }
}

/// A cause of a 500 whose description needs quoting and escaping.
private struct StoreFault: Error, CustomStringConvertible {
    var description: String { "disk \"full\"\nretry later" }
}

/// Request lines written straight into the handler's buffer (the server's own handler, adding no
/// fields of its own) and through swift-log (any other handler) are the same bytes.
@Suite struct RequestLoggingDirectPathTests {
    /// One request as the middleware logs it.
    struct Logged {
        var request: Request
        var route: String
        var status: Int
        var duration: Double
        var requestID: String
        var failure: (any Error)?
    }

    /// Every shape a request line takes: info, a debug probe, a 500 with its cause, a client's
    /// request id (the longest there is), a generated one, IPv4, IPv6 and an unknown client.
    static func requests() -> [Logged] {
        func request(_ method: HTTPMethod, _ path: String, from address: String?) -> Request {
            var request = Request(method: method, path: path)
            request.remoteAddress = address
            return request
        }
        let generated = RequestIDGenerator(identifiers: .live).next()
        return [
            Logged(
                request: request(.get, "/v1/sessions/s_1", from: "203.0.113.7:52100"), route: "/v1/sessions/{id}",
                status: 200, duration: 0.000_912_4, requestID: generated),
            Logged(
                request: request(.post, "/v1/sessions/s_1/push", from: "[2001:db8::1]:443"),
                route: "/v1/sessions/{id}/push", status: 201, duration: 12.345_678_9, requestID: "client-7"),
            Logged(
                request: request(.get, "/healthz", from: "127.0.0.1:40000"), route: "/healthz", status: 200,
                duration: 0, requestID: String(repeating: "~", count: 128)),
            Logged(
                request: request(.post, "/v1/sessions", from: "127.0.0.1:40001"), route: "/v1/sessions", status: 500,
                duration: 0.25, requestID: "r_kq2VbWm1xYg9AaQe", failure: StoreFault()),
            Logged(
                request: request(.delete, "/nowhere", from: nil), route: "unmatched", status: 404, duration: 0.001,
                requestID: "a=b"),
            Logged(
                request: request(.get, "/metrics", from: nil), route: "/metrics", status: 503, duration: 1,
                requestID: "r_AAAAAAAAAAAAAAAA", failure: StoreFault()),
        ]
    }

    /// Logs each of `requests` to `logger` through the middleware.
    static func logEach(_ requests: [Logged], to logger: Logger) {
        let logging = RequestLogging(logger: logger, metrics: Metrics())
        for logged in requests {
            logging.log(
                logged.request, route: logged.route, status: logged.status, duration: logged.duration,
                requestID: logged.requestID, failure: logged.failure)
        }
    }

    /// `handler` behind swift-log's `MultiplexLogHandler`, which the direct path does not take.
    static func wrapped(_ handler: any LogHandler) -> Logger {
        Logger(label: "test") { _ in MultiplexLogHandler([handler]) }
    }

    @Test(arguments: NavigationValuesLogHandler.Format.allCases, [Logger.Level.trace, .info])
    func bothPathsWriteTheSameBytes(format: NavigationValuesLogHandler.Format, level: Logger.Level) async throws {
        let direct = LogLines()
        let directLogger = direct.logger(level: level, format: format)
        let throughSwiftLog = LogLines()
        let wrappedLogger = Self.wrapped(throughSwiftLog.logger(level: level, format: format).handler)
        #expect(RequestLogging(logger: directLogger, metrics: Metrics()).directHandler != nil)
        #expect(RequestLogging(logger: wrappedLogger, metrics: Metrics()).directHandler == nil)

        // The direct path into a LogWriter's buffer, as the server runs.
        let pipe = try PipeCollector()
        pipe.startReading()
        let writer = LogWriter(fileDescriptor: pipe.writeEnd)
        let onWriter = Logger(label: "test") { _ in
            NavigationValuesLogHandler(
                format: format, level: level, writer: writer, now: { Date(timeIntervalSince1970: 1_796_000_000) })
        }
        #expect(RequestLogging(logger: onWriter, metrics: Metrics()).directHandler != nil)

        let requests = Self.requests()  // one generated id for all three
        Self.logEach(requests, to: directLogger)
        Self.logEach(requests, to: wrappedLogger)
        Self.logEach(requests, to: onWriter)

        let lines = direct.all
        // Probes are at debug: shown under trace, hidden under info, on both paths alike.
        #expect(lines.count == (level == .trace ? 6 : 5))
        #expect(lines == throughSwiftLog.all)
        #expect(try await eventually(timeout: .seconds(30)) { pipe.lines.count == lines.count })
        #expect(pipe.lines == lines)
        pipe.closeWriting(after: writer)

        // What the lines say, so that equal lines are not equally wrong.
        switch format {
        case .text:
            #expect(
                lines.contains(
                    "2026-11-30T00:53:20.000Z info request method=POST route=/v1/sessions/{id}/push status=201"
                        + " duration_ms=12345.679 request_id=client-7 client=2001:db8::1"))
            #expect(
                lines.contains(
                    "2026-11-30T00:53:20.000Z error request method=POST route=/v1/sessions status=500 duration_ms=250"
                        + #" request_id=r_kq2VbWm1xYg9AaQe client=127.0.0.1 error="disk \"full\"\nretry later""#))
            #expect(
                lines.contains(
                    "2026-11-30T00:53:20.000Z info request method=DELETE route=unmatched status=404 duration_ms=1"
                        + #" request_id="a=b" client=unknown"#))
        case .json:
            #expect(
                lines.contains(
                    #"{"at":"2026-11-30T00:53:20.000Z","level":"info","message":"request","method":"POST","#
                        + #""route":"/v1/sessions/{id}/push","status":201,"duration_ms":12345.679,"#
                        + #""request_id":"client-7","client":"2001:db8::1"}"#))
            #expect(
                lines.contains(
                    #"{"at":"2026-11-30T00:53:20.000Z","level":"error","message":"request","method":"POST","#
                        + #""route":"/v1/sessions","status":500,"duration_ms":250,"request_id":"r_kq2VbWm1xYg9AaQe","#
                        + #""client":"127.0.0.1","error":"disk \"full\"\nretry later"}"#))
            for line in lines {
                let object = try JSONValue(parsing: Array(line.utf8))
                if case .integer? = object["status"] {} else { Issue.record("status is not a number: \(line)") }
            }
        }
        if level == .trace {
            #expect(lines.contains { $0.contains("debug") && $0.contains("/healthz") })
        }
    }

    /// Fields the logger adds (its own metadata, a metadata provider's) keep every line on the
    /// swift-log path, where they are merged in; so does any handler not the server's.
    @Test func aLoggerWithFieldsOfItsOwnGoesThroughSwiftLog() throws {
        let log = LogLines()
        var withMetadata = log.logger()
        withMetadata[metadataKey: "instance"] = "i-1"
        let provided = LogLines()
        let withProvider = provided.logger(metadataProvider: Logger.MetadataProvider { ["zone": "z"] })
        #expect(RequestLogging(logger: withMetadata, metrics: Metrics()).directHandler == nil)
        #expect(RequestLogging(logger: withProvider, metrics: Metrics()).directHandler == nil)
        let noOp = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        #expect(RequestLogging(logger: noOp, metrics: Metrics()).directHandler == nil)
        Self.logEach(Self.requests(), to: withMetadata)
        Self.logEach(Self.requests(), to: withProvider)
        #expect(log.all.count == 5)
        #expect(log.all.allSatisfy { $0.contains(" instance=i-1") })
        #expect(provided.all.count == 5)
        #expect(provided.all.allSatisfy { $0.contains(" zone=z") })
        let first = try #require(log.all.first)
        #expect(first.hasPrefix("2026-11-30T00:53:20.000Z info request method=GET route=/v1/sessions/{id} status=200 "))
    }

    /// Request lines the writer cannot take are dropped and counted in `/metrics`, on the direct
    /// path as on swift-log's.
    @Test func requestLinesTheWriterDropsAreCountedInMetrics() async throws {
        let pipe = try PipeCollector()  // not read yet: the pipe fills, then the buffer
        let writer = LogWriter(fileDescriptor: pipe.writeEnd, maxBufferedBytes: 4096)
        let logger = Logger(label: "test") { _ in NavigationValuesLogHandler(level: .info, writer: writer) }
        try await withRunningServer(configure: { $0.logger = logger }) { client, _ in
            // About 250 bytes a line: 600 lines are more than the pipe (64 KiB) and the buffer hold.
            let id = String(repeating: "i", count: 128)
            for _ in 0..<600 {
                let answer = try await client.send("GET", "/v1/sessions/s_x", headers: ["X-Request-Id": id])
                #expect(answer.status == 401)
            }
            let dropped = writer.droppedLines
            #expect(dropped > 0)
            let figure = try await SessionReadCacheTests.figure(client, "navigation_values_log_lines_dropped_total")
            #expect(figure >= dropped)
            #expect(figure <= writer.droppedLines)
            pipe.startReading()  // let the server's own lines through, so that it can stop
        }
        pipe.closeWriting(after: writer)
        // The lines kept are whole.
        let kept = "info request method=GET route=/v1/sessions/{id} status=401 "
        #expect(try await eventually(timeout: .seconds(30)) { pipe.lines.filter { $0.contains(kept) }.count > 100 })
        #expect(pipe.lines.allSatisfy { !$0.contains("request method=") || $0.hasSuffix(" client=127.0.0.1") })
    }
}
