import Foundation
import NavigationValues
import NavigationValuesSessions
import NavigationValuesWire
import Testing

@Suite struct StreamTicketSignerTests {
    /// A ticket issued by the earlier release (its own HMAC-SHA256, before libcrypto) for session
    /// s_aB7a8BlCP6iM under the admin token `admin-secret`, to expire at 2026-12-03T08:41:21.726Z:
    /// it verifies until then, and not after, so tickets out in the field survive an upgrade.
    @Test func aTicketIssuedByTheEarlierReleaseVerifiesUntilItExpires() throws {
        let ticket = "st_AQAAAaI7ELo-AAFzX2FCN2E4QmxDUDZpTUFMA3v-vUJ7Q6CxomHqSQhgHSWGPvnenEspTl-yCS6N"
        let signer = StreamTicketSigner(secret: "admin-secret")
        let expiry = Date(timeIntervalSince1970: 1_796_287_281.726)
        let contents = try signer.verify(ticket, now: expiry.addingTimeInterval(-59))
        #expect(contents.scope == .session(SessionID("s_aB7a8BlCP6iM")))
        #expect(contents.observer == nil)
        #expect(abs(contents.expiresAt.timeIntervalSince(expiry)) < 0.000_5)
        #expect(throws: SessionError.self) { try signer.verify(ticket, now: expiry) }
        #expect(throws: SessionError.self) {
            try StreamTicketSigner(secret: "admin-secreT").verify(ticket, now: expiry.addingTimeInterval(-59))
        }
        // And this release issues the very same ticket for the same grant.
        #expect(signer.ticket(for: .session(SessionID("s_aB7a8BlCP6iM")), observer: nil, expiresAt: expiry) == ticket)
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
