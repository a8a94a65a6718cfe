//! NSS, Debian's system library (`libnss3-dev`, 3.87), the TLS stack of Firefox and of RHEL's
//! system crypto. Its API speaks NSPR file descriptors, C structs and callbacks, so the parts
//! that need them are C (`csrc/nss_glue.c`), behind the flat functions declared below.
//!
//! NSS exports no symbol of OpenSSL's or GnuTLS's (`SSL_ImportFD`, not `SSL_new`), so it
//! shares the main driver. Each factory is an NSS "model socket", configured once and copied
//! by every connection (`SSL_ImportFD`), as a context is elsewhere. Records move through an
//! NSPR I/O layer over the harness's `MemIo`. Certificates live in NSS's in-memory store
//! (`NSS_NoDB_Init`), the run's CAs trusted there, so a client verifies as NSS does by
//! default (`SSL_AuthCertificate`: the chain to a trusted CA and the host name).

use std::ffi::{c_char, c_int, c_long, c_uint, c_void, CStr, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::{anyhow, bail, Result};
use tlsmatrix_harness::aead;
use tlsmatrix_harness::endpoint::{
    CAllocation, EndpointConfig, EndpointFactory, TlsEndpoint, TlsLibrary,
};
use tlsmatrix_harness::memio::MemIo;
use tlsmatrix_harness::negotiated::Negotiated;
use tlsmatrix_model::codes;
use tlsmatrix_model::scenario::{Aead, Resumption, SigAlg};
use tlsmatrix_model::side::Side;

use crate::c_io;
use crate::glue_aead::GlueAead;

/// `csrc/nss_glue.c`.
mod ffi {
    use std::ffi::{c_char, c_int, c_long, c_uint, c_void};

    /// An NSPR file descriptor (a model socket or a connection).
    pub type Fd = c_void;
    pub type Cred = c_void;
    pub type IoFn = unsafe extern "C" fn(*mut c_void, *mut u8, c_long) -> c_long;

    // ssl.h's option numbers.
    pub const SSL_REQUEST_CERTIFICATE: c_int = 3;
    pub const SSL_NO_CACHE: c_int = 9;
    pub const SSL_REQUIRE_CERTIFICATE: c_int = 10;
    pub const SSL_ENABLE_SESSION_TICKETS: c_int = 18;
    pub const SSL_ENABLE_TLS13_COMPAT_MODE: c_int = 35;
    /// prerror.h.
    pub const PR_WOULD_BLOCK_ERROR: c_int = -5998;

    #[repr(C)]
    #[derive(Default)]
    pub struct Channel {
        pub version: u16,
        pub suite: u16,
        pub group: u16,
        pub scheme: u16,
        pub resumed: c_int,
        pub peer_certs: c_int,
    }

    #[link(name = "ssl3")]
    #[link(name = "nss3")]
    #[link(name = "nssutil3")]
    #[link(name = "nspr4")]
    extern "C" {
        pub fn tm_nss_init(read: IoFn, write: IoFn) -> c_int;
        /// csrc/nss_floor.c's table of floor calls.
        pub fn tm_nss_floor() -> *const crate::floor_glue::Fns;
        pub fn tm_nss_version() -> *const c_char;
        pub fn tm_nss_error() -> c_int;
        pub fn tm_nss_error_name(code: c_int) -> *const c_char;
        pub fn tm_nss_error_text(code: c_int) -> *const c_char;
        pub fn tm_nss_trust_ca(der: *const u8, len: c_uint) -> c_int;
        pub fn tm_nss_cred_new(
            ders: *const *const u8,
            lens: *const c_uint,
            n: c_int,
            pkcs8: *const u8,
            pkcs8_len: c_uint,
            err: *mut c_int,
        ) -> *mut Cred;
        pub fn tm_nss_cred_free(c: *mut Cred);
        pub fn tm_nss_model_new() -> *mut Fd;
        pub fn tm_nss_close(fd: *mut Fd);
        pub fn tm_nss_versions(m: *mut Fd, min: u16, max: u16) -> c_int;
        pub fn tm_nss_option(m: *mut Fd, option: c_int, on: c_int) -> c_int;
        pub fn tm_nss_only_suite(m: *mut Fd, suite: u16) -> c_int;
        pub fn tm_nss_every_suite(m: *mut Fd) -> c_int;
        pub fn tm_nss_groups(m: *mut Fd, groups: *const u16, n: c_uint) -> c_int;
        pub fn tm_nss_schemes(m: *mut Fd, schemes: *const u16, n: c_uint) -> c_int;
        pub fn tm_nss_server_cred(m: *mut Fd, c: *const Cred) -> c_int;
        pub fn tm_nss_client_cred(m: *mut Fd, c: *const Cred) -> c_int;
        pub fn tm_nss_accept_any_chain(m: *mut Fd) -> c_int;
        pub fn tm_nss_server_sni(m: *mut Fd) -> c_int;
        pub fn tm_nss_alpn(m: *mut Fd, wire: *const u8, len: c_uint) -> c_int;
        pub fn tm_nss_conn_new(
            model: *mut Fd,
            io: *mut c_void,
            server: c_int,
            url: *const c_char,
            peer_id: *const c_char,
        ) -> *mut Fd;
        pub fn tm_nss_handshake(fd: *mut Fd) -> c_int;
        pub fn tm_nss_write(fd: *mut Fd, buf: *const c_void, len: c_long) -> c_long;
        pub fn tm_nss_read(fd: *mut Fd, buf: *mut c_void, len: c_long) -> c_long;
        pub fn tm_nss_shutdown(fd: *mut Fd) -> c_int;
        pub fn tm_nss_key_update(fd: *mut Fd) -> c_int;
        pub fn tm_nss_channel_info(fd: *mut Fd, out: *mut Channel) -> c_int;
        pub fn tm_nss_alpn_selected(fd: *mut Fd, buf: *mut u8, cap: c_uint) -> c_int;
        pub fn tm_nss_sni(fd: *mut Fd, buf: *mut c_char, cap: c_uint) -> c_int;
        pub fn tm_nss_aead_new(which: c_int, key: *const u8) -> *mut c_void;
        pub fn tm_nss_aead_free(a: *mut c_void);
        pub fn tm_nss_aead_run(
            a: *mut c_void,
            seal: c_int,
            nonce: *const u8,
            aad: *const u8,
            input: *const u8,
            in_len: usize,
            out: *mut u8,
            cap: usize,
            n: *mut usize,
        ) -> c_int;
        pub fn tm_nss_alloc(n: usize) -> *mut c_void;
        pub fn tm_nss_free(p: *mut c_void);
    }
}

/// The I/O layer's transport calls: bytes moved, 0 at the end of the stream, -1 while
/// nothing can move yet ("would block"), -2 on an error (`csrc/nss_glue.c`, tm_io_fn).
fn io_result(r: std::io::Result<usize>) -> c_long {
    match r {
        Ok(n) => n as c_long,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => -1,
        Err(_) => -2,
    }
}

unsafe extern "C" fn io_read(io: *mut c_void, buf: *mut u8, len: c_long) -> c_long {
    use std::io::Read;
    let io = &mut *(io as *mut MemIo);
    io_result(io.read(std::slice::from_raw_parts_mut(buf, len.max(0) as usize)))
}

unsafe extern "C" fn io_write(io: *mut c_void, buf: *mut u8, len: c_long) -> c_long {
    use std::io::Write;
    let io = &mut *(io as *mut MemIo);
    io_result(io.write(std::slice::from_raw_parts(buf, len.max(0) as usize)))
}

/// NSS initialised once per process, and the CAs already trusted in its store.
struct Process {
    trusted: Mutex<Vec<String>>,
}

fn process() -> Result<&'static Process> {
    static P: OnceLock<std::result::Result<Process, String>> = OnceLock::new();
    P.get_or_init(|| {
        // SAFETY: once per process, before any other NSS call.
        let rc = unsafe { ffi::tm_nss_init(io_read, io_write) };
        if rc != 0 {
            return Err(format!("NSS did not initialise: {}", error_text(rc)));
        }
        Ok(Process {
            trusted: Mutex::new(Vec::new()),
        })
    })
    .as_ref()
    .map_err(|e| anyhow!("{e}"))
}

