import Foundation
import NavigationValuesStore
import NavigationValuesWire
import Testing

@testable import NavigationValuesSessions

/// Sealed idempotency answers: only the client's key opens them, and any change to them is found.
@Suite struct IdempotencySealTests {
    let body = Array(#"{"id":"s_1","token":"t_secretsecretsecretsecretsecretsecretsecretse"}"#.utf8)
    let nonce = [UInt8](repeating: 7, count: IdempotencySeal.nonceLength)

    @Test func onlyTheClientsKeyAndScopeOpenASealedAnswer() throws {
        let sealed = try IdempotencySeal.seal(body, key: "key-1", scope: "POST /v1/sessions x", nonce: nonce)
        #expect(IdempotencySeal.isSealed(sealed))
        #expect(IdempotencySeal.open(sealed, key: "key-1", scope: "POST /v1/sessions x") == body)
        #expect(IdempotencySeal.open(sealed, key: "key-2", scope: "POST /v1/sessions x") == nil)
        #expect(IdempotencySeal.open(sealed, key: "key-1", scope: "POST /v1/sessions y") == nil)
        // The ciphertext shows nothing of the token.
        #expect(String(decoding: sealed, as: UTF8.self).contains("t_secret") == false)
    }

    @Test func everyChangedByteIsFound() throws {
        let sealed = try IdempotencySeal.seal(body, key: "k", scope: "s", nonce: nonce)
        for index in IdempotencySeal.magic.count..<sealed.count {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(IdempotencySeal.open(tampered, key: "k", scope: "s") == nil, "byte \(index)")
        }
        #expect(IdempotencySeal.open(Array(sealed.dropLast()), key: "k", scope: "s") == nil)
        #expect(IdempotencySeal.open(Array(sealed.prefix(31)), key: "k", scope: "s") == nil)
    }

    /// A seal is `NVS2`, a 12-byte nonce, the body's bytes encrypted and a 16-byte tag.
    @Test func aSealIsAES256GCMUnderItsNonce() throws {
        let sealed = try IdempotencySeal.seal(body, key: "k", scope: "s", nonce: nonce)
        #expect(Array(sealed.prefix(4)) == Array("NVS2".utf8))
        #expect(Array(sealed[4..<16]) == nonce)
        #expect(sealed.count == 4 + 12 + body.count + 16)
        let other = try IdempotencySeal.seal(body, key: "k", scope: "s", nonce: [UInt8](repeating: 8, count: 12))
        #expect(sealed.dropFirst(16) != other.dropFirst(16))
    }

    /// A body sealed by the earlier release (`NVS1`, SHA-256 in counter mode with an HMAC-SHA256
    /// tag), here made by that release's code with the nonce 00…0f, still opens under its key and
    /// scope, and under nothing else.
    @Test func aBodySealedByTheEarlierReleaseStillOpens() {
        let sealed = bytes(
            hex: "4e565331000102030405060708090a0b0c0d0e0f10dc9a91807e7e465bf1816b35c3f0727e068cb00b973366c9390d90c9"
                + "90f9f6b052dd4ce5392de73dcdb06d8a1d3fbf26f2ba103b61159ec9739b622fdc5f6908a0dc671b034a379276b4e8fb05"
                + "546ecc0effe15703987fbb6e8810da01c85067cf9fb28d")
        #expect(IdempotencySeal.isSealed(sealed))
        #expect(IdempotencySeal.open(sealed, key: "key-1", scope: "POST /v1/sessions x") == body)
        #expect(IdempotencySeal.open(sealed, key: "key-2", scope: "POST /v1/sessions x") == nil)
        #expect(IdempotencySeal.open(sealed, key: "key-1", scope: "POST /v1/sessions y") == nil)
        for index in 4..<sealed.count {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(IdempotencySeal.open(tampered, key: "key-1", scope: "POST /v1/sessions x") == nil, "byte \(index)")
        }
    }

    @Test func theStoredKeyIsAHashThatNamesNothingOfTheKey() {
        let stored = IdempotencySeal.storedKey("my-idempotency-key")
        #expect(stored.hasPrefix("h1:"))
        #expect(stored.count == 67)
        #expect(!stored.contains("my-idempotency-key"))
        #expect(stored == IdempotencySeal.storedKey("my-idempotency-key"))
        #expect(stored != IdempotencySeal.storedKey("my-idempotency-kez"))
    }
}

private func bytes(hex text: String) -> [UInt8] {
    let digits = Array(text.utf8)
    return stride(from: 0, to: digits.count, by: 2).map { index in
        UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) ?? 0
    }
}
