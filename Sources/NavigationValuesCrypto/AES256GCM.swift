/// AES-256 in Galois/Counter Mode (NIST SP 800-38D), an AEAD: sealing encrypts and
/// authenticates, opening checks the tag before it gives anything back.
///
/// A nonce must never be used twice under one key: draw it from `SecureRandom`.
///
/// ```swift
/// let nonce = SecureRandom.bytes(AES256GCM.nonceByteCount)
/// let sealed = try AES256GCM.seal(plaintext, key: key, nonce: nonce, authenticating: header)  // ciphertext ‖ tag
/// AES256GCM.open(sealed, key: key, nonce: nonce, authenticating: header)                      // plaintext, or nil
/// ```
package enum AES256GCM {
    package static let keyByteCount = 32
    package static let nonceByteCount = 12
    package static let tagByteCount = 16

    /// `plaintext` encrypted, followed by the 16-byte tag that authenticates it and `associatedData`.
    ///
    /// - Throws: `CryptoError` when the key or nonce has the wrong length, or the library fails.
    package static func seal(
        _ plaintext: some Collection<UInt8>, key: [UInt8], nonce: [UInt8],
        authenticating associatedData: some Collection<UInt8> = [UInt8]()
    ) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount, nonce.count == nonceByteCount else {
            throw CryptoError("AES-256-GCM takes a 32-byte key and a 12-byte nonce")
        }
        let sealed = withContiguousBytes(plaintext) { plaintext in
            withContiguousBytes(associatedData) { associatedData in
                key.withUnsafeBytes { key in
                    nonce.withUnsafeBytes { nonce in
                        Backend.aes256GCMSeal(plaintext, key: key, nonce: nonce, authenticating: associatedData)
                    }
                }
            }
        }
        guard let sealed else { throw CryptoError("AES-256-GCM sealing failed") }
        return sealed
    }

    /// The plaintext of `sealed` (ciphertext ‖ tag), or nil when the tag does not match: a
    /// changed byte, another key, nonce or `associatedData`, or too short to hold a tag.
    package static func open(
        _ sealed: some Collection<UInt8>, key: [UInt8], nonce: [UInt8],
        authenticating associatedData: some Collection<UInt8> = [UInt8]()
    ) -> [UInt8]? {
        guard key.count == keyByteCount, nonce.count == nonceByteCount, sealed.count >= tagByteCount else {
            return nil
        }
        return withContiguousBytes(sealed) { sealed in
            withContiguousBytes(associatedData) { associatedData in
                key.withUnsafeBytes { key in
                    nonce.withUnsafeBytes { nonce in
                        Backend.aes256GCMOpen(
                            ciphertext: UnsafeRawBufferPointer(rebasing: sealed.dropLast(tagByteCount)),
                            tag: UnsafeRawBufferPointer(rebasing: sealed.suffix(tagByteCount)), key: key,
                            nonce: nonce, authenticating: associatedData)
                    }
                }
            }
        }
    }
}
