#if canImport(CLibCrypto)
    // Linux: OpenSSL's libcrypto (3.x), the library libpq links too.
    import CLibCrypto

    /// The primitives, from libcrypto. Every function here is safe to call from any thread.
    enum Backend {
        /// The algorithms, looked up once: a lookup goes through libcrypto's providers, which
        /// its one-shot calls would otherwise repeat on every call.
        private struct Algorithms: @unchecked Sendable {  // read-only handles, which libcrypto lets threads share
            let sha256: OpaquePointer?
            let aes256GCM: OpaquePointer?
        }

        private static let algorithms = Algorithms(
            sha256: EVP_MD_fetch(nil, "SHA256", nil), aes256GCM: EVP_CIPHER_fetch(nil, "AES-256-GCM", nil))

        private static let missingSHA256 =
            "libcrypto offers no SHA-256: its default provider did not load (check OPENSSL_CONF)"

        /// Throws when an algorithm is missing: libcrypto's providers did not load.
        static func checkAvailable() throws(CryptoError) {
            guard algorithms.sha256 != nil else { throw CryptoError(missingSHA256) }
            guard algorithms.aes256GCM != nil else {
                throw CryptoError(
                    "libcrypto offers no AES-256-GCM: its default provider did not load (check OPENSSL_CONF)")
            }
        }

        /// SHA-256 must be there: every token check and migration needs it. A program checks
        /// that with `CryptoAvailability.check()` when it starts (the executable does, and exits
        /// with its message); past that check this cannot fail.
        private static var sha256: OpaquePointer {
            guard let algorithm = algorithms.sha256 else { preconditionFailure(missingSHA256) }
            return algorithm
        }

        static func sha256(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
            var digest = [UInt8](repeating: 0, count: SHA256.byteCount)
            var length: UInt32 = 0
            let status = bytes.withNonNullBase { bytes, count in
                digest.withUnsafeMutableBufferPointer { output in
                    EVP_Digest(bytes, count, output.baseAddress, &length, sha256, nil)
                }
            }
            // Fails only when memory runs out, which the Swift runtime does not survive either.
            precondition(status == 1 && length == UInt32(SHA256.byteCount), "libcrypto: SHA-256 failed")
            return digest
        }

        static func hmacSHA256(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> [UInt8] {
            var code = [UInt8](repeating: 0, count: SHA256.byteCount)
            var length: UInt32 = 0
            let result = key.withNonNullBase { key, keyCount in
                message.withNonNullBase { message, messageCount in
                    code.withUnsafeMutableBufferPointer { output in
                        CLibCrypto.HMAC(
                            sha256, key, Int32(keyCount), message, messageCount, output.baseAddress, &length)
                    }
                }
            }
            precondition(result != nil && length == UInt32(SHA256.byteCount), "libcrypto: HMAC-SHA256 failed")
            return code
        }

        static func constantTimeEquals(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
            guard lhs.count == rhs.count else { return false }
            guard let left = lhs.baseAddress, let right = rhs.baseAddress else { return lhs.count == 0 }
            return CRYPTO_memcmp(left, right, lhs.count) == 0
        }

        static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
            guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return true }
            var offset = 0
            while offset < buffer.count {
                let chunk = min(buffer.count - offset, Int(Int32.max))
                guard RAND_bytes(base + offset, Int32(chunk)) == 1 else { return false }
                offset += chunk
            }
            return true
        }

        static func aes256GCMSeal(
            _ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
            authenticating associatedData: UnsafeRawBufferPointer
        ) -> [UInt8]? {
            guard plaintext.count <= Int(Int32.max) - AES256GCM.tagByteCount, let context = CipherContext() else {
                return nil
            }
            var sealed = [UInt8](repeating: 0, count: plaintext.count + AES256GCM.tagByteCount)
            let isSealed = sealed.withUnsafeMutableBufferPointer { output -> Bool in
                guard let output = output.baseAddress,
                    context.run(
                        encrypting: true, key: key, nonce: nonce, associatedData: associatedData, input: plaintext,
                        output: output)
                else { return false }
                // The tag follows the ciphertext.
                return EVP_CIPHER_CTX_ctrl(
                    context.pointer, EVP_CTRL_AEAD_GET_TAG, Int32(AES256GCM.tagByteCount), output + plaintext.count)
                    == 1
            }
            return isSealed ? sealed : nil
        }

        static func aes256GCMOpen(
            ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer,
            nonce: UnsafeRawBufferPointer, authenticating associatedData: UnsafeRawBufferPointer
        ) -> [UInt8]? {
            guard tag.count == AES256GCM.tagByteCount, let context = CipherContext() else { return nil }
            // One byte more than the plaintext, so that an empty one still has an address to write to.
            var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 1)
            var expectedTag = Array(tag)
            let isOpened = plaintext.withUnsafeMutableBufferPointer { output -> Bool in
                guard let output = output.baseAddress else { return false }
                // The tag is checked in the final step: a mismatch fails, and what was decrypted is thrown away.
                return context.run(
                    encrypting: false, key: key, nonce: nonce, associatedData: associatedData, input: ciphertext,
                    output: output
                ) {
                    expectedTag.withUnsafeMutableBytes { tag in
                        EVP_CIPHER_CTX_ctrl(
                            context.pointer, EVP_CTRL_AEAD_SET_TAG, Int32(AES256GCM.tagByteCount), tag.baseAddress)
                            == 1
                    }
                }
            }
            guard isOpened else { return nil }
            plaintext.removeLast()
            return plaintext
        }

        /// One AES-256-GCM operation's context, freed with it.
        private final class CipherContext {
            let pointer: OpaquePointer
            private let cipher: OpaquePointer

            init?() {
                guard let cipher = Backend.algorithms.aes256GCM, let pointer = EVP_CIPHER_CTX_new() else { return nil }
                self.cipher = cipher
                self.pointer = pointer
            }

            deinit { EVP_CIPHER_CTX_free(pointer) }

            /// Encrypts or decrypts `input` into `output` (as long as `input`) under `key` and `nonce`,
            /// after authenticating `associatedData`; `beforeFinal` runs just before the final step
            /// (which checks the tag when decrypting).
            func run(
                encrypting: Bool, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
                associatedData: UnsafeRawBufferPointer, input: UnsafeRawBufferPointer,
                output: UnsafeMutablePointer<UInt8>,
                beforeFinal: () -> Bool = { true }
            ) -> Bool {
                guard input.count <= Int(Int32.max), associatedData.count <= Int(Int32.max),
                    EVP_CipherInit_ex(pointer, cipher, nil, key.bytes, nonce.bytes, encrypting ? 1 : 0) == 1
                else { return false }
                var length: Int32 = 0
                if !associatedData.isEmpty {
                    guard
                        EVP_CipherUpdate(pointer, nil, &length, associatedData.bytes, Int32(associatedData.count)) == 1
                    else { return false }
                }
                var written = 0
                if !input.isEmpty {
                    guard EVP_CipherUpdate(pointer, output, &length, input.bytes, Int32(input.count)) == 1 else {
                        return false
                    }
                    written = Int(length)
                }
                guard beforeFinal(), EVP_CipherFinal_ex(pointer, output + written, &length) == 1 else { return false }
                return written + Int(length) == input.count
            }
        }
    }

    extension UnsafeRawBufferPointer {
        /// The bytes as libcrypto takes them (nil for none).
        fileprivate var bytes: UnsafePointer<UInt8>? { baseAddress?.assumingMemoryBound(to: UInt8.self) }

        /// Calls `body` with a pointer that is never null (libcrypto refuses a null one even for no
        /// bytes) and the count.
        fileprivate func withNonNullBase<Result>(_ body: (UnsafePointer<UInt8>, Int) -> Result) -> Result {
            if let bytes { return body(bytes, count) }
            var none: UInt8 = 0
            return withUnsafePointer(to: &none) { body($0, 0) }
        }
    }
#endif