impl Process {
    /// Trusts the CA certificate(s) in `pem` for the rest of the process.
    fn trust(&self, pem: &str) -> Result<()> {
        let mut trusted = self.trusted.lock().unwrap();
        if trusted.iter().any(|t| t == pem) {
            return Ok(());
        }
        for der in ders(pem)? {
            // SAFETY: NSS copies the DER.
            let rc = unsafe { ffi::tm_nss_trust_ca(der.as_ptr(), der.len() as c_uint) };
            if rc != 0 {
                bail!("NSS refused the CA certificate: {}", error_text(rc));
            }
        }
        trusted.push(pem.to_string());
        Ok(())
    }
}

fn library_version() -> String {
    // SAFETY: a static string.
    unsafe { CStr::from_ptr(ffi::tm_nss_version()) }
        .to_string_lossy()
        .into_owned()
}

fn c_text(p: *const c_char) -> Option<String> {
    // SAFETY: NSPR's static, NUL-terminated tables.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// NSPR's name and text for an error code, with the alert's number where the error is that
/// the peer sent one.
fn error_text(code: c_int) -> String {
    // SAFETY: lookups in NSPR's error tables.
    let (name, text) = unsafe {
        (
            c_text(ffi::tm_nss_error_name(code)),
            c_text(ffi::tm_nss_error_text(code)),
        )
    };
    let name = name.unwrap_or_else(|| format!("error {code}"));
    let alert = received_alert(&name)
        .map(|a| format!("received alert [{a}]: "))
        .unwrap_or_default();
    format!("{alert}{name}: {}", text.unwrap_or_default())
}

/// The alert number of an NSS error that reports an alert from the peer (sslerr.h).
fn received_alert(name: &str) -> Option<u8> {
    Some(match name {
        "SSL_ERROR_UNEXPECTED_MESSAGE_ALERT" => 10,
        "SSL_ERROR_BAD_MAC_ALERT" => 20,
        "SSL_ERROR_DECRYPTION_FAILED_ALERT" => 21,
        "SSL_ERROR_RECORD_OVERFLOW_ALERT" => 22,
        "SSL_ERROR_HANDSHAKE_FAILURE_ALERT" => 40,
        "SSL_ERROR_BAD_CERT_ALERT" => 42,
        "SSL_ERROR_UNSUPPORTED_CERT_ALERT" => 43,
        "SSL_ERROR_REVOKED_CERT_ALERT" => 44,
        "SSL_ERROR_EXPIRED_CERT_ALERT" => 45,
        "SSL_ERROR_CERTIFICATE_UNKNOWN_ALERT" => 46,
        "SSL_ERROR_ILLEGAL_PARAMETER_ALERT" => 47,
        "SSL_ERROR_UNKNOWN_CA_ALERT" => 48,
        "SSL_ERROR_ACCESS_DENIED_ALERT" => 49,
        "SSL_ERROR_DECODE_ERROR_ALERT" => 50,
        "SSL_ERROR_DECRYPT_ERROR_ALERT" => 51,
        "SSL_ERROR_PROTOCOL_VERSION_ALERT" => 70,
        "SSL_ERROR_INSUFFICIENT_SECURITY_ALERT" => 71,
        "SSL_ERROR_INTERNAL_ERROR_ALERT" => 80,
        "SSL_ERROR_INAPPROPRIATE_FALLBACK_ALERT" => 86,
        "SSL_ERROR_USER_CANCELED_ALERT" => 90,
        "SSL_ERROR_NO_RENEGOTIATION_ALERT" => 100,
        "SSL_ERROR_MISSING_EXTENSION_ALERT" => 109,
        "SSL_ERROR_UNSUPPORTED_EXTENSION_ALERT" => 110,
        "SSL_ERROR_CERTIFICATE_UNOBTAINABLE_ALERT" => 111,
        "SSL_ERROR_UNRECOGNIZED_NAME_ALERT" => 112,
        "SSL_ERROR_BAD_CERT_STATUS_RESPONSE_ALERT" => 113,
        "SSL_ERROR_BAD_CERT_HASH_VALUE_ALERT" => 114,
        "SSL_ERROR_RX_CERTIFICATE_REQUIRED_ALERT" => 116,
        "SSL_ERROR_NEXT_PROTOCOL_NO_PROTOCOL" => 120,
        _ => return None,
    })
}

fn check(rc: c_int, what: &str) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(anyhow!("NSS refused {what}: {}", error_text(rc)))
    }
}

