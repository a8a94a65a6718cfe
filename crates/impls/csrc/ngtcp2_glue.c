/* ngtcp2 on GnuTLS, the C side of crates/impls/src/gnutls/ngtcp2.rs: what ngtcp2 only
 * offers through C structs and callbacks (its settings, transport parameters, paths and
 * callback table), behind a flat API the Rust side declares by hand, so no struct layout of
 * Debian's ngtcp2 0.12 is copied into Rust.
 *
 * The GnuTLS session is the Rust side's, set up as the TCP adapter sets one up; here it is
 * handed to ngtcp2's GnuTLS crypto layer (ngtcp2_crypto_gnutls_configure_*_session), which
 * moves the handshake's bytes between the two. ngtcp2 is sans-I/O: datagrams go in through
 * tm_ngtcp2_read and come out of tm_ngtcp2_write, as ngtcp2's own examples drive it, but from
 * memory rather than a socket. The path is a fixed pair of loopback addresses. */

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

/* Returned by tm_ngtcp2_server_new when the first datagram is of a version ngtcp2 does not
 * speak: the version negotiation it answers with is in the connection's pending bytes. */
#define TM_NGTCP2_VERSION_NEGOTIATION 1
#define TM_CID_LEN 18

typedef struct tm_ngtcp2 {
  ngtcp2_conn *conn;
  ngtcp2_crypto_conn_ref ref;
  gnutls_session_t session;
  struct sockaddr_in local, remote;
  ngtcp2_path path;
  /* The last error, for the connection close the next write sends. */
  ngtcp2_connection_close_error ccerr;
  int failed, close_sent;
  /* A server's answer without a connection (a version negotiation). */
  uint8_t pending[256];
  size_t pending_len;
} tm_ngtcp2;

static ngtcp2_tstamp now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (ngtcp2_tstamp)ts.tv_sec * NGTCP2_SECONDS + (ngtcp2_tstamp)ts.tv_nsec;
}

static void rand_cb(uint8_t *dest, size_t destlen, const ngtcp2_rand_ctx *rand_ctx) {
  (void)rand_ctx;
  gnutls_rnd(GNUTLS_RND_RANDOM, dest, destlen);
}

static int new_cid_cb(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token, size_t cidlen,
                      void *user_data) {
  (void)conn;
  (void)user_data;
  if (gnutls_rnd(GNUTLS_RND_RANDOM, cid->data, cidlen) != 0 ||
      gnutls_rnd(GNUTLS_RND_RANDOM, token, NGTCP2_STATELESS_RESET_TOKENLEN) != 0) {
    return NGTCP2_ERR_CALLBACK_FAILURE;
  }
  cid->datalen = cidlen;
  return 0;
}

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref) {
  return ((tm_ngtcp2 *)ref->user_data)->conn;
}

static int random_cid(ngtcp2_cid *cid) {
  uint8_t data[TM_CID_LEN];
  if (gnutls_rnd(GNUTLS_RND_RANDOM, data, sizeof data) != 0) {
    return -1;
  }
  ngtcp2_cid_init(cid, data, sizeof data);
  return 0;
}

/* The callbacks both sides take from ngtcp2's crypto layer, and the settings and transport
 * parameters an HTTP/3 or hq-interop endpoint would start from. */
static void common(ngtcp2_callbacks *cb, ngtcp2_settings *settings,
                   ngtcp2_transport_params *params) {
  memset(cb, 0, sizeof *cb);
  cb->recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
  cb->encrypt = ngtcp2_crypto_encrypt_cb;
  cb->decrypt = ngtcp2_crypto_decrypt_cb;
  cb->hp_mask = ngtcp2_crypto_hp_mask_cb;
  cb->rand = rand_cb;
  cb->get_new_connection_id = new_cid_cb;
  cb->update_key = ngtcp2_crypto_update_key_cb;
  cb->delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
  cb->delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
  cb->get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
  cb->version_negotiation = ngtcp2_crypto_version_negotiation_cb;
  ngtcp2_settings_default(settings);
  settings->initial_ts = now();
  /* Path MTU discovery probes after the handshake, which is not what is timed. */
  settings->no_pmtud = 1;
  ngtcp2_transport_params_default(params);
  params->initial_max_streams_bidi = 100;
  params->initial_max_streams_uni = 3;
  params->initial_max_stream_data_bidi_local = 256 * 1024;
  params->initial_max_stream_data_bidi_remote = 256 * 1024;
  params->initial_max_stream_data_uni = 256 * 1024;
  params->initial_max_data = 1024 * 1024;
  params->max_idle_timeout = 30 * NGTCP2_SECONDS;
}

