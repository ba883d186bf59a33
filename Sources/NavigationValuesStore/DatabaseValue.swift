import Foundation

/// A value bound to a statement parameter: one of SQLite's storage classes, which each driver binds
/// its own way (PostgreSQL's as text parameters).
///
/// ```swift
/// try db.execute("INSERT INTO t(a, b) VALUES (?, ?)", [.integer(1), .text("x")])
/// ```
public enum DatabaseValue: Sendable, Equatable {
    /// SQL NULL.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An 8-byte floating-point number.
    case real(Double)
    /// UTF-8 text, bound by length (it may contain NUL).
    case text(String)
    /// Bytes.
    case blob(Data)

    /// `.text(value)`, or `.null` when `value` is nil.
    public static func text(_ value: String?) -> DatabaseValue {
        value.map { .text($0) } ?? .null
    }

    /// An integer from a Swift `Int`.
    public static func integer(_ value: Int) -> DatabaseValue { .integer(Int64(value)) }

    /// `1` for true, `0` for false, as SQLite stores booleans (PostgreSQL reads `1` and `0` as
    /// booleans too).
    public static func bool(_ value: Bool) -> DatabaseValue { .integer(value ? 1 : 0) }

    /// Milliseconds since 1970-01-01 UTC, the store's representation of time.
    public static func milliseconds(_ date: Date) -> DatabaseValue { .integer(date.millisecondsSince1970) }
}

extension Date {
    /// Whole milliseconds since 1970-01-01 UTC, rounded down: how the store keeps time.
    package var millisecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The date `milliseconds` after 1970-01-01 UTC.
    package init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
