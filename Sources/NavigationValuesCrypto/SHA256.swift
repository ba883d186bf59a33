/// SHA-256 (FIPS 180-4): token hashes, request fingerprints, migration checksums.
///
/// ```swift
/// SHA256.hexDigest(of: Array("abc".utf8))   // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// ```
package enum SHA256 {
    /// Bytes in a digest.
    package static let byteCount = 32

    /// The 32-byte digest of `bytes`.
    package static func digest(of bytes: some Collection<UInt8>) -> [UInt8] {
        withContiguousBytes(bytes) { Backend.sha256($0) }
    }

    /// The digest of `bytes` as 64 lowercase hex digits.
    package static func hexDigest(of bytes: some Collection<UInt8>) -> String {
        Hex.lowercase(digest(of: bytes))
    }
}

/// Hex: written lowercase, read in either case.
package enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    package static func lowercase(_ bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { output in
            for (index, byte) in bytes.enumerated() {
                output[2 * index] = digits[Int(byte >> 4)]
                output[2 * index + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }

    /// The bytes that `text`'s pairs of hex digits spell (as ``lowercase(_:)`` writes them, or in
    /// capitals); nil for an odd count or any other character.
    package static func bytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
