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

#include <stdint.h>
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
/* Unacknowledged stream bytes the glue keeps for ngtcp2, which sends (and resends) from the
 * application's memory and copies nothing: a socket's send buffer, in effect. */
#define TM_SEND_BUFFER (1024 * 1024)
/* The bytes are kept in chunks that never move until every byte in them is acknowledged,
 * since ngtcp2 holds pointers into them for retransmission. A stream's chunks start small and
 * double up to TM_CHUNK, so a connection that sends a little holds a little (the glue's
 * buffers are the application's, which a memory figure charges to the stack). */
#define TM_FIRST_CHUNK (4 * 1024)
#define TM_CHUNK (64 * 1024)

typedef struct tm_chunk {
  struct tm_chunk *next;
  size_t len, acked, cap;
  uint8_t data[];
} tm_chunk;

/* The stream application data crosses (the client's first bidirectional one). Outgoing
 * bytes run from head (the oldest unacknowledged) to tail; `unsent` and `unsent_off` mark the
 * first byte not yet handed to ngtcp2. */
typedef struct tm_stream {
  int64_t id; /* -1 until opened or taken up */
  tm_chunk *head, *tail, *unsent;
  size_t unsent_off, buffered, next_cap;
  int fin_queued, fin_sent;
  uint8_t *in;
  size_t in_len, in_read, in_cap;
  int peer_fin;
} tm_stream;

