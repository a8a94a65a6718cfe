/* The NSS adapter's C side (crates/impls/src/nss.rs): what NSS only offers through C structs,
 * NSPR file descriptors and callbacks, behind a flat API the Rust side declares by hand.
 *
 * Records move through an NSPR I/O layer at the bottom of each connection's stack: its reads
 * and writes call the Rust side's functions with the harness's transport, and an empty
 * transport is PR_WOULD_BLOCK_ERROR, so NSS runs its non-blocking handshake as it does over
 * a non-blocking socket. Certificates live in NSS's in-memory store (NSS_NoDB_Init): the
 * run's CAs are imported there as temporary certificates and trusted, so verification is
 * NSS's own default (SSL_AuthCertificate, CERT_VerifyCert and the host name check). */

#include <string.h>

#include <cert.h>
#include <certdb.h>
#include <keyhi.h>
#include <nss.h>
#include <pk11pub.h>
#include <prerror.h>
#include <prio.h>
#include <prnetdb.h>
#include <secerr.h>
#include <ssl.h>
#include <sslerr.h>
#include <sslexp.h>
#include <sslproto.h>

/* The Rust side's transport: bytes moved, 0 at the end of the stream (reads), -1 while
 * nothing can move yet, -2 on an error. */
typedef long (*tm_io_fn)(void *io, unsigned char *buf, long len);

static PRDescIdentity tm_layer;
static PRIOMethods tm_methods;
static tm_io_fn tm_read_fn, tm_write_fn;

static PRInt32 tm_result(long n) {
    if (n >= 0) {
        return (PRInt32)n;
    }
    PR_SetError(n == -1 ? PR_WOULD_BLOCK_ERROR : PR_IO_ERROR, 0);
    return -1;
}

static PRInt32 tm_recv(PRFileDesc *fd, void *buf, PRInt32 amount, PRIntn flags,
                       PRIntervalTime timeout) {
    (void)flags;
    (void)timeout;
    return tm_result(tm_read_fn(fd->secret, buf, amount));
}

static PRInt32 tm_read(PRFileDesc *fd, void *buf, PRInt32 amount) {
    return tm_recv(fd, buf, amount, 0, PR_INTERVAL_NO_TIMEOUT);
}

static PRInt32 tm_send(PRFileDesc *fd, const void *buf, PRInt32 amount, PRIntn flags,
                       PRIntervalTime timeout) {
    (void)flags;
    (void)timeout;
    return tm_result(tm_write_fn(fd->secret, (unsigned char *)buf, amount));
}

static PRInt32 tm_write(PRFileDesc *fd, const void *buf, PRInt32 amount) {
    return tm_send(fd, buf, amount, 0, PR_INTERVAL_NO_TIMEOUT);
}

static PRStatus tm_close(PRFileDesc *fd) {
    fd->secret = NULL;
    fd->dtor(fd);
    return PR_SUCCESS;
}

static PRStatus tm_shutdown(PRFileDesc *fd, PRIntn how) {
    (void)fd;
    (void)how;
    return PR_SUCCESS;
}

/* NSS keys its client session cache on the peer's address (with the peer ID and host name),
 * so every connection has the same made-up one; the factory's peer ID tells them apart. */
static PRStatus tm_name(PRFileDesc *fd, PRNetAddr *addr) {
    (void)fd;
    memset(addr, 0, sizeof *addr);
    addr->inet.family = PR_AF_INET;
    addr->inet.ip = PR_htonl(PR_INADDR_LOOPBACK);
    addr->inet.port = PR_htons(443);
    return PR_SUCCESS;
}

static PRStatus tm_getsockopt(PRFileDesc *fd, PRSocketOptionData *opt) {
    (void)fd;
    if (opt->option == PR_SockOpt_Nonblocking) {
        opt->value.non_blocking = PR_TRUE;
        return PR_SUCCESS;
    }
    PR_SetError(PR_OPERATION_NOT_SUPPORTED_ERROR, 0);
    return PR_FAILURE;
}

