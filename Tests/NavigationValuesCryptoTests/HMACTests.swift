import NavigationValuesCrypto
import Testing

/// HMAC-SHA256 against RFC 4231's test cases (5, a truncated output, does not apply).
@Suite struct HMACTests {
    private static let longKey = [UInt8](repeating: 0xAA, count: 131)

    @Test(arguments: [
        // 1: a 20-byte key.
        (
            [UInt8](repeating: 0x0B, count: 20), Array("Hi There".utf8),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        // 2: a key shorter than the output.
        (
            Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        // 3: 50 bytes of data.
        (
            [UInt8](repeating: 0xAA, count: 20), [UInt8](repeating: 0xDD, count: 50),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        ),
        // 4: a 25-byte key.
        (
            Array(1...25), [UInt8](repeating: 0xCD, count: 50),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        ),
        // 6: a key longer than the block, hashed first.
        (
            longKey, Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
        // 7: a key and data longer than the block.
        (
            longKey,
            Array(
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
                    .utf8),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        ),
    ])
    func codesMatchRFC4231(key: [UInt8], message: [UInt8], code: String) {
        #expect(hex(HMAC.sha256(key: key, message: message)) == code)
    }

    @Test func anEmptyKeyAndMessageAreAccepted() {
        // HMAC-SHA256("", ""), as any implementation gives it.
        #expect(
            hex(HMAC.sha256(key: [UInt8](), message: [UInt8]()))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }
}

func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

func bytes(hex text: String) -> [UInt8] {
    let digits = Array(text.utf8)
    return stride(from: 0, to: digits.count, by: 2).map { index in
        UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) ?? 0
    }
}
