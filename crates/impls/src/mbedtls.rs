//! Mbed TLS 3.6 (the LTS line), built from source with its default configuration
//! (`scripts/mbedtls-build`), through its C API declared below and the few helpers of
//! `csrc/mbedtls_glue.c` (its contexts are structs sized by the build, and some calls are
//! static inline). It exports no `SSL_*` symbols, but its driver is one of its own
//! (`libssl-drivers/mbedtls`) so the main driver's build needs no CMake step.
//!
//! Each configuration pins one version, suite, group list and signature scheme. Mbed TLS has
//! no call that reports the group, the signature scheme or whether a handshake resumed, so
//! the adapter reads them off the server's clear first flight as it crosses
//! ([`ServerFlight`]); TLS 1.3's signature scheme, which travels encrypted, is the one its
//! client offered alone, which Mbed TLS holds the server's CertificateVerify to (see
//! `signature_scheme`).

use std::ffi::{c_char, c_int, c_uchar, c_void, CStr, CString};
use std::sync::Arc;

use anyhow::{anyhow, bail, Result};
use tlsmatrix_harness::aead;
use tlsmatrix_harness::endpoint::{
    EndpointConfig, EndpointFactory, OpenPolicy, TlsEndpoint, TlsLibrary,
};
use tlsmatrix_harness::memio::MemIo;
use tlsmatrix_harness::negotiated::Negotiated;
use tlsmatrix_harness::witness::ServerFlight;
use tlsmatrix_model::codes;
use tlsmatrix_model::scenario::{Aead, Group, Resumption, SigAlg, Version};
use tlsmatrix_model::side::Side;

use crate::c_io;
use crate::c_session::{CSession, SessionSlot};
use crate::glue_aead::GlueAead;

/// The part of Mbed TLS 3.6's API this adapter calls, and the glue's helpers.
mod ffi {
    use std::ffi::{c_char, c_int, c_uchar, c_void};

    pub type Config = c_void;
    pub type Ssl = c_void;
    pub type Crt = c_void;
    pub type Pk = c_void;
    pub type Session = c_void;
    pub type Cache = c_void;
    pub type Ticket = c_void;
    pub type Send = unsafe extern "C" fn(*mut c_void, *const c_uchar, usize) -> c_int;
    pub type Recv = unsafe extern "C" fn(*mut c_void, *mut c_uchar, usize) -> c_int;
    pub type Verify = unsafe extern "C" fn(*mut c_void, *mut Crt, c_int, *mut u32) -> c_int;
    pub type Sni = unsafe extern "C" fn(*mut c_void, *mut Ssl, *const c_uchar, usize) -> c_int;

    pub const IS_CLIENT: c_int = 0;
    pub const IS_SERVER: c_int = 1;
    pub const VERIFY_NONE: c_int = 0;
    pub const VERIFY_OPTIONAL: c_int = 1;
    pub const VERIFY_REQUIRED: c_int = 2;
    pub const TICKETS_DISABLED: c_int = 0;
    pub const TICKETS_ENABLED: c_int = 1;
    pub const SIGNAL_NEW_SESSION_TICKETS_ENABLED: c_int = 1;
    pub const ERR_WANT_READ: c_int = -0x6900;
    pub const ERR_WANT_WRITE: c_int = -0x6880;
    pub const ERR_PEER_CLOSE_NOTIFY: c_int = -0x7880;
    pub const ERR_RECEIVED_NEW_SESSION_TICKET: c_int = -0x7B00;
    pub const ERR_FATAL_ALERT_MESSAGE: c_int = -0x7780;
    pub const VERSION_TLS1_2: c_int = 0x0303;
    pub const VERSION_TLS1_3: c_int = 0x0304;