static PRStatus tm_setsockopt(PRFileDesc *fd, const PRSocketOptionData *opt) {
    (void)fd;
    (void)opt;
    return PR_SUCCESS;
}

int tm_nss_init(tm_io_fn read_fn, tm_io_fn write_fn) {
    tm_read_fn = read_fn;
    tm_write_fn = write_fn;
    if (NSS_NoDB_Init(NULL) != SECSuccess || NSS_SetDomesticPolicy() != SECSuccess) {
        return PR_GetError();
    }
    /* The server's TLS 1.2 session-id cache, process-wide in NSS; default lifetimes. */
    if (SSL_ConfigServerSessionIDCache(10000, 0, 0, NULL) != SECSuccess) {
        return PR_GetError();
    }
    tm_layer = PR_GetUniqueIdentity("tlsmatrix-memio");
    tm_methods = *PR_GetDefaultIOMethods();
    tm_methods.read = tm_read;
    tm_methods.write = tm_write;
    tm_methods.recv = tm_recv;
    tm_methods.send = tm_send;
    tm_methods.close = tm_close;
    tm_methods.shutdown = tm_shutdown;
    tm_methods.getpeername = tm_name;
    tm_methods.getsockname = tm_name;
    tm_methods.getsocketoption = tm_getsockopt;
    tm_methods.setsocketoption = tm_setsockopt;
    return 0;
}

const char *tm_nss_version(void) { return NSS_GetVersion(); }
int tm_nss_error(void) { return PR_GetError(); }
const char *tm_nss_error_name(int code) { return PR_ErrorToName(code); }
const char *tm_nss_error_text(int code) { return PR_ErrorToString(code, PR_LANGUAGE_I_DEFAULT); }

/* Certificates and keys. */

static CERTCertificate *tm_temp_cert(const unsigned char *der, unsigned len) {
    SECItem item = {siBuffer, (unsigned char *)der, len};
    return CERT_NewTempCertificate(CERT_GetDefaultCertDB(), &item, NULL, PR_FALSE, PR_TRUE);
}

/* A CA every connection of the process trusts, for servers and for clients. */
int tm_nss_trust_ca(const unsigned char *der, unsigned len) {
    CERTCertificate *ca = tm_temp_cert(der, len);
    if (!ca) {
        return PR_GetError();
    }
    CERTCertTrust trust = {0};
    trust.sslFlags = CERTDB_TRUSTED_CA | CERTDB_TRUSTED_CLIENT_CA | CERTDB_VALID_CA;
    SECStatus rv = CERT_ChangeCertTrust(CERT_GetDefaultCertDB(), ca, &trust);
    if (rv != SECSuccess) {
        int err = PR_GetError();
        CERT_DestroyCertificate(ca);
        return err;
    }
    /* The reference is kept: a temporary certificate, and its trust, leave the store with
     * its last reference, and this one is for the process's life. */
    return 0;
}

typedef struct tm_nss_cred {
    CERTCertificate *leaf;
    SECKEYPrivateKey *key;
    /* Exactly what is sent, leaf first: never a chain NSS would build from its store. */
    CERTCertificateList *chain;
} tm_nss_cred;

void tm_nss_cred_free(tm_nss_cred *c) {
    if (!c) {
        return;
    }
    if (c->leaf) {
        CERT_DestroyCertificate(c->leaf);
    }
    if (c->key) {
        SECKEY_DestroyPrivateKey(c->key);
    }
    if (c->chain) {
        CERT_DestroyCertificateList(c->chain);
    }
    PORT_Free(c);
}

