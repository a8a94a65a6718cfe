/* The crypto floor through wolfCrypt (tm_floor.h), as wolfSSL's TLS stack calls it
 * (src/tls.c's key shares, src/internal.c's signatures): wc_curve25519_* and wc_ecc_* key
 * pairs and agreements, the peer's share checked and imported as it does; ECDSA over
 * wc_Sha256Hash/wc_Sha384Hash, wc_RsaPSS_Sign and wc_ed25519_sign_msg, and their checks; an
 * HMAC by wc_HmacSetKey/Update/Final. wolfCrypt returns error codes rather than keeping an
 * error queue: the last one is kept per thread (tm_wolfssl_floor_error). */

#include <stdlib.h>
#include <string.h>

#include <wolfssl/options.h>

#include <wolfssl/wolfcrypt/asn_public.h>
#include <wolfssl/wolfcrypt/curve25519.h>
#include <wolfssl/wolfcrypt/ecc.h>
#include <wolfssl/wolfcrypt/ed25519.h>
#include <wolfssl/wolfcrypt/error-crypt.h>
#include <wolfssl/wolfcrypt/hash.h>
#include <wolfssl/wolfcrypt/hmac.h>
#include <wolfssl/wolfcrypt/random.h>
#include <wolfssl/wolfcrypt/rsa.h>

#include "tm_floor.h"

static __thread int last_error;

int tm_wolfssl_floor_error(void) { return last_error; }

/* 1 for a wolfCrypt success (0), else 0 with the code kept. */
static int ok(int rc) {
    if (rc < 0) {
        last_error = rc;
        return 0;
    }
    return 1;
}

/* One RNG per process for key generation, blinding and ECDSA nonces, as a wolfSSL context
 * keeps one; the sampler runs on one thread. */
static WC_RNG *rng(void) {
    static WC_RNG r;
    static int ready;
    if (!ready && ok(wc_InitRng(&r))) {
        ready = 1;
    }
    return ready ? &r : NULL;
}

typedef struct {
    int part;
} tm_kex;

static void *kex_new(int part) {
    tm_kex *k;
    if (part < TM_KEX_X25519 || part > TM_KEX_P384 || !rng()) {
        last_error = BAD_FUNC_ARG;
        return NULL;
    }
    k = malloc(sizeof *k);
    if (k) {
        k->part = part;
    }
    return k;
}

static void kex_free(void *k) { free(k); }

static int curve_id(int part) { return part == TM_KEX_P256 ? ECC_SECP256R1 : ECC_SECP384R1; }

typedef struct {
    int part;
    union {
        curve25519_key x25519;
        ecc_key ecc;
    } key;
} tm_own;

static void own_free(void *p);

static void *kex_generate(void *kex, unsigned char *share, unsigned *share_len) {
    tm_kex *k = kex;
    tm_own *own = calloc(1, sizeof *own);
    word32 n = TM_SHARE_MAX;
    int good;
    if (!own) {
        return NULL;
    }
    own->part = k->part;
    if (k->part == TM_KEX_X25519) {
        good = ok(wc_curve25519_init(&own->key.x25519)) &&
               ok(wc_curve25519_make_key(rng(), CURVE25519_KEYSIZE, &own->key.x25519)) &&
               ok(wc_curve25519_export_public_ex(&own->key.x25519, share, &n,
                                                 EC25519_LITTLE_ENDIAN));
    } else {
        int size = k->part == TM_KEX_P256 ? 32 : 48;
        good = ok(wc_ecc_init(&own->key.ecc)) &&
               ok(wc_ecc_make_key_ex(rng(), size, &own->key.ecc, curve_id(k->part))) &&
               ok(wc_ecc_set_rng(&own->key.ecc, rng())) &&
               ok(wc_ecc_export_x963(&own->key.ecc, share, &n));
    }
    if (!good) {
        /* A key zeroed by calloc frees as an initialised one does. */
        own_free(own);
        return NULL;
    }
    *share_len = n;
    return own;
}

static void own_free(void *p) {
    tm_own *own = p;
    if (own->part == TM_KEX_X25519) {
        wc_curve25519_free(&own->key.x25519);
    } else {
        wc_ecc_free(&own->key.ecc);
    }
    free(own);
}

/* The peer's share checked and imported into a key of its own, as wolfSSL's TLS stack
 * reads it, and agreed with. */
