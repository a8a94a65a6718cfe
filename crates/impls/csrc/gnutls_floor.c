/* The crypto floor through GnuTLS (tm_floor.h). Signatures and HMACs go through its public
 * API as its TLS stack calls it (gnutls_privkey_sign_data2 and gnutls_pubkey_verify_data2, as
 * lib/tls13-sig.c does; gnutls_hmac_fast). GnuTLS 3.7 exports no key-agreement call, so the
 * key exchange goes through nettle, the library its lib/nettle/pk.c calls for it: X25519 by
 * curve25519_mul_g and curve25519_mul; the NIST curves by ecdsa_generate_keypair and
 * ecc_point_mul, the peer's point read into bignums and checked on the curve by
 * ecc_point_set, as GnuTLS reads it. Random bytes come from gnutls_rnd, as its key shares'
 * do. Codes are GnuTLS's; the last one is kept per thread (tm_gnutls_floor_error). */

#include <stdlib.h>
#include <string.h>

#include <gmp.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <nettle/bignum.h>
#include <nettle/curve25519.h>
#include <nettle/ecc-curve.h>
#include <nettle/ecc.h>
#include <nettle/ecdsa.h>

#include "tm_floor.h"

static __thread int last_error;

int tm_gnutls_floor_error(void) { return last_error; }

static int ok(int rc) {
    if (rc < 0) {
        last_error = rc;
        return 0;
    }
    return 1;
}

static void random_key(void *ctx, size_t len, uint8_t *out) {
    (void)ctx;
    gnutls_rnd(GNUTLS_RND_KEY, out, len);
}

typedef struct {
    int part;
    const struct ecc_curve *curve;
    size_t size; /* a coordinate's bytes */
} tm_kex;

static void *kex_new(int part) {
    tm_kex *k;
    if (part < TM_KEX_X25519 || part > TM_KEX_P384) {
        last_error = GNUTLS_E_UNIMPLEMENTED_FEATURE;
        return NULL;
    }
    k = calloc(1, sizeof *k);
    if (!k) {
        return NULL;
    }
    k->part = part;
    k->curve = part == TM_KEX_P256 ? nettle_get_secp_256r1()
               : part == TM_KEX_P384 ? nettle_get_secp_384r1()
                                     : NULL;
    k->size = part == TM_KEX_P384 ? 48 : 32;
    return k;
}

static void kex_free(void *k) { free(k); }

typedef struct {
    int part;
    uint8_t x25519[CURVE25519_SIZE];
    struct ecc_scalar key;
} tm_own;

static void own_free(void *p) {
    tm_own *own = p;
    if (own->part != TM_KEX_X25519) {
        ecc_scalar_clear(&own->key);
    }
    free(own);
}

static void *kex_generate(void *kex, unsigned char *share, unsigned *share_len) {
    tm_kex *k = kex;
    tm_own *own = calloc(1, sizeof *own);
    if (!own) {
        return NULL;
    }
    own->part = k->part;
    if (k->part == TM_KEX_X25519) {
        if (!ok(gnutls_rnd(GNUTLS_RND_KEY, own->x25519, sizeof own->x25519))) {
            free(own);
            return NULL;
        }
        curve25519_mul_g(share, own->x25519);
        *share_len = CURVE25519_SIZE;
        return own;
    }
    struct ecc_point pub;
    mpz_t x, y;
    ecc_point_init(&pub, k->curve);
    ecc_scalar_init(&own->key, k->curve);
    ecdsa_generate_keypair(&pub, &own->key, NULL, random_key);
    mpz_init(x);
    mpz_init(y);
    ecc_point_get(&pub, x, y);
    /* The uncompressed point, as _gnutls_ecc_ansi_x962_export writes it. */
    share[0] = 4;
    nettle_mpz_get_str_256(k->size, share + 1, x);
    nettle_mpz_get_str_256(k->size, share + 1 + k->size, y);
    *share_len = (unsigned)(1 + 2 * k->size);
    mpz_clear(x);
    mpz_clear(y);
    ecc_point_clear(&pub);
    return own;
}

static int kex_derive(void *kex, void *p, const unsigned char *peer, unsigned peer_len,
                      unsigned char *secret, unsigned *secret_len) {
    tm_kex *k = kex;
    tm_own *own = p;
    if (k->part == TM_KEX_X25519) {
        static const uint8_t zero[CURVE25519_SIZE];
        if (peer_len != CURVE25519_SIZE) {
            last_error = GNUTLS_E_RECEIVED_ILLEGAL_PARAMETER;
            return 0;
        }
        curve25519_mul(secret, own->x25519, peer);
        /* RFC 7748 6.1's check, which GnuTLS makes. */
        if (memcmp(secret, zero, sizeof zero) == 0) {
            last_error = GNUTLS_E_DECRYPTION_FAILED;
            return 0;
        }
        *secret_len = CURVE25519_SIZE;
        return 1;
    }
    if (peer_len != 1 + 2 * k->size || peer[0] != 4) {
        last_error = GNUTLS_E_RECEIVED_ILLEGAL_PARAMETER;
        return 0;
    }
    struct ecc_point pub, shared;
    mpz_t x, y;
    int good;
    mpz_init(x);
    mpz_init(y);
    nettle_mpz_set_str_256_u(x, k->size, peer + 1);
    nettle_mpz_set_str_256_u(y, k->size, peer + 1 + k->size);
    ecc_point_init(&pub, k->curve);
    ecc_point_init(&shared, k->curve);
    good = ecc_point_set(&pub, x, y);
    if (good) {
        ecc_point_mul(&shared, &own->key, &pub);
        ecc_point_get(&shared, x, NULL);
        nettle_mpz_get_str_256(k->size, secret, x);
        *secret_len = (unsigned)k->size;
    } else {
        last_error = GNUTLS_E_RECEIVED_ILLEGAL_PARAMETER;
    }
    ecc_point_clear(&pub);
    ecc_point_clear(&shared);
    mpz_clear(x);
    mpz_clear(y);
    return good;
}

