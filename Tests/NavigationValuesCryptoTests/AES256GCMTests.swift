import NavigationValuesCrypto
import Testing

/// AES-256-GCM against the AES-256 test cases (13 to 16) of McGrew and Viega's GCM specification,
/// the vectors NIST SP 800-38D's validation started from.
@Suite struct AES256GCMTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var key: String
        var nonce: String
        var plaintext: String
        var associatedData: String
        var ciphertext: String
        var tag: String
        var testDescription: String { name }
    }

    static let specificationKey = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"
    static let specificationPlaintext =
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
        + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
    static let specificationCiphertext =
        "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
        + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad"

    static let vectors = [
        Vector(
            name: "test case 13: zero key, nothing to encrypt", key: String(repeating: "00", count: 32),
            nonce: String(repeating: "00", count: 12), plaintext: "", associatedData: "", ciphertext: "",
            tag: "530f8afbc74536b9a963b4f1c4cb738b"),
        Vector(
            name: "test case 14: zero key, one zero block", key: String(repeating: "00", count: 32),
            nonce: String(repeating: "00", count: 12), plaintext: String(repeating: "00", count: 16),
            associatedData: "", ciphertext: "cea7403d4d606b6e074ec5d3baf39d18", tag: "d0d1c8a799996bf0265b98b5d48ab919"),
        Vector(
            name: "test case 15: four blocks", key: specificationKey, nonce: "cafebabefacedbaddecaf888",
            plaintext: specificationPlaintext, associatedData: "", ciphertext: specificationCiphertext,
            tag: "b094dac5d93471bdec1a502270e3cc6c"),
        Vector(
            name: "test case 16: a partial block, with associated data", key: specificationKey,
            nonce: "cafebabefacedbaddecaf888", plaintext: String(specificationPlaintext.dropLast(8)),
            associatedData: "feedfacedeadbeeffeedfacedeadbeefabaddad2",
            ciphertext: String(specificationCiphertext.dropLast(8)), tag: "76fc6ece0f4e1768cddf8853bb2d551b"),
    ]

    @Test(arguments: vectors)
    func sealingMatchesThePublishedVector(_ vector: Vector) throws {
        let sealed = try AES256GCM.seal(
            bytes(hex: vector.plaintext), key: bytes(hex: vector.key), nonce: bytes(hex: vector.nonce),
            authenticating: bytes(hex: vector.associatedData))
        #expect(hex(sealed) == vector.ciphertext + vector.tag)
    }

    @Test(arguments: vectors)
    func openingGivesThePlaintextBack(_ vector: Vector) {
        let opened = AES256GCM.open(
            bytes(hex: vector.ciphertext + vector.tag), key: bytes(hex: vector.key), nonce: bytes(hex: vector.nonce),
            authenticating: bytes(hex: vector.associatedData))
        #expect(opened.map(hex) == vector.plaintext)
    }

    /// Test case 16 with any one bit changed (ciphertext, tag, associated data, nonce or key) opens to nothing.
    @Test func everyChangedBitIsFound() {
        let vector = Self.vectors[3]
        let sealed = bytes(hex: vector.ciphertext + vector.tag)
        let key = bytes(hex: vector.key)
        let nonce = bytes(hex: vector.nonce)
        let associatedData = bytes(hex: vector.associatedData)
        #expect(AES256GCM.open(sealed, key: key, nonce: nonce, authenticating: associatedData) != nil)
        for index in sealed.indices {
            var changed = sealed
            changed[index] ^= 0x01
            #expect(AES256GCM.open(changed, key: key, nonce: nonce, authenticating: associatedData) == nil, "\(index)")
        }
        for index in associatedData.indices {
            var changed = associatedData
            changed[index] ^= 0x80
            #expect(AES256GCM.open(sealed, key: key, nonce: nonce, authenticating: changed) == nil, "\(index)")
        }
        var otherNonce = nonce
        otherNonce[11] ^= 0x01
        #expect(AES256GCM.open(sealed, key: key, nonce: otherNonce, authenticating: associatedData) == nil)
        var otherKey = key
        otherKey[0] ^= 0x01
        #expect(AES256GCM.open(sealed, key: otherKey, nonce: nonce, authenticating: associatedData) == nil)
        #expect(AES256GCM.open(sealed.dropLast(), key: key, nonce: nonce, authenticating: associatedData) == nil)
        #expect(AES256GCM.open(sealed.prefix(15), key: key, nonce: nonce, authenticating: associatedData) == nil)
    }

    @Test func aKeyOrNonceOfTheWrongLengthIsRefused() {
        #expect(throws: CryptoError.self) {
            try AES256GCM.seal(
                [1, 2, 3], key: [UInt8](repeating: 0, count: 16), nonce: [UInt8](repeating: 0, count: 12))
        }
        #expect(throws: CryptoError.self) {
            try AES256GCM.seal(
                [1, 2, 3], key: [UInt8](repeating: 0, count: 32), nonce: [UInt8](repeating: 0, count: 16))
        }
        #expect(
            AES256GCM.open(
                [UInt8](repeating: 0, count: 32), key: [UInt8](repeating: 0, count: 31),
                nonce: [UInt8](repeating: 0, count: 12)) == nil)
    }

    /// A long body (several MiB) seals and opens whole.
    @Test func aLongBodyRoundTrips() throws {
        let body = (0..<3_000_001).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let key = SecureRandom.bytes(AES256GCM.keyByteCount)
        let nonce = SecureRandom.bytes(AES256GCM.nonceByteCount)
        let sealed = try AES256GCM.seal(body, key: key, nonce: nonce)
        #expect(sealed.count == body.count + AES256GCM.tagByteCount)
        #expect(AES256GCM.open(sealed, key: key, nonce: nonce) == body)
    }
}
