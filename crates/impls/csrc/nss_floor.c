/* The crypto floor through NSS's PKCS#11 layer (tm_floor.h), as its TLS stack calls it:
 * SECKEY_CreateECPrivateKey for an ephemeral key share and PK11_PubDeriveWithKDF for ECDH
 * (lib/ssl/sslecc.c, tls13con.c); PK11_Sign (ECDSA, DER-encoded) or PK11_SignWithMechanism
 * (RSA-PSS) over a digest from PK11_HashBuf, and VFY_VerifyDigestDirect or
 * PK11_VerifyWithMechanism to check one (ssl3con.c); an HMAC by PK11_SignWithSymKey.
 * Failures leave NSPR's error set (tm_nss_error). */

#include <string.h>

#include <cryptohi.h>
#include <keyhi.h>
#include <nss.h>
#include <pk11pub.h>
#include <secerr.h>
#include <secoid.h>

#include "tm_floor.h"

/* A curve as NSS keys it: the DER OID of its parameters (ssl_NamedGroup2ECParams). */
typedef struct {
    unsigned char der[16];
    SECItem params;
} tm_kex;

static void *kex_new(int part) {
    SECOidTag tags[] = {SEC_OID_CURVE25519, SEC_OID_ANSIX962_EC_PRIME256V1,
                        SEC_OID_SECG_EC_SECP384R1};
    if (part < 0 || part > 2) {
        PORT_SetError(SEC_ERROR_INVALID_ARGS);
        return NULL;
    }
    SECOidData *oid = SECOID_FindOIDByTag(tags[part]);
    tm_kex *k = PORT_ZNew(tm_kex);
    if (!oid || !k || oid->oid.len + 2 > sizeof k->der) {
        PORT_Free(k);
        return NULL;
    }
    k->der[0] = SEC_ASN1_OBJECT_ID;
    k->der[1] = (unsigned char)oid->oid.len;
    memcpy(k->der + 2, oid->oid.data, oid->oid.len);
    k->params.type = siDEROID;
    k->params.data = k->der;
    k->params.len = oid->oid.len + 2;
    return k;
}

static void kex_free(void *k) { PORT_Free(k); }

static void *kex_generate(void *kex, unsigned char *share, unsigned *share_len) {
    tm_kex *k = kex;
    SECKEYPublicKey *pub = NULL;
    SECKEYPrivateKey *priv = SECKEY_CreateECPrivateKey(&k->params, &pub, NULL);
    if (!priv || !pub || pub->u.ec.publicValue.len > TM_SHARE_MAX) {
        if (priv) {
            SECKEY_DestroyPrivateKey(priv);
        }
        if (pub) {
            SECKEY_DestroyPublicKey(pub);
        }
        return NULL;
    }
    memcpy(share, pub->u.ec.publicValue.data, pub->u.ec.publicValue.len);
    *share_len = pub->u.ec.publicValue.len;
    SECKEY_DestroyPublicKey(pub);
    return priv;
}

static void own_free(void *own) { SECKEY_DestroyPrivateKey(own); }

/* The peer's share read into a public key as ssl_ImportECDHKeyShare reads it, derived as
 * TLS 1.3 derives it, and the secret extracted so that two sides can be compared. */