    extern "C" {
        /// csrc/mbedtls_floor.c's table of floor calls, and the last error it met.
        pub fn tm_mbedtls_floor() -> *const crate::floor_glue::Fns;
        pub fn tm_mbedtls_floor_error() -> c_int;
        pub fn tm_config_new() -> *mut Config;
        pub fn tm_config_free(p: *mut Config);
        pub fn tm_ssl_new() -> *mut Ssl;
        pub fn tm_ssl_free(p: *mut Ssl);
        pub fn tm_crt_new() -> *mut Crt;
        pub fn tm_crt_free(p: *mut Crt);
        pub fn tm_pk_new() -> *mut Pk;
        pub fn tm_pk_free(p: *mut Pk);
        pub fn tm_session_new() -> *mut Session;
        pub fn tm_session_free(p: *mut c_void);
        pub fn tm_cache_new() -> *mut Cache;
        pub fn tm_cache_free(p: *mut Cache);
        pub fn tm_ticket_new() -> *mut Ticket;
        pub fn tm_ticket_free(p: *mut Ticket);
        pub fn tm_version(out: *mut c_char);
        pub fn tm_crypto_init() -> c_int;
        pub fn tm_config_setup(conf: *mut Config, endpoint: c_int, min: c_int, max: c_int)
            -> c_int;
        pub fn tm_pk_parse_key(pk: *mut Pk, key: *const c_uchar, len: usize) -> c_int;
        pub fn tm_conf_cache(conf: *mut Config, cache: *mut Cache);
        pub fn tm_conf_tickets(conf: *mut Config, ticket: *mut Ticket) -> c_int;
        pub fn tm_version_number(ssl: *const Ssl) -> c_int;
        pub fn tm_ticket_pending(ssl: *const Ssl) -> c_int;
        pub fn tm_received_alert(ssl: *const Ssl) -> c_int;
        pub fn tm_set_user_data(ssl: *mut Ssl, p: *mut c_void);
        pub fn tm_user_data(ssl: *mut Ssl) -> *mut c_void;
        pub fn tm_peer_certs(ssl: *const Ssl) -> c_int;
        pub fn tm_aead_new(which: c_int, key: *const c_uchar) -> *mut c_void;
        pub fn tm_aead_free(c: *mut c_void);
        pub fn tm_aead_run(
            c: *mut c_void,
            seal: c_int,
            nonce: *const c_uchar,
            aad: *const c_uchar,
            input: *const c_uchar,
            len: usize,
            out: *mut c_uchar,
            out_size: usize,
            out_len: *mut usize,
        ) -> c_int;

        pub fn mbedtls_strerror(code: c_int, buf: *mut c_char, len: usize);
        pub fn mbedtls_x509_crt_parse(crt: *mut Crt, buf: *const c_uchar, len: usize) -> c_int;
        pub fn mbedtls_ssl_conf_ciphersuites(conf: *mut Config, suites: *const c_int);
        pub fn mbedtls_ssl_conf_groups(conf: *mut Config, groups: *const u16);
        pub fn mbedtls_ssl_conf_sig_algs(conf: *mut Config, algs: *const u16);
        pub fn mbedtls_ssl_conf_authmode(conf: *mut Config, mode: c_int);
        pub fn mbedtls_ssl_conf_ca_chain(conf: *mut Config, ca: *mut Crt, crl: *mut c_void);
        pub fn mbedtls_ssl_conf_own_cert(conf: *mut Config, crt: *mut Crt, pk: *mut Pk) -> c_int;
        pub fn mbedtls_ssl_conf_alpn_protocols(
            conf: *mut Config,
            protos: *const *const c_char,
        ) -> c_int;
        pub fn mbedtls_ssl_conf_session_tickets(conf: *mut Config, use_tickets: c_int);
        pub fn mbedtls_ssl_conf_new_session_tickets(conf: *mut Config, n: u16);
        pub fn mbedtls_ssl_conf_tls13_enable_signal_new_session_tickets(
            conf: *mut Config,
            signal: c_int,
        );
        pub fn mbedtls_ssl_conf_sni(conf: *mut Config, f: Sni, p: *mut c_void);
        pub fn mbedtls_ssl_conf_verify(conf: *mut Config, f: Verify, p: *mut c_void);
        pub fn mbedtls_ssl_setup(ssl: *mut Ssl, conf: *const Config) -> c_int;
        pub fn mbedtls_ssl_set_bio(
            ssl: *mut Ssl,
            p: *mut c_void,
            send: Send,
            recv: Recv,
            recv_timeout: *const c_void,
        );
        pub fn mbedtls_ssl_set_hostname(ssl: *mut Ssl, name: *const c_char) -> c_int;
        pub fn mbedtls_ssl_handshake(ssl: *mut Ssl) -> c_int;
        pub fn mbedtls_ssl_read(ssl: *mut Ssl, buf: *mut c_uchar, len: usize) -> c_int;
        pub fn mbedtls_ssl_write(ssl: *mut Ssl, buf: *const c_uchar, len: usize) -> c_int;
        pub fn mbedtls_ssl_close_notify(ssl: *mut Ssl) -> c_int;
        pub fn mbedtls_ssl_get_ciphersuite_id_from_ssl(ssl: *const Ssl) -> c_int;
        pub fn mbedtls_ssl_get_alpn_protocol(ssl: *const Ssl) -> *const c_char;
        pub fn mbedtls_ssl_get_session(ssl: *const Ssl, session: *mut Session) -> c_int;
        pub fn mbedtls_ssl_set_session(ssl: *mut Ssl, session: *const Session) -> c_int;
    }
}

/// "Mbed TLS 3.6.5".
fn library_version() -> String {
    let mut buf = [0 as c_char; 32];
    // SAFETY: writes at most 18 bytes, NUL-terminated.
    unsafe { ffi::tm_version(buf.as_mut_ptr()) };
    // SAFETY: NUL-terminated text in our buffer.
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Mbed TLS's text for an error code (negative; high and low level parts combined).
fn error_text(code: c_int) -> String {
    let mut buf = [0 as c_char; 160];
    // SAFETY: the call writes at most len bytes, NUL-terminated.
    unsafe { ffi::mbedtls_strerror(code, buf.as_mut_ptr(), buf.len()) };
    // SAFETY: as above.
    let text = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy();
    format!("{text} (-0x{:04x})", code.unsigned_abs())
}

/// Mbed TLS 3.6 has no KeyUpdate at all: no call sends one, and its post-handshake handler
/// (library/ssl_msg.c, ssl_tls13_handle_hs_message_post_handshake) takes a NewSessionTicket
/// and fails any other message as unexpected.
fn no_key_update() -> String {
    format!(
        "{} has no KeyUpdate: no call sends one, and it refuses one it receives",
        library_version()
    )
}

/// The last error the floor's glue met on this thread: a PSA status (-128 to -255) or Mbed
/// TLS's own code.
fn floor_error() -> String {
    // SAFETY: reads a thread-local code.
    let code = unsafe { ffi::tm_mbedtls_floor_error() };
    if (-255..=-128).contains(&code) {
        format!("PSA status {code}")
    } else {
        error_text(code)
    }
}

fn check(rc: c_int, what: &str) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(anyhow!("Mbed TLS refused {what}: {}", error_text(rc)))
    }
}

