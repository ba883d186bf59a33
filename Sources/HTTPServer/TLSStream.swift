import CLibSSL

#if canImport(Glibc)
    import Glibc
#endif

/// The TLS side of one accepted connection, used only on its loop's thread. Every call is
/// non-blocking: when OpenSSL needs the socket to become readable or writable it answers
/// `.wouldBlock` (or `.inProgress`), and the loop calls again on the socket's next event. OpenSSL
/// may need to read in order to write, or the reverse (TLS 1.3 key updates, tickets), which the
/// `…Wants…` flags tell the connection.
final class TLSStream {
    enum HandshakeResult {
        case established
        /// Waiting for the socket.
        case inProgress
        /// The handshake failed; the reason is OpenSSL's or the socket's, and names no secret.
        case failed(String)
    }

    private var ssl: OpaquePointer?
    private(set) var isEstablished = false
    /// A fatal error happened: no close_notify may be sent.
    private var isBroken = false
    private var hasSentCloseNotify = false
    /// The last read stopped because OpenSSL must write first: read again when the socket is writable.
    private(set) var readWantsWrite = false
    /// The last write stopped because OpenSSL must read first: write again when the socket is readable.
    private(set) var writeWantsRead = false

    init?(context: TLSContext, fd: Int32) {
        guard let ssl = SSL_new(context.context) else { return nil }
        guard clibssl_set_fd_without_sigpipe(ssl, fd) == 1 else {
            SSL_free(ssl)
            return nil
        }
        SSL_set_accept_state(ssl)
        self.ssl = ssl
    }

    deinit {
        if let ssl { SSL_free(ssl) }
    }

    /// Takes the handshake as far as the socket allows.
    func handshake() -> HandshakeResult {
        guard let ssl else { return .failed("closed") }
        ERR_clear_error()
        errno = 0
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            isEstablished = true
            return .established
        }
        let error = SSL_get_error(ssl, result)
        switch error {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .inProgress
        default:
            isBroken = true
            return .failed(failureReason(error))
        }
    }

    /// Reads decrypted bytes: `.processed(0)` at the end of the stream (close_notify, or the
    /// client closing its socket).
    /// - Throws: `SocketError` when the connection is broken.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> IOResult<Int> {
        guard let ssl else { throw SocketError(call: "SSL_read", errno: EBADF) }
        readWantsWrite = false
        ERR_clear_error()
        var count = 0
        if SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count) == 1 { return .processed(count) }
        let error = SSL_get_error(ssl, 0)
        switch error {
        case SSL_ERROR_WANT_READ:
            return .wouldBlock
        case SSL_ERROR_WANT_WRITE:
            readWantsWrite = true
            return .wouldBlock
        case SSL_ERROR_ZERO_RETURN:
            return .processed(0)
        default:
            isBroken = true
            throw SocketError(call: "SSL_read", errno: error == SSL_ERROR_SYSCALL && errno != 0 ? errno : EPROTO)
        }
    }

    /// Encrypts and writes what the socket takes now (at least one record, unless it would block).
    /// - Throws: `SocketError` when the connection is broken.
    func write(_ buffer: UnsafeRawBufferPointer) throws(SocketError) -> IOResult<Int> {
        guard let ssl else { throw SocketError(call: "SSL_write", errno: EBADF) }
        writeWantsRead = false
        ERR_clear_error()
        var count = 0
        if SSL_write_ex(ssl, buffer.baseAddress, buffer.count, &count) == 1 { return .processed(count) }
        let error = SSL_get_error(ssl, 0)
        switch error {
        case SSL_ERROR_WANT_WRITE:
            return .wouldBlock
        case SSL_ERROR_WANT_READ:
            writeWantsRead = true
            return .wouldBlock
        default:
            isBroken = true
            throw SocketError(call: "SSL_write", errno: error == SSL_ERROR_SYSCALL && errno != 0 ? errno : EPIPE)
        }
    }

    /// Sends close_notify once, as far as the socket takes it now (a client that does not read it
    /// loses nothing: every response byte was written before).
    func shutdown() {
        guard let ssl, isEstablished, !isBroken, !hasSentCloseNotify else { return }
        hasSentCloseNotify = true
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// Frees OpenSSL's state; the socket is the connection's to close.
    func free() {
        if let ssl { SSL_free(ssl) }
        ssl = nil
    }

    private func failureReason(_ error: Int32) -> String {
        let code = ERR_peek_last_error()
        defer { ERR_clear_error() }
        if error == SSL_ERROR_SSL, code != 0, let reason = clibssl_reason(code) {
            return String(cString: reason)
        }
        if error == SSL_ERROR_SYSCALL, errno != 0 {
            return String(cString: strerror(errno))
        }
        return "connection closed during the handshake"
    }
}