static int kex_derive(void *kex, void *own, const unsigned char *peer, unsigned peer_len,
                      unsigned char *secret, unsigned *secret_len) {
    tm_kex *k = kex;
    int ok = 0;
    PLArenaPool *arena = PORT_NewArena(DER_DEFAULT_CHUNKSIZE);
    if (!arena) {
        return 0;
    }
    SECKEYPublicKey *key = PORT_ArenaZNew(arena, SECKEYPublicKey);
    SECItem point = {siBuffer, (unsigned char *)peer, peer_len};
    PK11SymKey *shared = NULL;
    if (!key) {
        goto out;
    }
    key->arena = arena;
    key->keyType = ecKey;
    key->pkcs11Slot = NULL;
    key->pkcs11ID = CK_INVALID_HANDLE;
    if (SECITEM_CopyItem(arena, &key->u.ec.DEREncodedParams, &k->params) != SECSuccess ||
        SECITEM_CopyItem(arena, &key->u.ec.publicValue, &point) != SECSuccess) {
        goto out;
    }
    shared = PK11_PubDeriveWithKDF(own, key, PR_FALSE, NULL, NULL, CKM_ECDH1_DERIVE,
                                   CKM_HKDF_DERIVE, CKA_DERIVE, 0, CKD_NULL, NULL, NULL);
    if (!shared || PK11_ExtractKeyValue(shared) != SECSuccess) {
        goto out;
    }
    SECItem *value = PK11_GetKeyData(shared);
    if (!value || value->len > TM_SECRET_MAX) {
        goto out;
    }
    memcpy(secret, value->data, value->len);
    *secret_len = value->len;
    ok = 1;
out:
    if (shared) {
        PK11_FreeSymKey(shared);
    }
    PORT_FreeArena(arena, PR_FALSE);
    return ok;
}

typedef struct {
    int scheme;
    SECKEYPrivateKey *key;
} tm_signer;

typedef struct {
    int scheme;
    SECKEYPublicKey *key;
} tm_verifier;

/* NSS's TLS stack signs with ECDSA and RSA-PSS; NSS 3.87 has no Ed25519 in TLS. */
static void *signer_new(const unsigned char *pkcs8, unsigned len, int scheme) {
    if (scheme == TM_SIG_ED25519 || scheme < 0 || scheme > TM_SIG_ED25519) {
        PORT_SetError(SEC_ERROR_INVALID_ALGORITHM);
        return NULL;
    }
    PK11SlotInfo *slot = PK11_GetInternalKeySlot();
    tm_signer *s = PORT_ZNew(tm_signer);
    SECItem pki = {siBuffer, (unsigned char *)pkcs8, len};
    if (!slot || !s ||
        PK11_ImportDERPrivateKeyInfoAndReturnKey(slot, &pki, NULL, NULL, PR_FALSE, PR_TRUE,
                                                 KU_ALL, &s->key, NULL) != SECSuccess) {
        if (slot) {
            PK11_FreeSlot(slot);
        }
        PORT_Free(s);
        return NULL;
    }
    PK11_FreeSlot(slot);
    s->scheme = scheme;
    return s;
}

static void signer_free(void *p) {
    tm_signer *s = p;
    SECKEY_DestroyPrivateKey(s->key);
    PORT_Free(s);
}

static int hash_len(int scheme) { return scheme == TM_SIG_ECDSA_P384_SHA384 ? 48 : 32; }

/* The scheme's digest of `msg` into `out` (48 bytes), and its OID; SEC_OID_UNKNOWN on error. */
static SECOidTag digest(int scheme, const unsigned char *msg, unsigned len, unsigned char *out) {
    SECOidTag alg = hash_len(scheme) == 32 ? SEC_OID_SHA256 : SEC_OID_SHA384;
    return PK11_HashBuf(alg, out, msg, (PRInt32)len) == SECSuccess ? alg : SEC_OID_UNKNOWN;
}

/* RSA-PSS with SHA-256, MGF1-SHA-256 and a salt of the digest's length (RFC 8446 4.2.3). */
static CK_RSA_PKCS_PSS_PARAMS pss_params = {CKM_SHA256, CKG_MGF1_SHA256, 32};

static int sign(void *p, const unsigned char *msg, unsigned len, unsigned char *sig,
                unsigned *sig_len) {
    tm_signer *s = p;
    unsigned char d[48];
    if (digest(s->scheme, msg, len, d) == SEC_OID_UNKNOWN) {
        return 0;
    }
    SECItem hash = {siBuffer, d, (unsigned)hash_len(s->scheme)};
    int n = PK11_SignatureLen(s->key);
    unsigned char raw[TM_SIG_MAX];
    SECItem out = {siBuffer, raw, (unsigned)n};
    if (n <= 0 || n > TM_SIG_MAX) {
        return 0;
    }
    if (s->scheme == TM_SIG_RSA_PSS_RSAE_SHA256) {
        SECItem params = {siBuffer, (unsigned char *)&pss_params, sizeof pss_params};
        if (PK11_SignWithMechanism(s->key, CKM_RSA_PKCS_PSS, &params, &out, &hash) != SECSuccess) {
            return 0;
        }
        memcpy(sig, out.data, out.len);
        *sig_len = out.len;
        return 1;
    }
    SECItem der = {siBuffer, NULL, 0};
    int ok = PK11_Sign(s->key, &out, &hash) == SECSuccess &&
             DSAU_EncodeDerSigWithLen(&der, &out, out.len) == SECSuccess &&
             der.len <= TM_SIG_MAX;
    if (ok) {
        memcpy(sig, der.data, der.len);
        *sig_len = der.len;
    }
    SECITEM_FreeItem(&der, PR_FALSE);
    return ok;
}

