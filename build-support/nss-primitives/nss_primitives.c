/* How long NSS's own primitives take, outside TLS: ECDSA P-256 signing and verifying and
 * X25519 and P-256 key agreement through PKCS#11 (PK11_*), as its TLS stack calls them.
 * `make nss-primitives` builds and runs it; docs/findings.md reads its figures. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <keyhi.h>
#include <nss.h>
#include <pk11pub.h>
#include <secoid.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* A key pair on the named curve (its OID tag). */
static SECKEYPrivateKey *keypair(PK11SlotInfo *slot, SECOidTag curve, SECKEYPublicKey **pub) {
    SECOidData *oid = SECOID_FindOIDByTag(curve);
    unsigned char buf[64];
    SECItem params = {siBuffer, buf, 2 + oid->oid.len};
    buf[0] = 0x06; /* DER OBJECT IDENTIFIER */
    buf[1] = (unsigned char)oid->oid.len;
    memcpy(buf + 2, oid->oid.data, oid->oid.len);
    return PK11_GenerateKeyPair(slot, CKM_EC_KEY_PAIR_GEN, &params, pub, PR_FALSE, PR_FALSE, NULL);
}

/* Runs `op` for about half a second and prints microseconds per call. */
#define TIME(name, op)                                                        \
    do {                                                                      \
        long n = 0;                                                           \
        double start = now(), t;                                              \
        do {                                                                  \
            for (int i_ = 0; i_ < 16; i_++) {                                 \
                if (!(op)) {                                                  \
                    fprintf(stderr, "%s failed\n", name);                     \
                    return 1;                                                 \
                }                                                             \
            }                                                                 \
            n += 16;                                                          \
        } while ((t = now() - start) < 0.5);                                  \
        printf("%-28s %8.1f us\n", name, t / n * 1e6);                      \
    } while (0)

static int derive(SECKEYPrivateKey *priv, SECKEYPublicKey *peer) {
    PK11SymKey *k = PK11_PubDeriveWithKDF(priv, peer, PR_FALSE, NULL, NULL, CKM_ECDH1_DERIVE,
                                          CKM_SHA256_HMAC, CKA_DERIVE, 0, CKD_NULL, NULL, NULL);
    if (!k) {
        return 0;
    }
    PK11_FreeSymKey(k);
    return 1;
}

int main(void) {
    if (NSS_NoDB_Init(NULL) != SECSuccess) {
        fprintf(stderr, "NSS_NoDB_Init failed\n");
        return 1;
    }
    printf("NSS %s\n", NSS_GetVersion());
    PK11SlotInfo *slot = PK11_GetInternalSlot();
    SECKEYPublicKey *pub, *x_pub, *x_peer_pub, *p_peer_pub;
    SECKEYPrivateKey *priv = keypair(slot, SEC_OID_ANSIX962_EC_PRIME256V1, &pub);
    SECKEYPrivateKey *x_priv = keypair(slot, SEC_OID_CURVE25519, &x_pub);
    SECKEYPrivateKey *x_peer = keypair(slot, SEC_OID_CURVE25519, &x_peer_pub);
    SECKEYPrivateKey *p_peer = keypair(slot, SEC_OID_ANSIX962_EC_PRIME256V1, &p_peer_pub);
    if (!priv || !x_priv || !x_peer || !p_peer) {
        fprintf(stderr, "key generation failed\n");
        return 1;
    }
    unsigned char digest[32] = {1}, sigbuf[128];
    SECItem hash = {siBuffer, digest, sizeof digest};
    SECItem sig = {siBuffer, sigbuf, PK11_SignatureLen(priv)};
    TIME("ECDSA P-256 sign", PK11_Sign(priv, &sig, &hash) == SECSuccess);
    TIME("ECDSA P-256 verify", PK11_Verify(pub, &sig, &hash, NULL) == SECSuccess);
    SECKEYPublicKey *tmp;
    TIME("X25519 key generation", (SECKEY_DestroyPrivateKey(keypair(slot, SEC_OID_CURVE25519, &tmp)), SECKEY_DestroyPublicKey(tmp), 1));
    TIME("X25519 agreement", derive(x_priv, x_peer_pub));
    TIME("P-256 ECDH agreement", derive(priv, p_peer_pub));
    return 0;
}