static tm_ngtcp2 *alloc(gnutls_session_t session, int server) {
  tm_ngtcp2 *c = calloc(1, sizeof *c);
  if (c == NULL) {
    return NULL;
  }
  c->session = session;
  c->ref.get_conn = get_conn;
  c->ref.user_data = c;
  c->local.sin_family = c->remote.sin_family = AF_INET;
  c->local.sin_addr.s_addr = c->remote.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  c->local.sin_port = htons(server ? 4433 : 50000);
  c->remote.sin_port = htons(server ? 50000 : 4433);
  c->path.local.addr = (ngtcp2_sockaddr *)&c->local;
  c->path.local.addrlen = sizeof c->local;
  c->path.remote.addr = (ngtcp2_sockaddr *)&c->remote;
  c->path.remote.addrlen = sizeof c->remote;
  ngtcp2_connection_close_error_default(&c->ccerr);
  return c;
}

void tm_ngtcp2_free(tm_ngtcp2 *c) {
  if (c == NULL) {
    return;
  }
  if (c->conn != NULL) {
    ngtcp2_conn_del(c->conn);
  }
  free(c);
}

/* After ngtcp2_conn_*_new returned rv: hands the session to ngtcp2's crypto layer and the
 * connection to the session, and the connection to *out; on any failure frees it. */
static int finish_new(tm_ngtcp2 *c, int rv, int server, tm_ngtcp2 **out) {
  if (rv == 0) {
    rv = server ? ngtcp2_crypto_gnutls_configure_server_session(c->session)
                : ngtcp2_crypto_gnutls_configure_client_session(c->session);
    rv = rv == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
  }
  if (rv != 0) {
    tm_ngtcp2_free(c);
    return rv;
  }
  gnutls_session_set_ptr(c->session, &c->ref);
  ngtcp2_conn_set_tls_native_handle(c->conn, c->session);
  *out = c;
  return 0;
}

/* A client connection whose first flight is ready to write. 0 or an ngtcp2 error. */
int tm_ngtcp2_client_new(tm_ngtcp2 **out, gnutls_session_t session) {
  ngtcp2_callbacks cb;
  ngtcp2_settings settings;
  ngtcp2_transport_params params;
  ngtcp2_cid dcid, scid;
  int rv;
  tm_ngtcp2 *c = alloc(session, 0);
  *out = NULL;
  if (c == NULL) {
    return NGTCP2_ERR_NOMEM;
  }
  common(&cb, &settings, &params);
  cb.client_initial = ngtcp2_crypto_client_initial_cb;
  cb.recv_retry = ngtcp2_crypto_recv_retry_cb;
  if (random_cid(&dcid) != 0 || random_cid(&scid) != 0) {
    tm_ngtcp2_free(c);
    return NGTCP2_ERR_CALLBACK_FAILURE;
  }
  rv = ngtcp2_conn_client_new(&c->conn, &dcid, &scid, &c->path, NGTCP2_PROTO_VER_V1, &cb,
                              &settings, &params, NULL, c);
  return finish_new(c, rv, 0, out);
}

/* A server connection from the client's first datagram, which tm_ngtcp2_read then reads.
 * 0, TM_NGTCP2_VERSION_NEGOTIATION (the answer is pending, *out holds no connection), or
 * an ngtcp2 error (the datagram is no Initial a server may accept). */
int tm_ngtcp2_server_new(tm_ngtcp2 **out, gnutls_session_t session, const uint8_t *pkt,
                         size_t pktlen) {
  ngtcp2_callbacks cb;
  ngtcp2_settings settings;
  ngtcp2_transport_params params;
  ngtcp2_version_cid vc;
  ngtcp2_pkt_hd hd;
  ngtcp2_cid dcid, scid;
  int rv;
  tm_ngtcp2 *c = alloc(session, 1);
  *out = NULL;
  if (c == NULL) {
    return NGTCP2_ERR_NOMEM;
  }
  rv = ngtcp2_pkt_decode_version_cid(&vc, pkt, pktlen, TM_CID_LEN);
  if (rv == NGTCP2_ERR_VERSION_NEGOTIATION) {
    const uint32_t versions[] = {NGTCP2_PROTO_VER_V1};
    uint8_t unused;
    ngtcp2_ssize n;
    gnutls_rnd(GNUTLS_RND_NONCE, &unused, 1);
    n = ngtcp2_pkt_write_version_negotiation(c->pending, sizeof c->pending, unused,
                                             vc.scid, vc.scidlen, vc.dcid, vc.dcidlen,
                                             versions, 1);
    if (n < 0) {
      tm_ngtcp2_free(c);
      return (int)n;
    }
    c->pending_len = (size_t)n;
    *out = c;
    return TM_NGTCP2_VERSION_NEGOTIATION;
  }
  if (rv == 0) {
    rv = ngtcp2_accept(&hd, pkt, pktlen);
  }
  if (rv != 0) {
    tm_ngtcp2_free(c);
    return rv;
  }
  common(&cb, &settings, &params);
  cb.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
  params.original_dcid = hd.dcid;
  params.stateless_reset_token_present = 1;
  gnutls_rnd(GNUTLS_RND_RANDOM, params.stateless_reset_token,
             sizeof params.stateless_reset_token);
  dcid = hd.scid;
  if (random_cid(&scid) != 0) {
    tm_ngtcp2_free(c);
    return NGTCP2_ERR_CALLBACK_FAILURE;
  }
  rv = ngtcp2_conn_server_new(&c->conn, &dcid, &scid, &c->path, hd.version, &cb, &settings,
                              &params, NULL, c);
  return finish_new(c, rv, 1, out);
}