/* A certificate chain (DER, leaf first) and the leaf's PKCS#8 key; NULL with the error. */
tm_nss_cred *tm_nss_cred_new(const unsigned char *const *ders, const unsigned *lens, int n,
                             const unsigned char *pkcs8, unsigned pkcs8_len, int *err) {
    tm_nss_cred *c = PORT_ZNew(tm_nss_cred);
    PLArenaPool *arena = PORT_NewArena(DER_DEFAULT_CHUNKSIZE);
    PK11SlotInfo *slot = PK11_GetInternalKeySlot();
    if (!c || !arena || !slot || n < 1) {
        goto fail;
    }
    c->chain = PORT_ArenaZNew(arena, CERTCertificateList);
    if (!c->chain) {
        goto fail;
    }
    c->chain->arena = arena;
    arena = NULL;
    c->chain->len = n;
    c->chain->certs = PORT_ArenaZNewArray(c->chain->arena, SECItem, n);
    if (!c->chain->certs) {
        goto fail;
    }
    for (int i = 0; i < n; i++) {
        SECItem der = {siBuffer, (unsigned char *)ders[i], lens[i]};
        if (SECITEM_CopyItem(c->chain->arena, &c->chain->certs[i], &der) != SECSuccess) {
            goto fail;
        }
    }
    c->leaf = tm_temp_cert(ders[0], lens[0]);
    if (!c->leaf) {
        goto fail;
    }
    SECItem pki = {siBuffer, (unsigned char *)pkcs8, pkcs8_len};
    /* A session object (not permanent, no database), usable for signing only. */
    if (PK11_ImportDERPrivateKeyInfoAndReturnKey(slot, &pki, NULL, NULL, PR_FALSE, PR_TRUE,
                                                 KU_ALL, &c->key, NULL) != SECSuccess) {
        goto fail;
    }
    PK11_FreeSlot(slot);
    return c;
fail:
    *err = PR_GetError();
    if (slot) {
        PK11_FreeSlot(slot);
    }
    if (arena) {
        PORT_FreeArena(arena, PR_FALSE);
    }
    tm_nss_cred_free(c);
    return NULL;
}

/* Model sockets: a configuration each connection copies with SSL_ImportFD, as a context is
 * in other libraries. */

static PRFileDesc *tm_stub(void *io) {
    PRFileDesc *fd = PR_CreateIOLayerStub(tm_layer, &tm_methods);
    if (fd) {
        fd->secret = (PRFilePrivate *)io;
    }
    return fd;
}

PRFileDesc *tm_nss_model_new(void) {
    PRFileDesc *stub = tm_stub(NULL);
    if (!stub) {
        return NULL;
    }
    PRFileDesc *m = SSL_ImportFD(NULL, stub);
    if (!m) {
        PR_Close(stub);
    }
    return m;
}

void tm_nss_close(PRFileDesc *fd) { PR_Close(fd); }

#define TM_OK(call) ((call) == SECSuccess ? 0 : PR_GetError())

int tm_nss_versions(PRFileDesc *m, unsigned short min, unsigned short max) {
    SSLVersionRange r = {min, max};
    return TM_OK(SSL_VersionRangeSet(m, &r));
}

int tm_nss_option(PRFileDesc *m, int option, int on) {
    return TM_OK(SSL_OptionSet(m, option, on ? PR_TRUE : PR_FALSE));
}

/* Every suite NSS implements, on or off. */
static int tm_every_suite_set(PRFileDesc *m, PRBool on) {
    const PRUint16 *all = SSL_GetImplementedCiphers();
    for (PRUint16 i = 0; i < SSL_NumImplementedCiphers; i++) {
        if (SSL_CipherPrefSet(m, all[i], on) != SECSuccess) {
            return PR_GetError();
        }
    }
    return 0;
}

/* Only `suite` enabled. */
int tm_nss_only_suite(PRFileDesc *m, unsigned short suite) {
    int err = tm_every_suite_set(m, PR_FALSE);
    return err ? err : TM_OK(SSL_CipherPrefSet(m, suite, PR_TRUE));
}

