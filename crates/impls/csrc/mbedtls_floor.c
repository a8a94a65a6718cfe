/* The crypto floor through Mbed TLS (tm_floor.h), as its TLS 1.3 stack calls it
 * (library/ssl_tls13_*.c): PSA keys for the key exchange (psa_generate_key,
 * psa_export_public_key, psa_raw_key_agreement with the peer's share as sent); a digest by
 * psa_hash_compute signed with mbedtls_pk_sign_ext and checked with mbedtls_pk_verify_ext;
 * an HMAC by psa_mac_compute. Mbed TLS returns codes (PSA statuses or its own) rather than
 * keeping an error queue: the last one is kept per thread (tm_mbedtls_floor_error). */

#include <stdlib.h>
#include <string.h>

#include <mbedtls/pk.h>
#include <mbedtls/psa_util.h>
#include <psa/crypto.h>

#include "tm_floor.h"

#if !defined(MBEDTLS_THREADING_C) || !defined(MBEDTLS_THREADING_PTHREAD)
#error "compile against the Mbed TLS build of scripts/mbedtls-build, with its user config"
#endif

static __thread int last_error;

int tm_mbedtls_floor_error(void) { return last_error; }

/* 1 for success (0), else 0 with the code kept. */
static int ok(int rc) {
    if (rc != 0) {
        last_error = rc;
        return 0;
    }
    return 1;
}

typedef struct {
    psa_key_type_t type;
    size_t bits;
} tm_kex;

static void *kex_new(int part) {
    tm_kex *k;
    if (part < TM_KEX_X25519 || part > TM_KEX_P384) {
        last_error = PSA_ERROR_NOT_SUPPORTED;
        return NULL;
    }
    k = malloc(sizeof *k);
    if (!k) {
        return NULL;
    }
    k->type = PSA_KEY_TYPE_ECC_KEY_PAIR(part == TM_KEX_X25519 ? PSA_ECC_FAMILY_MONTGOMERY
                                                               : PSA_ECC_FAMILY_SECP_R1);
    k->bits = part == TM_KEX_X25519 ? 255 : part == TM_KEX_P256 ? 256 : 384;
    return k;
}

static void kex_free(void *k) { free(k); }

static void *kex_generate(void *kex, unsigned char *share, unsigned *share_len) {
    tm_kex *k = kex;
    psa_key_attributes_t attr = PSA_KEY_ATTRIBUTES_INIT;
    psa_key_id_t *own = malloc(sizeof *own);
    size_t n = 0;
    if (!own) {
        return NULL;
    }
    psa_set_key_usage_flags(&attr, PSA_KEY_USAGE_DERIVE);
    psa_set_key_algorithm(&attr, PSA_ALG_ECDH);
    psa_set_key_type(&attr, k->type);
    psa_set_key_bits(&attr, k->bits);
    if (!ok(psa_generate_key(&attr, own))) {
        free(own);
        return NULL;
    }
    if (!ok(psa_export_public_key(*own, share, TM_SHARE_MAX, &n))) {
        psa_destroy_key(*own);
        free(own);
        return NULL;
    }
    *share_len = (unsigned)n;
    return own;
}

static void own_free(void *p) {
    psa_key_id_t *own = p;
    psa_destroy_key(*own);
    free(own);
}

static int kex_derive(void *kex, void *p, const unsigned char *peer, unsigned peer_len,
                      unsigned char *secret, unsigned *secret_len) {
    psa_key_id_t *own = p;
    size_t n = 0;
    (void)kex;
    if (!ok(psa_raw_key_agreement(PSA_ALG_ECDH, *own, peer, peer_len, secret, TM_SECRET_MAX,
                                  &n))) {
        return 0;
    }
    *secret_len = (unsigned)n;
    return 1;
}

typedef struct {
    int scheme;
    mbedtls_pk_context pk;
} tm_signer;

static void signer_free(void *p) {
    tm_signer *s = p;
    mbedtls_pk_free(&s->pk);
    free(s);
}

/* Mbed TLS signs TLS 1.3 with ECDSA and RSA-PSS; it has no EdDSA. */
static void *signer_new(const unsigned char *pkcs8, unsigned len, int scheme) {
    tm_signer *s;
    if (scheme < 0 || scheme >= TM_SIG_ED25519) {
        last_error = MBEDTLS_ERR_PK_FEATURE_UNAVAILABLE;
        return NULL;
    }
    s = calloc(1, sizeof *s);
    if (!s) {
        return NULL;
    }
    s->scheme = scheme;
    mbedtls_pk_init(&s->pk);
    if (!ok(mbedtls_pk_parse_key(&s->pk, pkcs8, len, NULL, 0, mbedtls_psa_get_random,
                                 MBEDTLS_PSA_RANDOM_STATE))) {
        signer_free(s);
        return NULL;
    }
    return s;
}