static int kex_derive(void *kex, void *p, const unsigned char *peer, unsigned peer_len,
                      unsigned char *secret, unsigned *secret_len) {
    tm_kex *k = kex;
    tm_own *own = p;
    word32 n = TM_SECRET_MAX;
    int good;
    if (k->part == TM_KEX_X25519) {
        curve25519_key pub;
        good = ok(wc_curve25519_check_public(peer, peer_len, EC25519_LITTLE_ENDIAN)) &&
               ok(wc_curve25519_init(&pub));
        if (good) {
            good = ok(wc_curve25519_import_public_ex(peer, peer_len, &pub,
                                                     EC25519_LITTLE_ENDIAN)) &&
                   ok(wc_curve25519_shared_secret_ex(&own->key.x25519, &pub, secret, &n,
                                                     EC25519_LITTLE_ENDIAN));
            wc_curve25519_free(&pub);
        }
    } else {
        ecc_key pub;
        good = ok(wc_ecc_init(&pub));
        if (good) {
            good = ok(wc_ecc_import_x963_ex(peer, peer_len, &pub, curve_id(k->part))) &&
                   ok(wc_ecc_shared_secret(&own->key.ecc, &pub, secret, &n));
            wc_ecc_free(&pub);
        }
    }
    *secret_len = n;
    return good;
}

typedef struct {
    int scheme;
    union {
        ecc_key ecc;
        RsaKey rsa;
        ed25519_key ed;
    } key;
} tm_signer;

static void signer_free(void *p) {
    tm_signer *s = p;
    if (s->scheme == TM_SIG_RSA_PSS_RSAE_SHA256) {
        wc_FreeRsaKey(&s->key.rsa);
    } else if (s->scheme == TM_SIG_ED25519) {
        wc_ed25519_free(&s->key.ed);
    } else {
        wc_ecc_free(&s->key.ecc);
    }
    free(s);
}

/* A key from PKCS#8: RSA and ECDSA keys decoded from the traditional key inside it, as
 * wolfSSL does; an Ed25519 key from the PKCS#8 whole (RFC 8410), as its decoder takes it. */
static void *signer_new(const unsigned char *pkcs8, unsigned len, int scheme) {
    tm_signer *s = calloc(1, sizeof *s);
    unsigned char *der = malloc(len);
    word32 idx = 0;
    int good;
    if (!s || !der || scheme < 0 || scheme > TM_SIG_ED25519 || !rng()) {
        last_error = BAD_FUNC_ARG;
        free(s);
        free(der);
        return NULL;
    }
    memcpy(der, pkcs8, len);
    s->scheme = scheme;
    if (scheme == TM_SIG_ED25519) {
        good = ok(wc_ed25519_init(&s->key.ed)) &&
               ok(wc_Ed25519PrivateKeyDecode(der, &idx, &s->key.ed, len));
    } else {
        if (wc_GetPkcs8TraditionalOffset(der, &idx, len) < 0) {
            idx = 0;
        }
        if (scheme == TM_SIG_RSA_PSS_RSAE_SHA256) {
            good = ok(wc_InitRsaKey(&s->key.rsa, NULL)) &&
                   ok(wc_RsaPrivateKeyDecode(der, &idx, &s->key.rsa, len)) &&
                   ok(wc_RsaSetRNG(&s->key.rsa, rng()));
        } else {
            good = ok(wc_ecc_init(&s->key.ecc)) &&
                   ok(wc_EccPrivateKeyDecode(der, &idx, &s->key.ecc, len)) &&
                   ok(wc_ecc_set_rng(&s->key.ecc, rng()));
        }
    }
    free(der);
    if (!good) {
        signer_free(s);
        return NULL;
    }
    return s;
}

static int digest(int scheme, const unsigned char *msg, unsigned len, unsigned char *out) {
    return scheme == TM_SIG_ECDSA_P384_SHA384 ? ok(wc_Sha384Hash(msg, len, out))
                                              : ok(wc_Sha256Hash(msg, len, out));
}

static unsigned hash_len(int scheme) { return scheme == TM_SIG_ECDSA_P384_SHA384 ? 48 : 32; }

static int sign(void *p, const unsigned char *msg, unsigned len, unsigned char *sig,
                unsigned *sig_len) {
    tm_signer *s = p;
    unsigned char d[48];
    word32 n = TM_SIG_MAX;
    int rc;
    if (s->scheme == TM_SIG_ED25519) {
        if (!ok(wc_ed25519_sign_msg(msg, len, sig, &n, &s->key.ed))) {
            return 0;
        }
        *sig_len = n;
        return 1;
    }
    if (!digest(s->scheme, msg, len, d)) {
        return 0;
    }
    if (s->scheme == TM_SIG_RSA_PSS_RSAE_SHA256) {
        rc = wc_RsaPSS_Sign(d, 32, sig, TM_SIG_MAX, WC_HASH_TYPE_SHA256, WC_MGF1SHA256,
                            &s->key.rsa, rng());
        if (!ok(rc)) {
            return 0;
        }
        *sig_len = (unsigned)rc;
        return 1;
    }
    if (!ok(wc_ecc_sign_hash(d, hash_len(s->scheme), sig, &n, rng(), &s->key.ecc))) {
        return 0;
    }
    *sig_len = n;
    return 1;
}

