import NavigationValuesCrypto
import Testing

@Suite struct ConstantTimeTests {
    @Test func equalBytesAreEqualAndAnyDifferenceIsFound() {
        let bytes: [UInt8] = Array(0..<64)
        #expect(constantTimeEquals(bytes, bytes))
        #expect(constantTimeEquals(bytes[...], Array(bytes)))
        for index in bytes.indices {
            var changed = bytes
            changed[index] ^= 0x40
            #expect(!constantTimeEquals(bytes, changed), "\(index)")
        }
        #expect(!constantTimeEquals(bytes, bytes.dropLast()))
        #expect(constantTimeEquals([UInt8](), [UInt8]()))
        #expect(!constantTimeEquals([UInt8](), [0]))
    }

    @Test func stringsCompareByTheirUTF8() {
        #expect(constantTimeEquals("t_abc", "t_abc"))
        #expect(!constantTimeEquals("t_abc", "t_abd"))
        #expect(!constantTimeEquals("t_abc", "t_ab"))
        #expect(constantTimeEquals("", ""))
        #expect(constantTimeEquals("é", "\u{E9}"))
        #expect(!constantTimeEquals("é", "e\u{301}"))  // equal as Swift strings, not as bytes
    }
}

@Suite struct SecureRandomTests {
    @Test func drawsAreOfTheLengthAskedAndDiffer() {
        #expect(SecureRandom.bytes(0).isEmpty)
        let first = SecureRandom.bytes(32)
        let second = SecureRandom.bytes(32)
        #expect(first.count == 32)
        #expect(first != second)  // 2^-256 to fail by chance
    }

    /// A large draw is spread over every byte value (not zeros, not a short cycle).
    @Test func aLargeDrawCoversEveryByteValue() {
        let draw = SecureRandom.bytes(1 << 20)
        var counts = [Int](repeating: 0, count: 256)
        for byte in draw { counts[Int(byte)] += 1 }
        // Each value is expected 4096 times; 3500-4700 is more than 9 standard deviations wide.
        #expect(counts.allSatisfy { (3_500...4_700).contains($0) })
    }
}
