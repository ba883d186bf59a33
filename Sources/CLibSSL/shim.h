#ifndef CLIBSSL_SHIM_H
#define CLIBSSL_SHIM_H

// OpenSSL's libssl (3.x), for HTTPServer's TLS: contexts, connections over non-blocking sockets,
// and the few settings that OpenSSL spells as macros, which Swift cannot call.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>

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

/// The reason of an OpenSSL error code ("no shared cipher", "http request", ...), or NULL.
static inline const char *clibssl_reason(unsigned long code) {
    return ERR_reason_error_string(code);
}

#endif
