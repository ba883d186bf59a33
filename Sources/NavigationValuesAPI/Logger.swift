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
    private let write: @Sendable (String) -> Void

    /// Creates a logger that hands each line, without its newline, to `write`.
    public init(
        level: Level = .info, format: Format = .text, now: @escaping @Sendable () -> Date = { Date() },
        write: @escaping @Sendable (String) -> Void
    ) {
        self.level = level
        self.format = format
        self.now = now
        self.write = write
    }

    /// Whether a line at `level` would be written.
    public func isEnabled(_ level: Level) -> Bool { level >= self.level }

    /// Writes one line with `message` and `fields` (in the order given) when `level` is enabled.
    public func log(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, JSONValue> = [:]) {
        log(level, message, fields: fields.map { ($0.key, $0.value) })
    }

    /// Writes one line with `message` and `fields` (in the order given) when `level` is enabled.
    public func log(_ level: Level, _ message: String, fields: [(String, JSONValue)]) {
        guard isEnabled(level) else { return }
        write(line(level, message, fields: fields))
    }

    func line(_ level: Level, _ message: String, fields: [(String, JSONValue)]) -> String {
        let at = Timestamp.string(from: now())
        switch format {
        case .json:
            // Built by hand to keep the field order: at, level, message, then the fields as given.
            var parts = [
                "\"at\":\(JSONValue.string(at).serialized())", "\"level\":\"\(level.rawValue)\"",
                "\"message\":\(JSONValue.string(message).serialized())",
            ]
            for (name, value) in fields { parts.append("\(JSONValue.string(name).serialized()):\(value.serialized())") }
            return "{" + parts.joined(separator: ",") + "}"
        case .text:
            var line = "\(at) \(level.rawValue) \(message)"
            for (name, value) in fields { line += " \(name)=\(Self.text(value))" }
            return line
        }
    }

    /// A value as `key=value` shows it: bare when it has no space, quote or control character.
    private static func text(_ value: JSONValue) -> String {
        guard case .string(let string) = value else { return value.serialized() }
        let isBare =
            !string.isEmpty
            && !string.unicodeScalars.contains {
                $0 == " " || $0 == "\"" || $0 == "=" || $0.value < 0x20 || $0.value == 0x7F
            }
        return isBare ? string : value.serialized()
    }
}
