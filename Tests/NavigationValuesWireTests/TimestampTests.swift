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

    @Test func anythingButThatShapeIsNotATimestamp() {
        for text in ["", "2026-11-30T10:40:00Z", "2026-11-30 10:40:00.250Z", "2026-11-30T10:40:00.250+01:00"] {
            #expect(Timestamp.date(from: text) == nil, "\(text)")
        }
    }
}
