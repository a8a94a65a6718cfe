/* The few things the Rust adapter (src/mbedtls.rs) cannot do through Mbed TLS's exported
 * functions: its contexts are structs whose size depends on the build's configuration, so they
 * are allocated here, where the headers are; some of its API is static inline; and its random
 * generator is PSA's, named by a macro. Nothing here decides anything: policy is in Rust. */
/* For private fields: the connection's state (tm_ticket_pending) and its last record
 * (tm_received_alert). */
#define MBEDTLS_ALLOW_PRIVATE_ACCESS

#include <stdlib.h>
#include <string.h>

#include <mbedtls/cipher.h>
#include <mbedtls/ssl.h>
#include <mbedtls/ssl_cache.h>
#include <mbedtls/ssl_ticket.h>
#include <mbedtls/psa_util.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>
#include <psa/crypto.h>

/* Built with tlsmatrix's additions (scripts/mbedtls-build): the structs allocated here must
 * have the library's layout, and its connections run on several threads. */
#if !defined(MBEDTLS_THREADING_C) || !defined(MBEDTLS_THREADING_PTHREAD)
#error "compile against the Mbed TLS build of scripts/mbedtls-build, with its user config"
#endif

#define TM_NEW(type, init)                  \
    type *p = calloc(1, sizeof(type));      \
    if (p != NULL) {                        \
        init(p);                            \
    }                                       \
    return p;

#define TM_FREE(p, release) \
    if (p != NULL) {        \
        release(p);         \
        free(p);            \
    }

mbedtls_ssl_config *tm_config_new(void) { TM_NEW(mbedtls_ssl_config, mbedtls_ssl_config_init) }
void tm_config_free(mbedtls_ssl_config *p) { TM_FREE(p, mbedtls_ssl_config_free) }
mbedtls_ssl_context *tm_ssl_new(void) { TM_NEW(mbedtls_ssl_context, mbedtls_ssl_init) }
void tm_ssl_free(mbedtls_ssl_context *p) { TM_FREE(p, mbedtls_ssl_free) }
mbedtls_x509_crt *tm_crt_new(void) { TM_NEW(mbedtls_x509_crt, mbedtls_x509_crt_init) }
void tm_crt_free(mbedtls_x509_crt *p) { TM_FREE(p, mbedtls_x509_crt_free) }
mbedtls_pk_context *tm_pk_new(void) { TM_NEW(mbedtls_pk_context, mbedtls_pk_init) }
void tm_pk_free(mbedtls_pk_context *p) { TM_FREE(p, mbedtls_pk_free) }
mbedtls_ssl_session *tm_session_new(void) { TM_NEW(mbedtls_ssl_session, mbedtls_ssl_session_init) }
void tm_session_free(mbedtls_ssl_session *p) { TM_FREE(p, mbedtls_ssl_session_free) }
mbedtls_ssl_cache_context *tm_cache_new(void) { TM_NEW(mbedtls_ssl_cache_context, mbedtls_ssl_cache_init) }
void tm_cache_free(mbedtls_ssl_cache_context *p) { TM_FREE(p, mbedtls_ssl_cache_free) }
mbedtls_ssl_ticket_context *tm_ticket_new(void) { TM_NEW(mbedtls_ssl_ticket_context, mbedtls_ssl_ticket_init) }
void tm_ticket_free(mbedtls_ssl_ticket_context *p) { TM_FREE(p, mbedtls_ssl_ticket_free) }

/* "Mbed TLS 3.6.5". */
void tm_version(char out[18]) { mbedtls_version_get_string_full(out); }

int tm_crypto_init(void) { return psa_crypto_init() == PSA_SUCCESS ? 0 : -1; }

/* The defaults for a stream (TLS) endpoint, PSA's generator, and the version bounds. */
int tm_config_setup(mbedtls_ssl_config *conf, int endpoint, int min_tls, int max_tls)
{
    int rc = mbedtls_ssl_config_defaults(conf, endpoint, MBEDTLS_SSL_TRANSPORT_STREAM,
                                         MBEDTLS_SSL_PRESET_DEFAULT);
    if (rc != 0) {
        return rc;
    }
    mbedtls_ssl_conf_rng(conf, mbedtls_psa_get_random, MBEDTLS_PSA_RANDOM_STATE);
    mbedtls_ssl_conf_min_tls_version(conf, (mbedtls_ssl_protocol_version) min_tls);
    mbedtls_ssl_conf_max_tls_version(conf, (mbedtls_ssl_protocol_version) max_tls);
    return 0;
}

/* PEM text must end in its NUL, counted in len. */
int tm_pk_parse_key(mbedtls_pk_context *pk, const unsigned char *key, size_t len)
{
    return mbedtls_pk_parse_key(pk, key, len, NULL, 0, mbedtls_psa_get_random,
                                MBEDTLS_PSA_RANDOM_STATE);
}

