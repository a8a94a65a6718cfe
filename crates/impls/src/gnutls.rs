//! GnuTLS, Debian's system TLS library (`libgnutls28-dev`), through its C API declared below.
//! It exports no libssl ABI, so it shares the main driver with rustls, s2n-tls and the system
//! OpenSSL.
//!
//! Each session pins one version, suite, group and signature scheme with a priority string
//! that starts from `NONE`; the BoGo shim's open configurations start from GnuTLS's defaults
//! (`NORMAL`) instead. Records move through the harness's `MemIo` by GnuTLS's push and
//! pull callbacks. TLS 1.2 session-id resumption needs a server cache, which GnuTLS leaves to
//! the application: the factory keeps one in memory. A TLS 1.3 server sends exactly one ticket
//! per connection, as the other libraries are set to.

use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void, CStr, CString};
use std::ptr;
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail, Result};
use tlsmatrix_harness::aead;
use tlsmatrix_harness::endpoint::{
    EndpointConfig, EndpointFactory, OpenPolicy, PeerClosed, TlsEndpoint, TlsLibrary,
};
use tlsmatrix_harness::memio::MemIo;
use tlsmatrix_harness::negotiated::Negotiated;
use tlsmatrix_model::codes;
use tlsmatrix_model::scenario::{Aead, Group, Resumption, SigAlg, Version};
use tlsmatrix_model::side::Side;

/// The part of `<gnutls/gnutls.h>` (3.7) this adapter calls, with the constants it needs.
#[allow(non_camel_case_types)]
mod ffi;
/// GnuTLS's QUIC stack: ngtcp2 with its GnuTLS crypto layer.
mod ngtcp2;

fn error_text(code: c_int) -> String {
    // SAFETY: gnutls_strerror returns a static string for any code.
    unsafe { CStr::from_ptr(ffi::gnutls_strerror(code)) }
        .to_string_lossy()
        .into_owned()
}

fn check(code: c_int, what: &str) -> Result<c_int> {
    if code < 0 {
        bail!("GnuTLS: {what}: {}", error_text(code));
    }
    Ok(code)
}

fn datum(bytes: &[u8]) -> ffi::datum {
    ffi::datum {
        data: bytes.as_ptr().cast_mut(),
        size: c_uint::try_from(bytes.len()).expect("below 4 GiB"),
    }
}

/// Each AEAD as GnuTLS names it: its cipher enum and its priority-string name. Read both
/// ways: to configure a session or a cipher, and to read back what a session negotiated.
const CIPHERS: [(Aead, c_int, &str); 3] = [
    (Aead::Aes128Gcm, ffi::CIPHER_AES_128_GCM, "AES-128-GCM"),
    (Aead::Aes256Gcm, ffi::CIPHER_AES_256_GCM, "AES-256-GCM"),
    (
        Aead::Chacha20Poly1305,
        ffi::CIPHER_CHACHA20_POLY1305,
        "CHACHA20-POLY1305",
    ),
];

/// Each group GnuTLS has here, likewise (it has no ML-KEM group).
const GROUPS: [(Group, c_int, &str); 3] = [
    (Group::X25519, ffi::GROUP_X25519, "+GROUP-X25519"),
    (Group::P256, ffi::GROUP_SECP256R1, "+GROUP-SECP256R1"),
    (Group::P384, ffi::GROUP_SECP384R1, "+GROUP-SECP384R1"),
];

fn cipher_of(aead: Aead) -> (c_int, &'static str) {
    let (_, code, name) = CIPHERS
        .iter()
        .find(|(a, ..)| *a == aead)
        .expect("every AEAD is listed");
    (*code, name)
}

/// Priority-string names of the scenario's axes.
fn suite_items(version: Version, aead: Aead, sig: SigAlg) -> String {
    let (_, cipher) = cipher_of(aead);
    let kx = match (version, sig.is_rsa()) {
        (Version::Tls13, _) => "",
        (Version::Tls12, true) => ":+ECDHE-RSA",
        (Version::Tls12, false) => ":+ECDHE-ECDSA",
    };
    format!("+{cipher}:+AEAD{kx}")
}

/// The priority-string items of `groups`, in order; GnuTLS here has no ML-KEM group.
fn group_items(groups: &[Group]) -> Result<Vec<&'static str>, String> {
    groups
        .iter()
        .map(|g| {
            GROUPS
                .iter()
                .find(|(group, ..)| group == g)
                .map(|(.., name)| *name)
                .ok_or_else(|| format!("GnuTLS {} has no ML-KEM", library_version()))
        })
        .collect()
}

/// The handshake signature scheme, under both of GnuTLS's names where it has two (the TLS 1.2
/// ECDSA one, not bound to a curve, and the TLS 1.3 one).
fn sign_items(sig: SigAlg) -> &'static str {
    match sig {
        SigAlg::EcdsaP256 => "+SIGN-ECDSA-SECP256R1-SHA256:+SIGN-ECDSA-SHA256",
        SigAlg::EcdsaP384 => "+SIGN-ECDSA-SECP384R1-SHA384:+SIGN-ECDSA-SHA384",
        SigAlg::Rsa2048 | SigAlg::Rsa3072 => "+SIGN-RSA-PSS-RSAE-SHA256",
        SigAlg::Ed25519 => "+SIGN-EdDSA-Ed25519",
        // GnuTLS 3.8.10's names; `supports` refuses ML-DSA on the releases without them.
        SigAlg::MlDsa44 => "+SIGN-MLDSA44",
        SigAlg::MlDsa65 => "+SIGN-MLDSA65",
        SigAlg::MlDsa87 => "+SIGN-MLDSA87",
    }
}

