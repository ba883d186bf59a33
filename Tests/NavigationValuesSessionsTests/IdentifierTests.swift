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
}
