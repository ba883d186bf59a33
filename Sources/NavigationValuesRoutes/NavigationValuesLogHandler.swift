import Foundation
import Logging
import NavigationValues
import NavigationValuesWire

/// The server's log lines as a swift-log `LogHandler`: one line per call, as text or JSON, with a
/// timestamp, a level name, the message and the metadata as fields. Lines go to a ``LogWriter``
/// (written from its own thread, batched, never blocking the caller) or, for tests, to a closure.
///
/// ```swift
/// let writer = LogWriter(fileDescriptor: 2)
/// let logger = Logger(label: "navigation-values") { _ in
///     NavigationValuesLogHandler(format: .json, level: .info, writer: writer)
/// }
/// logger.info("request", metadata: ["method": "GET", "status": .stringConvertible(200)])
/// ```
///
/// **Levels.** Lines carry four level names; swift-log's seven map onto them: `trace` and
/// `debug` are `debug`, `info` and `notice` are `info`, `warning` is `warning`, `error` and
/// `critical` are `error`. ``level(named:)`` gives the lowest swift-log level of a name, so that
/// a logger set from `--log-level debug` writes every line named `debug`.
///
/// **Fields.** The handler's own metadata, then its metadata provider's, then the call's (a later
/// one wins for the same key). Fields come in a fixed order: first those in ``fieldOrder`` in that
/// order (the server's own fields, as its lines have always had them), then any others sorted by
/// name, and `error` last (the call's `error:` when no `error` field is given). Values keep their
/// type in JSON: a `.stringConvertible` integer, floating-point number or Bool is written as a
/// JSON number or boolean, any other value as its description; arrays and dictionaries as JSON
/// (a dictionary's keys sorted).
///
/// **Text lines** are `<at> <level> <message> name=value …`. A value is written bare when it has
/// no space, quote, `=` or control character and is not empty; otherwise as a JSON string (quoted,
/// escaped). A message or a name with a control character is written as a JSON string too, so
/// that no line can be split or forged by what it carries.
public struct NavigationValuesLogHandler: LogHandler {
    /// The shape of a line (`--log-format`).
    public enum Format: String, Sendable, CaseIterable {
        /// `2026-11-30T10:00:00.000Z info request method=GET route=/healthz status=200`
        case text
        /// `{"at":"2026-11-30T10:00:00.000Z","level":"info","message":"request","method":"GET",…}`
        case json
    }

    /// The level names lines carry, lowest first (`--log-level`'s choices).
    public static let levelNames = ["debug", "info", "warning", "error"]