static mbedtls_md_type_t md(int scheme) {
    return scheme == TM_SIG_ECDSA_P384_SHA384 ? MBEDTLS_MD_SHA384 : MBEDTLS_MD_SHA256;
}

static mbedtls_pk_type_t pk_type(int scheme) {
    return scheme == TM_SIG_RSA_PSS_RSAE_SHA256 ? MBEDTLS_PK_RSASSA_PSS : MBEDTLS_PK_ECDSA;
}

static int digest(int scheme, const unsigned char *msg, unsigned len, unsigned char *out,
                  size_t *out_len) {
    psa_algorithm_t alg = scheme == TM_SIG_ECDSA_P384_SHA384 ? PSA_ALG_SHA_384 : PSA_ALG_SHA_256;
    return ok(psa_hash_compute(alg, msg, len, out, 48, out_len));
}

static int sign(void *p, const unsigned char *msg, unsigned len, unsigned char *sig,
                unsigned *sig_len) {
    tm_signer *s = p;
    unsigned char d[48];
    size_t d_len = 0, n = 0;
    if (!digest(s->scheme, msg, len, d, &d_len) ||
        !ok(mbedtls_pk_sign_ext(pk_type(s->scheme), &s->pk, md(s->scheme), d, d_len, sig,
                                TM_SIG_MAX, &n, mbedtls_psa_get_random,
                                MBEDTLS_PSA_RANDOM_STATE))) {
        return 0;
    }
    *sig_len = (unsigned)n;
    return 1;
}

/* The signer's public key written out and parsed into a key of its own. */
static void *verifier_new(void *p) {
    tm_signer *s = p;
    tm_signer *v = calloc(1, sizeof *v);
    unsigned char buf[1024];
    int n;
    if (!v) {
        return NULL;
    }
    v->scheme = s->scheme;
    mbedtls_pk_init(&v->pk);
    /* The DER is written at the end of the buffer. */
    n = mbedtls_pk_write_pubkey_der(&s->pk, buf, sizeof buf);
    if (n < 0) {
        last_error = n;
        signer_free(v);
        return NULL;
    }
    if (!ok(mbedtls_pk_parse_public_key(&v->pk, buf + sizeof buf - n, (size_t)n))) {
        signer_free(v);
        return NULL;
    }
    return v;
}

static void verifier_free(void *p) { signer_free(p); }

static int verify(void *p, const unsigned char *msg, unsigned len, const unsigned char *sig,
                  unsigned sig_len) {
    tm_signer *v = p;
    unsigned char d[48];
    size_t d_len = 0;
    /* As TLS 1.3 checks RSA-PSS: MGF1 with the scheme's hash, a salt of its length. */
    mbedtls_pk_rsassa_pss_options pss = {MBEDTLS_MD_SHA256, 32};
    if (!digest(v->scheme, msg, len, d, &d_len)) {
        return 0;
    }
    return ok(mbedtls_pk_verify_ext(pk_type(v->scheme),
                                    v->scheme == TM_SIG_RSA_PSS_RSAE_SHA256 ? &pss : NULL,
                                    &v->pk, md(v->scheme), d, d_len, sig, sig_len));
}

typedef struct {
    psa_key_id_t key;
    psa_algorithm_t alg;
} tm_hmac;

static void *hmac_new(const unsigned char *key, int len) {
    psa_key_attributes_t attr = PSA_KEY_ATTRIBUTES_INIT;
    tm_hmac *h = malloc(sizeof *h);
    if (!h) {
        return NULL;
    }
    h->alg = PSA_ALG_HMAC(len == 32 ? PSA_ALG_SHA_256 : PSA_ALG_SHA_384);
    psa_set_key_usage_flags(&attr, PSA_KEY_USAGE_SIGN_MESSAGE);
    psa_set_key_algorithm(&attr, h->alg);
    psa_set_key_type(&attr, PSA_KEY_TYPE_HMAC);
    if (!ok(psa_import_key(&attr, key, (size_t)len, &h->key))) {
        free(h);
        return NULL;
    }
    return h;
}

static void hmac_free(void *p) {
    tm_hmac *h = p;
    psa_destroy_key(h->key);
    free(h);
}

static int hmac(void *p, const unsigned char *msg, unsigned len, unsigned char *out) {
    tm_hmac *h = p;
    size_t n = 0;
    return ok(psa_mac_compute(h->key, h->alg, msg, len, out, TM_HMAC_MAX, &n));
}

static const tm_floor_fns fns = {kex_new,      kex_free,     kex_generate,  own_free,
                                 kex_derive,   signer_new,   signer_free,   sign,
                                 verifier_new, verifier_free, verify,       hmac_new,
                                 hmac_free,    hmac};

const tm_floor_fns *tm_mbedtls_floor(void) { return &fns; }
