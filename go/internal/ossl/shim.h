/* A small C layer over libssl that lets Go drive a TLS connection with one
 * C call per operation. Records move through memory BIOs: Go owns the socket
 * (so deadlines and the netpoller keep working), and each call takes the bytes
 * Go read and returns the bytes Go must write. */
#ifndef TLSMATRIX_OSSL_SHIM_H
#define TLSMATRIX_OSSL_SHIM_H

#include <stddef.h>
#include <stdint.h>

typedef struct tm_ctx tm_ctx;
typedef struct tm_conn tm_conn;

/* Results of tm_handshake, tm_read and tm_write. */
enum {
	TM_OK = 1,        /* handshake done / data read / data written */
	TM_WANT_READ = 0, /* feed more bytes from the peer */
	TM_CLOSED = 2,    /* the peer sent close_notify */
	TM_ERROR = -1,    /* see tm_error */
};

/* Everything a context needs, in one struct so creating it is one call. */
typedef struct {
	int is_server;
	const uint8_t *chain;       /* DER certificates, back to back */
	const size_t *chain_lens;   /* length of each */
	int chain_count;
	const uint8_t *key;         /* private key, DER (PKCS#8 or traditional) */
	size_t key_len;
	const char *groups;         /* e.g. "X25519:P-256" */
	const char *ciphersuites;   /* TLS 1.3 suites in preference order */
	const uint8_t *alpn;        /* ALPN list in wire format */
	size_t alpn_len;
	int min_version, max_version; /* e.g. 0x0304; tests lower these */
} tm_ctx_config;

/* Called once, before anything else. */
int tm_init(void);

tm_ctx *tm_ctx_new(const tm_ctx_config *cfg, char *err, size_t errlen);
void tm_ctx_free(tm_ctx *ctx);

tm_conn *tm_conn_new(tm_ctx *ctx);
/* handle is passed back to Go when the peer's certificates need checking. */
void tm_conn_set_handle(tm_conn *c, uintptr_t handle);
void tm_conn_free(tm_conn *c);

/* Out-parameters of the calls below, kept in C memory inside the connection
 * so that Go passes no pointers to its own stack (which would escape and
 * allocate on every call). */
typedef struct {
	size_t nread;   /* tm_read: plaintext bytes returned */
	size_t written; /* tm_write: plaintext bytes taken */
	size_t outlen;  /* bytes placed in out */
	int more_out;   /* output still pending after out was filled */
	int buffered;   /* tm_read: a next call may return data without input */
} tm_io;
tm_io *tm_conn_io(tm_conn *c);

/* Each call first takes in[0..inlen) as bytes from the peer, then works, then
 * moves up to outcap pending output bytes to out. */
int tm_handshake(tm_conn *c, const uint8_t *in, size_t inlen, uint8_t *out, size_t outcap);
/* tm_read leaves output pending (io.more_out); the writer drains it, so that
 * records reach the socket in the order they were sealed. */
int tm_read(tm_conn *c, const uint8_t *in, size_t inlen, uint8_t *p, size_t n);
int tm_write(tm_conn *c, const uint8_t *p, size_t n, uint8_t *out, size_t outcap);
void tm_drain(tm_conn *c, uint8_t *out, size_t outcap);
/* Queues close_notify and drains it. */
void tm_shutdown(tm_conn *c, uint8_t *out, size_t outcap);

typedef struct {
	uint16_t version, cipher, group, peer_sigalg;
	const uint8_t *alpn;
	unsigned int alpn_len;
	int alert_sent, alert_received; /* -1 when none */
} tm_state;
void tm_get_state(tm_conn *c, tm_state *s);

/* The first queued OpenSSL error of the last failed call, as text. */
void tm_error(tm_conn *c, char *buf, size_t len);

/* Whether this libssl knows every group in the list (OpenSSL names). */
int tm_groups_supported(const char *groups);
/* 1 when built against BoringSSL or AWS-LC, whose libssl API the shim uses
 * there (and whose client has its own key-share rule). */
int tm_boring_api(void);
const char *tm_version(void);

#endif