static gnutls_sign_algorithm_t algorithm(int scheme) {
    switch (scheme) {
    case TM_SIG_ECDSA_P256_SHA256:
        return GNUTLS_SIGN_ECDSA_SECP256R1_SHA256;
    case TM_SIG_ECDSA_P384_SHA384:
        return GNUTLS_SIGN_ECDSA_SECP384R1_SHA384;
    case TM_SIG_RSA_PSS_RSAE_SHA256:
        return GNUTLS_SIGN_RSA_PSS_RSAE_SHA256;
    case TM_SIG_ED25519:
        return GNUTLS_SIGN_EDDSA_ED25519;
    }
    return GNUTLS_SIGN_UNKNOWN;
}

typedef struct {
    gnutls_sign_algorithm_t alg;
    gnutls_privkey_t key;
} tm_signer;

static void signer_free(void *p) {
    tm_signer *s = p;
    gnutls_privkey_deinit(s->key);
    free(s);
}

static void *signer_new(const unsigned char *pkcs8, unsigned len, int scheme) {
    tm_signer *s = calloc(1, sizeof *s);
    gnutls_datum_t der = {(unsigned char *)pkcs8, len};
    if (!s) {
        return NULL;
    }
    s->alg = algorithm(scheme);
    if (!ok(gnutls_privkey_init(&s->key))) {
        free(s);
        return NULL;
    }
    if (!ok(gnutls_privkey_import_x509_raw(s->key, &der, GNUTLS_X509_FMT_DER, NULL, 0))) {
        signer_free(s);
        return NULL;
    }
    return s;
}

static int sign(void *p, const unsigned char *msg, unsigned len, unsigned char *sig,
                unsigned *sig_len) {
    tm_signer *s = p;
    gnutls_datum_t data = {(unsigned char *)msg, len}, out = {NULL, 0};
    if (!ok(gnutls_privkey_sign_data2(s->key, s->alg, 0, &data, &out))) {
        return 0;
    }
    int fits = out.size <= TM_SIG_MAX;
    if (fits) {
        memcpy(sig, out.data, out.size);
        *sig_len = out.size;
    } else {
        last_error = GNUTLS_E_SHORT_MEMORY_BUFFER;
    }
    gnutls_free(out.data);
    return fits;
}

typedef struct {
    gnutls_sign_algorithm_t alg;
    gnutls_pubkey_t key;
} tm_verifier;

static void *verifier_new(void *p) {
    tm_signer *s = p;
    tm_verifier *v = calloc(1, sizeof *v);
    if (!v) {
        return NULL;
    }
    v->alg = s->alg;
    if (!ok(gnutls_pubkey_init(&v->key))) {
        free(v);
        return NULL;
    }
    if (!ok(gnutls_pubkey_import_privkey(v->key, s->key, 0, 0))) {
        gnutls_pubkey_deinit(v->key);
        free(v);
        return NULL;
    }
    return v;
}

static void verifier_free(void *p) {
    tm_verifier *v = p;
    gnutls_pubkey_deinit(v->key);
    free(v);
}

static int verify(void *p, const unsigned char *msg, unsigned len, const unsigned char *sig,
                  unsigned sig_len) {
    tm_verifier *v = p;
    gnutls_datum_t data = {(unsigned char *)msg, len}, s = {(unsigned char *)sig, sig_len};
    return ok(gnutls_pubkey_verify_data2(v->key, v->alg, 0, &data, &s));
}

typedef struct {
    gnutls_mac_algorithm_t alg;
    unsigned len;
    unsigned char key[48];
} tm_hmac;

static void *hmac_new(const unsigned char *key, int len) {
    tm_hmac *h = calloc(1, sizeof *h);
    if (!h) {
        return NULL;
    }
    h->alg = len == 32 ? GNUTLS_MAC_SHA256 : GNUTLS_MAC_SHA384;
    h->len = (unsigned)len;
    memcpy(h->key, key, (size_t)len);
    return h;
}

static void hmac_free(void *p) { free(p); }

static int hmac(void *p, const unsigned char *msg, unsigned len, unsigned char *out) {
    tm_hmac *h = p;
    return ok(gnutls_hmac_fast(h->alg, h->key, h->len, msg, len, out));
}

static const tm_floor_fns fns = {kex_new,      kex_free,     kex_generate,  own_free,
                                 kex_derive,   signer_new,   signer_free,   sign,
                                 verifier_new, verifier_free, verify,       hmac_new,
                                 hmac_free,    hmac};

const tm_floor_fns *tm_gnutls_floor(void) { return &fns; }
