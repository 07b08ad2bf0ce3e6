#ifndef OPENSTOREKIT_COPENSSL_SHIM_H
#define OPENSTOREKIT_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <openssl/ocsp.h>
#include <openssl/http.h>
#include <openssl/rand.h>

// Function-like macros and variadic functions are not imported into Swift; these wrappers are.
static inline void shim_OPENSSL_free(void *p) { OPENSSL_free(p); }
static inline EVP_PKEY *shim_EVP_EC_gen_P256(void) { return EVP_EC_gen("P-256"); }
static inline STACK_OF(X509) *shim_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int shim_sk_X509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
static inline void shim_sk_X509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }
static inline int shim_sk_X509_num(const STACK_OF(X509) *sk) { return sk_X509_num(sk); }
static inline X509 *shim_sk_X509_value(const STACK_OF(X509) *sk, int i) { return sk_X509_value(sk, i); }
static inline long shim_BIO_get_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }
static inline void shim_X509V3_set_ctx_nodb(X509V3_CTX *ctx) { X509V3_set_ctx_nodb(ctx); }
static inline int shim_sk_OPENSSL_STRING_num(const STACK_OF(OPENSSL_STRING) *sk) { return sk_OPENSSL_STRING_num(sk); }
static inline char *shim_sk_OPENSSL_STRING_value(const STACK_OF(OPENSSL_STRING) *sk, int i) { return sk_OPENSSL_STRING_value(sk, i); }
static inline int shim_OCSP_REQUEST_i2d_bio(BIO *b, OCSP_REQUEST *r) { return i2d_OCSP_REQUEST_bio(b, r); }
static inline OCSP_RESPONSE *shim_OCSP_RESPONSE_d2i_bio(BIO *b) { return d2i_OCSP_RESPONSE_bio(b, NULL); }
static inline unsigned long shim_XN_FLAG_RFC2253(void) { return XN_FLAG_RFC2253; }
#endif