/* Every suite NSS implements, on (the BoGo shim's "ALL", as BoringSSL's own shim has). */
int tm_nss_every_suite(PRFileDesc *m) { return tm_every_suite_set(m, PR_TRUE); }

/* The groups, most preferred first; a client's one key share is for the first. */
int tm_nss_groups(PRFileDesc *m, const unsigned short *groups, unsigned n) {
    SSLNamedGroup g[32];
    if (n > 32) {
        return SEC_ERROR_INVALID_ARGS;
    }
    for (unsigned i = 0; i < n; i++) {
        g[i] = (SSLNamedGroup)groups[i];
    }
    int err = TM_OK(SSL_NamedGroupConfig(m, g, n));
    return err ? err : TM_OK(SSL_SendAdditionalKeyShares(m, 0));
}

int tm_nss_schemes(PRFileDesc *m, const unsigned short *schemes, unsigned n) {
    SSLSignatureScheme s[32];
    if (n > 32) {
        return SEC_ERROR_INVALID_ARGS;
    }
    for (unsigned i = 0; i < n; i++) {
        s[i] = (SSLSignatureScheme)schemes[i];
    }
    return TM_OK(SSL_SignatureSchemePrefSet(m, s, n));
}

int tm_nss_server_cred(PRFileDesc *m, const tm_nss_cred *c) {
    SSLExtraServerCertData extra = {0};
    extra.authType = ssl_auth_null;
    extra.certChain = c->chain;
    return TM_OK(SSL_ConfigServerCert(m, c->leaf, c->key, &extra, sizeof extra));
}

static PRInt32 tm_keep_config(PRFileDesc *fd, const SECItem *names, PRUint32 n, void *arg) {
    (void)fd;
    (void)names;
    (void)arg;
    return n > 0 ? 0 : SSL_SNI_CURRENT_CONFIG_IS_USED;
}

/* A server keeps the name a client sent (SSL_GetNegotiatedHostInfo) only when an SNI hook
 * says which name it matched; this one takes the first name and keeps the configuration. */
int tm_nss_server_sni(PRFileDesc *m) { return TM_OK(SSL_SNISocketConfigHook(m, tm_keep_config, NULL)); }

static SECStatus tm_client_auth(void *arg, PRFileDesc *fd, CERTDistNames *names,
                                CERTCertificate **cert, SECKEYPrivateKey **key) {
    (void)fd;
    (void)names;
    const tm_nss_cred *c = arg;
    *cert = CERT_DupCertificate(c->leaf);
    *key = SECKEY_CopyPrivateKey(c->key);
    return *key ? SECSuccess : SECFailure;
}

/* The client presents `c` when asked (it must outlive the model and its connections). */
int tm_nss_client_cred(PRFileDesc *m, const tm_nss_cred *c) {
    return TM_OK(SSL_GetClientAuthDataHook(m, tm_client_auth, (void *)c));
}

static SECStatus tm_any_chain(void *arg, PRFileDesc *fd, PRBool sig, PRBool server) {
    (void)arg;
    (void)fd;
    (void)sig;
    (void)server;
    return SECSuccess;
}

/* An open configuration's peer chain is accepted whatever it is; the handshake signature is
 * still checked against the certificate's key. */
int tm_nss_accept_any_chain(PRFileDesc *m) {
    return TM_OK(SSL_AuthCertificateHook(m, tm_any_chain, NULL));
}

/* ALPN protocols in wire form (each length-prefixed), most preferred first. */
int tm_nss_alpn(PRFileDesc *m, const unsigned char *wire, unsigned len) {
    return TM_OK(SSL_SetNextProtoNego(m, wire, len));
}

/* Connections. */

