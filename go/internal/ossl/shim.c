//go:build openssl

#include "shim.h"
#include "alert13.h"
#include "cmem.h"
#include "family.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <openssl/opensslv.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

/* BoringSSL (and AWS-LC, its fork) differs where it is better: certificates stay DER buffers
 * (TLS_with_buffers_method, no X509 parsing), the peer's chain is checked
 * through its custom-verify callback, group and signature scheme come as
 * code points, and its client seals an alert under the handshake key by
 * itself, so the deferred-alert machinery below is OpenSSL's alone. */
#ifdef TM_BORING_API
#include <openssl/pool.h>
#endif

#include "_cgo_export.h"

struct tm_ctx {
	SSL_CTX *ctx;
	int is_server;
	uint8_t *alpn; /* server: the protocols it accepts, wire format */
	size_t alpn_len;
};

struct tm_conn {
	SSL *ssl;
	BIO *rbio, *wbio; /* owned by ssl */
	uintptr_t handle;
	tm_io io;
	int alert_sent, alert_received;
	unsigned long first_error;
#ifndef TM_BORING_API
	/* Client only: the server's certificate was refused, and the alert
	 * waits until the handshake write key exists (see seal_alert). */
	int deferred_reject;
	/* Client only, during the handshake: the client handshake traffic
	 * secret, to seal that alert. Wiped when the handshake ends. */
	uint8_t chts[TM_ALERT13_MAX_SECRET];
	size_t chts_len;
#endif
};

static int conn_index = -1;

int tm_init(void) {
	/* First, before libssl allocates anything: OpenSSL takes allocator hooks only then. */
	tm_cmem_install();
	conn_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
	return conn_index >= 0;
}

static tm_conn *conn_of(const SSL *ssl) { return SSL_get_ex_data(ssl, conn_index); }

/* Hands the peer's certificates, exactly as received (DER, leaf first), to Go,
 * where the libp2p checks live; returns an X509_V_* verdict. */
static int check_chain(tm_conn *c, const uint8_t *const *ders, const size_t *lens, int n) {
	if (n <= 0 || n > 16)
		return X509_V_ERR_CERT_REJECTED;
	size_t total = 0;
	for (int i = 0; i < n; i++)
		total += lens[i];
	uint8_t *buf = OPENSSL_malloc(total);
	if (buf == NULL)
		return X509_V_ERR_OUT_OF_MEM;
	uint8_t *p = buf;
	for (int i = 0; i < n; i++) {
		memcpy(p, ders[i], lens[i]);
		p += lens[i];
	}
	int verdict = tmVerifyPeer(c->handle, buf, (size_t *)lens, n);
	OPENSSL_free(buf);
	return verdict;
}

#ifdef TM_BORING_API
static enum ssl_verify_result_t verify_peer(SSL *ssl, uint8_t *out_alert) {
	const STACK_OF(CRYPTO_BUFFER) *chain = SSL_get0_peer_certificates(ssl);
	size_t n = chain ? sk_CRYPTO_BUFFER_num(chain) : 0;
	if (n == 0 || n > 16) {
		*out_alert = SSL_AD_BAD_CERTIFICATE;
		return ssl_verify_invalid;
	}
	const uint8_t *ders[16];
	size_t lens[16];
	for (size_t i = 0; i < n; i++) {
		const CRYPTO_BUFFER *b = sk_CRYPTO_BUFFER_value(chain, i);
		ders[i] = CRYPTO_BUFFER_data(b);
		lens[i] = CRYPTO_BUFFER_len(b);
	}
	if (check_chain(conn_of(ssl), ders, lens, (int)n) != X509_V_OK) {
		*out_alert = SSL_AD_BAD_CERTIFICATE;
		return ssl_verify_invalid;
	}
	return ssl_verify_ok;
}
#else
/* Returning 0 with an X509 error makes OpenSSL send the matching alert
 * (bad_certificate for X509_V_ERR_CERT_REJECTED). */