/// An open configuration's priority string (the BoGo shim): GnuTLS's defaults (`NORMAL`)
/// within the allowed versions, and the runner's groups, in its order, when it names any.
fn open_priority(open: &OpenPolicy, groups: &[Group]) -> Result<String, String> {
    let mut p = String::from("NORMAL:-VERS-ALL");
    // Newest first: the order is the client's preference in supported_versions.
    for v in open.versions().into_iter().rev() {
        p.push_str(match v {
            Version::Tls12 => ":+VERS-TLS1.2",
            Version::Tls13 => ":+VERS-TLS1.3",
        });
    }
    if !groups.is_empty() {
        p.push_str(":-GROUP-ALL:");
        p.push_str(&group_items(groups)?.join(":"));
    }
    Ok(p)
}

/// One side's priority string: exactly the scenario's version, suite, groups and scheme.
fn priority(cfg: &EndpointConfig, side: Side) -> Result<String, String> {
    if let Some(open) = &cfg.open {
        return open_priority(open, &cfg.groups);
    }
    let version = match cfg.version {
        Version::Tls12 => "+VERS-TLS1.2",
        Version::Tls13 => "+VERS-TLS1.3",
    };
    let groups = group_items(&cfg.groups_for(side))?;
    // A TLS 1.3 server's CertificateRequest lists the schemes a client's certificates may
    // be signed with too (no signature_algorithms_cert of its own), and a GnuTLS client sends
    // no certificate whose CA signature is missing there: the test CA signs RSA certificates
    // with rsa_pkcs1_sha256, which TLS 1.3 forbids in the handshake itself, so listing it
    // changes no negotiated scheme.
    let cert_sign = if side == Side::Server
        && cfg.require_client_cert
        && cfg.version == Version::Tls13
        && cfg.sig.is_rsa()
    {
        ":+SIGN-RSA-SHA256"
    } else {
        ""
    };
    Ok(format!(
        "NONE:{version}:{}:+COMP-NULL:+CTYPE-X509:{}:{}{cert_sign}",
        suite_items(cfg.version, cfg.aead, cfg.sig),
        groups.join(":"),
        sign_items(cfg.sig)
    ))
}

fn library_version() -> String {
    // SAFETY: with a null argument gnutls_check_version returns the static version string.
    unsafe { CStr::from_ptr(ffi::gnutls_check_version(ptr::null())) }
        .to_string_lossy()
        .into_owned()
}

pub struct GnutlsLibrary;

impl TlsLibrary for GnutlsLibrary {
    fn name(&self) -> &'static str {
        "gnutls"
    }

    fn version(&self) -> String {
        format!("GnuTLS {}", library_version())
    }

    /// GnuTLS exports no key-agreement call before 3.8.2, so the key exchange is timed
    /// through nettle, which its own key exchange calls (`csrc/gnutls_floor.c`).
    fn handshake_crypto(
        &self,
    ) -> Result<Box<dyn tlsmatrix_harness::floor::HandshakeCrypto>, String> {
        Ok(Box::new(crate::floor_glue::GlueCrypto {
            api: format!(
                "GnuTLS {} (gnutls_privkey_sign_data2, gnutls_pubkey_verify_data2, gnutls_hmac_fast) and nettle under it for the key exchange (curve25519_mul, ecc_point_mul)",
                library_version()
            ),
            // SAFETY: a static table.
            fns: unsafe { &*ffi::tm_gnutls_floor() },
            last_error: || {
                // SAFETY: reads a thread-local code.
                error_text(unsafe { ffi::tm_gnutls_floor_error() })
            },
            version: format!("GnuTLS {}", library_version()),
        }))
    }

    /// GnuTLS's AEAD alone, through its crypto API (`gnutls_aead_cipher_*`, on nettle), as
    /// its record layer calls it: for the ceiling its bulk figures are read against.
    fn record_aead(&self, which: Aead) -> Result<tlsmatrix_harness::aead::LibraryAead, String> {
        let (cipher, _) = cipher_of(which);
        let key = &aead::KEY[..aead::key_len(which)];
        let mut h = ptr::null_mut();
        // SAFETY: out-pointer to a local; GnuTLS copies the key.
        let rc = unsafe { ffi::gnutls_aead_cipher_init(&mut h, cipher, &datum(key)) };
        if rc < 0 {
            return Err(format!("GnuTLS refused a {which} key: {}", error_text(rc)));
        }
        Ok(tlsmatrix_harness::aead::LibraryAead {
            api: "GnuTLS gnutls_aead_cipher_encrypt/decrypt".into(),
            aead: Box::new(aead::OutOfPlace::new(AeadHandle(h))),
        })
    }

    /// GnuTLS allocates through `gnutls_malloc`, which is the C allocator unless an
    /// application replaces it.
    fn c_allocation(&self) -> Option<tlsmatrix_harness::endpoint::CAllocation> {
        unsafe fn alloc(n: usize) -> *mut c_void {
            (ffi::gnutls_malloc)(n)
        }
        unsafe fn free(p: *mut c_void) {
            (ffi::gnutls_free)(p)
        }
        Some(tlsmatrix_harness::endpoint::CAllocation {
            call: "gnutls_malloc",
            alloc,
            free,
        })
    }

    fn supports(&self, cfg: &EndpointConfig) -> Result<(), String> {
        if cfg.offers_post_quantum() {
            return Err(format!(
                "GnuTLS {} has no ML-KEM (GnuTLS added X25519MLKEM768 in 3.8.9)",
                library_version()
            ));
        }
        if cfg.sig.is_mldsa() {
            return Err(format!(
                "GnuTLS {} has no ML-DSA certificates or signature schemes (GnuTLS added ML-DSA in 3.8.10)",
                library_version()
            ));
        }
        if cfg.version == Version::Tls12 && cfg.sig == SigAlg::Ed25519 && cfg.require_client_cert {
            // RFC 8422 (5.5) has an Ed25519 client sign under ecdsa_sign; GnuTLS's TLS 1.2
            // CertificateRequest lists no certificate type for it, and its client sends
            // none for such a request.
            return Err(format!(
                "GnuTLS {} has no TLS 1.2 certificate type for an Ed25519 client certificate",
                library_version()
            ));
        }
        Ok(())
    }

    fn factory(&self, side: Side, cfg: &EndpointConfig) -> Result<Box<dyn EndpointFactory>> {
        Ok(Box::new(self.gnutls_factory(side, cfg, "")?))
    }

    fn quic_stack(&self) -> Result<String, String> {
        Ok(ngtcp2::stack())
    }

    /// ngtcp2 resumes through the TCP adapter's sessions: the server's ticket key, the
    /// client's newest session data set on its next session.
    fn quic_resumes(&self) -> Result<(), String> {
        Ok(())
    }

    fn quic_factory(
        &self,
        side: Side,
        cfg: &EndpointConfig,
    ) -> Result<Box<dyn tlsmatrix_harness::quic::QuicEndpointFactory>> {
        self.ngtcp2_factory(side, cfg)
    }
}

