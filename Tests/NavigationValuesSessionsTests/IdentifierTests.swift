import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesSessions

@Suite struct IdentifierTests {
    @Test func base64URLMatchesFoundationsBase64WithTheURLAlphabetAndNoPadding() {
        var generator = SplitMix64(state: 7)
        for length in 0..<40 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let expected = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == expected, "for \(length) bytes")
            #expect(Base64URL.encode(bytes, prefix: "r_") == "r_" + expected, "for \(length) bytes after a prefix")
        }
    }

    @Test func liveIdsAndTokensHaveTheirShapes() {
        let identifiers = IdentifierGenerator.live
        let ids = (0..<100).map { _ in identifiers.sessionID().rawValue }
        #expect(Set(ids).count == 100)
        #expect(ids.allSatisfy { $0.hasPrefix("s_") && $0.utf8.count == 14 })
        #expect(identifiers.screenID().rawValue.utf8.count == 14)
        let token = identifiers.token()
        #expect(IdentifierGenerator.isWellFormedToken(token))
        #expect(identifiers.randomBytes(13).count == 13)
        #expect(identifiers.randomBytes(16).count == 16)
        #expect(identifiers.randomBytes(0).isEmpty)
    }

    /// The pool hands every byte out once, across its refills (4 KiB each) and across threads,
    /// and draws requests larger than a quarter of a refill straight from the system.
    @Test func thePoolNeverHandsTheSameBytesOutTwice() async {
        let pool = RandomPool()
        let draws = await withTaskGroup(of: [[UInt8]].self) { group in
            for _ in 0..<4 {
                group.addTask { (0..<2_000).map { index in pool.take(index % 7 == 0 ? 32 : 9) } }
            }
            var all: [[UInt8]] = []
            for await some in group { all += some }
            return all
        }
        // 8,000 draws of 72 or 256 bits span about 30 refills; a repeated segment would repeat a draw.
        #expect(draws.count == 8_000)
        #expect(Set(draws).count == draws.count)
        #expect(draws.allSatisfy { $0.count == 9 || $0.count == 32 })
        // Not all zero (a refill that failed silently would hand out zeros).
        #expect(draws.filter { $0.allSatisfy { $0 == 0 } }.isEmpty)
        let large = pool.take(2_000)
        #expect(large.count == 2_000)
        #expect(Set(large).count > 200)
    }
}