/* Reads one datagram. 0, or the ngtcp2 error that failed the connection (after which the
 * next write sends a connection close with it). */
int tm_ngtcp2_read(tm_ngtcp2 *c, const uint8_t *pkt, size_t pktlen) {
  ngtcp2_pkt_info pi = {0};
  int rv;
  if (c->conn == NULL || c->failed) {
    return 0;
  }
  rv = ngtcp2_conn_read_pkt(c->conn, &c->path, &pi, pkt, pktlen, now());
  if (rv == 0 || rv == NGTCP2_ERR_DISCARD_PKT) {
    return 0;
  }
  c->failed = 1;
  if (rv == NGTCP2_ERR_CRYPTO) {
    ngtcp2_connection_close_error_set_transport_error_tls_alert(
        &c->ccerr, ngtcp2_conn_get_tls_alert(c->conn), NULL, 0);
  } else {
    ngtcp2_connection_close_error_set_transport_error_liberr(&c->ccerr, rv, NULL, 0);
  }
  return rv;
}

/* Writes the next datagram into dest: its length, 0 when there is nothing to send, or an
 * ngtcp2 error. A failed connection writes its connection close once. */
long tm_ngtcp2_write(tm_ngtcp2 *c, uint8_t *dest, size_t destlen) {
  ngtcp2_pkt_info pi;
  ngtcp2_ssize n;
  if (c->pending_len > 0) {
    size_t len = c->pending_len < destlen ? c->pending_len : destlen;
    memcpy(dest, c->pending, len);
    c->pending_len = 0;
    return (long)len;
  }
  if (c->conn == NULL) {
    return 0;
  }
  if (c->failed) {
    if (c->close_sent) {
      return 0;
    }
    c->close_sent = 1;
    n = ngtcp2_conn_write_connection_close(c->conn, &c->path, &pi, dest, destlen, &c->ccerr,
                                           now());
    return n < 0 ? 0 : (long)n;
  }
  n = ngtcp2_conn_write_pkt(c->conn, &c->path, &pi, dest, destlen, now());
  if (n < 0) {
    c->failed = 1;
    ngtcp2_connection_close_error_set_transport_error_liberr(&c->ccerr, (int)n, NULL, 0);
  }
  return (long)n;
}

int tm_ngtcp2_handshake_completed(const tm_ngtcp2 *c) {
  return c->conn != NULL && ngtcp2_conn_get_handshake_completed(c->conn);
}

/* The connection close the peer sent, if any: 1 with its code and reason, else 0. */
int tm_ngtcp2_peer_close(const tm_ngtcp2 *c, uint64_t *code, const uint8_t **reason,
                         size_t *reasonlen) {
  ngtcp2_connection_close_error e;
  if (c->conn == NULL) {
    return 0;
  }
  ngtcp2_conn_get_connection_close_error(c->conn, &e);
  if (e.error_code == 0 && e.reasonlen == 0) {
    return 0;
  }
  *code = e.error_code;
  *reason = e.reason;
  *reasonlen = e.reasonlen;
  return 1;
}

/* The TLS alert GnuTLS raised through ngtcp2, 0 if none. */
int tm_ngtcp2_tls_alert(const tm_ngtcp2 *c) {
  return c->conn == NULL ? 0 : ngtcp2_conn_get_tls_alert(c->conn);
}

const char *tm_ngtcp2_strerror(int rv) { return ngtcp2_strerror(rv); }

const char *tm_ngtcp2_version(void) { return ngtcp2_version(0)->version_str; }