typedef struct tm_ngtcp2 {
  ngtcp2_conn *conn;
  ngtcp2_crypto_conn_ref ref;
  gnutls_session_t session;
  struct sockaddr_in local, remote;
  ngtcp2_path path;
  /* The last error, for the connection close the next write sends. */
  ngtcp2_connection_close_error ccerr;
  int failed, close_sent, server;
  /* A server's answer without a connection (a version negotiation). */
  uint8_t pending[256];
  size_t pending_len;
  tm_stream stream;
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

static int recv_stream_data_cb(ngtcp2_conn *conn, uint32_t flags, int64_t stream_id,
                               uint64_t offset, const uint8_t *data, size_t datalen,
                               void *user_data, void *stream_user_data) {
  tm_ngtcp2 *c = user_data;
  tm_stream *s = &c->stream;
  (void)conn;
  (void)offset;
  (void)stream_user_data;
  if (s->id == -1) {
    s->id = stream_id;
  } else if (s->id != stream_id) {
    return NGTCP2_ERR_CALLBACK_FAILURE; /* one stream per connection here */
  }
  if (s->in_len + datalen > s->in_cap) {
    size_t cap = s->in_cap ? s->in_cap : TM_FIRST_CHUNK;
    uint8_t *grown;
    while (cap < s->in_len + datalen) {
      cap *= 2;
    }
    grown = realloc(s->in, cap);
    if (grown == NULL) {
      return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    s->in = grown;
    s->in_cap = cap;
  }
  memcpy(s->in + s->in_len, data, datalen);
  s->in_len += datalen;
  if (flags & NGTCP2_STREAM_DATA_FLAG_FIN) {
    s->peer_fin = 1;
  }
  return 0;
}

/* The first byte not yet handed to ngtcp2, past chunks handed over whole. */
static void skip_sent(tm_stream *s) {
  while (s->unsent != NULL && s->unsent_off == s->unsent->len && s->unsent->next != NULL) {
    s->unsent = s->unsent->next;
    s->unsent_off = 0;
  }
}

/* Acknowledged bytes arrive in order (ngtcp2's promise), so they leave from the head; a full
 * chunk acknowledged whole is freed. */
static int acked_stream_data_cb(ngtcp2_conn *conn, int64_t stream_id, uint64_t offset,
                                uint64_t datalen, void *user_data, void *stream_user_data) {
  tm_stream *s = &((tm_ngtcp2 *)user_data)->stream;
  (void)conn;
  (void)stream_id;
  (void)offset;
  (void)stream_user_data;
  while (datalen > 0) {
    tm_chunk *h = s->head;
    size_t n;
    if (h == NULL) {
      return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    n = h->len - h->acked;
    if (n > datalen) {
      n = (size_t)datalen;
    }
    h->acked += n;
    s->buffered -= n;
    datalen -= n;
    if (h->acked == h->cap) {
      s->head = h->next;
      if (s->tail == h) {
        s->tail = NULL;
      }
      if (s->unsent == h) {
        s->unsent = h->next;
        s->unsent_off = 0;
      }
      free(h);
    } else if (n == 0) {
      return NGTCP2_ERR_CALLBACK_FAILURE; /* more acknowledged than was sent */
    }
  }
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
  cb->recv_stream_data = recv_stream_data_cb;
  cb->acked_stream_data_offset = acked_stream_data_cb;
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
  c->stream.id = -1;
  c->server = server;
  return c;
}

void tm_ngtcp2_free(tm_ngtcp2 *c) {
  if (c == NULL) {
    return;
  }
  if (c->conn != NULL) {
    ngtcp2_conn_del(c->conn);
  }
  while (c->stream.head != NULL) {
    tm_chunk *next = c->stream.head->next;
    free(c->stream.head);
    c->stream.head = next;
  }
  free(c->stream.in);
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

/* The next packet, carrying stream bytes not yet handed to ngtcp2 (and the stream's end) when
 * there are any and the stream may take them, else whatever else ngtcp2 has to send. */
static ngtcp2_ssize write_stream(tm_ngtcp2 *c, uint8_t *dest, size_t destlen, ngtcp2_tstamp ts) {
  tm_stream *s = &c->stream;
  ngtcp2_pkt_info pi;
  skip_sent(s);
  size_t left = s->unsent != NULL ? s->unsent->len - s->unsent_off : 0;
  int last = s->unsent == NULL || s->unsent->next == NULL;
  if (s->id != -1 && (left > 0 || (s->fin_queued && !s->fin_sent))) {
    ngtcp2_vec v = {left > 0 ? s->unsent->data + s->unsent_off : NULL, left};
    ngtcp2_ssize taken = -1;
    uint32_t flags =
        s->fin_queued && last ? NGTCP2_WRITE_STREAM_FLAG_FIN : NGTCP2_WRITE_STREAM_FLAG_NONE;
    ngtcp2_ssize n = ngtcp2_conn_writev_stream(c->conn, &c->path, &pi, dest, destlen, &taken,
                                               flags, s->id, &v, left > 0 ? 1 : 0, ts);
    if (n != NGTCP2_ERR_STREAM_DATA_BLOCKED && n != NGTCP2_ERR_STREAM_SHUT_WR) {
      if (n >= 0 && taken >= 0) {
        s->unsent_off += (size_t)taken;
        if ((flags & NGTCP2_WRITE_STREAM_FLAG_FIN) && (size_t)taken == left) {
          s->fin_sent = 1;
        }
      }
      return n;
    }
  }
  return ngtcp2_conn_write_pkt(c->conn, &c->path, &pi, dest, destlen, ts);
}

/* Writes the next datagram into dest: its length, 0 when there is nothing to send, or an
 * ngtcp2 error. A failed connection writes its connection close once. */
long tm_ngtcp2_write(tm_ngtcp2 *c, uint8_t *dest, size_t destlen) {
  ngtcp2_pkt_info pi;
  ngtcp2_ssize n;
  ngtcp2_tstamp ts;
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
  ts = now();
  if (ngtcp2_conn_get_expiry(c->conn) <= ts) {
    int rv = ngtcp2_conn_handle_expiry(c->conn, ts);
    if (rv != 0) {
      c->failed = 1;
      ngtcp2_connection_close_error_set_transport_error_liberr(&c->ccerr, rv, NULL, 0);
      return rv;
    }
  }
  n = write_stream(c, dest, destlen, ts);
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

/* Queues up to len bytes on the stream (opening it on a client), and its end when fin and
 * all was taken: the bytes taken, or an ngtcp2 error. A server takes nothing before the
 * client's stream arrived, a client nothing before the handshake lets it open one. */
long tm_ngtcp2_stream_write(tm_ngtcp2 *c, const uint8_t *data, size_t len, int fin) {
  tm_stream *s = &c->stream;
  size_t room, taken;
  if (c->conn == NULL || c->failed) {
    return 0;
  }
  if (s->id == -1) {
    if (c->server || !ngtcp2_conn_get_handshake_completed(c->conn)) {
      return 0;
    }
    int rv = ngtcp2_conn_open_bidi_stream(c->conn, &s->id, NULL);
    if (rv == NGTCP2_ERR_STREAM_ID_BLOCKED) {
      s->id = -1;
      return 0;
    }
    if (rv != 0) {
      s->id = -1;
      return rv;
    }
  }
  if (s->fin_queued) {
    return NGTCP2_ERR_STREAM_SHUT_WR;
  }
  taken = 0;
  while (taken < len && s->buffered < TM_SEND_BUFFER) {
    size_t n;
    if (s->tail == NULL || s->tail->len == s->tail->cap) {
      size_t cap = s->next_cap < TM_FIRST_CHUNK ? TM_FIRST_CHUNK : s->next_cap;
      tm_chunk *fresh = malloc(sizeof *fresh + cap);
      if (fresh == NULL) {
        return NGTCP2_ERR_NOMEM;
      }
      s->next_cap = cap * 2 > TM_CHUNK ? TM_CHUNK : cap * 2;
      fresh->next = NULL;
      fresh->len = fresh->acked = 0;
      fresh->cap = cap;
      if (s->tail != NULL) {
        s->tail->next = fresh;
      } else {
        s->head = fresh;
      }
      s->tail = fresh;
      if (s->unsent == NULL) {
        s->unsent = fresh;
        s->unsent_off = 0;
      }
    }
    room = s->tail->cap - s->tail->len;
    n = len - taken < room ? len - taken : room;
    if (n > TM_SEND_BUFFER - s->buffered) {
      n = TM_SEND_BUFFER - s->buffered;
    }
    memcpy(s->tail->data + s->tail->len, data + taken, n);
    s->tail->len += n;
    s->buffered += n;
    taken += n;
  }
  if (fin && taken == len) {
    s->fin_queued = 1;
  }
  return (long)taken;
}

/* Copies up to cap received stream bytes into buf and gives their credit back to the peer:
 * the bytes copied, *fin set once every byte before the peer's end is read. */
long tm_ngtcp2_stream_read(tm_ngtcp2 *c, uint8_t *buf, size_t cap, int *fin) {
  tm_stream *s = &c->stream;
  size_t n = s->in_len - s->in_read;
  *fin = 0;
  if (n > cap) {
    n = cap;
  }
  memcpy(buf, s->in + s->in_read, n);
  s->in_read += n;
  if (s->in_read == s->in_len) {
    s->in_read = s->in_len = 0;
    *fin = s->peer_fin;
  }
  if (n > 0 && c->conn != NULL && !c->failed) {
    int rv = ngtcp2_conn_extend_max_stream_offset(c->conn, s->id, n);
    if (rv != 0 && rv != NGTCP2_ERR_STREAM_NOT_FOUND) {
      return rv;
    }
    ngtcp2_conn_extend_max_offset(c->conn, n);
  }
  return (long)n;
}

/* Nanoseconds until the connection's next timer, or -1 when none is set. */
int64_t tm_ngtcp2_timeout(tm_ngtcp2 *c) {
  ngtcp2_tstamp at, t;
  if (c->conn == NULL) {
    return -1;
  }
  at = ngtcp2_conn_get_expiry(c->conn);
  if (at == UINT64_MAX) {
    return -1;
  }
  t = now();
  return at <= t ? 0 : (int64_t)(at - t);
}

const char *tm_ngtcp2_strerror(int rv) { return ngtcp2_strerror(rv); }

const char *tm_ngtcp2_version(void) { return ngtcp2_version(0)->version_str; }