    /// The name a line at `level` carries.
    public static func name(of level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: "debug"
        case .info, .notice: "info"
        case .warning: "warning"
        case .error, .critical: "error"
        }
    }

    /// The lowest swift-log level whose lines carry `name` (so a logger set to it writes all of
    /// them), or nil for a name that is not one of ``levelNames``.
    public static func level(named name: String) -> Logger.Level? {
        switch name {
        case "debug": .trace
        case "info": .info
        case "warning": .warning
        case "error": .error
        default: nil
        }
    }

    /// The server's own fields, in the order its lines write them; other fields follow, sorted
    /// by name, and `error` comes last.
    public static let fieldOrder = [
        "method", "route", "status", "duration_ms", "request_id", "client",  // a request
        "db", "sync",  // started
        "subject", "not_after",  // tls
        "peer", "reason",  // tls handshake failed
        "signal",  // stopping
        "ended", "purged", "compacted_events", "expired_records",  // retention
    ]
    private static let orderedFields = Set(fieldOrder)

    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    /// The shape of each line.
    public let format: Format
    /// Where lines go when a ``LogWriter`` writes them (formatted straight into its buffer).
    public let writer: LogWriter?
    private let write: (@Sendable (String) -> Void)?
    private let now: @Sendable () -> Date

    /// A handler whose lines `writer` writes from its own thread, batched.
    public init(
        format: Format = .text, level: Logger.Level = .info, writer: LogWriter,
        metadataProvider: Logger.MetadataProvider? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.format = format
        self.logLevel = level
        self.writer = writer
        self.write = nil
        self.metadataProvider = metadataProvider
        self.now = now
    }

    /// A handler that hands each line, without its newline, to `write` (tests collect them so).
    public init(
        format: Format = .text, level: Logger.Level = .info, metadataProvider: Logger.MetadataProvider? = nil,
        now: @escaping @Sendable () -> Date = { Date() }, write: @escaping @Sendable (String) -> Void
    ) {
        self.format = format
        self.logLevel = level
        self.writer = nil
        self.write = write
        self.metadataProvider = metadataProvider
        self.now = now
    }

    /// Lines the writer dropped because it could not keep up (0 without a ``LogWriter``).
    public var droppedLines: Int { writer?.droppedLines ?? 0 }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let at = now()
        emit { out in appendLine(event, at: at, to: &out) }
    }

    /// Writes one line of `fields` at `level`, as ``log(event:)`` writes a call's metadata, but
    /// without a `LogEvent` or a metadata dictionary: ``RequestLogging``'s lines, for a handler
    /// with no metadata of its own and no metadata provider (whose fields would join a call's).
    /// The caller checks the level first, as `Logger` does with ``logLevel``.
    func logLine<Fields: LogLineFields>(level: Logger.Level, message: String, fields: Fields, error: (any Error)?) {
        let at = now()
        emit { out in
            Self.appendLine(
                format: format, at: at, level: level, message: message, fields: fields, error: error, to: &out)
        }
    }

    /// Hands one line, which `appendLine` writes (without its newline), to the writer, formatted
    /// straight into its buffer, or to the closure as a string.
    private func emit(_ appendLine: (inout [UInt8]) -> Void) {
        if let writer {
            writer.append(appendLine)
        } else if let write {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(160)
            appendLine(&bytes)
            write(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// The fields of `event`: the handler's metadata, its provider's, then the call's.
    private func fields(of event: LogEvent) -> Logger.Metadata {
        let provided = metadataProvider?.get() ?? [:]
        // The common case, a handler with no metadata of its own: the call's, not copied.
        if metadata.isEmpty && provided.isEmpty { return event.metadata ?? [:] }
        var merged = metadata
        merged.merge(provided) { _, new in new }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        return merged
    }

    /// Appends the line of `event` (without its newline) to `out`.
    func appendLine(_ event: LogEvent, at: Date, to out: inout [UInt8]) {
        Self.appendLine(
            format: format, at: at, level: event.level, message: event.message.description,
            fields: MetadataFields(metadata: fields(of: event)), error: event.error, to: &out)
    }

    /// Appends one line (without its newline) to `out`: the one formatter of every line, whether
    /// its fields come from swift-log metadata or straight from ``RequestLogging``.
    static func appendLine<Fields: LogLineFields>(
        format: Format, at: Date, level: Logger.Level, message: String, fields: Fields, error: (any Error)?,
        to out: inout [UInt8]
    ) {
        let levelName = name(of: level)
        switch format {
        case .json:
            // Built by hand to keep the field order: at, level, message, then the fields.
            out.append(contentsOf: #"{"at":""#.utf8)
            Timestamp.write(at, to: &out)
            out.append(contentsOf: #"","level":""#.utf8)
            out.append(contentsOf: levelName.utf8)
            out.append(contentsOf: #"","message":"#.utf8)
            JSONValue.writeString(message, to: &out)
        case .text:
            Timestamp.write(at, to: &out)
            out.append(0x20)
            out.append(contentsOf: levelName.utf8)
            out.append(0x20)
            if !appendBare(message, unless: isControl, to: &out) {
                JSONValue.writeString(message, to: &out)
            }
        }
        forEachField(fields, error: error) { name, value in appendField(name, value, format: format, to: &out) }
        if format == .json { out.append(UInt8(ascii: "}")) }
    }

    /// Appends one field, its value as ``json(_:)`` gives it: `,"name":value` in JSON,
    /// ` name=value` in text.
    private static func appendField(_ name: String, _ value: JSONValue, format: Format, to out: inout [UInt8]) {
        switch format {
        case .json:
            out.append(UInt8(ascii: ","))
            JSONValue.writeString(name, to: &out)
            out.append(UInt8(ascii: ":"))
            value.write(to: &out)
        case .text:
            out.append(0x20)
            if name.isEmpty || !appendBare(name, unless: needsQuotes, to: &out) {
                JSONValue.writeString(name, to: &out)
            }
            out.append(UInt8(ascii: "="))
            appendText(value, to: &out)
        }
    }

    /// Calls `body` with each field in the lines' order: ``fieldOrder``'s, the others sorted by
    /// name, then `error` (the field, else the call's error); each value as ``json(_:)`` gives it.
    private static func forEachField<Fields: LogLineFields>(
        _ fields: Fields, error: (any Error)?, _ body: (String, JSONValue) -> Void
    ) {
        // Fields that know their order and hold no `error` (a request's line) skip the lookups by name.
        if fields.forEachInLineOrder(body) {
            if let error { body("error", .string(String(describing: error))) }
            return
        }
        let errorField = fields.value(named: "error")
        let ordinary = fields.count - (errorField == nil ? 0 : 1)
        var written = 0
        for name in fieldOrder where written < ordinary {
            if let value = fields.value(named: name) {
                body(name, json(value))
                written += 1
            }
        }
        if written < ordinary {
            for name in fields.otherNames().filter({ $0 != "error" && !orderedFields.contains($0) }).sorted() {
                if let value = fields.value(named: name) { body(name, json(value)) }
            }
        }
        if let errorField {
            body("error", json(errorField))
        } else if let error {
            body("error", .string(String(describing: error)))
        }
    }

    /// A metadata value as JSON: integers, floating-point numbers and Bools given as
    /// `.stringConvertible` keep their type; any other value is its description.
    static func json(_ value: Logger.MetadataValue) -> JSONValue {
        switch value {
        case .string(let string):
            return .string(string)
        case .stringConvertible(let convertible):
            switch convertible {
            case let number as Int: return .integer(Int64(number))
            case let number as Double: return .number(number)
            case let flag as Bool: return .bool(flag)
            case let number as Int64: return .integer(number)
            case let number as Int32: return .integer(Int64(number))
            case let number as Int16: return .integer(Int64(number))
            case let number as Int8: return .integer(Int64(number))
            case let number as UInt8: return .integer(Int64(number))
            case let number as UInt16: return .integer(Int64(number))
            case let number as UInt32: return .integer(Int64(number))
            case let number as UInt where number <= UInt(Int64.max): return .integer(Int64(number))
            case let number as UInt64 where number <= UInt64(Int64.max): return .integer(Int64(number))
            case let number as Float: return .number(Double(number.description) ?? Double(number))
            default: return .string(convertible.description)
            }
        case .array(let values):
            return .array(values.map(json))
        case .dictionary(let members):
            return .object(members.mapValues(json))
        }
    }

    /// A control character (C0 or DEL), which would split or garble a line written raw.
    private static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }

    /// Whether a byte keeps a text value (or name) from being written bare.
    private static func needsQuotes(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x22 || byte == 0x3D || isControl(byte)
    }

    /// A value as `key=value` shows it: bare when it is not empty and has no space, quote, `=`
    /// or control character; otherwise as a JSON string. Numbers, Bools, arrays and objects as JSON.
    private static func appendText(_ value: JSONValue, to out: inout [UInt8]) {
        guard case .string(let string) = value else {
            value.write(to: &out)
            return
        }
        if string.isEmpty || !appendBare(string, unless: needsQuotes, to: &out) {
            JSONValue.writeString(string, to: &out)
        }
    }

    /// Appends `text` as it is when none of its bytes is `excluded`, and answers whether it did
    /// (nothing is appended otherwise). A native string's bytes are scanned and copied in one go,
    /// not read one at a time through its UTF-8 view, which every line did for each field.
    @inline(__always)
    private static func appendBare(_ text: String, unless excluded: (UInt8) -> Bool, to out: inout [UInt8]) -> Bool {
        if let appended = text.utf8.withContiguousStorageIfAvailable({ bytes -> Bool in
            for byte in bytes where excluded(byte) { return false }
            out.append(contentsOf: bytes)
            return true
        }) {
            return appended
        }
        guard !text.utf8.contains(where: excluded) else { return false }
        out.append(contentsOf: text.utf8)
        return true
    }
}

/// The fields of one line, looked up by name: what the handler's formatter reads, in the lines'
/// order (``NavigationValuesLogHandler/fieldOrder``'s, the others sorted, `error` last). A call's
/// swift-log metadata is one such; a request line is another, laid out without a dictionary.
protocol LogLineFields {
    /// How many fields there are, `error` included.
    var count: Int { get }
    /// The field named `name`, if there is one.
    func value(named name: String) -> Logger.MetadataValue?
    /// The names of every field, or at least of those not in `fieldOrder` (read only when there are some).
    func otherNames() -> [String]
    /// Calls `body` with every field in the lines' order, each value as
    /// ``NavigationValuesLogHandler/json(_:)`` makes it of ``value(named:)``'s, and answers true;
    /// or answers false without calling it, and the fields are looked up by name. Only for fields
    /// without `error`, whose order is known without looking (a request's line).
    func forEachInLineOrder(_ body: (String, JSONValue) -> Void) -> Bool
}

extension LogLineFields {
    func forEachInLineOrder(_ body: (String, JSONValue) -> Void) -> Bool { false }
}

/// A call's swift-log metadata, as a line's fields.
struct MetadataFields: LogLineFields {
    let metadata: Logger.Metadata
    var count: Int { metadata.count }
    func value(named name: String) -> Logger.MetadataValue? { metadata[name] }
    func otherNames() -> [String] { Array(metadata.keys) }
}

