import Foundation
import NavigationValues
import NavigationValuesSessions
import NavigationValuesWire

/// Writes log lines, one per call, as text or JSON, dropping those under its level. The sink is
/// passed in (the CLI writes to stderr; tests collect lines), so nothing here prints.
///
/// ```swift
/// let logger = Logger(level: .info, format: .json) { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
/// logger.log(.info, "request", ["method": "GET", "status": 200])
/// ```
public struct Logger: Sendable {
    /// How important a line is; a logger writes its own level and those above.
    public enum Level: String, Sendable, CaseIterable, Comparable {
        case debug, info, warning, error

        public static func < (lhs: Level, rhs: Level) -> Bool {
            allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
        }
    }

    /// The shape of a line.
    public enum Format: String, Sendable, CaseIterable {
        /// `2026-11-30T10:00:00.000Z info request method=GET route=/healthz status=200`
        case text
        /// `{"at":"2026-11-30T10:00:00.000Z","level":"info","message":"request","method":"GET",…}`
        case json
    }

    /// The lowest level written.
    public var level: Level
    /// The shape of each line.
    public var format: Format
    /// The clock that stamps lines.
    public var now: @Sendable () -> Date
    private let write: (@Sendable (String) -> Void)?
    /// Where lines go when they are written by a ``LogWriter`` (formatted straight into its buffer).
    public let writer: LogWriter?

    /// Creates a logger that hands each line, without its newline, to `write`.
    public init(
        level: Level = .info, format: Format = .text, now: @escaping @Sendable () -> Date = { Date() },
        write: @escaping @Sendable (String) -> Void
    ) {
        self.level = level
        self.format = format
        self.now = now
        self.write = write
        self.writer = nil
    }

    /// Creates a logger whose lines `writer` writes from its own thread, batched.
    public init(
        level: Level = .info, format: Format = .text, now: @escaping @Sendable () -> Date = { Date() },
        writer: LogWriter
    ) {
        self.level = level
        self.format = format
        self.now = now
        self.write = nil
        self.writer = writer
    }

    /// Lines the writer dropped because it could not keep up (0 without a ``LogWriter``).
    public var droppedLines: Int { writer?.droppedLines ?? 0 }

    /// Whether a line at `level` would be written.
    public func isEnabled(_ level: Level) -> Bool { level >= self.level }

    /// Writes one line with `message` and `fields` (in the order given) when `level` is enabled.
    public func log(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, JSONValue> = [:]) {
        log(level, message, fields: fields.map { ($0.key, $0.value) })
    }

    /// Writes one line with `message` and `fields` (in the order given) when `level` is enabled.
    public func log(_ level: Level, _ message: String, fields: [(String, JSONValue)]) {
        guard isEnabled(level) else { return }
        if let writer {
            let at = now()
            writer.append { buffer in appendLine(level, message, fields: fields, at: at, to: &buffer) }
        } else if let write {
            write(line(level, message, fields: fields))
        }
    }

    func line(_ level: Level, _ message: String, fields: [(String, JSONValue)]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160)
        appendLine(level, message, fields: fields, at: now(), to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends one line (without its newline) to `out`.
    func appendLine(
        _ level: Level, _ message: String, fields: [(String, JSONValue)], at: Date, to out: inout [UInt8]
    ) {
        switch format {
        case .json:
            // Built by hand to keep the field order: at, level, message, then the fields as given.
            out.append(contentsOf: #"{"at":""#.utf8)
            Self.appendTimestamp(at, to: &out)
            out.append(contentsOf: #"","level":""#.utf8)
            out.append(contentsOf: level.rawValue.utf8)
            out.append(contentsOf: #"","message":"#.utf8)
            JSONValue.writeString(message, to: &out)
            for (name, value) in fields {
                out.append(UInt8(ascii: ","))
                JSONValue.writeString(name, to: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .text:
            Self.appendTimestamp(at, to: &out)
            out.append(0x20)
            out.append(contentsOf: level.rawValue.utf8)
            out.append(0x20)
            out.append(contentsOf: message.utf8)
            for (name, value) in fields {
                out.append(0x20)
                out.append(contentsOf: name.utf8)
                out.append(UInt8(ascii: "="))
                Self.appendText(value, to: &out)
            }
        }
    }

    /// `Timestamp.string(from:)`, written in place: `2026-11-30T10:00:00.000Z`.
    static func appendTimestamp(_ date: Date, to out: inout [UInt8]) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let year = Int(parts.tm_year) + 1900
        guard (0...9999).contains(year), milliseconds >= 0 else {
            out.append(contentsOf: Timestamp.string(from: date).utf8)  // outside the usual shape
            return
        }
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(year, 4)
        out.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2)
        out.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2)
        out.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2)
        out.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2)
        out.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        out.append(UInt8(ascii: "."))
        digits(Int(milliseconds % 1000), 3)
        out.append(UInt8(ascii: "Z"))
    }

    /// A value as `key=value` shows it: bare when it has no space, quote or control character.
    private static func appendText(_ value: JSONValue, to out: inout [UInt8]) {
        guard case .string(let string) = value else {
            value.write(to: &out)
            return
        }
        let isBare =
            !string.isEmpty
            && !string.utf8.contains {
                $0 == 0x20 || $0 == 0x22 || $0 == 0x3D || $0 < 0x20 || $0 == 0x7F
            }
        if isBare {
            out.append(contentsOf: string.utf8)
        } else {
            JSONValue.writeString(string, to: &out)
        }
    }
}