fn version_number(v: Version) -> c_int {
    match v {
        Version::Tls12 => ffi::VERSION_TLS1_2,
        Version::Tls13 => ffi::VERSION_TLS1_3,
    }
}

pub struct MbedtlsLibrary;

impl MbedtlsLibrary {
    pub fn new() -> MbedtlsLibrary {
        // SAFETY: PSA's one-time initialisation (TLS 1.3 and the generator need it); later
        // calls return at once.
        let rc = unsafe { ffi::tm_crypto_init() };
        assert_eq!(rc, 0, "Mbed TLS: psa_crypto_init failed");
        MbedtlsLibrary
    }
}

impl Default for MbedtlsLibrary {
    fn default() -> Self {
        Self::new()
    }
}

impl TlsLibrary for MbedtlsLibrary {
    fn name(&self) -> &'static str {
        "mbedtls"
    }

    fn version(&self) -> String {
        library_version()
    }

    fn handshake_crypto(
        &self,
    ) -> Result<Box<dyn tlsmatrix_harness::floor::HandshakeCrypto>, String> {
        Ok(Box::new(crate::floor_glue::GlueCrypto {
            api: format!(
                "{}'s PSA and pk layers (psa_generate_key, psa_raw_key_agreement, mbedtls_pk_sign_ext, mbedtls_pk_verify_ext, psa_mac_compute)",
                library_version()
            ),
            // SAFETY: a static table.
            fns: unsafe { &*ffi::tm_mbedtls_floor() },
            last_error: floor_error,
            version: library_version(),
        }))
    }

    fn supports(&self, cfg: &EndpointConfig) -> Result<(), String> {
        if cfg.offers_post_quantum() {
            return Err(format!("{} has no ML-KEM", library_version()));
        }
        if cfg.sig.is_mldsa() {
            return Err(format!(
                "{} has no ML-DSA certificates or signature schemes",
                library_version()
            ));
        }
        if cfg.version == Version::Tls12 && cfg.sig.is_rsa() && cfg.open.is_none() {
            // library/ssl_misc.h, mbedtls_ssl_tls12_sig_alg_is_supported: a TLS 1.2 scheme
            // must be a (hash, signature) pair, and PSS's 0x08 "intrinsic" hash is not one.
            return Err(format!(
                "{} signs and verifies TLS 1.2 with RSA PKCS#1 v1.5 only: no rsa_pss_rsae_sha256, which the cell pins",
                library_version()
            ));
        }
        if cfg.sig == SigAlg::Ed25519 && cfg.open.is_none() {
            return Err(format!(
                "{} has no EdDSA: no Ed25519 certificates or signature scheme",
                library_version()
            ));
        }
        Ok(())
    }

    fn sends_key_update(&self) -> Result<(), String> {
        Err(no_key_update())
    }

    fn record_aead(&self, which: Aead) -> Result<aead::LibraryAead, String> {
        let index = match which {
            Aead::Aes128Gcm => 0,
            Aead::Aes256Gcm => 1,
            Aead::Chacha20Poly1305 => 2,
        };
        // SAFETY: the key is the 32 bytes of aead::KEY, of which the cipher reads its length.
        let c = unsafe { ffi::tm_aead_new(index, aead::KEY.as_ptr()) };
        if c.is_null() {
            return Err(format!("{} refused a {which} key", library_version()));
        }
        Ok(aead::LibraryAead {
            api: "Mbed TLS mbedtls_cipher_auth_encrypt_ext/decrypt_ext".into(),
            // Mbed TLS's cipher module keyed for one AEAD: what its record layer calls.
            aead: Box::new(aead::OutOfPlace::new(GlueAead {
                handle: c,
                run: ffi::tm_aead_run,
                free: ffi::tm_aead_free,
                check,
            })),
        })
    }

    fn factory(&self, side: Side, cfg: &EndpointConfig) -> Result<Box<dyn EndpointFactory>> {
        self.supports(cfg).map_err(|e| anyhow!(e))?;
        let (conf, hostname, resumes) = match &cfg.open {
            None => (
                Config::pinned(side, cfg)?,
                Some(cfg.server_name.as_str()),
                cfg.resumption != Resumption::Full,
            ),
            Some(open) => (Config::open(side, cfg, open)?, open.sni.as_deref(), true),
        };
        Ok(Box::new(MbedtlsFactory {
            conf: Arc::new(conf),
            side,
            sole_scheme: cfg
                .open
                .is_none()
                .then(|| codes::signature_scheme_code(cfg.sig)),
            hostname: hostname
                .filter(|_| side == Side::Client)
                .map(CString::new)
                .transpose()?,
            session: (side == Side::Client && resumes).then(Arc::default),
        }))
    }
}