/* The signer's public key, in a key of its own. */
static void *verifier_new(void *p) {
    tm_signer *s = p;
    tm_signer *v = calloc(1, sizeof *v);
    unsigned char buf[TM_SIG_MAX], e[8];
    word32 n = sizeof buf, e_len = sizeof e;
    int good;
    if (!v) {
        return NULL;
    }
    v->scheme = s->scheme;
    if (s->scheme == TM_SIG_ED25519) {
        good = ok(wc_ed25519_init(&v->key.ed)) &&
               ok(wc_ed25519_export_public(&s->key.ed, buf, &n)) &&
               ok(wc_ed25519_import_public(buf, n, &v->key.ed));
    } else if (s->scheme == TM_SIG_RSA_PSS_RSAE_SHA256) {
        good = ok(wc_InitRsaKey(&v->key.rsa, NULL)) &&
               ok(wc_RsaFlattenPublicKey(&s->key.rsa, e, &e_len, buf, &n)) &&
               ok(wc_RsaPublicKeyDecodeRaw(buf, n, e, e_len, &v->key.rsa));
    } else {
        good = ok(wc_ecc_init(&v->key.ecc)) && ok(wc_ecc_export_x963(&s->key.ecc, buf, &n)) &&
               ok(wc_ecc_import_x963(buf, n, &v->key.ecc));
    }
    if (!good) {
        signer_free(v);
        return NULL;
    }
    return v;
}

static void verifier_free(void *p) { signer_free(p); }

static int verify(void *p, const unsigned char *msg, unsigned len, const unsigned char *sig,
                  unsigned sig_len) {
    tm_signer *v = p;
    unsigned char d[48], copy[TM_SIG_MAX], out[TM_SIG_MAX];
    int res = 0;
    if (v->scheme == TM_SIG_ED25519) {
        return ok(wc_ed25519_verify_msg(sig, sig_len, msg, len, &res, &v->key.ed)) && res == 1;
    }
    if (!digest(v->scheme, msg, len, d)) {
        return 0;
    }
    if (v->scheme == TM_SIG_RSA_PSS_RSAE_SHA256) {
        if (sig_len > sizeof copy) {
            return 0;
        }
        /* The check works in place on its input. */
        memcpy(copy, sig, sig_len);
        return ok(wc_RsaPSS_VerifyCheck(copy, sig_len, out, sizeof out, d, 32,
                                        WC_HASH_TYPE_SHA256, WC_MGF1SHA256, &v->key.rsa));
    }
    return ok(wc_ecc_verify_hash(sig, sig_len, d, hash_len(v->scheme), &res, &v->key.ecc)) &&
           res == 1;
}

typedef struct {
    Hmac hmac;
    int type;
    unsigned len;
    unsigned char key[48];
} tm_hmac;

static void *hmac_new(const unsigned char *key, int len) {
    tm_hmac *h = calloc(1, sizeof *h);
    if (!h) {
        return NULL;
    }
    h->type = len == 32 ? WC_SHA256 : WC_SHA384;
    h->len = (unsigned)len;
    memcpy(h->key, key, (size_t)len);
    if (!ok(wc_HmacInit(&h->hmac, NULL, INVALID_DEVID))) {
        free(h);
        return NULL;
    }
    return h;
}

static void hmac_free(void *p) {
    tm_hmac *h = p;
    wc_HmacFree(&h->hmac);
    free(h);
}

/* Keyed each time, as each HKDF step of wolfSSL's key schedule keys its own. */
static int hmac(void *p, const unsigned char *msg, unsigned len, unsigned char *out) {
    tm_hmac *h = p;
    return ok(wc_HmacSetKey(&h->hmac, h->type, h->key, h->len)) &&
           ok(wc_HmacUpdate(&h->hmac, msg, len)) && ok(wc_HmacFinal(&h->hmac, out));
}

static const tm_floor_fns fns = {kex_new,      kex_free,     kex_generate,  own_free,
                                 kex_derive,   signer_new,   signer_free,   sign,
                                 verifier_new, verifier_free, verify,       hmac_new,
                                 hmac_free,    hmac};

const tm_floor_fns *tm_wolfssl_floor(void) { return &fns; }