impl GnutlsLibrary {
    /// `side`'s sessions for `cfg`, their priority string ending in `priority_tail`.
    fn gnutls_factory(
        &self,
        side: Side,
        cfg: &EndpointConfig,
        priority_tail: &str,
    ) -> Result<GnutlsFactory> {
        self.supports(cfg).map_err(|e| anyhow!(e))?;
        let priority = CString::new(priority(cfg, side).map_err(|e| anyhow!(e))? + priority_tail)?;
        let cred = Credentials::new()?;
        // An open configuration verifies no chain (see `OpenPolicy`): no trust is loaded.
        let open = cfg.open.is_some();
        match side {
            Side::Client => {
                if !open {
                    cred.trust(&cfg.certs.ca_pem)?;
                }
                if cfg.client_cert {
                    cred.own(&cfg.certs.client_chain_pem, &cfg.certs.client_key_pem)?;
                }
            }
            Side::Server => {
                cred.own(cfg.server_chain_pem(), &cfg.certs.key_pem)?;
                if cfg.require_client_cert && !open {
                    cred.trust(&cfg.certs.ca_pem)?;
                }
            }
        }
        let ticket_key = match (side, cfg.resumption) {
            (Side::Server, Resumption::Ticket) => Some(TicketKey::new()?),
            _ => None,
        };
        let client_cert = match &cfg.open {
            _ if cfg.require_client_cert => ClientCert::Require { verify: !open },
            Some(o) if o.request_client_cert => ClientCert::Request,
            _ => ClientCert::None,
        };
        // SNI as every client here sends it; an open configuration sends what it was told.
        let sni = match &cfg.open {
            Some(o) => o.sni.clone(),
            None => Some(cfg.server_name.clone()),
        };
        Ok(GnutlsFactory {
            side,
            cred,
            priority,
            server_name: CString::new(cfg.server_name.as_str())?,
            sni: sni.map(CString::new).transpose()?,
            verify_server: !open,
            client_cert,
            // The shim's server resumes by whichever means the runner tries.
            session_cache: open || cfg.resumption == Resumption::SessionId,
            alpn: cfg.alpn.clone(),
            resumption: cfg.resumption,
            ticket_key,
            cache: Arc::new(SessionCache::default()),
            session: Arc::default(),
        })
    }
}

/// A credentials object: our certificate and key, the trusted CA, or both.
struct Credentials(ffi::credentials);

// SAFETY: GnuTLS credentials are read-only once set up and may be shared across threads.
unsafe impl Send for Credentials {}
unsafe impl Sync for Credentials {}

impl Credentials {
    fn new() -> Result<Credentials> {
        let mut c = ptr::null_mut();
        // SAFETY: out-pointer to a local.
        check(
            unsafe { ffi::gnutls_certificate_allocate_credentials(&mut c) },
            "allocating credentials",
        )?;
        Ok(Credentials(c))
    }