PRFileDesc *tm_nss_conn_new(PRFileDesc *model, void *io, int server, const char *url,
                            const char *peer_id) {
    PRFileDesc *stub = tm_stub(io);
    if (!stub) {
        return NULL;
    }
    PRFileDesc *fd = SSL_ImportFD(model, stub);
    if (!fd) {
        PR_Close(stub);
        return NULL;
    }
    if ((url && SSL_SetURL(fd, url) != SECSuccess) ||
        (peer_id && SSL_SetSockPeerID(fd, peer_id) != SECSuccess) ||
        SSL_ResetHandshake(fd, server ? PR_TRUE : PR_FALSE) != SECSuccess) {
        PRErrorCode err = PR_GetError();
        PR_Close(fd);
        PR_SetError(err, 0);
        return NULL;
    }
    return fd;
}

/* 0 once the handshake is done, 1 while it waits for the peer, -1 on an error. */
int tm_nss_handshake(PRFileDesc *fd) {
    if (SSL_ForceHandshake(fd) == SECSuccess) {
        return 0;
    }
    return PR_GetError() == PR_WOULD_BLOCK_ERROR ? 1 : -1;
}

long tm_nss_write(PRFileDesc *fd, const void *buf, long len) {
    return PR_Write(fd, buf, (PRInt32)len);
}

/* Bytes read; 0 at the peer's close_notify; -1 with PR_WOULD_BLOCK_ERROR while nothing. */
long tm_nss_read(PRFileDesc *fd, void *buf, long len) { return PR_Read(fd, buf, (PRInt32)len); }

/* Sends close_notify. */
int tm_nss_shutdown(PRFileDesc *fd) { return PR_Shutdown(fd, PR_SHUTDOWN_SEND) == PR_SUCCESS ? 0 : PR_GetError(); }

int tm_nss_key_update(PRFileDesc *fd) { return TM_OK(SSL_KeyUpdate(fd, PR_FALSE)); }

typedef struct tm_nss_channel {
    unsigned short version, suite, group, scheme;
    int resumed;
    int peer_certs;
} tm_nss_channel;

int tm_nss_channel_info(PRFileDesc *fd, tm_nss_channel *out) {
    SSLChannelInfo info;
    if (SSL_GetChannelInfo(fd, &info, sizeof info) != SECSuccess) {
        return PR_GetError();
    }
    out->version = info.protocolVersion;
    out->suite = info.cipherSuite;
    out->group = (unsigned short)info.keaGroup;
    /* A resumption signs nothing; NSS reports the original handshake's scheme. */
    out->scheme = info.resumed ? 0 : (unsigned short)info.signatureScheme;
    out->resumed = info.resumed ? 1 : 0;
    out->peer_certs = 0;
    CERTCertList *chain = SSL_PeerCertificateChain(fd);
    if (chain) {
        for (CERTCertListNode *n = CERT_LIST_HEAD(chain); !CERT_LIST_END(n, chain);
             n = CERT_LIST_NEXT(n)) {
            out->peer_certs++;
        }
        CERT_DestroyCertList(chain);
    }
    return 0;
}

/* The protocol ALPN settled on: its length, or -1 for none. */
int tm_nss_alpn_selected(PRFileDesc *fd, unsigned char *buf, unsigned cap) {
    SSLNextProtoState state;
    unsigned len = 0;
    if (SSL_GetNextProto(fd, &state, buf, &len, cap) != SECSuccess ||
        (state != SSL_NEXT_PROTO_SELECTED && state != SSL_NEXT_PROTO_NEGOTIATED)) {
        return -1;
    }
    return (int)len;
}

/* Server: the host name the client sent as SNI: its length, or -1 for none. */
int tm_nss_sni(PRFileDesc *fd, char *buf, unsigned cap) {
    SECItem *name = SSL_GetNegotiatedHostInfo(fd);
    if (!name) {
        return -1;
    }
    int len = name->len < cap ? (int)name->len : -1;
    if (len >= 0) {
        memcpy(buf, name->data, name->len);
    }
    SECITEM_FreeItem(name, PR_TRUE);
    return len;
}