static int verify_peer(X509_STORE_CTX *store, void *arg) {
	(void)arg;
	SSL *ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
	tm_conn *c = conn_of(ssl);
	/* OpenSSL passes the whole received chain, leaf first, as "untrusted". */
	STACK_OF(X509) *chain = X509_STORE_CTX_get0_untrusted(store);
	int n = chain ? sk_X509_num(chain) : 0;
	if (n <= 0 || n > 16) {
		X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED);
		return 0;
	}
	uint8_t *ders[16] = {0};
	size_t lens[16];
	int verdict = X509_V_OK;
	for (int i = 0; i < n && verdict == X509_V_OK; i++) {
		int l = i2d_X509(sk_X509_value(chain, i), &ders[i]);
		if (l <= 0)
			verdict = X509_V_ERR_CERT_REJECTED;
		lens[i] = l > 0 ? (size_t)l : 0;
	}
	if (verdict == X509_V_OK)
		verdict = check_chain(c, (const uint8_t *const *)ders, lens, n);
	for (int i = 0; i < n; i++)
		OPENSSL_free(ders[i]);
	if (verdict != X509_V_OK && !SSL_is_server(ssl)) {
		c->deferred_reject = 1;
		return 1;
	}
	if (verdict != X509_V_OK) {
		X509_STORE_CTX_set_error(store, verdict);
		return 0;
	}
	return 1;
}
#endif

/* Picks the client's most preferred protocol that the server accepts, as the
 * libp2p spec's inlined muxer negotiation asks (TLS's default is the server's). */
