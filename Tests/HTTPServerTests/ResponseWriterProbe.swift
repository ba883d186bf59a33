@testable import HTTPServer

/// Reaches the writer's internal side (what the connection calls) for unit tests.
enum ResponseWriterProbe {
    static func make(highWaterMark: Int, send: @escaping @Sendable ([UInt8]) -> Void) -> ResponseWriter {
        ResponseWriter(highWaterMark: highWaterMark, send: send)
    }

    static func flushed(_ writer: ResponseWriter, _ count: Int) { writer.didFlush(count) }

    static func suspendedWrites(_ writer: ResponseWriter) -> Int { writer.suspendedWriteCount }

    static func close(_ writer: ResponseWriter) { writer.close() }
}
