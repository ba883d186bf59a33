import Foundation
import NavigationValuesWire
import Testing

@Suite struct TimestampTests {
    @Test func timestampsHaveMillisecondsInUTCAndParseBack() throws {
        let date = Date(timeIntervalSince1970: 1_796_032_800.25)
        let text = Timestamp.string(from: date)
        #expect(text == "2026-11-30T10:00:00.250Z")
        #expect(Timestamp.date(from: text) == date)
    }

    /// Each field zero-padded to its width, however many digits it has, and a year past four
    /// digits written whole (what a log line of such a date shows).
    @Test func fieldsArePaddedToTheirWidths() {
        let cases: [(TimeInterval, String)] = [
            (0, "1970-01-01T00:00:00.000Z"),
            (93_845.125, "1970-01-02T02:04:05.125Z"),
            (253_402_300_800, "10000-01-01T00:00:00.000Z"),
            // Before 1970: the second is the one the instant falls in, rounded toward the past.
            (-0.25, "1969-12-31T23:59:59.750Z"),
            (-1, "1969-12-31T23:59:59.000Z"),
            (-86_399.5, "1969-12-31T00:00:00.500Z"),
        ]
        for (seconds, expected) in cases {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(Timestamp.string(from: date) == expected)
            if seconds < 253_402_300_800 {  // a five-digit year is written, not parsed
                #expect(Timestamp.date(from: expected) == date, "\(expected) parses back")
            }
        }
    }

    @Test func anythingButThatShapeIsNotATimestamp() {
        for text in ["", "2026-11-30T10:40:00Z", "2026-11-30 10:40:00.250Z", "2026-11-30T10:40:00.250+01:00"] {
            #expect(Timestamp.date(from: text) == nil, "\(text)")
        }
    }
}
