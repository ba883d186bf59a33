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

/// Lowercase hex.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func lowercase(_ bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { output in
            for (index, byte) in bytes.enumerated() {
                output[2 * index] = digits[Int(byte >> 4)]
                output[2 * index + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }
}
