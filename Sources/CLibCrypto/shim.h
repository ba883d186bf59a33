#ifndef CLIBCRYPTO_SHIM_H
#define CLIBCRYPTO_SHIM_H

// OpenSSL's libcrypto (3.x): digests, MACs, ciphers and its random generator, which
// NavigationValuesCrypto wraps. TLS (libssl) would be a module of its own beside this one.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#endif
