import Foundation

/// RFC 3339 timestamps with milliseconds in UTC, as docs/API.md shows them (`2026-11-30T10:00:00.000Z`).
public enum Timestamp {
    public static func string(from date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        write(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `string(from:)`'s text to `output` (no string on the way).
    package static func write(_ date: Date, to output: inout [UInt8]) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        // Whole seconds rounded down (toward the past), as the milliseconds below are counted
        // from them: -1 ms is 23:59:59.999 of the day before 1970, not 00:00:00.999.
        let (quotient, remainder) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        var seconds = time_t(remainder < 0 ? quotient - 1 : quotient)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        /// `value` in decimal, zero-padded to `width`, then `separator`. Digits are written
        /// straight to `output`; a negative value (a year before 1 BC) goes through its string.
        func pad(_ value: Int32, _ width: Int, then separator: UInt8) {
            if value < 0 {
                let text = String(value)
                let count = text.utf8.count
                if count < width { output.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - count)) }
                output.append(contentsOf: text.utf8)
            } else {
                var divisor: Int32 = 1
                var count = 1
                while value / divisor >= 10 {
                    divisor *= 10
                    count += 1
                }
                if count < width { output.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - count)) }
                while divisor > 0 {
                    output.append(UInt8(ascii: "0") + UInt8((value / divisor) % 10))
                    divisor /= 10
                }
            }
            output.append(separator)
        }
        let millis = Int32(((milliseconds % 1000) + 1000) % 1000)
        pad(parts.tm_year + 1900, 4, then: UInt8(ascii: "-"))
        pad(parts.tm_mon + 1, 2, then: UInt8(ascii: "-"))
        pad(parts.tm_mday, 2, then: UInt8(ascii: "T"))
        pad(parts.tm_hour, 2, then: UInt8(ascii: ":"))
        pad(parts.tm_min, 2, then: UInt8(ascii: ":"))
        pad(parts.tm_sec, 2, then: UInt8(ascii: "."))
        pad(millis, 3, then: UInt8(ascii: "Z"))
    }

    /// Parses what `string(from:)` writes; nil for anything else.
    public static func date(from text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 24, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54, bytes[13] == 0x3A,
            bytes[16] == 0x3A, bytes[19] == 0x2E, bytes[23] == 0x5A
        else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            Int32(String(decoding: bytes[range], as: UTF8.self))
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            let millis = number(20..<23)
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        let seconds = timegm(&parts)
        return Date(timeIntervalSince1970: Double(seconds) + Double(millis) / 1000)
    }

    /// A date truncated to whole milliseconds, so that what is stored and what is shown agree.
    public static func truncated(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }
}
