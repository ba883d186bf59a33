import Foundation
import NavigationValues
import NavigationValuesAPI
import Synchronization
import TestSupport
import Testing

/// Collects log lines in memory.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }

    func logger(level: Logger.Level = .info, format: Logger.Format = .text) -> Logger {
        Logger(level: level, format: format, now: { Date(timeIntervalSince1970: 1_796_000_000) }) { line in
            self.lines.withLock { $0.append(line) }
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

@Suite struct LoggerTests {
    @Test func levelsBelowTheLoggersAreDropped() {
        let log = LogLines()
        let logger = log.logger(level: .warning)
        logger.log(.debug, "a")
        logger.log(.info, "b")
        logger.log(.warning, "c")
        logger.log(.error, "d")
        #expect(log.all == ["2026-11-30T00:53:20.000Z warning c", "2026-11-30T00:53:20.000Z error d"])
    }

    @Test func textValuesWithSpacesOrQuotesAreQuoted() {
        let log = LogLines()
        log.logger().log(
            .info, "m", ["plain": "x", "spaced": "a b", "quoted": "say \"hi\"", "number": 1.5, "empty": ""])
        #expect(
            log.all == [
                #"2026-11-30T00:53:20.000Z info m plain=x spaced="a b" quoted="say \"hi\"" number=1.5 empty="""#
            ])
    }
}