static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg) {
	(void)ssl;
	tm_ctx *ctx = arg;
	unsigned char *selected;
	if (SSL_select_next_proto(&selected, outlen, in, inlen, ctx->alpn,
	                          (unsigned int)ctx->alpn_len) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	*out = selected;
	return SSL_TLSEXT_ERR_OK;
}

static void note_alerts(const SSL *ssl, int where, int ret) {
	if (!(where & SSL_CB_ALERT))
		return;
	tm_conn *c = conn_of(ssl);
	if (c == NULL || (ret >> 8) != SSL3_AL_FATAL)
		return;
	if (where & SSL_CB_READ)
		c->alert_received = ret & 0xff;
	else
		c->alert_sent = ret & 0xff;
}

#ifndef TM_BORING_API
/* Keeps the client handshake traffic secret in the connection; nothing is
 * written anywhere. */
static void keep_handshake_secret(const SSL *ssl, const char *line) {
	tm_conn *c = conn_of(ssl);
	if (c == NULL)
		return;
	size_t n = tm_keylog_secret(line, "CLIENT_HANDSHAKE_TRAFFIC_SECRET", c->chts, sizeof c->chts);
	if (n > 0)
		c->chts_len = n;
}

/* A client refusing the server's certificate must send its alert encrypted
 * under its handshake traffic key (RFC 8446, section 5), but OpenSSL 3.0's
 * client switches to that key only when it sends its own certificate, so an
 * alert raised while checking the server's leaves in the clear and
 * crypto/tls servers read it as a bad record MAC. So the client lets the
 * handshake run on (the server's CertificateVerify and Finished are still
 * checked), discards its own second flight unsent, and sends in its place
 * this alert, sealed with the first sequence number of that key (alert13.c).
 * Returns the record's length, or 0 if it cannot be built. */
static size_t seal_alert(tm_conn *c, uint8_t alert, uint8_t *out, size_t outcap) {
	const SSL_CIPHER *cipher = SSL_get_current_cipher(c->ssl);
	if (cipher == NULL || c->chts_len == 0)
		return 0;
	uint16_t suite = (uint16_t)SSL_CIPHER_get_protocol_id(cipher);
	return tm_seal_alert13(suite, c->chts, c->chts_len, alert, out, outcap);
}

#endif /* !TM_BORING_API */

static void set_err(char *err, size_t errlen, const char *what) {
	unsigned long e = ERR_peek_last_error();
	if (e != 0) {
		char detail[256];
		ERR_error_string_n(e, detail, sizeof detail);
		snprintf(err, errlen, "%s: %s", what, detail);
	} else {
		snprintf(err, errlen, "%s", what);
	}
	ERR_clear_error();
}

#ifdef TM_BORING_API
/* Our chain as DER buffers and our key, in one call. */
static int set_chain_and_key(SSL_CTX *ctx, const tm_ctx_config *cfg, char *err, size_t errlen) {
	if (cfg->chain_count <= 0 || cfg->chain_count > 16) {
		snprintf(err, errlen, "a chain of %d certificates", cfg->chain_count);
		return 0;
	}
	CRYPTO_BUFFER *bufs[16] = {0};
	const uint8_t *p = cfg->chain;
	int ok = 1;
	for (int i = 0; i < cfg->chain_count && ok; i++) {
		bufs[i] = CRYPTO_BUFFER_new(p, cfg->chain_lens[i], NULL);
		ok = bufs[i] != NULL;
		p += cfg->chain_lens[i];
	}
	const unsigned char *kp = cfg->key;
	EVP_PKEY *key = NULL;
	if (!ok) {
		set_err(err, errlen, "copying our certificate chain");
	} else if ((key = d2i_AutoPrivateKey(NULL, &kp, (long)cfg->key_len)) == NULL) {
		ok = 0;
		set_err(err, errlen, "parsing our private key");
	} else if (!SSL_CTX_set_chain_and_key(ctx, bufs, (size_t)cfg->chain_count, key, NULL)) {
		ok = 0;
		set_err(err, errlen, "setting our certificate and private key (the library refuses a key that does not match the certificate)");
	}
	EVP_PKEY_free(key);
	for (int i = 0; i < cfg->chain_count; i++)
		CRYPTO_BUFFER_free(bufs[i]);
	return ok;
}
#endif

tm_ctx *tm_ctx_new(const tm_ctx_config *cfg, char *err, size_t errlen) {
	tm_ctx *t = OPENSSL_zalloc(sizeof *t);
	if (t == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->is_server = cfg->is_server;
#ifdef TM_BORING_API
	t->ctx = SSL_CTX_new(TLS_with_buffers_method());
#else
	t->ctx = SSL_CTX_new(cfg->is_server ? TLS_server_method() : TLS_client_method());
#endif
	if (t->ctx == NULL) {
		set_err(err, errlen, "SSL_CTX_new");
		goto fail;
	}
	SSL_CTX *ctx = t->ctx;
	if (!SSL_CTX_set_min_proto_version(ctx, cfg->min_version) ||
	    !SSL_CTX_set_max_proto_version(ctx, cfg->max_version)) {
		set_err(err, errlen, "setting the protocol versions");
		goto fail;
	}
	/* libp2p uses no resumption: no tickets, no session cache. */
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
	                          SSL_MODE_NO_AUTO_CHAIN);
	if (cfg->groups && *cfg->groups && !SSL_CTX_set1_groups_list(ctx, cfg->groups)) {
		set_err(err, errlen, "unsupported key-exchange group list");
		goto fail;
	}
#ifdef TM_BORING_API
	/* BoringSSL's (and AWS-LC's) TLS 1.3 suites are fixed: these three, in this order where
	 * the CPU has AES instructions. Any other list would be a silent lie. */
	if (cfg->ciphersuites && *cfg->ciphersuites &&
	    strcmp(cfg->ciphersuites, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
	                              "TLS_CHACHA20_POLY1305_SHA256") != 0) {
		snprintf(err, errlen, "%s's TLS 1.3 cipher suites are fixed; cannot use %s", tm_version(),
		         cfg->ciphersuites);
		goto fail;
	}
	if (!set_chain_and_key(ctx, cfg, err, errlen))
		goto fail;
#else
	if (cfg->ciphersuites && *cfg->ciphersuites &&
	    !SSL_CTX_set_ciphersuites(ctx, cfg->ciphersuites)) {
		set_err(err, errlen, "unsupported TLS 1.3 cipher suite list");
		goto fail;
	}

	/* Certificate chain exactly as given: the leaf, then any extra ones (tests
	 * send two to check that peers refuse them). */
	const uint8_t *p = cfg->chain;
	for (int i = 0; i < cfg->chain_count; i++) {
		const unsigned char *q = p;
		X509 *x = d2i_X509(NULL, &q, (long)cfg->chain_lens[i]);
		if (x == NULL || q != p + cfg->chain_lens[i]) {
			X509_free(x);
			set_err(err, errlen, "parsing our certificate");
			goto fail;
		}
		int ok = i == 0 ? SSL_CTX_use_certificate(ctx, x) : SSL_CTX_add0_chain_cert(ctx, x);
		if (i == 0)
			X509_free(x);
		if (!ok) {
			if (i != 0)
				X509_free(x);
			set_err(err, errlen, "setting our certificate");
			goto fail;
		}
		p += cfg->chain_lens[i];
	}
	const unsigned char *kp = cfg->key;
	EVP_PKEY *key = d2i_AutoPrivateKey(NULL, &kp, (long)cfg->key_len);
	if (key == NULL) {
		set_err(err, errlen, "parsing our private key");
		goto fail;
	}
	int ok = SSL_CTX_use_PrivateKey(ctx, key);
	EVP_PKEY_free(key);
	if (!ok) {
		set_err(err, errlen, "setting our private key");
		goto fail;
	}
#endif

	/* Mutual authentication: a server demands a certificate (TLS 1.3 sends
	 * certificate_required without one); both sides check it in Go. */
	int mode = SSL_VERIFY_PEER;
	if (cfg->is_server)
		mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
#ifdef TM_BORING_API
	SSL_CTX_set_custom_verify(ctx, mode, verify_peer);
#else
	SSL_CTX_set_verify(ctx, mode, NULL);
	SSL_CTX_set_cert_verify_callback(ctx, verify_peer, NULL);
	if (!cfg->is_server)
		SSL_CTX_set_keylog_callback(ctx, keep_handshake_secret);
#endif
	SSL_CTX_set_info_callback(ctx, note_alerts);

	if (cfg->alpn_len > 0) {
		if (cfg->is_server) {
			t->alpn = OPENSSL_memdup(cfg->alpn, cfg->alpn_len);
			if (t->alpn == NULL) {
				/* Unchecked, a failed copy would refuse every client as
				 * offering no protocol we accept. */
				set_err(err, errlen, "allocating the ALPN list");
				goto fail;
			}
			t->alpn_len = cfg->alpn_len;
			SSL_CTX_set_alpn_select_cb(ctx, select_alpn, t);
		} else if (SSL_CTX_set_alpn_protos(ctx, cfg->alpn, (unsigned int)cfg->alpn_len) != 0) {
			set_err(err, errlen, "setting ALPN protocols");
			goto fail;
		}
	}
	return t;
fail:
	tm_ctx_free(t);
	return NULL;
}

void tm_ctx_free(tm_ctx *t) {
	if (t == NULL)
		return;
	SSL_CTX_free(t->ctx);
	OPENSSL_free(t->alpn);
	OPENSSL_free(t);
}

void tm_conn_set_handle(tm_conn *c, uintptr_t handle) { c->handle = handle; }

tm_conn *tm_conn_new(tm_ctx *t) {
	tm_conn *c = OPENSSL_zalloc(sizeof *c);
	if (c == NULL)
		return NULL;
	c->alert_sent = c->alert_received = -1;
	c->ssl = SSL_new(t->ctx);
	c->rbio = BIO_new(BIO_s_mem());
	c->wbio = BIO_new(BIO_s_mem());
	if (c->ssl == NULL || c->rbio == NULL || c->wbio == NULL) {
		BIO_free(c->rbio);
		BIO_free(c->wbio);
		SSL_free(c->ssl);
		OPENSSL_free(c);
		return NULL;
	}
	/* An empty memory BIO reports "retry", not EOF. */
	BIO_set_mem_eof_return(c->rbio, -1);
	SSL_set_bio(c->ssl, c->rbio, c->wbio);
	SSL_set_ex_data(c->ssl, conn_index, c);
	if (t->is_server)
		SSL_set_accept_state(c->ssl);
	else
		SSL_set_connect_state(c->ssl);
	return c;
}

void tm_conn_free(tm_conn *c) {
	if (c == NULL)
		return;
#ifndef TM_BORING_API
	OPENSSL_cleanse(c->chts, sizeof c->chts);
#endif
	SSL_free(c->ssl);
	OPENSSL_free(c);
}

tm_io *tm_conn_io(tm_conn *c) { return &c->io; }

void tm_drain(tm_conn *c, uint8_t *out, size_t outcap) {
	size_t n = 0;
	if (outcap > 0 && BIO_ctrl_pending(c->wbio) > 0) {
		int got = BIO_read(c->wbio, out, outcap > INT_MAX ? INT_MAX : (int)outcap);
		n = got > 0 ? (size_t)got : 0;
	}
	c->io.outlen = n;
	c->io.more_out = BIO_ctrl_pending(c->wbio) > 0;
}

static int feed(tm_conn *c, const uint8_t *in, size_t inlen) {
	/* The error queue is per thread; drop what an earlier call left on it. */
	ERR_clear_error();
	return inlen == 0 || (inlen <= INT_MAX && BIO_write(c->rbio, in, (int)inlen) == (int)inlen);
}

/* Maps an SSL_* return value to TM_*, remembering the first error. */
static int classify(tm_conn *c, int ret) {
	switch (SSL_get_error(c->ssl, ret)) {
	case SSL_ERROR_WANT_READ:
		return TM_WANT_READ;
	case SSL_ERROR_ZERO_RETURN:
		return TM_CLOSED;
	default:
		if (c->first_error == 0)
			c->first_error = ERR_peek_error();
		ERR_clear_error();
		return TM_ERROR;
	}
}

int tm_handshake(tm_conn *c, const uint8_t *in, size_t inlen, uint8_t *out, size_t outcap) {
	int rc;
	if (!feed(c, in, inlen))
		rc = TM_ERROR;
	else {
		int ret = SSL_do_handshake(c->ssl);
		rc = ret == 1 ? TM_OK : classify(c, ret);
	}
#ifndef TM_BORING_API
	if (c->deferred_reject && rc != TM_WANT_READ) {
		/* Our second flight stays unsent; the sealed alert replaces it. */
		(void)BIO_reset(c->wbio);
		c->io.outlen = seal_alert(c, SSL_AD_BAD_CERTIFICATE, out, outcap);
		c->io.more_out = 0;
		/* Only an alert that was built is one we sent; otherwise the peer
		 * sees the connection close, and the state must not claim more. */
		if (c->io.outlen > 0)
			c->alert_sent = SSL_AD_BAD_CERTIFICATE;
		rc = TM_ERROR;
	} else {
		/* Always hand back pending output: on failure it holds the alert. */
		tm_drain(c, out, outcap);
	}
	if (rc != TM_WANT_READ) {
		OPENSSL_cleanse(c->chts, sizeof c->chts);
		c->chts_len = 0;
	}
#else
	tm_drain(c, out, outcap);
#endif
	return rc;
}

/* Whether the input holds a whole record, so reading again can make progress
 * without touching the socket. */
static int has_full_record(BIO *rbio) {
	char *data;
	long len = BIO_get_mem_data(rbio, &data);
	if (len < 5)
		return 0;
	long need = 5 + (((long)(unsigned char)data[3] << 8) | (unsigned char)data[4]);
	return len >= need;
}

int tm_read(tm_conn *c, const uint8_t *in, size_t inlen, uint8_t *p, size_t n) {
	int rc;
	c->io.nread = 0;
	if (!feed(c, in, inlen))
		rc = TM_ERROR;
	else {
		int ret = SSL_read(c->ssl, p, n > INT_MAX ? INT_MAX : (int)n);
		if (ret > 0)
			c->io.nread = (size_t)ret;
		rc = ret > 0 ? TM_OK : classify(c, ret);
	}
	c->io.buffered = SSL_pending(c->ssl) > 0 || has_full_record(c->rbio);
	c->io.outlen = 0;
	c->io.more_out = BIO_ctrl_pending(c->wbio) > 0;
	return rc;
}

int tm_write(tm_conn *c, const uint8_t *p, size_t n, uint8_t *out, size_t outcap) {
	int rc = TM_OK;
	c->io.written = 0;
	ERR_clear_error();
	if (n > 0) {
		/* Partial writes are on: a short write reports what it took. */
		int ret = SSL_write(c->ssl, p, n > INT_MAX ? INT_MAX : (int)n);
		if (ret > 0)
			c->io.written = (size_t)ret;
		rc = ret > 0 ? TM_OK : classify(c, ret);
	}
	tm_drain(c, out, outcap);
	return rc;
}

void tm_shutdown(tm_conn *c, uint8_t *out, size_t outcap) {
	if (SSL_is_init_finished(c->ssl))
		SSL_shutdown(c->ssl);
	ERR_clear_error();
	tm_drain(c, out, outcap);
}

#ifndef TM_BORING_API
static uint16_t group_code(int nid) {
	switch (nid) {
	case NID_X25519: return 0x001d;
	case NID_X448: return 0x001e;
	case NID_X9_62_prime256v1: return 0x0017;
	case NID_secp384r1: return 0x0018;
	case NID_secp521r1: return 0x0019;
	default:
		/* Groups without a NID (X25519MLKEM768 in 3.5+) come as the TLS code
		 * point tagged TLSEXT_nid_unknown. */
		return (nid & TLSEXT_nid_unknown) ? (uint16_t)(nid & 0xffff) : 0;
	}
}

static uint16_t sigalg_code(SSL *ssl) {
	int type = NID_undef, hash = NID_undef;
	if (!SSL_get_peer_signature_type_nid(ssl, &type))
		return 0;
	SSL_get_peer_signature_nid(ssl, &hash);
	switch (type) {
	case EVP_PKEY_ED25519: return 0x0807;
	case EVP_PKEY_EC:
		return hash == NID_sha256 ? 0x0403 : hash == NID_sha384 ? 0x0503 :
		       hash == NID_sha512 ? 0x0603 : 0;
	case EVP_PKEY_RSA_PSS:
		return hash == NID_sha256 ? 0x0804 : hash == NID_sha384 ? 0x0805 :
		       hash == NID_sha512 ? 0x0806 : 0;
	default: return 0;
	}
}

#endif

void tm_get_state(tm_conn *c, tm_state *s) {
	memset(s, 0, sizeof *s);
	s->version = (uint16_t)SSL_version(c->ssl);
	const SSL_CIPHER *cipher = SSL_get_current_cipher(c->ssl);
	s->cipher = cipher ? SSL_CIPHER_get_protocol_id(cipher) : 0;
	/* OpenSSL 3.0 reads the group from the session, absent after an early failure. */
#ifdef TM_BORING_API
	s->group = SSL_get_group_id(c->ssl);
	s->peer_sigalg = SSL_get_peer_signature_algorithm(c->ssl);
#else
	if (SSL_get_session(c->ssl) != NULL)
		s->group = group_code(SSL_get_negotiated_group(c->ssl));
	s->peer_sigalg = sigalg_code(c->ssl);
#endif
	SSL_get0_alpn_selected(c->ssl, &s->alpn, &s->alpn_len);
	s->alert_sent = c->alert_sent;
	s->alert_received = c->alert_received;
}

void tm_error(tm_conn *c, char *buf, size_t len) {
	if (c->first_error != 0)
		ERR_error_string_n(c->first_error, buf, len);
	else if (len > 0)
		buf[0] = 0;
}

const char *tm_version(void) { return OpenSSL_version(OPENSSL_VERSION); }

int tm_boring_api(void) {
#ifdef TM_BORING_API
	return 1;
#else
	return 0;
#endif
}

int tm_groups_supported(const char *groups) {
	SSL_CTX *ctx = SSL_CTX_new(TLS_method());
	if (!ctx)
		return 0;
	int ok = SSL_CTX_set1_groups_list(ctx, groups);
	SSL_CTX_free(ctx);
	/* A refused list leaves reasons on the thread's error queue. */
	ERR_clear_error();
	return ok == 1;
}
