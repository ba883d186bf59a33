import Foundation
import NavigationValuesStore
import NavigationValuesWire
import Testing

@testable import NavigationValuesSessions

/// Sealed idempotency answers: only the client's key opens them, and any change to them is found.
@Suite struct IdempotencySealTests {
    let body = Array(#"{"id":"s_1","token":"t_secretsecretsecretsecretsecretsecretsecretse"}"#.utf8)
    let nonce = [UInt8](repeating: 7, count: IdempotencySeal.nonceLength)

    @Test func onlyTheClientsKeyAndScopeOpenASealedAnswer() {
        let sealed = IdempotencySeal.seal(body, key: "key-1", scope: "POST /v1/sessions x", nonce: nonce)
        #expect(IdempotencySeal.isSealed(sealed))
        #expect(IdempotencySeal.open(sealed, key: "key-1", scope: "POST /v1/sessions x") == body)
        #expect(IdempotencySeal.open(sealed, key: "key-2", scope: "POST /v1/sessions x") == nil)
        #expect(IdempotencySeal.open(sealed, key: "key-1", scope: "POST /v1/sessions y") == nil)
        // The ciphertext shows nothing of the token.
        #expect(String(decoding: sealed, as: UTF8.self).contains("t_secret") == false)
    }

    @Test func everyChangedByteIsFound() {
        let sealed = IdempotencySeal.seal(body, key: "k", scope: "s", nonce: nonce)
        for index in IdempotencySeal.magic.count..<sealed.count {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(IdempotencySeal.open(tampered, key: "k", scope: "s") == nil, "byte \(index)")
        }
        #expect(IdempotencySeal.open(Array(sealed.dropLast()), key: "k", scope: "s") == nil)
    }

    @Test func hmacMatchesRFC4231() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let mac = IdempotencySeal.hmac(Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
        #expect(
            mac.map { String(format: "%02x", $0) }.joined()
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
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