/// The DER bodies of the PEM blocks in `text`, in order.
fn ders(text: &str) -> Result<Vec<Vec<u8>>> {
    Ok(pem::parse_many(text)?
        .into_iter()
        .map(|p| p.into_contents())
        .collect())
}

/// A certificate chain and its leaf's key in NSS's store.
struct Credential(*mut ffi::Cred);

// SAFETY: NSS's certificates and keys are reference-counted and thread-safe once made.
unsafe impl Send for Credential {}
unsafe impl Sync for Credential {}

impl Credential {
    fn new(chain_pem: &str, key_pem: &str) -> Result<Credential> {
        let certs = ders(chain_pem)?;
        let key = pem::parse(key_pem)?;
        if key.tag() != "PRIVATE KEY" {
            bail!(
                "NSS imports PKCS#8 keys (\"PRIVATE KEY\"), not \"{}\"",
                key.tag()
            );
        }
        let ptrs: Vec<*const u8> = certs.iter().map(|c| c.as_ptr()).collect();
        let lens: Vec<c_uint> = certs.iter().map(|c| c.len() as c_uint).collect();
        let mut err = 0;
        // SAFETY: the arrays hold `certs.len()` entries; NSS copies every buffer.
        let c = unsafe {
            ffi::tm_nss_cred_new(
                ptrs.as_ptr(),
                lens.as_ptr(),
                certs.len() as c_int,
                key.contents().as_ptr(),
                key.contents().len() as c_uint,
                &mut err,
            )
        };
        if c.is_null() {
            bail!(
                "NSS refused the certificate chain or its key: {}",
                error_text(err)
            );
        }
        Ok(Credential(c))
    }
}

