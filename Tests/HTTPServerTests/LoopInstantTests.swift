import Foundation
import Testing

@testable import HTTPServer

@Suite struct LoopInstantTests {
    @Test func measuresTheSameTimeAsContinuousClock() throws {
        let loopStart = LoopInstant.now
        let clockStart = ContinuousClock.now
        Thread.sleep(forTimeInterval: 0.05)
        let clockElapsed = ContinuousClock.now - clockStart
        let loopElapsed = LoopInstant.now - loopStart
        #expect(loopElapsed >= .milliseconds(50))
        // Read in the other order, the loop's reading spans the clock's: within a scheduling slice.
        #expect(abs((loopElapsed - clockElapsed).wholeNanoseconds) < 20_000_000)
    }

    @Test func addsAndSubtractsDurations() {
        let start = LoopInstant(nanoseconds: 1_000)
        #expect((start + .seconds(2)).nanoseconds == 2_000_001_000)
        #expect((start + .milliseconds(-1)).nanoseconds == 1_000 - 1_000_000)
        #expect(start + .seconds(10) - start == .seconds(10))
        #expect(start < start + .nanoseconds(1))
        #expect(Duration.milliseconds(1_500).wholeNanoseconds == 1_500_000_000)
    }

    @Test func saturatesRatherThanTraps() {
        let start = LoopInstant(nanoseconds: 1_000)
        #expect((start + .seconds(Int64.max)).nanoseconds == .max)
        #expect((LoopInstant(nanoseconds: -1_000) + .seconds(Int64.min)).nanoseconds == .min)
        #expect(LoopInstant(nanoseconds: .max) - LoopInstant(nanoseconds: .min) == .nanoseconds(Int64.max))
        #expect(Duration.seconds(Int64.max).wholeNanoseconds == .max)
    }
}
