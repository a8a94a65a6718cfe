/* The crypto floor's calls, as each C library's glue offers them (crates/impls/src/
 * floor_glue.rs holds the same table in Rust): a table of functions a glue file fills with
 * its library's calls, as that library's TLS stack makes them. Every call returns 1 on
 * success and 0 on failure, the library's error left where the adapter reads its errors;
 * constructors return NULL on failure. Buffers are the caller's, of the sizes named here. */

#ifndef TM_FLOOR_H
#define TM_FLOOR_H

/* Key-exchange halves. */
#define TM_KEX_X25519 0
#define TM_KEX_P256 1
#define TM_KEX_P384 2
#define TM_SHARE_MAX 133  /* a P-521 point; the largest share or reply here is P-384's 97 */
#define TM_SECRET_MAX 66

/* Signature schemes (TLS 1.3's names). */
#define TM_SIG_ECDSA_P256_SHA256 0
#define TM_SIG_ECDSA_P384_SHA384 1
#define TM_SIG_RSA_PSS_RSAE_SHA256 2
#define TM_SIG_ED25519 3
#define TM_SIG_MAX 512

#define TM_HMAC_MAX 48

typedef struct tm_floor_fns {
    /* A half (TM_KEX_*), its parameters made once. */
    void *(*kex_new)(int part);
    void (*kex_free)(void *kex);
    /* A fresh key pair, its share written to `share` (TM_SHARE_MAX bytes). */
    void *(*kex_generate)(void *kex, unsigned char *share, unsigned *share_len);
    void (*own_free)(void *own);
    /* The secret of `own` with the peer's share as sent, read as the TLS stack reads it. */
    int (*kex_derive)(void *kex, void *own, const unsigned char *peer, unsigned peer_len,
                      unsigned char *secret, unsigned *secret_len);
    /* A signing key from PKCS#8 DER, for one scheme (TM_SIG_*). */
    void *(*signer_new)(const unsigned char *pkcs8, unsigned len, int scheme);
    void (*signer_free)(void *signer);
    /* A handshake signature over `msg`, hashed here as the scheme says (TM_SIG_MAX bytes). */
    int (*sign)(void *signer, const unsigned char *msg, unsigned len, unsigned char *sig,
                unsigned *sig_len);
    /* The signer's public key, for verifications. */
    void *(*verifier_new)(void *signer);
    void (*verifier_free)(void *verifier);
    /* 1 for a good signature; 0 for a bad one or an error. */
    int (*verify)(void *verifier, const unsigned char *msg, unsigned len,
                  const unsigned char *sig, unsigned sig_len);
    /* An HMAC key: the hash's length (32: SHA-256, 48: SHA-384) of `key`'s bytes, copied. */
    void *(*hmac_new)(const unsigned char *key, int hash_len);
    void (*hmac_free)(void *hmac);
    /* One HMAC of `msg` (TM_HMAC_MAX bytes out). */
    int (*hmac)(void *hmac, const unsigned char *msg, unsigned len, unsigned char *out);
} tm_floor_fns;

#endif
