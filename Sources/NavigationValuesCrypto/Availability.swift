/// Whether the primitives can run in this process, checked once at start-up by a program that
/// needs them (the server's executable), so that a broken library is a clear error before any
/// work rather than a trap on the first token check.
package enum CryptoAvailability {
    /// Succeeds when SHA-256 (and with it HMAC-SHA256) and AES-256-GCM are available.
    /// - Throws: `CryptoError` naming what is missing and where to look, when libcrypto's
    ///   providers did not load (an `OPENSSL_CONF` that activates no provider offering them).
    package static func check() throws(CryptoError) {
        try Backend.checkAvailable()
    }
}
