/// HMAC (RFC 2104) over SHA-256.
///
/// ```swift
/// HMAC.sha256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))   // 32 bytes
/// ```
package enum HMAC {
    /// HMAC-SHA256 of `message` under `key` (32 bytes).
    package static func sha256(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        withContiguousBytes(key) { key in
            withContiguousBytes(message) { message in Backend.hmacSHA256(key: key, message: message) }
        }
    }
}
