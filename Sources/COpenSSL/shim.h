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
static inline EVP_PKEY *shim_EVP_EC_gen_P384(void) { return EVP_EC_gen("P-384"); }
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

/* An OCSP responder's answer, for `cert` issued by `issuer`: when the request's single certificate ID
   names `cert` (with the hash the request chose) or, with `cert` NULL, any certificate `issuer` issued
   (same issuer name and key hash, whatever the serial), a successful response with status good or revoked,
   this update `now` and next update a day later, signed by `issuer_key` with SHA-256 and identified by
   key hash; `*out` then holds its DER (free with OPENSSL_free) and the length is returned. Returns -2
   when the request names another certificate, -1 when it cannot be read or answered. */
static inline int shim_ocsp_respond(const unsigned char *request_der, long request_length, X509 *cert, X509 *issuer,
                                    EVP_PKEY *issuer_key, int revoked, time_t now, unsigned char **out) {
    const unsigned char *cursor = request_der;
    OCSP_REQUEST *request = d2i_OCSP_REQUEST(NULL, &cursor, request_length);
    if (request == NULL) return -1;
    int result = -1;
    OCSP_CERTID *mine = NULL;
    OCSP_BASICRESP *basic = NULL;
    OCSP_RESPONSE *response = NULL;
    ASN1_TIME *this_update = NULL, *next_update = NULL, *revocation_time = NULL;
    if (OCSP_request_onereq_count(request) != 1) goto done;
    OCSP_CERTID *asked = OCSP_onereq_get0_id(OCSP_request_onereq_get0(request, 0));
    ASN1_OBJECT *digest_object = NULL;
    if (asked == NULL || OCSP_id_get0_info(NULL, &digest_object, NULL, NULL, asked) != 1) goto done;
    const EVP_MD *digest = EVP_get_digestbyobj(digest_object);
    if (digest == NULL) goto done;
    mine = OCSP_cert_to_id(digest, cert, issuer);
    if (mine == NULL) goto done;
    if ((cert != NULL ? OCSP_id_cmp(mine, asked) : OCSP_id_issuer_cmp(mine, asked)) != 0) { result = -2; goto done; }
    basic = OCSP_BASICRESP_new();
    this_update = ASN1_TIME_set(NULL, now);
    next_update = ASN1_TIME_set(NULL, now + 86400);
    revocation_time = ASN1_TIME_set(NULL, now - 60);
    if (basic == NULL || this_update == NULL || next_update == NULL || revocation_time == NULL) goto done;
    if (OCSP_basic_add1_status(basic, asked, revoked ? V_OCSP_CERTSTATUS_REVOKED : V_OCSP_CERTSTATUS_GOOD,
                               revoked ? OCSP_REVOKED_STATUS_UNSPECIFIED : -1, revoked ? revocation_time : NULL,
                               this_update, next_update) == NULL) goto done;
    if (OCSP_copy_nonce(basic, request) <= 0) goto done;
    if (OCSP_basic_sign(basic, issuer, issuer_key, EVP_sha256(), NULL, OCSP_RESPID_KEY | OCSP_NOCERTS) != 1) goto done;
    response = OCSP_response_create(OCSP_RESPONSE_STATUS_SUCCESSFUL, basic);
    if (response == NULL) goto done;
    *out = NULL;
    result = i2d_OCSP_RESPONSE(response, out);
    if (result <= 0) result = -1;
done:
    OCSP_REQUEST_free(request);
    OCSP_CERTID_free(mine);
    OCSP_BASICRESP_free(basic);
    OCSP_RESPONSE_free(response);
    ASN1_TIME_free(this_update);
    ASN1_TIME_free(next_update);
    ASN1_TIME_free(revocation_time);
    return result;
}

/* A response without an answer (`status` is an OCSP response status such as malformedRequest or unauthorized). */
static inline int shim_ocsp_refuse(int status, unsigned char **out) {
    OCSP_RESPONSE *response = OCSP_response_create(status, NULL);
    if (response == NULL) return -1;
    *out = NULL;
    int length = i2d_OCSP_RESPONSE(response, out);
    OCSP_RESPONSE_free(response);
    return length;
}
#endif
