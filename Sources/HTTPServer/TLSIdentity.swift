import CLibSSL
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A certificate chain and its private key for HTTPS, read from PEM files; `reload()` reads them
/// again (on `SIGHUP`, say) without touching the connections already open: a new connection gets
/// the pair in force when it is accepted.
///
/// ```swift
/// let identity = try TLSIdentity(certificatePath: "/run/tls/cert.pem", keyPath: "/run/tls/key.pem")
/// var configuration = HTTPServer.Configuration(host: "0.0.0.0", port: 8443)
/// configuration.tls = identity
/// ```
///
/// Served with OpenSSL's libssl: TLS 1.2 and 1.3 only; for TLS 1.2, ECDHE key exchange with
/// AES-GCM or ChaCha20-Poly1305 (TLS 1.3's suites are all of that kind); ALPN `http/1.1`; no
/// renegotiation, no compression. An encrypted private key is refused (it would need a pass phrase).
public final class TLSIdentity: Sendable {
    /// The PEM file holding the certificate, then any intermediate certificates.
    public let certificatePath: String
    /// The PEM file holding the private key.
    public let keyPath: String
    private let current: Mutex<TLSContext>

    /// Reads and checks the pair.
    /// - Throws: `TLSError` when a file cannot be read, is not PEM, or the key does not match the certificate.
    public init(certificatePath: String, keyPath: String) throws(TLSError) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        current = Mutex(try TLSContext(certificatePath: certificatePath, keyPath: keyPath))
    }

    /// Reads the files again. When they hold a good pair, connections accepted from now on get it;
    /// otherwise the pair in force stays, and the error says what is wrong with the new one.
    public func reload() throws(TLSError) {
        let fresh = try TLSContext(certificatePath: certificatePath, keyPath: keyPath)
        current.withLock { $0 = fresh }
    }

    /// The subject of the certificate in force (`CN=example.com`), for logs.
    public var subject: String { current.withLock { $0.subject } }

    /// When the certificate in force expires, in seconds since 1970 (nil when it cannot be read).
    public var notAfter: Int? { current.withLock { $0.notAfter } }

    /// A server-side TLS connection over `fd` with the pair in force, or nil when OpenSSL cannot
    /// make one (out of memory).
    func makeStream(fd: Int32) -> TLSStream? {
        TLSStream(context: current.withLock { $0 }, fd: fd)
    }
}

/// Why a certificate or key was refused: OpenSSL's reasons, which name no secret.
public struct TLSError: Error, Sendable, CustomStringConvertible {
    public var description: String

    init(_ message: String) {
        // The reasons OpenSSL queued on this thread, oldest first; the queue is left empty.
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            if let reason = clibssl_reason(code) { reasons.append(String(cString: reason)) }
        }
        description = reasons.isEmpty ? message : "\(message): \(reasons.joined(separator: "; "))"
    }
}

/// One OpenSSL server context, configured once and never changed afterwards; connections hold
/// their own reference to it (SSL_new takes one), so replacing it frees it once they are gone.
final class TLSContext: @unchecked Sendable {
    // @unchecked: an SSL_CTX that is no longer modified may be used by SSL_new from any thread.
    let context: OpaquePointer
    let subject: String
    let notAfter: Int?

    /// ECDHE key exchange with AEAD ciphers for TLS 1.2 (OpenSSL's cipher-list syntax). TLS 1.3's
    /// suites are OpenSSL's defaults, all AEAD.
    static let tls12Ciphers = "ECDHE+AESGCM:ECDHE+CHACHA20"

    init(certificatePath: String, keyPath: String) throws(TLSError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSError("cannot make a TLS context") }
        do throws(TLSError) {
            clibssl_configure_server(context)
            clibssl_refuse_passphrases(context)
            clibssl_select_alpn_http11(context)
            guard clibssl_set_minimum_tls12(context) == 1 else { throw TLSError("cannot require TLS 1.2") }
            guard SSL_CTX_set_cipher_list(context, Self.tls12Ciphers) == 1 else {
                throw TLSError("cannot set the TLS 1.2 ciphers")
            }
            guard SSL_CTX_use_certificate_chain_file(context, certificatePath) == 1 else {
                throw TLSError("cannot load the certificate '\(certificatePath)'")
            }
            guard SSL_CTX_use_PrivateKey_file(context, keyPath, SSL_FILETYPE_PEM) == 1 else {
                throw TLSError("cannot load the private key '\(keyPath)'")
            }
            guard SSL_CTX_check_private_key(context) == 1 else {
                throw TLSError("the private key '\(keyPath)' does not match the certificate '\(certificatePath)'")
            }
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        self.context = context
        let certificate = SSL_CTX_get0_certificate(context)
        subject = Self.subject(of: certificate)
        notAfter = Self.notAfter(of: certificate)
    }

    deinit {
        SSL_CTX_free(context)
    }

    private static func subject(of certificate: OpaquePointer?) -> String {
        guard let certificate, let name = X509_get_subject_name(certificate) else { return "" }
        var buffer = [CChar](repeating: 0, count: 256)
        guard X509_NAME_oneline(name, &buffer, Int32(buffer.count)) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func notAfter(of certificate: OpaquePointer?) -> Int? {
        guard let certificate, let time = X509_get0_notAfter(certificate) else { return nil }
        var fields = tm()
        guard ASN1_TIME_to_tm(time, &fields) == 1 else { return nil }
        return Int(timegm(&fields))
    }
}