    fn own(&self, chain_pem: &str, key_pem: &str) -> Result<()> {
        let (cert, key) = (datum(chain_pem.as_bytes()), datum(key_pem.as_bytes()));
        // SAFETY: the datums point at live strings; GnuTLS copies what it keeps.
        check(
            unsafe {
                ffi::gnutls_certificate_set_x509_key_mem2(
                    self.0,
                    &cert,
                    &key,
                    ffi::X509_FMT_PEM,
                    ptr::null(),
                    0,
                )
            },
            "loading our certificate chain and key",
        )?;
        Ok(())
    }

    fn trust(&self, ca_pem: &str) -> Result<()> {
        let ca = datum(ca_pem.as_bytes());
        // SAFETY: as in `own`.
        let n = check(
            unsafe { ffi::gnutls_certificate_set_x509_trust_mem(self.0, &ca, ffi::X509_FMT_PEM) },
            "loading the trusted CA",
        )?;
        if n == 0 {
            bail!("GnuTLS: the CA file holds no certificate");
        }
        Ok(())
    }
}

impl Drop for Credentials {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`; sessions using it hold the factory alive.
        unsafe { ffi::gnutls_certificate_free_credentials(self.0) }
    }
}

/// A server's ticket encryption key, made once per factory.
struct TicketKey(ffi::datum);

// SAFETY: the key is only read once made.
unsafe impl Send for TicketKey {}
unsafe impl Sync for TicketKey {}

impl TicketKey {
    fn new() -> Result<TicketKey> {
        let mut key = ffi::datum {
            data: ptr::null_mut(),
            size: 0,
        };
        // SAFETY: out-pointer to a local.
        check(
            unsafe { ffi::gnutls_session_ticket_key_generate(&mut key) },
            "making a ticket key",
        )?;
        Ok(TicketKey(key))
    }
}

impl Drop for TicketKey {
    fn drop(&mut self) {
        // SAFETY: allocated by GnuTLS in `new`, wiped and freed once.
        unsafe {
            ffi::gnutls_memset(self.0.data.cast(), 0, self.0.size as usize);
            free_datum(&mut self.0);
        }
    }
}

/// Frees what GnuTLS allocated for a datum (its `gnutls_free_datum` is not exported).
unsafe fn free_datum(d: &mut ffi::datum) {
    if !d.data.is_null() {
        (ffi::gnutls_free)(d.data.cast());
    }
    d.data = ptr::null_mut();
    d.size = 0;
}

/// A TLS 1.2 server's session cache (GnuTLS leaves it to the application): session id to
/// session data.
#[derive(Default)]
struct SessionCache(Mutex<HashMap<Vec<u8>, Vec<u8>>>);

unsafe fn datum_bytes(d: &ffi::datum) -> &[u8] {
    if d.data.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(d.data, d.size as usize)
    }
}

unsafe extern "C" fn cache_store(ptr: *mut c_void, key: ffi::datum, data: ffi::datum) -> c_int {
    let cache = &*(ptr as *const SessionCache);
    let mut map = cache.0.lock().unwrap_or_else(|e| e.into_inner());
    map.insert(datum_bytes(&key).to_vec(), datum_bytes(&data).to_vec());
    0
}

unsafe extern "C" fn cache_retrieve(ptr: *mut c_void, key: ffi::datum) -> ffi::datum {
    let cache = &*(ptr as *const SessionCache);
    let map = cache.0.lock().unwrap_or_else(|e| e.into_inner());
    let none = ffi::datum {
        data: ptr::null_mut(),
        size: 0,
    };
    let Some(data) = map.get(datum_bytes(&key)) else {
        return none;
    };
    // GnuTLS frees what it gets back with gnutls_free, so it must come from gnutls_malloc.
    let copy = (ffi::gnutls_malloc)(data.len()).cast::<u8>();
    if copy.is_null() {
        return none;
    }
    ptr::copy_nonoverlapping(data.as_ptr(), copy, data.len());
    ffi::datum {
        data: copy,
        size: data.len() as c_uint,
    }
}

unsafe extern "C" fn cache_remove(ptr: *mut c_void, key: ffi::datum) -> c_int {
    let cache = &*(ptr as *const SessionCache);
    let mut map = cache.0.lock().unwrap_or_else(|e| e.into_inner());
    map.remove(datum_bytes(&key));
    0
}

type SessionSlot = Arc<Mutex<Option<Vec<u8>>>>;

/// What a server asks of the client's certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientCert {
    None,
    Request,
    /// One is required, and verified against the trusted CA unless the configuration is open.
    Require {
        verify: bool,
    },
}

struct GnutlsFactory {
    side: Side,
    cred: Credentials,
    priority: CString,
    /// The name a client verifies the server's certificate for.
    server_name: CString,
    /// The name a client sends as SNI, if any.
    sni: Option<CString>,
    verify_server: bool,
    client_cert: ClientCert,
    /// A server keeps a session-id cache (TLS 1.2 resumption without tickets).
    session_cache: bool,
    alpn: Vec<String>,
    resumption: Resumption,
    ticket_key: Option<TicketKey>,
    cache: Arc<SessionCache>,
    /// Client: the newest session, for the next connection to resume.
    session: SessionSlot,
}

impl EndpointFactory for GnutlsFactory {
    /// A server's credentials, priority string and ticket key are read-only once set up, and
    /// GnuTLS lets sessions on many threads share such objects (its manual, "Thread
    /// safety"); the session-id cache is this adapter's own, behind a lock.
    fn shared(&self) -> Option<&(dyn EndpointFactory + Sync)> {
        (self.side == Side::Server).then_some(self as &(dyn EndpointFactory + Sync))
    }

    fn endpoint(&self, io: MemIo) -> Result<Box<dyn TlsEndpoint>> {
        let session = self.session(0)?;
        let mut ep = Box::new(GnutlsEndpoint {
            session,
            io: Box::new(Transport { io, starved: false }),
            side: self.side,
            done: false,
            send_ticket: self.ticket_key.is_some(),
            slot: (self.side == Side::Client && self.resumption != Resumption::Full)
                .then(|| self.session.clone()),
            _cache: self.cache.clone(),
        });
        // SAFETY: the transport pointer is the endpoint's boxed MemIo, which lives as long
        // as the session it owns.
        unsafe {
            ffi::gnutls_transport_set_ptr(ep.session.0, (&mut *ep.io as *mut Transport).cast());
            ffi::gnutls_transport_set_push_function(ep.session.0, push);
            ffi::gnutls_transport_set_pull_function(ep.session.0, pull);
        }
        Ok(ep)
    }
}

/// A session this adapter made, freed when dropped.
struct Session(ffi::session);

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: the session was made by gnutls_init and is freed once.
        unsafe { ffi::gnutls_deinit(self.0) }
    }
}

impl GnutlsFactory {
    /// A session for one connection, set up as the factory says (priority string,
    /// credentials, names, client certificates, tickets, cache, ALPN) with `gnutls_init`'s
    /// `extra_flags`; its transport is the caller's to set.
    fn session(&self, extra_flags: c_uint) -> Result<Session> {
        let mut flags = ffi::NONBLOCK
            | extra_flags
            | match self.side {
                // One key share, for the first group, as every other client here sends
                // (GnuTLS's default adds one for a second kind of group, which would answer
                // a HelloRetryRequest scenario's decoy before any retry).
                Side::Client => ffi::CLIENT | ffi::KEY_SHARE_TOP,
                Side::Server => ffi::SERVER | ffi::NO_AUTO_SEND_TICKET,
            };
        if self.resumption != Resumption::Ticket {
            flags |= ffi::NO_TICKETS;
        }
        let mut s = ptr::null_mut();
        // SAFETY: out-pointer to a local.
        check(unsafe { ffi::gnutls_init(&mut s, flags) }, "gnutls_init")?;
        // From here the guard owns the session and frees it on every path.
        let session = Session(s);
        let mut err_pos = ptr::null();
        // SAFETY: every pointer below is live for the session's life: the priority string
        // and server name are the factory's, which outlives its endpoints in the harness;
        // the credentials likewise.
        unsafe {
            check(
                ffi::gnutls_priority_set_direct(s, self.priority.as_ptr(), &mut err_pos),
                &format!("the priority string {:?}", self.priority),
            )?;
            check(
                ffi::gnutls_credentials_set(s, ffi::CRD_CERTIFICATE, self.cred.0),
                "setting credentials",
            )?;
            match self.side {
                Side::Client => {
                    if let Some(sni) = &self.sni {
                        let name = sni.as_bytes();
                        check(
                            ffi::gnutls_server_name_set(
                                s,
                                ffi::NAME_DNS,
                                name.as_ptr().cast(),
                                name.len(),
                            ),
                            "setting SNI",
                        )?;
                    }
                    if self.verify_server {
                        ffi::gnutls_session_set_verify_cert(s, self.server_name.as_ptr(), 0);
                    }
                    let kept = (self.resumption != Resumption::Full)
                        .then(|| {
                            self.session
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .clone()
                        })
                        .flatten();
                    if let Some(data) = kept {
                        check(
                            ffi::gnutls_session_set_data(s, data.as_ptr().cast(), data.len()),
                            "setting the session to resume",
                        )?;
                    }
                }
                Side::Server => {
                    match self.client_cert {
                        ClientCert::None => {}
                        ClientCert::Request => {
                            ffi::gnutls_certificate_server_set_request(s, ffi::CERT_REQUEST)
                        }
                        ClientCert::Require { verify } => {
                            ffi::gnutls_certificate_server_set_request(s, ffi::CERT_REQUIRE);
                            if verify {
                                ffi::gnutls_session_set_verify_cert(s, ptr::null(), 0);
                            }
                        }
                    }
                    if let Some(key) = &self.ticket_key {
                        check(
                            ffi::gnutls_session_ticket_enable_server(s, &key.0),
                            "enabling tickets",
                        )?;
                    }
                    if self.session_cache {
                        ffi::gnutls_db_set_ptr(s, Arc::as_ptr(&self.cache).cast_mut().cast());
                        ffi::gnutls_db_set_store_function(s, cache_store);
                        ffi::gnutls_db_set_retrieve_function(s, cache_retrieve);
                        ffi::gnutls_db_set_remove_function(s, cache_remove);
                    }
                }
            }
            if !self.alpn.is_empty() {
                let protos: Vec<ffi::datum> =
                    self.alpn.iter().map(|p| datum(p.as_bytes())).collect();
                let flags = match self.side {
                    Side::Client => 0,
                    // A server with no protocol in common refuses (no_application_protocol).
                    Side::Server => ffi::ALPN_MANDATORY | ffi::ALPN_SERVER_PRECEDENCE,
                };
                check(
                    ffi::gnutls_alpn_set_protocols(
                        s,
                        protos.as_ptr(),
                        protos.len() as c_uint,
                        flags,
                    ),
                    "setting ALPN",
                )?;
            }
        }
        Ok(session)
    }
}

/// What GnuTLS reads and writes through: the harness's transport, and whether the last read
/// found it empty. GnuTLS reads ahead into a buffer of its own, so "no application data" from
/// it means "wait for the peer" only once it has asked the transport and found nothing.
struct Transport {
    io: MemIo,
    starved: bool,
}

unsafe extern "C" fn push(ptr: *mut c_void, data: *const c_void, len: usize) -> isize {
    use std::io::Write;
    let io = &mut (*(ptr as *mut Transport)).io;
    let bytes = std::slice::from_raw_parts(data.cast::<u8>(), len);
    match io.write(bytes) {
        Ok(n) => n as isize,
        Err(_) => -1,
    }
}

unsafe extern "C" fn pull(ptr: *mut c_void, data: *mut c_void, len: usize) -> isize {
    use std::io::Read;
    let t = &mut *(ptr as *mut Transport);
    let buf = std::slice::from_raw_parts_mut(data.cast::<u8>(), len);
    match t.io.read(buf) {
        Ok(n) => n as isize,
        Err(_) => {
            t.starved = true;
            // "Not yet": GnuTLS reads the transport's errno, which defaults to the C errno.
            *libc::__errno_location() = libc::EAGAIN;
            -1
        }
    }
}

/// How often a handshake step or a read calls GnuTLS again while it reports "again" without
/// having found the transport empty: more than the records of any flight or post-handshake
/// message split a byte a record.
const MAX_CALLS_WITHOUT_READING: usize = 1 << 16;

struct GnutlsEndpoint {
    session: Session,
    /// Boxed so the pointer GnuTLS holds stays put when the endpoint moves.
    io: Box<Transport>,
    side: Side,
    done: bool,
    /// Server: send one TLS 1.3 ticket once the handshake is done.
    send_ticket: bool,
    slot: Option<SessionSlot>,
    /// The server cache the session's db callbacks point at, kept alive with it.
    _cache: Arc<SessionCache>,
}

impl Drop for GnutlsEndpoint {
    fn drop(&mut self) {
        // The client keeps its newest session for the next connection; read at the end, as a
        // TLS 1.3 ticket arrives after the handshake.
        if self.done {
            if let Some(slot) = &self.slot {
                self.session.keep_in(slot);
            }
        }
        // The session itself is freed when the field drops, after this.
    }
}

impl Session {
    /// Puts what a next connection needs to resume this one in a client's slot, where the
    /// session has it (a TLS 1.3 ticket arrives after the handshake, so this is read at the
    /// connection's end).
    fn keep_in(&self, slot: &SessionSlot) {
        let mut d = ffi::datum {
            data: ptr::null_mut(),
            size: 0,
        };
        // SAFETY: valid session; the datum is GnuTLS's to free.
        unsafe {
            if ffi::gnutls_session_get_data2(self.0, &mut d) == 0 {
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(datum_bytes(&d).to_vec());
                free_datum(&mut d);
            }
        }
    }
}

fn again(code: c_int) -> bool {
    code == ffi::E_AGAIN || code == ffi::E_INTERRUPTED
}

impl TlsEndpoint for GnutlsEndpoint {
    fn handshake_step(&mut self) -> Result<()> {
        if self.done {
            return Ok(());
        }
        // GnuTLS answers "again" after a record that does not complete a handshake message,
        // though the rest may already wait in the transport (a peer that splits messages into
        // many small records): ask again until it has found the transport empty. Bounded, in
        // case it never asks.
        let mut rc = ffi::E_AGAIN;
        for _ in 0..MAX_CALLS_WITHOUT_READING {
            self.io.starved = false;
            // SAFETY: valid session.
            rc = unsafe { ffi::gnutls_handshake(self.session.0) };
            if !again(rc) || self.io.starved {
                break;
            }
        }
        if again(rc) {
            return Ok(());
        }
        if rc < 0 {
            return Err(self.failure(rc, "handshake"));
        }
        self.done = true;
        if self.send_ticket && self.side == Side::Server {
            // SAFETY: valid session. TLS 1.2 tickets go inside the handshake; this sends the
            // TLS 1.3 one (a no-op before TLS 1.3).
            if unsafe { ffi::gnutls_protocol_get_version(self.session.0) } == ffi::TLS1_3 {
                check(
                    unsafe { ffi::gnutls_session_ticket_send(self.session.0, 1, 0) },
                    "sending a ticket",
                )?;
            }
        }
        Ok(())
    }

    fn is_handshake_complete(&self) -> bool {
        self.done
    }

    fn send(&mut self, data: &[u8]) -> Result<()> {
        let mut off = 0;
        while off < data.len() {
            // SAFETY: valid session and slice.
            let n = unsafe {
                ffi::gnutls_record_send(
                    self.session.0,
                    data[off..].as_ptr().cast(),
                    data.len() - off,
                )
            };
            if n < 0 {
                bail!("GnuTLS: sending: {}", error_text(n as c_int));
            }
            off += n as usize;
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut got = 0;
        // Calls that gave no data although GnuTLS did not find the transport empty: a
        // post-handshake message (a ticket) was processed, and records after it may already
        // sit in GnuTLS's own buffer, so it is asked again. Bounded, in case it never asks.
        let mut unstarved = 0;
        while got < buf.len() {
            self.io.starved = false;
            // SAFETY: valid session and slice.
            let n = unsafe {
                ffi::gnutls_record_recv(
                    self.session.0,
                    buf[got..].as_mut_ptr().cast(),
                    buf.len() - got,
                )
            };
            if n > 0 {
                got += n as usize;
            } else if n == 0 {
                if got == 0 {
                    return Err(PeerClosed.into());
                }
                break;
            } else if again(n as c_int) {
                unstarved += 1;
                if self.io.starved || unstarved > MAX_CALLS_WITHOUT_READING {
                    break;
                }
            } else {
                return Err(self.failure(n as c_int, "receiving"));
            }
        }
        Ok(got)
    }

    fn negotiated(&self) -> Negotiated {
        negotiated_of(self.session.0)
    }

    fn alpn(&self) -> Option<Vec<u8>> {
        alpn_of(self.session.0)
    }

    fn key_update(&mut self) -> Result<()> {
        // SAFETY: valid session.
        let rc = unsafe { ffi::gnutls_session_key_update(self.session.0, 0) };
        if again(rc) {
            return Ok(());
        }
        check(rc, "sending a KeyUpdate").map(drop)
    }

    fn sni(&self) -> Option<String> {
        let mut buf = [0u8; 256];
        let mut len = buf.len();
        let mut kind: c_uint = 0;
        // SAFETY: valid session; the buffer and its length are ours.
        let rc = unsafe {
            ffi::gnutls_server_name_get(
                self.session.0,
                buf.as_mut_ptr().cast(),
                &mut len,
                &mut kind,
                0,
            )
        };
        (rc == 0).then(|| {
            let name = &buf[..len.min(buf.len())];
            let name = name.split(|b| *b == 0).next().unwrap_or(name);
            String::from_utf8_lossy(name).into_owned()
        })
    }

    fn close(&mut self) -> Result<()> {
        // SAFETY: valid session.
        let rc = unsafe { ffi::gnutls_bye(self.session.0, ffi::SHUT_WR) };
        if again(rc) {
            return Ok(());
        }
        check(rc, "sending close_notify").map(drop)
    }
}

impl GnutlsEndpoint {
    /// The error for a failed call, after telling the peer: GnuTLS leaves the alert to the
    /// application (`gnutls_alert_send_appropriate`). A received alert is named with its
    /// number, as `gnutls-cli` prints it.
    fn failure(&mut self, code: c_int, what: &str) -> anyhow::Error {
        if code == ffi::E_FATAL_ALERT_RECEIVED {
            // SAFETY: valid session; the name is a static string or null.
            let (alert, name) = unsafe {
                let a = ffi::gnutls_alert_get(self.session.0);
                let n = ffi::gnutls_alert_get_name(a);
                let name = if n.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(n).to_string_lossy().into_owned()
                };
                (a, name)
            };
            return anyhow!("GnuTLS: {what}: received alert [{alert}]: {name}");
        }
        // SAFETY: valid session; the alert is queued into the transport's output.
        unsafe { ffi::gnutls_alert_send_appropriate(self.session.0, code) };
        anyhow!("GnuTLS: {what}: {}", error_text(code))
    }
}

/// What `s`'s handshake negotiated, as GnuTLS reports it.
fn negotiated_of(s: ffi::session) -> Negotiated {
    // SAFETY: valid session; these read what the handshake settled.
    let (version, cipher, kx, group, sign, resumed) = unsafe {
        (
            ffi::gnutls_protocol_get_version(s),
            ffi::gnutls_cipher_get(s),
            ffi::gnutls_kx_get(s),
            ffi::gnutls_group_get(s),
            ffi::gnutls_sign_algorithm_get(s),
            ffi::gnutls_session_is_resumed(s) != 0,
        )
    };
    let version = match version {
        ffi::TLS1_2 => Some(Version::Tls12),
        ffi::TLS1_3 => Some(Version::Tls13),
        _ => None,
    };
    let aead = CIPHERS
        .iter()
        .find(|(_, c, _)| *c == cipher)
        .map(|(a, ..)| *a);
    // A TLS 1.2 suite also names its key exchange's signature kind; any key of that kind
    // gives the same code.
    let sig_kind = if kx == ffi::KX_ECDHE_RSA {
        SigAlg::Rsa2048
    } else {
        SigAlg::EcdsaP256
    };
    let group = GROUPS
        .iter()
        .find(|(_, g, _)| *g == group)
        .map(|(g, ..)| *g);
    let scheme = match sign {
        ffi::SIGN_ECDSA_SHA256 | ffi::SIGN_ECDSA_SECP256R1_SHA256 => Some(SigAlg::EcdsaP256),
        ffi::SIGN_ECDSA_SHA384 | ffi::SIGN_ECDSA_SECP384R1_SHA384 => Some(SigAlg::EcdsaP384),
        ffi::SIGN_RSA_PSS_RSAE_SHA256 => Some(SigAlg::Rsa2048),
        ffi::SIGN_EDDSA_ED25519 => Some(SigAlg::Ed25519),
        _ => None,
    };
    Negotiated {
        version: version.map(codes::version_code),
        cipher_suite: version
            .zip(aead)
            .map(|(v, a)| codes::cipher_suite_code(v, a, sig_kind)),
        group: group.map(codes::group_code),
        signature_scheme: scheme.map(codes::signature_scheme_code),
        resumed: Some(resumed),
        peer_certs: Some(peer_certs_of(s)),
    }
}

/// The ALPN protocol `s` agreed on, if any.
fn alpn_of(s: ffi::session) -> Option<Vec<u8>> {
    let mut d = ffi::datum {
        data: ptr::null_mut(),
        size: 0,
    };
    // SAFETY: valid session; the datum points into the session.
    unsafe {
        (ffi::gnutls_alpn_get_selected_protocol(s, &mut d) == 0).then(|| datum_bytes(&d).to_vec())
    }
}

/// How many certificates the peer of `s` sent.
fn peer_certs_of(s: ffi::session) -> usize {
    let mut n: c_uint = 0;
    // SAFETY: valid session; GnuTLS owns the returned list.
    let list = unsafe { ffi::gnutls_certificate_get_peers(s, &mut n) };
    if list.is_null() {
        0
    } else {
        n as usize
    }
}

/// A keyed `gnutls_aead_cipher` handle. Its calls take separate input and output buffers,
/// so records go through `aead::OutOfPlace`.
struct AeadHandle(*mut c_void);

// SAFETY: the handle is used by one thread at a time (the sampler owns it).
unsafe impl Send for AeadHandle {}

impl Drop for AeadHandle {
    fn drop(&mut self) {
        // SAFETY: made by gnutls_aead_cipher_init, freed once.
        unsafe { ffi::gnutls_aead_cipher_deinit(self.0) }
    }
}

impl aead::OutOfPlaceCall for AeadHandle {
    fn call(
        &mut self,
        seal: bool,
        nonce: &[u8; 12],
        aad: &[u8; 5],
        input: &[u8],
        out: &mut [u8],
    ) -> Result<usize> {
        let (call, what) = if seal {
            (ffi::gnutls_aead_cipher_encrypt as AeadCall, "sealing")
        } else {
            (
                ffi::gnutls_aead_cipher_decrypt as AeadCall,
                "opening (the tag did not verify)",
            )
        };
        let mut n = out.len();
        // SAFETY: a live handle; every pointer and length is a live buffer of ours, and the
        // output has room for the input and a tag.
        let rc = unsafe {
            call(
                self.0,
                nonce.as_ptr().cast(),
                nonce.len(),
                aad.as_ptr().cast(),
                aad.len(),
                16,
                input.as_ptr().cast(),
                input.len(),
                out.as_mut_ptr().cast(),
                &mut n,
            )
        };
        check(rc, what)?;
        Ok(n)
    }
}

/// `gnutls_aead_cipher_encrypt` and `_decrypt`, which share one signature.
type AeadCall = unsafe extern "C" fn(
    *mut c_void,
    *const c_void,
    usize,
    *const c_void,
    usize,
    usize,
    *const c_void,
    usize,
    *mut c_void,
    *mut usize,
) -> c_int;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_priority_string_pins_every_axis() {
        let s = suite_items(Version::Tls12, Aead::Aes256Gcm, SigAlg::Rsa3072);
        assert_eq!(s, "+AES-256-GCM:+AEAD:+ECDHE-RSA");
        let s = suite_items(Version::Tls13, Aead::Chacha20Poly1305, SigAlg::EcdsaP256);
        assert_eq!(s, "+CHACHA20-POLY1305:+AEAD");
        assert!(group_items(&[Group::X25519Mlkem768]).is_err());
    }

    /// GnuTLS's AEAD seals what it opens back, and refuses a record whose tag was touched.
    #[test]
    fn its_own_aead_round_trips_and_checks_the_tag() {
        for which in [Aead::Aes128Gcm, Aead::Aes256Gcm, Aead::Chacha20Poly1305] {
            let mut a = GnutlsLibrary.record_aead(which).unwrap().aead;
            let plain: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
            let mut buf = plain.clone();
            a.seal(7, &[23, 3, 3, 0, 0], &mut buf).unwrap();
            assert_eq!(buf.len(), plain.len() + 16);
            assert_ne!(buf[..plain.len()], plain[..]);
            let mut bad = buf.clone();
            bad[3] ^= 1;
            assert!(a.open(7, &[23, 3, 3, 0, 0], &mut bad).is_err(), "{which}");
            a.open(7, &[23, 3, 3, 0, 0], &mut buf).unwrap();
            assert_eq!(buf, plain, "{which}");
        }
    }

    #[test]
    fn the_version_is_read_from_the_library() {
        let v = GnutlsLibrary.version();
        assert!(v.starts_with("GnuTLS 3."), "{v}");
    }
}
