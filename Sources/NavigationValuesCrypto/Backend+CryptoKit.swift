#if canImport(CLibCrypto)
    // Linux: Backend+OpenSSL.swift.
#elseif canImport(CryptoKit)
    // Apple platforms (an app's tests and previews on the in-memory server): the same functions
    // over CryptoKit, which those platforms ship. NOT BUILT HERE (no macOS host in this project's
    // CI); the known-answer tests in NavigationValuesCryptoTests are what would check it there.
    import CryptoKit
    import Darwin
    import Foundation

    /// The primitives, from CryptoKit and the C library's `timingsafe_bcmp` and `arc4random_buf`.
    enum Backend {
        /// CryptoKit ships with the system: always there.
        static func checkAvailable() throws(CryptoError) {}

        static func sha256(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
            Array(CryptoKit.SHA256.hash(data: bytes))
        }

        static func hmacSHA256(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> [UInt8] {
            Array(CryptoKit.HMAC<CryptoKit.SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
        }

        static func constantTimeEquals(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
            guard lhs.count == rhs.count else { return false }
            guard let left = lhs.baseAddress, let right = rhs.baseAddress else { return lhs.count == 0 }
            return timingsafe_bcmp(left, right, lhs.count) == 0
        }

        static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
            if let base = buffer.baseAddress { arc4random_buf(base, buffer.count) }
            return true
        }

        static func aes256GCMSeal(
            _ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
            authenticating associatedData: UnsafeRawBufferPointer
        ) -> [UInt8]? {
            guard let nonce = try? AES.GCM.Nonce(data: nonce),
                let box = try? AES.GCM.seal(
                    plaintext, using: SymmetricKey(data: key), nonce: nonce, authenticating: associatedData)
            else { return nil }
            return Array(box.ciphertext) + Array(box.tag)
        }

        static func aes256GCMOpen(
            ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer,
            nonce: UnsafeRawBufferPointer, authenticating associatedData: UnsafeRawBufferPointer
        ) -> [UInt8]? {
            guard let nonce = try? AES.GCM.Nonce(data: nonce),
                let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag),
                let plaintext = try? AES.GCM.open(box, using: SymmetricKey(data: key), authenticating: associatedData)
            else { return nil }
            return Array(plaintext)
        }
    }
#else
    #error("NavigationValuesCrypto needs OpenSSL's libcrypto (Linux) or CryptoKit (Apple platforms)")
#endif