impl Drop for Credential {
    fn drop(&mut self) {
        // SAFETY: made by tm_nss_cred_new, freed once, after its model.
        unsafe { ffi::tm_nss_cred_free(self.0) }
    }
}

/// A model socket and what it points to (the credentials its hooks hand out).
struct Model {
    fd: *mut ffi::Fd,
    creds: Vec<Credential>,
}

// SAFETY: a model is only read (copied) by SSL_ImportFD once configured.
unsafe impl Send for Model {}
unsafe impl Sync for Model {}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: made by tm_nss_model_new, closed once, after every connection of it.
        unsafe { ffi::tm_nss_close(self.fd) }
    }
}

pub struct NssLibrary;

impl TlsLibrary for NssLibrary {
    fn name(&self) -> &'static str {
        "nss"
    }

    fn version(&self) -> String {
        format!("NSS {}", library_version())
    }

    fn supports(&self, cfg: &EndpointConfig) -> Result<(), String> {
        if cfg.offers_post_quantum() {
            return Err(format!(
                "NSS {} has no ML-KEM: no X25519MLKEM768",
                library_version()
            ));
        }
        if cfg.sig.is_mldsa() {
            return Err(format!(
                "NSS {} has no ML-DSA: no certificate type or signature scheme for it",
                library_version()
            ));
        }
        if cfg.sig == SigAlg::Ed25519 && cfg.open.is_none() {
            return Err(format!(
                "NSS {} has no Ed25519 in TLS: no ed25519 signature scheme or certificate type",
                library_version()
            ));
        }
        Ok(())
    }

    /// NSS's AEAD alone through PKCS#11 (`PK11_AEADOp` on a message context, as its TLS 1.3
    /// record layer calls it): the ceiling its bulk figures are read against.
    fn record_aead(&self, which: Aead) -> Result<aead::LibraryAead, String> {
        process().map_err(|e| e.to_string())?;
        let index = match which {
            Aead::Aes128Gcm => 0,
            Aead::Aes256Gcm => 1,
            Aead::Chacha20Poly1305 => 2,
        };
        // SAFETY: the key is the 32 bytes of aead::KEY, of which NSS reads the AEAD's length.
        let a = unsafe { ffi::tm_nss_aead_new(index, aead::KEY.as_ptr()) };
        if a.is_null() {
            // SAFETY: reads the thread's last NSPR error.
            let why = error_text(unsafe { ffi::tm_nss_error() });
            return Err(format!(
                "NSS {} refused a {which} key: {why}",
                library_version()
            ));
        }
        Ok(aead::LibraryAead {
            api: "NSS PK11_AEADOp".into(),
            // An NSS key and its two message contexts (seal, open) for the AEAD.
            aead: Box::new(aead::OutOfPlace::new(GlueAead {
                handle: a,
                run: ffi::tm_nss_aead_run,
                free: ffi::tm_nss_aead_free,
                check,
            })),
        })
    }

    fn handshake_crypto(
        &self,
    ) -> Result<Box<dyn tlsmatrix_harness::floor::HandshakeCrypto>, String> {
        process().map_err(|e| e.to_string())?;
        Ok(Box::new(crate::floor_glue::GlueCrypto {
            api: format!(
                "NSS {}'s PKCS#11 layer (SECKEY_CreateECPrivateKey, PK11_PubDeriveWithKDF, PK11_Sign, VFY_VerifyDigestDirect, PK11_SignWithSymKey)",
                library_version()
            ),
            // SAFETY: a static table.
            fns: unsafe { &*ffi::tm_nss_floor() },
            last_error: || {
                // SAFETY: reads the thread's last NSPR error.
                error_text(unsafe { ffi::tm_nss_error() })
            },
            version: format!("NSS {}", library_version()),
        }))
    }

    fn c_allocation(&self) -> Option<CAllocation> {
        Some(CAllocation {
            call: "PORT_Alloc",
            // SAFETY: NSS's allocator, freed by its own free below.
            alloc: |n| unsafe { ffi::tm_nss_alloc(n) },
            free: |p| unsafe { ffi::tm_nss_free(p) },
        })
    }

    fn factory(&self, side: Side, cfg: &EndpointConfig) -> Result<Box<dyn EndpointFactory>> {
        self.supports(cfg).map_err(|e| anyhow!(e))?;
        let process = process()?;
        // SAFETY: a new model socket, closed by Model's drop.
        let fd = unsafe { ffi::tm_nss_model_new() };
        if fd.is_null() {
            // SAFETY: reads the thread's last NSPR error.
            bail!(
                "NSS could not make a model socket: {}",
                error_text(unsafe { ffi::tm_nss_error() })
            );
        }
        let mut model = Model {
            fd,
            creds: Vec::new(),
        };
        let m = model.fd;
        let option = |o: c_int, on: bool, what: &str| {
            // SAFETY: a valid model socket.
            check(unsafe { ffi::tm_nss_option(m, o, c_int::from(on)) }, what)
        };
        let code = codes::version_code;
        let (min, max) = match &cfg.open {
            Some(open) => (code(open.min_version), code(open.max_version)),
            None => (code(cfg.version), code(cfg.version)),
        };
        // SAFETY: a valid model socket; each call copies what it is given.
        unsafe {
            check(ffi::tm_nss_versions(m, min, max), "the version range")?;
            match &cfg.open {
                Some(open) if open.every_tls12_suite => {
                    check(ffi::tm_nss_every_suite(m), "every suite")?
                }
                Some(_) => {}
                None => {
                    let suite = codes::cipher_suite_code(cfg.version, cfg.aead, cfg.sig);
                    check(
                        ffi::tm_nss_only_suite(m, suite),
                        &format!("the suite {}", codes::suite_name(suite)),
                    )?;
                    let scheme = [codes::signature_scheme_code(cfg.sig)];
                    check(ffi::tm_nss_schemes(m, scheme.as_ptr(), 1), "the scheme")?;
                }
            }
            // An open configuration with no groups keeps NSS's own.
            let groups: Vec<u16> = cfg
                .groups_for(side)
                .iter()
                .map(|g| codes::group_code(*g))
                .collect();
            if !groups.is_empty() {
                check(
                    ffi::tm_nss_groups(m, groups.as_ptr(), groups.len() as c_uint),
                    "the groups",
                )?;
            }
            if !cfg.alpn.is_empty() {
                let wire = cfg.alpn_wire()?;
                check(
                    ffi::tm_nss_alpn(m, wire.as_ptr(), wire.len() as c_uint),
                    "ALPN",
                )?;
            }
        }
        let keeps = match &cfg.open {
            Some(_) => Keep::CacheAndTickets,
            None => Keep::of(cfg.resumption),
        };
        option(
            ffi::SSL_NO_CACHE,
            keeps == Keep::Nothing,
            "the session cache",
        )?;
        option(
            ffi::SSL_ENABLE_SESSION_TICKETS,
            keeps == Keep::CacheAndTickets,
            "session tickets",
        )?;
        if let Some(open) = &cfg.open {
            option(
                ffi::SSL_ENABLE_TLS13_COMPAT_MODE,
                open.middlebox_compat,
                "the middlebox compatibility mode",
            )?;
        }
        let (request, require) = match (&cfg.open, side) {
            (_, Side::Client) => (false, false),
            (Some(open), Side::Server) => (
                open.request_client_cert || cfg.require_client_cert,
                cfg.require_client_cert,
            ),
            (None, Side::Server) => (cfg.require_client_cert, cfg.require_client_cert),
        };
        option(
            ffi::SSL_REQUEST_CERTIFICATE,
            request,
            "asking for a certificate",
        )?;
        option(
            ffi::SSL_REQUIRE_CERTIFICATE,
            require,
            "requiring a certificate",
        )?;
        match &cfg.open {
            // SAFETY: a valid model socket.
            Some(_) => check(
                unsafe { ffi::tm_nss_accept_any_chain(m) },
                "the chain policy",
            )?,
            None if side == Side::Client || cfg.require_client_cert => {
                process.trust(&cfg.certs.ca_pem)?
            }
            None => {}
        }
        add_own_credential(&mut model, side, cfg)?;
        let url = match &cfg.open {
            // NSS's client caches and looks up sessions under the host name it was given
            // (SSL_SetURL) and sends none as SNI for an address, so without a name to send
            // the client is given the loopback address: it can resume and sends no SNI.
            Some(open) => open.sni.as_deref().unwrap_or("127.0.0.1"),
            None => &cfg.server_name,
        };
        Ok(Box::new(NssFactory {
            model: Arc::new(model),
            side,
            url: CString::new(url)?,
            peer_id: CString::new(format!("tlsmatrix-{}", next_peer_id()))?,
        }))
    }
}

