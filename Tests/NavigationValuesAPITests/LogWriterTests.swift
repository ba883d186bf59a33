import Foundation
import Logging
import NavigationValues
import NavigationValuesAPI
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A pipe whose read end a thread of its own drains (when told to), collecting what arrives.
final class PipeCollector: Sendable {
    let readEnd: Int32
    let writeEnd: Int32
    private let received = Mutex<[UInt8]>([])
    private let isReading = Atomic<Bool>(false)

    init() throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw ClientError("pipe failed") }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    /// Starts reading until the write end is closed (and everything is read).
    func startReading() {
        guard isReading.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        let thread = Thread { [self] in
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count > 0 {
                    received.withLock { $0.append(contentsOf: chunk[..<count]) }
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
        thread.start()
    }

    var lines: [String] {
        let bytes = received.withLock { $0 }
        return bytes.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast().map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// Closes `writer`, then the write end, so that the reader sees the end of the stream. When
    /// the writer's thread did not stop, the write end stays open (and the test fails): a
    /// thread still writing to a closed number could write into another suite's file or socket.
    func closeWriting(after writer: LogWriter, sourceLocation: SourceLocation = #_sourceLocation) {
        guard writer.close() else {
            Issue.record("the log writer's thread did not stop", sourceLocation: sourceLocation)
            return
        }
        close(writeEnd)
    }

    deinit {
        close(readEnd)
    }
}

@Suite struct LogWriterTests {
    static let instant = Date(timeIntervalSince1970: 1_796_000_000.123)

    @Test(arguments: NavigationValuesLogHandler.Format.allCases)
    func linesArriveInOrderPromptlyAndAsTheCallbackLoggerFormatsThem(
        format: NavigationValuesLogHandler.Format
    ) async throws {
        let pipe = try PipeCollector()
        pipe.startReading()
        let writer = LogWriter(fileDescriptor: pipe.writeEnd)
        let logger = Logger(label: "test") { _ in
            NavigationValuesLogHandler(format: format, level: .debug, writer: writer, now: { Self.instant })
        }
        let reference = Mutex<[String]>([])
        let expected = Logger(label: "test") { _ in
            NavigationValuesLogHandler(format: format, level: .debug, now: { Self.instant }) { line in
                reference.withLock { $0.append(line) }
            }
        }
        for index in 0..<200 {
            let fields: Logger.Metadata = [
                "method": "GET", "route": "/v1/sessions/{id}", "status": .stringConvertible(200 + index % 3),
                "duration_ms": .stringConvertible(Double(index) / 7), "request_id": "r_\(index)",
                "text": index % 2 == 0 ? "a b \"c\" = \u{1}" : "plain-é", "empty": "",
                "list": [.stringConvertible(1), "x"],
            ]
            logger.log(level: index % 4 == 0 ? .debug : .info, "request", metadata: fields)
            expected.log(level: index % 4 == 0 ? .debug : .info, "request", metadata: fields)
        }
        // Nobody flushes: the lines must show up on their own, promptly.
        #expect(try await eventually(timeout: .seconds(30)) { pipe.lines.count == 200 })
        #expect(pipe.lines == reference.withLock { $0 })
        #expect(writer.droppedLines == 0)
        pipe.closeWriting(after: writer)
    }

    @Test func aFullBufferDropsAndCountsLinesAndNeverBlocksTheCaller() async throws {
        let pipe = try PipeCollector()  // not read yet: the pipe fills, then the buffer
        let writer = LogWriter(fileDescriptor: pipe.writeEnd, maxBufferedBytes: 4096)
        let logger = Logger(label: "test") { _ in
            NavigationValuesLogHandler(format: .text, level: .info, writer: writer, now: { Self.instant })
        }
        let total = 4_000
        let padding = String(repeating: "x", count: 100)
        for index in 0..<total {
            logger.info("line", metadata: ["index": .stringConvertible(index), "pad": .string(padding)])
        }
        // 4,000 lines of ~150 bytes are ~600 KB: far more than a pipe (64 KiB) and the buffer hold.
        let dropped = writer.droppedLines
        #expect(dropped > 0)
        #expect((logger.handler as? NavigationValuesLogHandler)?.droppedLines == dropped)
        pipe.startReading()
        #expect(try await offload { writer.flush(timeout: .seconds(60)) })  // blocks: off the pool
        #expect(try await eventually(timeout: .seconds(30)) { pipe.lines.count == total - dropped })
        // Every line that was kept is whole, and they are in the order they were logged.
        let indexes = pipe.lines.map { line -> Int in
            #expect(line.hasPrefix("2026-11-30T00:53:20.123Z info line index="))
            #expect(line.hasSuffix(" pad=\(padding)"))
            return Int(line.split(separator: " ")[3].dropFirst("index=".count)) ?? -1
        }
        #expect(indexes == indexes.sorted())
        #expect(Set(indexes).count == indexes.count)
        #expect(writer.droppedLines == dropped)
        pipe.closeWriting(after: writer)
    }

    @Test func metricsReportTheDroppedLines() async throws {
        let pipe = try PipeCollector()
        let writer = LogWriter(fileDescriptor: pipe.writeEnd, maxBufferedBytes: 4096)
        let logger = Logger(label: "test") { _ in NavigationValuesLogHandler(level: .info, writer: writer) }
        try await withRunningServer(configure: { $0.logger = logger }) { client, _ in
            let padding = String(repeating: "y", count: 200)
            for index in 0..<2_000 {
                logger.info("filler", metadata: ["index": .stringConvertible(index), "pad": .string(padding)])
            }
            let dropped = writer.droppedLines
            #expect(dropped > 0)
            let figure = try await SessionReadCacheTests.figure(client, "navigation_values_log_lines_dropped_total")
            #expect(figure >= dropped)
            #expect(figure <= writer.droppedLines)
            pipe.startReading()  // let the server's own lines through, so that it can stop
        }
        pipe.closeWriting(after: writer)
    }

    @Test func requestIDsAreDistinctAndKeepTheirShape() async throws {
        try await withRunningServer { client, _ in
            var seen = Set<String>()
            for _ in 0..<50 {
                let answer = try await client.send("GET", "/healthz")
                let id = try #require(answer.header("X-Request-Id"))
                #expect(id.utf8.count == 18)
                #expect(id.hasPrefix("r_"))
                #expect(
                    id.utf8.dropFirst(2).allSatisfy { byte in
                        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                            || byte == 0x2D || byte == 0x5F
                    })
                seen.insert(id)
            }
            #expect(seen.count == 50)
        }
    }
}