/// An `mbedtls_ssl_config` and everything it points to, which must outlive it: Mbed TLS keeps
/// the pointers it is given (suite, group and scheme lists, certificates, key, cache).
struct Config {
    conf: *mut ffi::Config,
    suites: Box<[c_int]>,
    groups: Box<[u16]>,
    sig_algs: Box<[u16]>,
    alpn: Vec<CString>,
    alpn_list: Box<[*const c_char]>,
    owned: Vec<Owned>,
}

/// A C object the configuration points to, freed after it.
enum Owned {
    Crt(*mut ffi::Crt),
    Pk(*mut ffi::Pk),
    Cache(*mut ffi::Cache),
    Ticket(*mut ffi::Ticket),
}

// SAFETY: a configuration is shared read-only by the connections made from it. Its session
// cache and ticket keys change under them behind Mbed TLS's own mutexes: the build has
// MBEDTLS_THREADING_C (build-support/mbedtls-src/user_config.h; the glue refuses to compile
// without it), so its connections may run on several threads, as `allcores` runs them.
unsafe impl Send for Config {}
unsafe impl Sync for Config {}

impl Drop for Config {
    fn drop(&mut self) {
        // SAFETY: each pointer was made by its glue constructor and is freed once, the
        // configuration that points to them first.
        unsafe {
            ffi::tm_config_free(self.conf);
            for o in self.owned.drain(..) {
                match o {
                    Owned::Crt(p) => ffi::tm_crt_free(p),
                    Owned::Pk(p) => ffi::tm_pk_free(p),
                    Owned::Cache(p) => ffi::tm_cache_free(p),
                    Owned::Ticket(p) => ffi::tm_ticket_free(p),
                }
            }
        }
    }
}

impl Config {
    /// A configuration with Mbed TLS's defaults for `side` between the two versions, its
    /// generator set, and nothing else yet.
    fn new(side: Side, min: Version, max: Version) -> Result<Config> {
        // SAFETY: allocation and initialisation only.
        let conf = unsafe { ffi::tm_config_new() };
        if conf.is_null() {
            bail!("Mbed TLS could not allocate a configuration");
        }
        // Made first, so that an error below frees the configuration.
        let c = Config {
            conf,
            suites: Box::new([]),
            groups: Box::new([]),
            sig_algs: Box::new([]),
            alpn: Vec::new(),
            alpn_list: Box::new([]),
            owned: Vec::new(),
        };
        let endpoint = match side {
            Side::Client => ffi::IS_CLIENT,
            Side::Server => ffi::IS_SERVER,
        };
        // SAFETY: a valid configuration.
        check(
            unsafe {
                ffi::tm_config_setup(conf, endpoint, version_number(min), version_number(max))
            },
            "the defaults",
        )?;
        Ok(c)
    }

    /// Gives the configuration these groups, most preferred first (kept here: Mbed TLS
    /// keeps the pointer).
    fn set_groups(&mut self, groups: &[Group]) {
        self.groups = groups
            .iter()
            .map(|g| codes::group_code(*g))
            .chain([0])
            .collect();
        // SAFETY: a valid configuration; the 0-terminated list lives as long as it does.
        unsafe { ffi::mbedtls_ssl_conf_groups(self.conf, self.groups.as_ptr()) };
    }

    /// A configuration pinned to the cell: one version, its one suite, the cell's groups and
    /// its one signature scheme.
    fn pinned(side: Side, cfg: &EndpointConfig) -> Result<Config> {
        let mut c = Config::new(side, cfg.version, cfg.version)?;
        let conf = c.conf;
        let suite = c_int::from(codes::cipher_suite_code(cfg.version, cfg.aead, cfg.sig));
        c.suites = vec![suite, 0].into();
        c.sig_algs = vec![codes::signature_scheme_code(cfg.sig), 0].into();
        c.set_groups(&cfg.groups_for(side));
        // SAFETY: a valid configuration; the lists live in `c` as long as it does.
        unsafe {
            ffi::mbedtls_ssl_conf_ciphersuites(conf, c.suites.as_ptr());
            ffi::mbedtls_ssl_conf_sig_algs(conf, c.sig_algs.as_ptr());
        }
        let certs = &cfg.certs;
        match side {
            Side::Client => {
                let ca = c.certificates(&certs.ca_pem)?;
                // SAFETY: valid configuration and chain, kept in `c`.
                unsafe {
                    ffi::mbedtls_ssl_conf_ca_chain(conf, ca, std::ptr::null_mut());
                    ffi::mbedtls_ssl_conf_authmode(conf, ffi::VERIFY_REQUIRED);
                }
                if cfg.client_cert {
                    c.own(&certs.client_chain_pem, &certs.client_key_pem)?;
                }
            }
            Side::Server => {
                c.own(cfg.server_chain_pem(), &certs.key_pem)?;
                let mode = if cfg.require_client_cert {
                    let ca = c.certificates(&certs.ca_pem)?;
                    // SAFETY: as above.
                    unsafe { ffi::mbedtls_ssl_conf_ca_chain(conf, ca, std::ptr::null_mut()) };
                    ffi::VERIFY_REQUIRED
                } else {
                    ffi::VERIFY_NONE
                };
                // SAFETY: valid configuration; the callback's state is per connection.
                unsafe {
                    ffi::mbedtls_ssl_conf_authmode(conf, mode);
                    ffi::mbedtls_ssl_conf_sni(conf, record_sni, std::ptr::null_mut());
                }
            }
        }
        c.resumption(side, cfg.version, cfg.resumption)?;
        c.set_alpn(&cfg.alpn)?;
        Ok(c)
    }