/// The side's own chain and key, when it has one (a server, or a client sending a
/// certificate), loaded into the model and kept there.
fn add_own_credential(model: &mut Model, side: Side, cfg: &EndpointConfig) -> Result<()> {
    let m = model.fd;
    let own = match side {
        Side::Server => Some((cfg.server_chain_pem(), cfg.certs.key_pem.as_str())),
        Side::Client if cfg.client_cert => Some((
            cfg.certs.client_chain_pem.as_str(),
            cfg.certs.client_key_pem.as_str(),
        )),
        Side::Client => None,
    };
    if let Some((chain, key)) = own.filter(|(chain, _)| !chain.is_empty()) {
        let cred = Credential::new(chain, key)?;
        // SAFETY: a valid model; the credential outlives it (kept in the model).
        unsafe {
            match side {
                Side::Server => {
                    check(ffi::tm_nss_server_cred(m, cred.0), "the certificate")?;
                    check(ffi::tm_nss_server_sni(m), "the SNI hook")?;
                }
                Side::Client => {
                    check(ffi::tm_nss_client_cred(m, cred.0), "the client certificate")?
                }
            }
        }
        model.creds.push(cred);
    }
    Ok(())
}

/// What a configuration keeps for resumption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// No cache and no tickets: every handshake is full.
    Nothing,
    /// The session cache (TLS 1.2 session ids; TLS 1.3 tickets, which NSS ties to it).
    Cache,
    CacheAndTickets,
}

