import Foundation
import NavigationValues
import NavigationValuesSessions
import NavigationValuesWire
import Testing

@Suite struct StreamTicketSignerTests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// RFC 4231 test cases 1, 2 and 6 (a key longer than the block size).
    @Test func hmacMatchesTheRFCVectors() {
        #expect(
            hex(HMAC.sha256(key: [UInt8](repeating: 0x0B, count: 20), message: Array("Hi There".utf8)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            hex(HMAC.sha256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            hex(
                HMAC.sha256(
                    key: [UInt8](repeating: 0xAA, count: 131),
                    message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func aTicketCarriesItsScopeObserverAndExpiry() throws {
        let signer = StreamTicketSigner(secret: "secret")
        let now = Date(timeIntervalSince1970: 1_796_000_000)
        let expiry = now.addingTimeInterval(60)
        let one = signer.ticket(for: .session(SessionID("s_abc")), observer: ObserverID("o_1"), expiresAt: expiry)
        #expect(
            try signer.verify(one, now: now)
                == .init(scope: .session(SessionID("s_abc")), observer: ObserverID("o_1"), expiresAt: expiry))
        let every = signer.ticket(for: .everySession, observer: nil, expiresAt: expiry)
        #expect(try signer.verify(every, now: now) == .init(scope: .everySession, observer: nil, expiresAt: expiry))
        #expect(throws: SessionError.self) { try signer.verify(one, now: expiry) }
        #expect(throws: SessionError.self) { try StreamTicketSigner(secret: "other").verify(one, now: now) }
    }

    /// Every single-character change of a ticket is refused, and what is refused is never echoed.
    @Test func everyAlteredTicketIsRefused() throws {
        let signer = StreamTicketSigner(secret: "secret")
        let now = Date(timeIntervalSince1970: 1_796_000_000)
        let ticket = signer.ticket(for: .session(SessionID("s_abc")), observer: nil, expiresAt: now + 60)
        let characters = Array(ticket)
        for index in characters.indices.dropFirst(3) {
            var altered = characters
            altered[index] = altered[index] == "A" ? "B" : "A"
            let text = String(altered)
            do {
                _ = try signer.verify(text, now: now)
                Issue.record("altered at \(index) was accepted")
            } catch {
                #expect(error.code == .unauthorized)
                #expect(!error.detail.contains(text))
            }
        }
    }
}