    /// A configuration on Mbed TLS's own defaults within the open policy (the BoGo shim's,
    /// and `peer server --defaults` for outside test tools): the policy's versions, every
    /// suite, group and signature scheme Mbed TLS enables by default (the runner's groups
    /// when it names any), a session cache and tickets, and the runner's certificate. Peer
    /// chains are accepted whatever they are; the handshake signature is still checked.
    fn open(side: Side, cfg: &EndpointConfig, open: &OpenPolicy) -> Result<Config> {
        let mut c = Config::new(side, open.min_version, open.max_version)?;
        let conf = c.conf;
        if !cfg.groups.is_empty() {
            c.set_groups(&cfg.groups);
        }
        let certs = &cfg.certs;
        match side {
            Side::Client => {
                if cfg.client_cert {
                    c.own(&certs.client_chain_pem, &certs.client_key_pem)?;
                }
                // SAFETY: valid configuration.
                unsafe {
                    ffi::mbedtls_ssl_conf_authmode(conf, ffi::VERIFY_NONE);
                    ffi::mbedtls_ssl_conf_session_tickets(conf, ffi::TICKETS_ENABLED);
                    ffi::mbedtls_ssl_conf_tls13_enable_signal_new_session_tickets(
                        conf,
                        ffi::SIGNAL_NEW_SESSION_TICKETS_ENABLED,
                    );
                }
            }
            Side::Server => {
                c.own(cfg.server_chain_pem(), &certs.key_pem)?;
                let mode = match (open.request_client_cert, cfg.require_client_cert) {
                    (_, true) => ffi::VERIFY_REQUIRED,
                    (true, false) => ffi::VERIFY_OPTIONAL,
                    (false, false) => ffi::VERIFY_NONE,
                };
                // SAFETY: valid configuration; the callbacks keep no state of ours.
                unsafe {
                    ffi::mbedtls_ssl_conf_authmode(conf, mode);
                    ffi::mbedtls_ssl_conf_verify(conf, accept_any_chain, std::ptr::null_mut());
                    ffi::mbedtls_ssl_conf_sni(conf, record_sni, std::ptr::null_mut());
                }
                c.resumption(Side::Server, Version::Tls12, Resumption::SessionId)?;
                c.resumption(Side::Server, open.max_version, Resumption::Ticket)?;
            }
        }
        c.set_alpn(&cfg.alpn)?;
        Ok(c)
    }

    /// Parses PEM certificates into a chain the configuration keeps.
    fn certificates(&mut self, pem: &str) -> Result<*mut ffi::Crt> {
        // SAFETY: allocation and initialisation only.
        let crt = unsafe { ffi::tm_crt_new() };
        if crt.is_null() {
            bail!("Mbed TLS could not allocate a certificate");
        }
        self.owned.push(Owned::Crt(crt));
        let text = CString::new(pem)?;
        let bytes = text.as_bytes_with_nul();
        // SAFETY: valid chain; PEM input must include its NUL in the length.
        check(
            unsafe { ffi::mbedtls_x509_crt_parse(crt, bytes.as_ptr(), bytes.len()) },
            "a certificate",
        )?;
        Ok(crt)
    }

    /// This side's certificate chain and private key.
    fn own(&mut self, chain: &str, key: &str) -> Result<()> {
        let crt = self.certificates(chain)?;
        // SAFETY: allocation and initialisation only.
        let pk = unsafe { ffi::tm_pk_new() };
        if pk.is_null() {
            bail!("Mbed TLS could not allocate a key");
        }
        self.owned.push(Owned::Pk(pk));
        let text = CString::new(key)?;
        let bytes = text.as_bytes_with_nul();
        // SAFETY: valid key context; PEM with its NUL; then the pair the config keeps.
        unsafe {
            check(
                ffi::tm_pk_parse_key(pk, bytes.as_ptr(), bytes.len()),
                "the private key",
            )?;
            check(
                ffi::mbedtls_ssl_conf_own_cert(self.conf, crt, pk),
                "the certificate and key",
            )
        }
    }