impl Keep {
    fn of(r: Resumption) -> Keep {
        match r {
            Resumption::Full => Keep::Nothing,
            Resumption::SessionId => Keep::Cache,
            Resumption::Ticket => Keep::CacheAndTickets,
        }
    }
}

/// A new peer ID per client factory: NSS's client session cache is one per process, keyed
/// by the peer's address (the same made-up one for every in-memory connection), its host
/// name and this ID, so no factory resumes another's sessions.
fn next_peer_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

struct NssFactory {
    model: Arc<Model>,
    side: Side,
    /// Client: the host name sent as SNI and checked against the certificate.
    url: CString,
    peer_id: CString,
}

impl EndpointFactory for NssFactory {
    /// A server's model socket is only read once configured (SSL_ImportFD copies it into
    /// each connection), and NSS's server caches are process-wide behind its own locks, as
    /// threaded NSS servers use them.
    fn shared(&self) -> Option<&(dyn EndpointFactory + Sync)> {
        (self.side == Side::Server).then_some(self as &(dyn EndpointFactory + Sync))
    }

    fn endpoint(&self, io: MemIo) -> Result<Box<dyn TlsEndpoint>> {
        let mut io = Box::new(io);
        let io_ptr: *mut MemIo = &mut *io;
        let client = self.side == Side::Client;
        // A server takes neither: they name the peer a client dials.
        let (url, peer_id) = match self.side {
            Side::Client => (self.url.as_ptr(), self.peer_id.as_ptr()),
            Side::Server => (std::ptr::null(), std::ptr::null()),
        };
        // SAFETY: a valid model; the transport is boxed and outlives the connection.
        let fd = unsafe {
            ffi::tm_nss_conn_new(
                self.model.fd,
                io_ptr.cast(),
                c_int::from(!client),
                url,
                peer_id,
            )
        };
        if fd.is_null() {
            // SAFETY: reads the thread's last NSPR error.
            bail!(
                "NSS could not make a connection: {}",
                error_text(unsafe { ffi::tm_nss_error() })
            );
        }
        Ok(Box::new(NssEndpoint {
            fd,
            _io: io,
            _model: self.model.clone(),
            done: false,
            peer_closed: false,
        }))
    }
}

