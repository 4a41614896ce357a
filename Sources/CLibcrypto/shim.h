#ifndef COHORT_CLIBCRYPTO_H
#define COHORT_CLIBCRYPTO_H
// Only the elliptic-curve and big-number parts of OpenSSL's libcrypto: swift-crypto has no public
// point arithmetic, which key diversification needs.
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/obj_mac.h>
#endif