    /// What a server keeps so a later connection can resume, and whether a client asks for
    /// tickets. Mbed TLS issues none without a ticket context, and caches nothing without a
    /// cache, so a full-handshake configuration gets neither.
    fn resumption(&mut self, side: Side, version: Version, mode: Resumption) -> Result<()> {
        let conf = self.conf;
        match side {
            Side::Client => {
                let tickets = if mode == Resumption::Ticket {
                    ffi::TICKETS_ENABLED
                } else {
                    ffi::TICKETS_DISABLED
                };
                // SAFETY: valid configuration.
                unsafe {
                    ffi::mbedtls_ssl_conf_session_tickets(conf, tickets);
                    // A TLS 1.3 client ignores tickets unless told to hand them over.
                    if mode == Resumption::Ticket && version == Version::Tls13 {
                        ffi::mbedtls_ssl_conf_tls13_enable_signal_new_session_tickets(
                            conf,
                            ffi::SIGNAL_NEW_SESSION_TICKETS_ENABLED,
                        );
                    }
                }
            }
            Side::Server if mode == Resumption::SessionId => {
                // SAFETY: allocation; the cache is kept in `self`.
                let cache = unsafe { ffi::tm_cache_new() };
                if cache.is_null() {
                    bail!("Mbed TLS could not allocate a session cache");
                }
                self.owned.push(Owned::Cache(cache));
                // SAFETY: valid configuration and cache.
                unsafe { ffi::tm_conf_cache(conf, cache) };
            }
            Side::Server if mode == Resumption::Ticket => {
                // SAFETY: allocation; the ticket keys are kept in `self`.
                let ticket = unsafe { ffi::tm_ticket_new() };
                if ticket.is_null() {
                    bail!("Mbed TLS could not allocate ticket keys");
                }
                self.owned.push(Owned::Ticket(ticket));
                // SAFETY: valid configuration and ticket context.
                check(unsafe { ffi::tm_conf_tickets(conf, ticket) }, "ticket keys")?;
                if version == Version::Tls13 {
                    // SAFETY: valid configuration.
                    unsafe { ffi::mbedtls_ssl_conf_new_session_tickets(conf, 1) };
                }
            }
            Side::Server => {
                // SAFETY: valid configuration. (Without a ticket context none is sent, but
                // a TLS 1.3 server would still count them.)
                unsafe { ffi::mbedtls_ssl_conf_new_session_tickets(conf, 0) };
            }
        }
        Ok(())
    }

    fn set_alpn(&mut self, protocols: &[String]) -> Result<()> {
        if protocols.is_empty() {
            return Ok(());
        }
        self.alpn = protocols
            .iter()
            .map(|p| CString::new(p.as_str()))
            .collect::<Result<_, _>>()?;
        self.alpn_list = self
            .alpn
            .iter()
            .map(|p| p.as_ptr())
            .chain([std::ptr::null()])
            .collect();
        // SAFETY: valid configuration; the list and its strings live in `self`.
        check(
            unsafe { ffi::mbedtls_ssl_conf_alpn_protocols(self.conf, self.alpn_list.as_ptr()) },
            "ALPN",
        )
    }
}

struct MbedtlsFactory {
    conf: Arc<Config>,
    side: Side,
    /// The one signature scheme a pinned configuration offers (none for an open one).
    sole_scheme: Option<u16>,
    /// Client: the name sent as SNI, which the server's certificate must carry.
    hostname: Option<CString>,
    session: Option<Arc<SessionSlot>>,
}

impl EndpointFactory for MbedtlsFactory {
    /// A server's mbedtls_ssl_config is only read once set up, which Mbed TLS allows from many
    /// connections on many threads in a build with MBEDTLS_THREADING_C (ours: its ticket
    /// keys, session cache and PSA's generator take their own locks).
    fn shared(&self) -> Option<&(dyn EndpointFactory + Sync)> {
        (self.side == Side::Server).then_some(self as &(dyn EndpointFactory + Sync))
    }

    fn endpoint(&self, io: MemIo) -> Result<Box<dyn TlsEndpoint>> {
        // SAFETY: allocation and initialisation only.
        let ssl = unsafe { ffi::tm_ssl_new() };
        if ssl.is_null() {
            bail!("Mbed TLS could not allocate a connection");
        }
        let state = Box::into_raw(Box::new(Transport {
            io,
            side: self.side,
            flight: ServerFlight::default(),
            sni: None,
        }));
        // Made first, so that an error below frees the connection and the transport.
        let ep = MbedtlsEndpoint {
            ssl,
            state,
            _conf: self.conf.clone(),
            side: self.side,
            sole_scheme: self.sole_scheme,
            done: false,
            slot: self.session.clone(),
            peer_closed: false,
        };
        // SAFETY: valid connection and configuration; the transport lives as long as the
        // endpoint and does not move (boxed).
        unsafe {
            check(ffi::mbedtls_ssl_setup(ssl, self.conf.conf), "a connection")?;
            ffi::mbedtls_ssl_set_bio(ssl, ep.state.cast(), io_send, io_recv, std::ptr::null());
            ffi::tm_set_user_data(ssl, ep.state.cast());
            if let Some(name) = &self.hostname {
                check(
                    ffi::mbedtls_ssl_set_hostname(ssl, name.as_ptr()),
                    "the host name",
                )?;
            }
        }
        if let Some(slot) = &self.session {
            // SAFETY: a session of this configuration; Mbed TLS copies it.
            if let Some(rc) = slot.with(|s| unsafe { ffi::mbedtls_ssl_set_session(ssl, s) }) {
                check(rc, "the session")?;
            }
        }
        Ok(Box::new(ep))
    }
}