struct NssEndpoint {
    fd: *mut ffi::Fd,
    /// Boxed so the pointer NSS's I/O layer holds stays put when the endpoint moves.
    _io: Box<MemIo>,
    _model: Arc<Model>,
    done: bool,
    /// The peer's close_notify arrived behind data that this call returned.
    peer_closed: bool,
}

impl Drop for NssEndpoint {
    fn drop(&mut self) {
        // SAFETY: made by tm_nss_conn_new, closed once (the I/O layer with it). NSS keeps a
        // client's session in its process-wide cache, so nothing is carried by hand.
        unsafe { ffi::tm_nss_close(self.fd) }
    }
}

fn last_error(what: &str) -> anyhow::Error {
    // SAFETY: reads the thread's last NSPR error.
    anyhow!(
        "NSS: {what}: {}",
        error_text(unsafe { ffi::tm_nss_error() })
    )
}

fn would_block() -> bool {
    // SAFETY: reads the thread's last NSPR error.
    unsafe { ffi::tm_nss_error() == ffi::PR_WOULD_BLOCK_ERROR }
}

impl TlsEndpoint for NssEndpoint {
    fn handshake_step(&mut self) -> Result<()> {
        if self.done {
            return Ok(());
        }
        // SAFETY: a valid connection.
        match unsafe { ffi::tm_nss_handshake(self.fd) } {
            0 => {
                self.done = true;
                Ok(())
            }
            1 => Ok(()),
            _ => Err(last_error("handshake")),
        }
    }