/* A server's session cache (TLS 1.2 session ids). */
void tm_conf_cache(mbedtls_ssl_config *conf, mbedtls_ssl_cache_context *cache)
{
    mbedtls_ssl_conf_session_cache(conf, cache, mbedtls_ssl_cache_get, mbedtls_ssl_cache_set);
}

/* A server's ticket keys (AES-256-GCM, a day's lifetime), and tickets issued from them. */
int tm_conf_tickets(mbedtls_ssl_config *conf, mbedtls_ssl_ticket_context *ticket)
{
    int rc = mbedtls_ssl_ticket_setup(ticket, mbedtls_psa_get_random, MBEDTLS_PSA_RANDOM_STATE,
                                      MBEDTLS_CIPHER_AES_256_GCM, 86400);
    if (rc != 0) {
        return rc;
    }
    mbedtls_ssl_conf_session_tickets_cb(conf, mbedtls_ssl_ticket_write, mbedtls_ssl_ticket_parse,
                                        ticket);
    return 0;
}

int tm_version_number(const mbedtls_ssl_context *ssl) { return mbedtls_ssl_get_version_number(ssl); }
/* A TLS 1.3 client has a NewSessionTicket in and will hand it over on the next read. Mbed TLS
 * counts that state as "handshake over" (it is numbered after it), so only the state says. */
int tm_ticket_pending(const mbedtls_ssl_context *ssl)
{
    return ssl->state == MBEDTLS_SSL_TLS1_3_NEW_SESSION_TICKET;
}
void tm_set_user_data(mbedtls_ssl_context *ssl, void *p) { mbedtls_ssl_set_user_data_p(ssl, p); }
void *tm_user_data(mbedtls_ssl_context *ssl) { return mbedtls_ssl_get_user_data_p(ssl); }

/* The description of the alert the peer sent, once a call has failed with
 * MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE (the record is still the one read); -1 otherwise. */
int tm_received_alert(const mbedtls_ssl_context *ssl)
{
    if (ssl->in_msgtype == MBEDTLS_SSL_MSG_ALERT && ssl->in_msg != NULL) {
        return ssl->in_msg[1];
    }
    return -1;
}

/* How many certificates the peer sent (Mbed TLS keeps the peer's chain by default). */
int tm_peer_certs(const mbedtls_ssl_context *ssl)
{
    int n = 0;
    for (const mbedtls_x509_crt *c = mbedtls_ssl_get_peer_cert(ssl); c != NULL && c->raw.len > 0;
         c = c->next) {
        n++;
    }
    return n;
}

/* The AEAD of Mbed TLS's record layer (its cipher module: the default configuration has no
 * MBEDTLS_USE_PSA_CRYPTO), for the bulk ceiling. which: 0 AES-128-GCM, 1 AES-256-GCM,
 * 2 ChaCha20-Poly1305. NULL when the build lacks the cipher or refuses the key. */
mbedtls_cipher_context_t *tm_aead_new(int which, const unsigned char *key)
{
    static const mbedtls_cipher_type_t types[] = {
        MBEDTLS_CIPHER_AES_128_GCM, MBEDTLS_CIPHER_AES_256_GCM, MBEDTLS_CIPHER_CHACHA20_POLY1305
    };
    static const int bits[] = { 128, 256, 256 };
    const mbedtls_cipher_info_t *info;
    mbedtls_cipher_context_t *c;
    if (which < 0 || which > 2 || (info = mbedtls_cipher_info_from_type(types[which])) == NULL) {
        return NULL;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return NULL;
    }
    mbedtls_cipher_init(c);
    if (mbedtls_cipher_setup(c, info) != 0 ||
        mbedtls_cipher_setkey(c, key, bits[which], MBEDTLS_ENCRYPT) != 0) {
        mbedtls_cipher_free(c);
        free(c);
        return NULL;
    }
    return c;
}

void tm_aead_free(mbedtls_cipher_context_t *c) { TM_FREE(c, mbedtls_cipher_free) }

/* seal: in -> out (ciphertext and 16-byte tag); open: the reverse. */
int tm_aead_run(mbedtls_cipher_context_t *c, int seal, const unsigned char nonce[12],
                const unsigned char aad[5], const unsigned char *in, size_t len,
                unsigned char *out, size_t out_size, size_t *out_len)
{
    if (seal) {
        return mbedtls_cipher_auth_encrypt_ext(c, nonce, 12, aad, 5, in, len, out, out_size,
                                               out_len, 16);
    }
    return mbedtls_cipher_auth_decrypt_ext(c, nonce, 12, aad, 5, in, len, out, out_size,
                                           out_len, 16);
}