/// What the I/O callbacks reach: the harness's transport, and the witness of the server's
/// first flight (the client reads it, the server writes it).
struct Transport {
    io: MemIo,
    side: Side,
    flight: ServerFlight,
    /// Server: the host name the client sent.
    sni: Option<String>,
}

unsafe extern "C" fn io_send(ctx: *mut c_void, buf: *const c_uchar, len: usize) -> c_int {
    use std::io::Write;
    let t = &mut *(ctx as *mut Transport);
    let buf = std::slice::from_raw_parts(buf, len);
    if t.side == Side::Server {
        t.flight.feed(buf);
    }
    match t.io.write(buf) {
        Ok(n) => n as c_int,
        Err(_) => -1,
    }
}

unsafe extern "C" fn io_recv(ctx: *mut c_void, buf: *mut c_uchar, len: usize) -> c_int {
    use std::io::Read;
    let t = &mut *(ctx as *mut Transport);
    let buf = std::slice::from_raw_parts_mut(buf, len);
    match t.io.read(buf) {
        Ok(0) | Err(_) => ffi::ERR_WANT_READ,
        Ok(n) => {
            if t.side == Side::Client {
                t.flight.feed(&buf[..n]);
            }
            n as c_int
        }
    }
}

/// Accepts the peer's chain whatever it is (the chain is not what an open configuration
/// tests): clears every verification flag Mbed TLS raised for each certificate.
unsafe extern "C" fn accept_any_chain(
    _: *mut c_void,
    _: *mut ffi::Crt,
    _depth: c_int,
    flags: *mut u32,
) -> c_int {
    *flags = 0;
    0
}

/// A server's SNI callback: keeps the name; any name is accepted (the certificate is the
/// configuration's).
unsafe extern "C" fn record_sni(
    _: *mut c_void,
    ssl: *mut ffi::Ssl,
    name: *const c_uchar,
    len: usize,
) -> c_int {
    let t = ffi::tm_user_data(ssl) as *mut Transport;
    if let Some(t) = t.as_mut() {
        let name = std::slice::from_raw_parts(name, len);
        t.sni = Some(String::from_utf8_lossy(name).into_owned());
    }
    0
}

struct MbedtlsEndpoint {
    ssl: *mut ffi::Ssl,
    /// Boxed transport (see `Transport`), owned here.
    state: *mut Transport,
    _conf: Arc<Config>,
    side: Side,
    sole_scheme: Option<u16>,
    done: bool,
    /// Client: where the session is kept for the next connection.
    slot: Option<Arc<SessionSlot>>,
    /// The peer's close_notify arrived behind data that this call returned.
    peer_closed: bool,
}

impl Drop for MbedtlsEndpoint {
    fn drop(&mut self) {
        // A TLS 1.2 client keeps its session at the end (a TLS 1.3 one as each ticket
        // arrives, in `recv`).
        // SAFETY: valid connection.
        if self.done && unsafe { ffi::tm_version_number(self.ssl) } == ffi::VERSION_TLS1_2 {
            self.keep_session();
        }
        // SAFETY: made by tm_ssl_new and Box::new, each freed once, the connection first.
        unsafe {
            ffi::tm_ssl_free(self.ssl);
            if !self.state.is_null() {
                drop(Box::from_raw(self.state));
            }
        }
    }
}

impl MbedtlsEndpoint {
    fn transport(&self) -> &Transport {
        // SAFETY: owned by this endpoint, alive until its Drop.
        unsafe { &*self.state }
    }

    /// Client: keeps the connection's session in the slot for the next connection.
    fn keep_session(&self) {
        let Some(slot) = &self.slot else { return };
        // SAFETY: allocation and initialisation only; the CSession below frees it whether
        // or not Mbed TLS fills it.
        let s = unsafe { ffi::tm_session_new() };
        if s.is_null() {
            return;
        }
        // SAFETY: made by tm_session_new, freed by tm_session_free only.
        let s = unsafe { CSession::new(s, ffi::tm_session_free) };
        // SAFETY: valid connection and session.
        if unsafe { ffi::mbedtls_ssl_get_session(self.ssl, s.ptr()) } == 0 {
            slot.keep(s);
        }
    }

    /// The error for Mbed TLS's code, naming the alert the peer sent when that was it.
    fn error(&self, rc: c_int, what: &str) -> anyhow::Error {
        if rc == ffi::ERR_FATAL_ALERT_MESSAGE {
            // SAFETY: valid connection.
            let alert = unsafe { ffi::tm_received_alert(self.ssl) };
            if alert >= 0 {
                return anyhow!(
                    "Mbed TLS: {what}: received alert [{alert}]: {}",
                    error_text(rc)
                );
            }
        }
        anyhow!("Mbed TLS: {what}: {}", error_text(rc))
    }

    fn waiting(rc: c_int) -> bool {
        rc == ffi::ERR_WANT_READ || rc == ffi::ERR_WANT_WRITE
    }

