#ifndef CLIBSSL_SHIM_H
#define CLIBSSL_SHIM_H

// OpenSSL's libssl (3.x), for HTTPServer's TLS: contexts, connections over non-blocking sockets,
// and the few settings that OpenSSL spells as macros, which Swift cannot call.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <sys/socket.h>

/// TLS 1.2 at least (SSL_CTX_set_min_proto_version is a macro).
static inline int clibssl_set_minimum_tls12(SSL_CTX *context) {
    return (int)SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
}

/// Options and modes for a server on non-blocking sockets: no renegotiation, no compression, the
/// server's cipher order, a peer closing without close_notify read as an end of stream; writes that
/// may return after part of a buffer, retried from a buffer that may have moved (a Swift array), and
/// buffers released while a connection is idle.
static inline void clibssl_configure_server(SSL_CTX *context) {
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION
        | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER
        | SSL_MODE_RELEASE_BUFFERS);
}

/// A pass-phrase callback that gives none: an encrypted key fails to load instead of OpenSSL
/// asking for its pass phrase on the terminal (which would block the server).
static int clibssl_no_passphrase(char *buffer, int size, int rwflag, void *userdata) {
    (void)buffer; (void)size; (void)rwflag; (void)userdata;
    return 0;
}

static inline void clibssl_refuse_passphrases(SSL_CTX *context) {
    SSL_CTX_set_default_passwd_cb(context, clibssl_no_passphrase);
}

/// ALPN: http/1.1 when the client offers it; otherwise no protocol is selected, and the
/// handshake goes on without ALPN (the client then speaks HTTP/1.1 or gives up).
static int clibssl_select_http11(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                 const unsigned char *in, unsigned int inlen, void *arg) {
    static const unsigned char http11[] = "\x08http/1.1";
    unsigned char *selected = NULL;
    (void)ssl; (void)arg;
    if (SSL_select_next_proto(&selected, outlen, http11, sizeof(http11) - 1, in, inlen)
        != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

static inline void clibssl_select_alpn_http11(SSL_CTX *context) {
    SSL_CTX_set_alpn_select_cb(context, clibssl_select_http11, NULL);
}

/// SNI: the name a client asks for (SSL_set_tlsext_host_name is a macro).
static inline int clibssl_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// OpenSSL's socket BIO writes with write(2), which raises SIGPIPE (ending the process) when the
/// peer has reset the connection. This BIO is the socket BIO with its write made by
/// send(2) with MSG_NOSIGNAL, as the server's plain sockets write: the write fails with EPIPE.
static BIO_METHOD *clibssl_nosignal_method = NULL;
static pthread_once_t clibssl_nosignal_once = PTHREAD_ONCE_INIT;

static int clibssl_nosignal_write(BIO *bio, const char *data, int length) {
    int written = (int)send((int)BIO_get_fd(bio, NULL), data, (size_t)length, MSG_NOSIGNAL);
    BIO_clear_retry_flags(bio);
    if (written <= 0 && BIO_sock_should_retry(written)) {
        BIO_set_retry_write(bio);
    }
    return written;
}

static void clibssl_make_nosignal_method(void) {
    const BIO_METHOD *socket_method = BIO_s_socket();
    BIO_METHOD *method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                                      "socket without SIGPIPE");
    if (method == NULL) {
        return;
    }
    BIO_meth_set_write(method, clibssl_nosignal_write);
    BIO_meth_set_read(method, BIO_meth_get_read(socket_method));
    BIO_meth_set_puts(method, BIO_meth_get_puts(socket_method));
    BIO_meth_set_ctrl(method, BIO_meth_get_ctrl(socket_method));
    BIO_meth_set_create(method, BIO_meth_get_create(socket_method));
    BIO_meth_set_destroy(method, BIO_meth_get_destroy(socket_method));
    clibssl_nosignal_method = method;
}

/// SSL_set_fd, through that BIO (the descriptor stays the caller's to close). Returns 1, or 0 when
/// OpenSSL cannot allocate it.
static inline int clibssl_set_fd_without_sigpipe(SSL *ssl, int fd) {
    pthread_once(&clibssl_nosignal_once, clibssl_make_nosignal_method);
    if (clibssl_nosignal_method == NULL) {
        return 0;
    }
    BIO *bio = BIO_new(clibssl_nosignal_method);
    if (bio == NULL) {
        return 0;
    }
    BIO_set_fd(bio, fd, BIO_NOCLOSE);
    SSL_set_bio(ssl, bio, bio);
    return 1;
}

/// The reason of an OpenSSL error code ("no shared cipher", "http request", ...), or NULL.
static inline const char *clibssl_reason(unsigned long code) {
    return ERR_reason_error_string(code);
}

#endif