static void *verifier_new(void *p) {
    tm_signer *s = p;
    tm_verifier *v = PORT_ZNew(tm_verifier);
    if (!v || !(v->key = SECKEY_ConvertToPublicKey(s->key))) {
        PORT_Free(v);
        return NULL;
    }
    v->scheme = s->scheme;
    return v;
}

static void verifier_free(void *p) {
    tm_verifier *v = p;
    SECKEY_DestroyPublicKey(v->key);
    PORT_Free(v);
}

static int verify(void *p, const unsigned char *msg, unsigned len, const unsigned char *sig,
                  unsigned sig_len) {
    tm_verifier *v = p;
    unsigned char d[48];
    SECOidTag alg = digest(v->scheme, msg, len, d);
    if (alg == SEC_OID_UNKNOWN) {
        return 0;
    }
    SECItem hash = {siBuffer, d, (unsigned)hash_len(v->scheme)};
    SECItem s = {siBuffer, (unsigned char *)sig, sig_len};
    if (v->scheme == TM_SIG_RSA_PSS_RSAE_SHA256) {
        SECItem params = {siBuffer, (unsigned char *)&pss_params, sizeof pss_params};
        return PK11_VerifyWithMechanism(v->key, CKM_RSA_PKCS_PSS, &params, &s, &hash, NULL) ==
               SECSuccess;
    }
    return VFY_VerifyDigestDirect(&hash, v->key, &s, SEC_OID_ANSIX962_EC_PUBLIC_KEY, alg,
                                  NULL) == SECSuccess;
}

typedef struct {
    CK_MECHANISM_TYPE mech;
    PK11SymKey *key;
    unsigned len;
} tm_hmac;

static void *hmac_new(const unsigned char *bytes, int len) {
    SECItem key = {siBuffer, (unsigned char *)bytes, (unsigned)len};
    PK11SlotInfo *slot = PK11_GetInternalSlot();
    tm_hmac *h = PORT_ZNew(tm_hmac);
    if (!slot || !h) {
        goto fail;
    }
    h->mech = len == 32 ? CKM_SHA256_HMAC : CKM_SHA384_HMAC;
    h->len = (unsigned)len;
    h->key = PK11_ImportSymKey(slot, h->mech, PK11_OriginUnwrap, CKA_SIGN, &key, NULL);
    if (!h->key) {
        goto fail;
    }
    PK11_FreeSlot(slot);
    return h;
fail:
    if (slot) {
        PK11_FreeSlot(slot);
    }
    PORT_Free(h);
    return NULL;
}

static void hmac_free(void *p) {
    tm_hmac *h = p;
    PK11_FreeSymKey(h->key);
    PORT_Free(h);
}

static int hmac(void *p, const unsigned char *msg, unsigned len, unsigned char *out) {
    tm_hmac *h = p;
    SECItem data = {siBuffer, (unsigned char *)msg, len};
    SECItem mac = {siBuffer, out, h->len};
    return PK11_SignWithSymKey(h->key, h->mech, NULL, &mac, &data) == SECSuccess;
}

static const tm_floor_fns fns = {kex_new,      kex_free,     kex_generate,  own_free,
                                 kex_derive,   signer_new,   signer_free,   sign,
                                 verifier_new, verifier_free, verify,       hmac_new,
                                 hmac_free,    hmac};

const tm_floor_fns *tm_nss_floor(void) { return &fns; }