    /// The handshake's signature scheme. TLS 1.2's is read off the ServerKeyExchange. TLS
    /// 1.3's CertificateVerify is encrypted; its client offered one scheme alone, and Mbed TLS
    /// aborts a handshake whose CertificateVerify uses a scheme it did not offer
    /// (`library/ssl_tls13_generic.c`, `ssl_tls13_parse_certificate_verify`: "Received
    /// signature algorithm ... is not among advertised"), so a finished full handshake
    /// verified that one. An open configuration offers many, and its server picks among
    /// those offered and says nothing of which: neither reports one.
    fn signature_scheme(&self, version: Option<u16>) -> Option<u16> {
        let t = self.transport();
        match version {
            Some(0x0303) => t.flight.tls12_scheme(),
            Some(0x0304) if self.side == Side::Client => self.sole_scheme,
            _ => None,
        }
    }
}

impl TlsEndpoint for MbedtlsEndpoint {
    fn handshake_step(&mut self) -> Result<()> {
        if self.done {
            return Ok(());
        }
        // SAFETY: valid connection.
        let rc = unsafe { ffi::mbedtls_ssl_handshake(self.ssl) };
        if rc == 0 {
            self.done = true;
            return Ok(());
        }
        if Self::waiting(rc) {
            return Ok(());
        }
        Err(self.error(rc, "handshake"))
    }

    fn is_handshake_complete(&self) -> bool {
        self.done
    }

    fn send(&mut self, data: &[u8]) -> Result<()> {
        c_io::write_all(data, |chunk| {
            // SAFETY: valid connection and slice.
            let n = unsafe { ffi::mbedtls_ssl_write(self.ssl, chunk.as_ptr(), chunk.len()) };
            match n {
                n if n > 0 => Ok(n as usize),
                // The in-memory transport never blocks a write; WANT_WRITE is not expected,
                // and retrying is what Mbed TLS asks for.
                n if Self::waiting(n) => Ok(0),
                n => Err(self.error(n, "sending")),
            }
        })
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut closed = self.peer_closed;
        let mut ticket_pending = false;
        let got = c_io::read_into(buf, &mut closed, |chunk| {
            // SAFETY: valid connection and slice.
            let n = unsafe { ffi::mbedtls_ssl_read(self.ssl, chunk.as_mut_ptr(), chunk.len()) };
            match n {
                n if n > 0 => c_io::Read::Data(n as usize),
                // A TLS 1.3 ticket arrived: Mbed TLS wants it taken before reading on.
                ffi::ERR_RECEIVED_NEW_SESSION_TICKET => {
                    self.keep_session();
                    ticket_pending = false;
                    c_io::Read::Again
                }
                ffi::ERR_PEER_CLOSE_NOTIFY | 0 => c_io::Read::Closed,
                // On a TLS 1.3 NewSessionTicket Mbed TLS only changes state and asks to be
                // called again (library/ssl_msg.c, ssl_tls13_handle_hs_message_post_handshake),
                // though the message is already in: the next call hands the ticket over.
                // SAFETY: valid connection.
                n if Self::waiting(n)
                    && !ticket_pending
                    && unsafe { ffi::tm_ticket_pending(self.ssl) } == 1 =>
                {
                    ticket_pending = true;
                    c_io::Read::Again
                }
                n if Self::waiting(n) => c_io::Read::Empty,
                n => c_io::Read::Failed(self.error(n, "receiving")),
            }
        });
        self.peer_closed = closed;
        got
    }

    fn negotiated(&self) -> Negotiated {
        // SAFETY: valid connection; these read what the handshake settled.
        let (version, suite, peer_certs) = unsafe {
            (
                ffi::tm_version_number(self.ssl),
                ffi::mbedtls_ssl_get_ciphersuite_id_from_ssl(self.ssl),
                ffi::tm_peer_certs(self.ssl),
            )
        };
        let version = u16::try_from(version).ok().filter(|v| *v != 0);
        let t = self.transport();
        Negotiated {
            version,
            cipher_suite: u16::try_from(suite).ok().filter(|c| *c != 0),
            group: t.flight.group(),
            signature_scheme: self.signature_scheme(version),
            resumed: t.flight.resumed(),
            peer_certs: Some(peer_certs.max(0) as usize),
        }
    }

    fn alpn(&self) -> Option<Vec<u8>> {
        // SAFETY: valid connection; the name is Mbed TLS's, copied here.
        unsafe {
            let p = ffi::mbedtls_ssl_get_alpn_protocol(self.ssl);
            (!p.is_null()).then(|| CStr::from_ptr(p).to_bytes().to_vec())
        }
    }

    fn key_update(&mut self) -> Result<()> {
        Err(anyhow!(no_key_update()))
    }

    fn sni(&self) -> Option<String> {
        self.transport().sni.clone()
    }

    fn close(&mut self) -> Result<()> {
        // SAFETY: valid connection; sends close_notify without waiting for the peer's.
        let rc = unsafe { ffi::mbedtls_ssl_close_notify(self.ssl) };
        if rc == 0 || Self::waiting(rc) {
            return Ok(());
        }
        Err(self.error(rc, "close_notify"))
    }
}