    fn is_handshake_complete(&self) -> bool {
        self.done
    }

    fn send(&mut self, data: &[u8]) -> Result<()> {
        c_io::write_all(data, |chunk| {
            // SAFETY: a valid connection and slice.
            let n =
                unsafe { ffi::tm_nss_write(self.fd, chunk.as_ptr().cast(), chunk.len() as c_long) };
            if n <= 0 {
                return Err(last_error("sending"));
            }
            Ok(n as usize)
        })
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        let fd = self.fd;
        c_io::read_into(buf, &mut self.peer_closed, |chunk| {
            // SAFETY: a valid connection and slice.
            let n =
                unsafe { ffi::tm_nss_read(fd, chunk.as_mut_ptr().cast(), chunk.len() as c_long) };
            match n {
                n if n > 0 => c_io::Read::Data(n as usize),
                0 => c_io::Read::Closed,
                _ if would_block() => c_io::Read::Empty,
                _ => c_io::Read::Failed(last_error("receiving")),
            }
        })
    }

    fn negotiated(&self) -> Negotiated {
        let mut c = ffi::Channel::default();
        // SAFETY: a valid connection; one struct written.
        if unsafe { ffi::tm_nss_channel_info(self.fd, &mut c) } != 0 {
            return Negotiated::default();
        }
        let some = |v: u16| (v != 0).then_some(v);
        Negotiated {
            version: some(c.version),
            cipher_suite: some(c.suite),
            group: some(c.group),
            signature_scheme: some(c.scheme),
            resumed: Some(c.resumed != 0),
            peer_certs: Some(c.peer_certs.max(0) as usize),
        }
    }

    fn alpn(&self) -> Option<Vec<u8>> {
        let mut buf = [0u8; 256];
        // SAFETY: a valid connection; at most `buf.len()` bytes written.
        let n =
            unsafe { ffi::tm_nss_alpn_selected(self.fd, buf.as_mut_ptr(), buf.len() as c_uint) };
        (n >= 0).then(|| buf[..n as usize].to_vec())
    }

    fn key_update(&mut self) -> Result<()> {
        // SAFETY: a valid connection.
        check(unsafe { ffi::tm_nss_key_update(self.fd) }, "a KeyUpdate")
    }

    fn sni(&self) -> Option<String> {
        let mut buf = [0 as c_char; 256];
        // SAFETY: a valid connection; at most `buf.len()` bytes written.
        let n = unsafe { ffi::tm_nss_sni(self.fd, buf.as_mut_ptr(), buf.len() as c_uint) };
        (n >= 0).then(|| {
            let bytes: Vec<u8> = buf[..n as usize].iter().map(|b| *b as u8).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        })
    }

    fn close(&mut self) -> Result<()> {
        // SAFETY: a valid connection; sends close_notify without waiting for the peer's.
        check(unsafe { ffi::tm_nss_shutdown(self.fd) }, "close_notify")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_received_alert_is_named_by_number() {
        assert_eq!(
            received_alert("SSL_ERROR_HANDSHAKE_FAILURE_ALERT"),
            Some(40)
        );
        assert_eq!(received_alert("SSL_ERROR_NO_CYPHER_OVERLAP"), None);
    }
}