/* NSS's AEAD alone, as its TLS 1.3 record layer calls it (lib/ssl/tls13con.c, tls13_AEAD):
 * PK11_AEADOp on a message context per direction, keyed once. */
typedef struct tm_nss_aead {
    PK11SymKey *key;
    PK11Context *seal, *open;
} tm_nss_aead;

void tm_nss_aead_free(tm_nss_aead *a) {
    if (!a) {
        return;
    }
    if (a->seal) {
        PK11_DestroyContext(a->seal, PR_TRUE);
    }
    if (a->open) {
        PK11_DestroyContext(a->open, PR_TRUE);
    }
    if (a->key) {
        PK11_FreeSymKey(a->key);
    }
    PORT_Free(a);
}

/* which: 0 AES-128-GCM, 1 AES-256-GCM, 2 ChaCha20-Poly1305; `key` holds at least 32 bytes. */
tm_nss_aead *tm_nss_aead_new(int which, const unsigned char *key) {
    CK_MECHANISM_TYPE mech = which == 2 ? CKM_CHACHA20_POLY1305 : CKM_AES_GCM;
    unsigned len = which == 0 ? 16 : 32;
    tm_nss_aead *a = PORT_ZNew(tm_nss_aead);
    PK11SlotInfo *slot = PK11_GetInternalSlot();
    if (!a || !slot) {
        goto fail;
    }
    SECItem k = {siBuffer, (unsigned char *)key, len};
    a->key = PK11_ImportSymKeyWithFlags(slot, mech, PK11_OriginUnwrap, CKA_FLAGS_ONLY, &k,
                                        CKF_ENCRYPT | CKF_DECRYPT, PR_FALSE, NULL);
    SECItem none = {siBuffer, NULL, 0};
    if (!a->key ||
        !(a->seal = PK11_CreateContextBySymKey(mech, CKA_NSS_MESSAGE | CKA_ENCRYPT, a->key, &none)) ||
        !(a->open = PK11_CreateContextBySymKey(mech, CKA_NSS_MESSAGE | CKA_DECRYPT, a->key, &none))) {
        goto fail;
    }
    PK11_FreeSlot(slot);
    return a;
fail:
    if (slot) {
        PK11_FreeSlot(slot);
    }
    tm_nss_aead_free(a);
    return NULL;
}

/* Seals `in` into `out` followed by the 16-byte tag, or opens `in` (tag last) into `out`;
 * `*n` is then the bytes written. 0 or the NSS error. */
int tm_nss_aead_run(tm_nss_aead *a, int seal, const unsigned char *nonce,
                    const unsigned char *aad, const unsigned char *in, size_t in_len,
                    unsigned char *out, size_t cap, size_t *n) {
    int written = 0;
    SECStatus rv;
    if (seal) {
        if (cap < in_len + 16) {
            return SEC_ERROR_OUTPUT_LEN;
        }
        rv = PK11_AEADOp(a->seal, CKG_NO_GENERATE, 0, (unsigned char *)nonce, 12, aad, 5, out,
                         &written, (int)in_len, out + in_len, 16, in, (int)in_len);
        *n = (size_t)written + 16;
    } else {
        if (in_len < 16 || cap < in_len - 16) {
            return SEC_ERROR_INPUT_LEN;
        }
        rv = PK11_AEADOp(a->open, CKG_NO_GENERATE, 0, (unsigned char *)nonce, 12, aad, 5, out,
                         &written, (int)cap, (unsigned char *)in + in_len - 16, 16, in,
                         (int)in_len - 16);
        *n = (size_t)written;
    }
    return rv == SECSuccess ? 0 : PR_GetError();
}

/* The allocator NSS's own code calls, for the check of which heap its blocks land in. */
void *tm_nss_alloc(size_t n) { return PORT_Alloc(n); }
void tm_nss_free(void *p) { PORT_Free(p); }
