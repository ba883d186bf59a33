import Foundation
import NavigationValuesSessions
import Testing

/// Hand-off codes are 38 URL-safe characters, carry their record's id and expiry, and any change
/// to one character, or another secret, is caught by the signature.
@Suite struct HandoffCodeSignerTests {
    let signer = HandoffCodeSigner(secret: "admin-secret")
    let id: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    let expiry = Date(timeIntervalSince1970: 1_796_000_300)

    @Test func aCodeCarriesItsRecordAndExpiry() throws {
        let code = signer.code(id: id, expiresAt: expiry.addingTimeInterval(0.75))
        #expect(code.hasPrefix("h_") && code.utf8.count == HandoffCodeSigner.length)
        let contents = try signer.verify(code)
        #expect(contents.id == "AQIDBAUGBwgJCg")
        // Whole seconds: the fraction is dropped, as carriedExpiry says.
        #expect(contents.expiresAt == expiry)
        #expect(HandoffCodeSigner.carriedExpiry(expiry.addingTimeInterval(0.75)) == expiry)
        // Another record or expiry, another code; the same ones, the same code.
        #expect(signer.code(id: id, expiresAt: expiry) == code)
        #expect(signer.code(id: id, expiresAt: expiry.addingTimeInterval(1)) != code)
    }

    /// The expiry is carried most significant byte first, after the format byte and the id, so
    /// that a code made by one instance (or release) verifies on another.
    @Test func theExpiryIsCarriedBigEndianAfterTheID() throws {
        let code = signer.code(id: id, expiresAt: Date(timeIntervalSince1970: 0x6B0C_1D2E))
        let bytes = try #require(Base64URL.decode(code.dropFirst(2)))
        #expect(Array(bytes[1...10]) == id)
        #expect(Array(bytes[11...14]) == [0x6B, 0x0C, 0x1D, 0x2E])
    }

    @Test func everyChangedCharacterAndAnotherSecretAreRefused() throws {
        let code = signer.code(id: id, expiresAt: expiry)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var characters = Array(code)
        for index in characters.indices {
            let original = characters[index]
            for replacement in [alphabet[0], alphabet[33], alphabet[63]] where replacement != original {
                characters[index] = replacement
                let changed = String(characters)
                #expect(throws: SessionError.self, "\(index)") { try signer.verify(changed) }
            }
            characters[index] = original
        }
        #expect(throws: SessionError.self) { try HandoffCodeSigner(secret: "admin-secreT").verify(code) }
        for text in ["", "h_", String(code.dropLast()), code + "A", "st_" + code.dropFirst(2), code.lowercased()] {
            #expect(throws: SessionError.self, "\(text)") { try signer.verify(text) }
        }
        let changed = String(code.dropLast()) + (code.hasSuffix("A") ? "B" : "A")
        do {
            _ = try signer.verify(changed)
            Issue.record("a changed code verified")
        } catch {
            #expect(error.code == .handoffInvalid)
            #expect(!error.detail.contains(code.prefix(10)))
        }
    }
}
