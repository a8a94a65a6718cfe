//! wolfSSL, Debian's system library (`libwolfssl-dev`, 5.5.4), through its native C API
//! declared below. wolfSSL is GPL-2.0-or-later and exports a few `SSL_*` symbols of OpenSSL's
//! ABI, so it has a driver of its own (`libssl-drivers/wolfssl`), beside the rustls adapters.
//!
//! Each context pins one version (wolfSSL's per-version methods), suite, group list and
//! signature algorithm; records move through the harness's `MemIo` by wolfSSL's I/O
//! callbacks. Debian builds it without its AES-NI assembly (`--enable-aesni` is not among
//! its configure flags), so its AES-GCM runs on wolfSSL's C code.

use std::ffi::{c_char, c_int, c_long, c_uint, c_ushort, c_void, CStr, CString};
use std::sync::Arc;

use anyhow::{anyhow, bail, Result};
use tlsmatrix_harness::endpoint::{
    EndpointConfig, EndpointFactory, OpenPolicy, TlsEndpoint, TlsLibrary,
};
use tlsmatrix_harness::memio::MemIo;
use tlsmatrix_harness::negotiated::Negotiated;
use tlsmatrix_model::codes;
use tlsmatrix_model::scenario::{Group, Resumption, SigAlg, Version};
use tlsmatrix_model::side::Side;

use crate::c_io;
use crate::c_session::{CSession, SessionSlot};

/// The part of `<wolfssl/ssl.h>` (5.5) this adapter calls, with the constants it needs.
mod ffi {
    use std::ffi::{c_char, c_int, c_long, c_uint, c_ushort, c_void};

    pub type Ctx = c_void;
    pub type Ssl = c_void;
    pub type Method = c_void;
    pub type Session = c_void;
    pub type IoCallback = unsafe extern "C" fn(*mut Ssl, *mut c_char, c_int, *mut c_void) -> c_int;
    pub type VerifyCallback = unsafe extern "C" fn(c_int, *mut c_void) -> c_int;

    pub const SUCCESS: c_int = 1;
    pub const FILETYPE_PEM: c_int = 1;
    pub const VERIFY_NONE: c_int = 0;
    pub const VERIFY_PEER: c_int = 1;
    pub const VERIFY_FAIL_IF_NO_PEER_CERT: c_int = 2;
    pub const SESS_CACHE_OFF: c_long = 0;
    pub const SESS_CACHE_SERVER: c_long = 2;
    pub const ERROR_WANT_READ: c_int = 2;
    pub const ERROR_WANT_WRITE: c_int = 3;
    pub const ERROR_ZERO_RETURN: c_int = 6;
    pub const CBIO_ERR_WANT_READ: c_int = -2;
    pub const SNI_HOST_NAME: u8 = 0;
    pub const TLSV1_2: c_int = 3;
    pub const TLSV1_3: c_int = 4;
    pub const ALPN_FAILED_ON_MISMATCH: u8 = 4;
    /// "received alert fatal error": the alert is in the connection's alert history.
    pub const FATAL_ERROR: c_int = -313;

    #[repr(C)]
    #[derive(Default)]
    pub struct Alert {
        pub code: c_int,
        pub level: c_int,
    }

    #[repr(C)]
    #[derive(Default)]
    pub struct AlertHistory {
        pub last_rx: Alert,
        pub last_tx: Alert,
    }
    pub const TLS1_2_VERSION: c_int = 0x0303;
    pub const TLS1_3_VERSION: c_int = 0x0304;
    // wolfSSL's signature and key type codes (sums of their OIDs' bytes, asn.h).
    pub const CTC_SHA256_W_ECDSA: c_int = 524;
    pub const CTC_SHA384_W_ECDSA: c_int = 525;
    pub const CTC_SHA256_W_RSA: c_int = 655;
    pub const ECDSA_K: c_int = 518;

    #[link(name = "wolfssl")]
    extern "C" {
        pub fn wolfSSL_Init() -> c_int;
        pub fn wolfSSL_lib_version() -> *const c_char;
        pub fn wolfTLSv1_2_client_method() -> *mut Method;
        pub fn wolfTLSv1_2_server_method() -> *mut Method;
        pub fn wolfTLSv1_3_client_method() -> *mut Method;
        pub fn wolfTLSv1_3_server_method() -> *mut Method;
        pub fn wolfSSLv23_server_method() -> *mut Method;
        pub fn wolfSSLv23_client_method() -> *mut Method;
        pub fn wolfSSL_CTX_SetMinVersion(ctx: *mut Ctx, version: c_int) -> c_int;
        pub fn wolfSSL_CTX_new(method: *mut Method) -> *mut Ctx;
        pub fn wolfSSL_CTX_free(ctx: *mut Ctx);
        pub fn wolfSSL_CTX_use_certificate_chain_buffer_format(
            ctx: *mut Ctx,
            buf: *const u8,
            len: c_long,
            format: c_int,
        ) -> c_int;
        pub fn wolfSSL_CTX_use_PrivateKey_buffer(
            ctx: *mut Ctx,
            buf: *const u8,
            len: c_long,
            format: c_int,
        ) -> c_int;
        pub fn wolfSSL_CTX_load_verify_buffer(
            ctx: *mut Ctx,
            buf: *const u8,
            len: c_long,
            format: c_int,
        ) -> c_int;
        pub fn wolfSSL_CTX_set_verify(ctx: *mut Ctx, mode: c_int, cb: Option<VerifyCallback>);
        pub fn wolfSSL_CTX_set_cipher_list(ctx: *mut Ctx, list: *const c_char) -> c_int;
        pub fn wolfSSL_CTX_set1_sigalgs_list(ctx: *mut Ctx, list: *const c_char) -> c_int;
        pub fn wolfSSL_CTX_set_groups(ctx: *mut Ctx, groups: *mut c_int, count: c_int) -> c_int;
        pub fn wolfSSL_CTX_set_session_cache_mode(ctx: *mut Ctx, mode: c_long) -> c_long;
        pub fn wolfSSL_CTX_UseSessionTicket(ctx: *mut Ctx) -> c_int;
        pub fn wolfSSL_CTX_no_ticket_TLSv13(ctx: *mut Ctx) -> c_int;
        pub fn wolfSSL_CTX_set_num_tickets(ctx: *mut Ctx, n: usize) -> c_int;
        pub fn wolfSSL_CTX_SetIORecv(ctx: *mut Ctx, cb: IoCallback);
        pub fn wolfSSL_CTX_SetIOSend(ctx: *mut Ctx, cb: IoCallback);
        pub fn wolfSSL_new(ctx: *mut Ctx) -> *mut Ssl;
        pub fn wolfSSL_free(ssl: *mut Ssl);
        pub fn wolfSSL_SetIOReadCtx(ssl: *mut Ssl, ctx: *mut c_void);
        pub fn wolfSSL_SetIOWriteCtx(ssl: *mut Ssl, ctx: *mut c_void);
        pub fn wolfSSL_UseSNI(ssl: *mut Ssl, kind: u8, data: *const c_void, len: u16) -> c_int;
        pub fn wolfSSL_check_domain_name(ssl: *mut Ssl, name: *const c_char) -> c_int;
        pub fn wolfSSL_UseKeyShare(ssl: *mut Ssl, group: u16) -> c_int;
        pub fn wolfSSL_NoKeyShares(ssl: *mut Ssl) -> c_int;
        pub fn wolfSSL_connect(ssl: *mut Ssl) -> c_int;
        pub fn wolfSSL_accept(ssl: *mut Ssl) -> c_int;
        pub fn wolfSSL_get_error(ssl: *mut Ssl, ret: c_int) -> c_int;
        pub fn wolfSSL_read(ssl: *mut Ssl, buf: *mut c_void, len: c_int) -> c_int;
        pub fn wolfSSL_write(ssl: *mut Ssl, buf: *const c_void, len: c_int) -> c_int;
        pub fn wolfSSL_shutdown(ssl: *mut Ssl) -> c_int;
        pub fn wolfSSL_version(ssl: *mut Ssl) -> c_int;
        pub fn wolfSSL_get_current_cipher_suite(ssl: *mut Ssl) -> c_int;
        pub fn wolfSSL_get_curve_name(ssl: *mut Ssl) -> *const c_char;
        pub fn wolfSSL_get_signature_nid(ssl: *mut Ssl, nid: *mut c_int) -> c_int;
        pub fn wolfSSL_get_peer_certificate(ssl: *mut Ssl) -> *mut c_void;
        pub fn wolfSSL_X509_free(x509: *mut c_void);
        pub fn wolfSSL_X509_get_pubkey_type(x509: *mut c_void) -> c_int;
        pub fn wolfSSL_X509_get_pubkey(x509: *mut c_void) -> *mut c_void;
        pub fn wolfSSL_EVP_PKEY_bits(key: *mut c_void) -> c_int;
        pub fn wolfSSL_EVP_PKEY_free(key: *mut c_void);
        pub fn wolfSSL_CTX_UseSupportedCurve(ctx: *mut Ctx, name: u16) -> c_int;
        pub fn wolfSSL_session_reused(ssl: *mut Ssl) -> c_int;
        pub fn wolfSSL_get1_session(ssl: *mut Ssl) -> *mut Session;
        pub fn wolfSSL_set_session(ssl: *mut Ssl, session: *mut Session) -> c_int;
        pub fn wolfSSL_SESSION_free(session: *mut Session);
        pub fn wolfSSL_get_peer_chain(ssl: *mut Ssl) -> *mut c_void;
        pub fn wolfSSL_get_chain_count(chain: *mut c_void) -> c_int;
        pub fn wolfSSL_update_keys(ssl: *mut Ssl) -> c_int;
        pub fn wolfSSL_get_servername(ssl: *mut Ssl, kind: u8) -> *const c_char;
        pub fn wolfSSL_UseALPN(ssl: *mut Ssl, list: *mut c_char, len: c_uint, options: u8)
            -> c_int;
        pub fn wolfSSL_ALPN_GetProtocol(
            ssl: *mut Ssl,
            name: *mut *mut c_char,
            len: *mut c_ushort,
        ) -> c_int;
        pub fn wolfSSL_get_alert_history(ssl: *mut Ssl, h: *mut AlertHistory) -> c_int;
        pub fn wolfSSL_ERR_error_string(code: std::ffi::c_ulong, buf: *mut c_char) -> *mut c_char;
    }

    extern "C" {
        /// csrc/wolfssl_floor.c's table of floor calls, and the last error it met.
        pub fn tm_wolfssl_floor() -> *const crate::floor_glue::Fns;
        pub fn tm_wolfssl_floor_error() -> c_int;
    }
}

fn library_version() -> String {
    // SAFETY: a static string.
    unsafe { CStr::from_ptr(ffi::wolfSSL_lib_version()) }
        .to_string_lossy()
        .into_owned()
}

/// wolfSSL's text for an error code (its codes are negative numbers).
fn error_text(code: c_int) -> String {
    let mut buf = [0 as c_char; 256];
    // SAFETY: the buffer is the 80+ bytes the call writes at most, NUL-terminated.
    let s = unsafe { ffi::wolfSSL_ERR_error_string(code as std::ffi::c_ulong, buf.as_mut_ptr()) };
    if s.is_null() {
        return format!("error {code}");
    }
    // SAFETY: NUL-terminated text in our buffer.
    let text = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
    format!("{text} ({code})")
}

/// The last wolfCrypt error the floor's glue met on this thread.
fn floor_error() -> String {
    // SAFETY: reads a thread-local code.
    error_text(unsafe { ffi::tm_wolfssl_floor_error() })
}

fn check(rc: c_int, what: &str) -> Result<()> {
    if rc == ffi::SUCCESS {
        Ok(())
    } else {
        Err(anyhow!("wolfSSL refused {what}: {}", error_text(rc)))
    }
}

/// wolfSSL's code for a key-exchange group (its `WOLFSSL_ECC_*`, the TLS code points).
fn group_id(g: Group) -> Option<c_int> {
    match g {
        g if g.is_post_quantum() => None,
        g => Some(c_int::from(codes::group_code(g))),
    }
}

/// The signature algorithm list wolfSSL takes (OpenSSL's `SIG+HASH` form).
fn sigalg_item(sig: SigAlg) -> Result<&'static str> {
    Ok(match sig {
        SigAlg::EcdsaP256 => "ECDSA+SHA256",
        SigAlg::EcdsaP384 => "ECDSA+SHA384",
        SigAlg::Rsa2048 | SigAlg::Rsa3072 => "RSA-PSS+SHA256",
        SigAlg::Ed25519 => "ED25519",
        SigAlg::MlDsa44 | SigAlg::MlDsa65 | SigAlg::MlDsa87 => {
            bail!("wolfSSL as Debian builds it has no {sig} signature scheme")
        }
    })
}

pub struct WolfsslLibrary;

impl WolfsslLibrary {
    pub fn new() -> WolfsslLibrary {
        // SAFETY: wolfSSL's one-time initialisation; later calls only count.
        unsafe { ffi::wolfSSL_Init() };
        WolfsslLibrary
    }
}

impl Default for WolfsslLibrary {
    fn default() -> Self {
        Self::new()
    }
}

impl TlsLibrary for WolfsslLibrary {
    fn name(&self) -> &'static str {
        "wolfssl"
    }

    fn version(&self) -> String {
        format!("wolfSSL {}", library_version())
    }

    fn library_file(&self) -> Option<std::path::PathBuf> {
        crate::loaded::object_of(ffi::wolfSSL_Init as *const c_void)
    }

    fn handshake_crypto(
        &self,
    ) -> Result<Box<dyn tlsmatrix_harness::floor::HandshakeCrypto>, String> {
        Ok(Box::new(crate::floor_glue::GlueCrypto {
            api: format!(
                "wolfCrypt {} (wc_curve25519, wc_ecc, wc_RsaPSS, wc_ed25519, wc_Hmac)",
                library_version()
            ),
            // SAFETY: a static table.
            fns: unsafe { &*ffi::tm_wolfssl_floor() },
            last_error: floor_error,
            version: format!("wolfSSL {} as Debian builds it", library_version()),
        }))
    }

    fn supports(&self, cfg: &EndpointConfig) -> Result<(), String> {
        if cfg.offers_post_quantum() {
            return Err(format!(
                "wolfSSL {} as Debian builds it has no ML-KEM (no --enable-kyber)",
                library_version()
            ));
        }
        if cfg.sig.is_mldsa() {
            return Err(format!(
                "wolfSSL {} as Debian builds it has no ML-DSA (no --enable-dilithium)",
                library_version()
            ));
        }
        Ok(())
    }

    /// A client reports the scheme it verified only where the server's key alone settles it
    /// (see `signature_scheme`); other cells could not be checked (`NoVerifiedSchemeReport`).
    fn supports_side(&self, side: Side, cfg: &EndpointConfig) -> Result<(), String> {
        self.supports(cfg)?;
        if cfg.open.is_none()
            && side == Side::Client
            && !tlsmatrix_model::impls::key_settles_scheme(cfg.version, cfg.sig)
        {
            return Err(format!(
                "wolfSSL {} cannot say which signature scheme it verified as a client (it has no SSL_get_peer_signature_nid), and the server's key does not settle it here, so the cell could not be checked",
                library_version()
            ));
        }
        Ok(())
    }

    fn factory(&self, side: Side, cfg: &EndpointConfig) -> Result<Box<dyn EndpointFactory>> {
        // Not supports_side: its scheme rule is for measured cells, which the run checks
        // before it asks for a factory; interop checks what the client does report.
        self.supports(cfg).map_err(|e| anyhow!(e))?;
        if let Some(open) = &cfg.open {
            return open_factory(side, cfg, open);
        }
        // SAFETY: the method constructors return static tables.
        let method = unsafe {
            match (cfg.version, side) {
                (Version::Tls12, Side::Client) => ffi::wolfTLSv1_2_client_method(),
                (Version::Tls12, Side::Server) => ffi::wolfTLSv1_2_server_method(),
                (Version::Tls13, Side::Client) => ffi::wolfTLSv1_3_client_method(),
                (Version::Tls13, Side::Server) => ffi::wolfTLSv1_3_server_method(),
            }
        };
        // SAFETY: a valid method; the context takes it over.
        let ctx = Context(unsafe { ffi::wolfSSL_CTX_new(method) });
        if ctx.0.is_null() {
            bail!("wolfSSL could not make a context");
        }
        let c = ctx.0;
        let suite = codes::cipher_suite_code(cfg.version, cfg.aead, cfg.sig);
        // wolfSSL knows suites by their IANA names too.
        let name = codes::suite_name(suite);
        let cname = CString::new(name.as_str())?;
        let sigalgs = CString::new(sigalg_item(cfg.sig)?)?;
        let mut groups: Vec<c_int> = cfg
            .groups_for(side)
            .iter()
            .filter_map(|g| group_id(*g))
            .collect();
        // SAFETY: a valid context; each call copies what it is given.
        unsafe {
            check(
                ffi::wolfSSL_CTX_set_cipher_list(c, cname.as_ptr()),
                &format!("the suite {name}"),
            )?;
            check(
                ffi::wolfSSL_CTX_set1_sigalgs_list(c, sigalgs.as_ptr()),
                "the signature algorithm",
            )?;
            set_groups(c, cfg.version, &mut groups)?;
            ffi::wolfSSL_CTX_SetIORecv(c, io_recv);
            ffi::wolfSSL_CTX_SetIOSend(c, io_send);
        }
        let pem = |s: &str| (s.as_ptr(), s.len() as std::ffi::c_long);
        let own = |chain: &str, key: &str| use_own(c, chain, key);
        let trust = |ca: &str| -> Result<()> {
            let (p, l) = pem(ca);
            // SAFETY: as above.
            check(
                unsafe { ffi::wolfSSL_CTX_load_verify_buffer(c, p, l, ffi::FILETYPE_PEM) },
                "the CA certificate",
            )
        };
        match side {
            Side::Client => {
                trust(&cfg.certs.ca_pem)?;
                // SAFETY: valid context.
                unsafe { ffi::wolfSSL_CTX_set_verify(c, ffi::VERIFY_PEER, None) };
                if cfg.client_cert {
                    own(&cfg.certs.client_chain_pem, &cfg.certs.client_key_pem)?;
                }
            }
            Side::Server => {
                own(cfg.server_chain_pem(), &cfg.certs.key_pem)?;
                let mode = if cfg.require_client_cert {
                    trust(&cfg.certs.ca_pem)?;
                    ffi::VERIFY_PEER | ffi::VERIFY_FAIL_IF_NO_PEER_CERT
                } else {
                    ffi::VERIFY_NONE
                };
                // SAFETY: valid context.
                unsafe { ffi::wolfSSL_CTX_set_verify(c, mode, None) };
            }
        }
        resumption(c, side, cfg.version, cfg.resumption)?;
        Ok(Box::new(WolfsslFactory {
            ctx: Arc::new(ctx),
            side,
            own_key: cfg.sig,
            sni: Some(CString::new(cfg.server_name.as_str())?),
            verify_name: true,
            key_share: cfg.groups_for(side).first().and_then(|g| group_id(*g)),
            session: (side == Side::Client && cfg.resumption != Resumption::Full)
                .then(Arc::default),
            alpn: (!cfg.alpn.is_empty())
                .then(|| CString::new(cfg.alpn.join(",")))
                .transpose()?,
        }))
    }
}

/// Gives a context its groups, most preferred first: wolfSSL_CTX_set_groups is for
/// contexts that reach TLS 1.3; a TLS 1.2 context lists curves instead.
fn set_groups(c: *mut ffi::Ctx, highest: Version, groups: &mut [c_int]) -> Result<()> {
    // SAFETY: valid context; wolfSSL copies the list.
    unsafe {
        match highest {
            Version::Tls13 => check(
                ffi::wolfSSL_CTX_set_groups(c, groups.as_mut_ptr(), groups.len() as c_int),
                "the group list",
            ),
            Version::Tls12 => groups.iter().try_for_each(|g| {
                check(
                    ffi::wolfSSL_CTX_UseSupportedCurve(c, *g as u16),
                    "a supported curve",
                )
            }),
        }
    }
}

/// Gives a context its certificate chain and key (PEM).
fn use_own(c: *mut ffi::Ctx, chain: &str, key: &str) -> Result<()> {
    // SAFETY: valid context; wolfSSL copies the PEM text.
    unsafe {
        check(
            ffi::wolfSSL_CTX_use_certificate_chain_buffer_format(
                c,
                chain.as_ptr(),
                chain.len() as c_long,
                ffi::FILETYPE_PEM,
            ),
            "the certificate chain",
        )?;
        check(
            ffi::wolfSSL_CTX_use_PrivateKey_buffer(
                c,
                key.as_ptr(),
                key.len() as c_long,
                ffi::FILETYPE_PEM,
            ),
            "the private key",
        )
    }
}

/// A context on wolfSSL's own defaults within the open policy (the BoGo shim, and `peer
/// server --defaults` for outside test tools): the method that spans the policy's versions,
/// every suite and signature algorithm wolfSSL enables by default (its default list is every
/// suite it was built with), the runner's groups or wolfSSL's own, a session cache and
/// tickets, and the runner's certificate. Peer chains are accepted whatever they are, as
/// BoringSSL's shim accepts them; the handshake signature is still checked.
fn open_factory(
    side: Side,
    cfg: &EndpointConfig,
    open: &OpenPolicy,
) -> Result<Box<dyn EndpointFactory>> {
    use Version::{Tls12, Tls13};
    // SAFETY: static method tables; the context takes one over.
    let method = unsafe {
        match (side, open.min_version, open.max_version) {
            (Side::Client, Tls12, Tls12) => ffi::wolfTLSv1_2_client_method(),
            (Side::Client, Tls13, _) => ffi::wolfTLSv1_3_client_method(),
            (Side::Client, Tls12, Tls13) => ffi::wolfSSLv23_client_method(),
            (Side::Server, Tls12, Tls12) => ffi::wolfTLSv1_2_server_method(),
            (Side::Server, Tls13, _) => ffi::wolfTLSv1_3_server_method(),
            (Side::Server, Tls12, Tls13) => ffi::wolfSSLv23_server_method(),
        }
    };
    // SAFETY: a valid method; the context takes it over.
    let ctx = Context(unsafe { ffi::wolfSSL_CTX_new(method) });
    if ctx.0.is_null() {
        bail!("wolfSSL could not make a context");
    }
    let c = ctx.0;
    let lowest = match open.min_version {
        Tls12 => ffi::TLSV1_2,
        Tls13 => ffi::TLSV1_3,
    };
    let mut groups: Vec<c_int> = cfg.groups.iter().filter_map(|g| group_id(*g)).collect();
    // SAFETY: a valid context; each call copies what it is given.
    unsafe {
        // The version-flexible methods reach down to TLS 1.0 unless told.
        check(
            ffi::wolfSSL_CTX_SetMinVersion(c, lowest),
            "the lowest version",
        )?;
        let cache = match side {
            Side::Server => ffi::SESS_CACHE_SERVER,
            Side::Client => ffi::SESS_CACHE_OFF,
        };
        ffi::wolfSSL_CTX_set_session_cache_mode(c, cache);
        check(ffi::wolfSSL_CTX_UseSessionTicket(c), "session tickets")?;
        if !groups.is_empty() {
            set_groups(c, open.max_version, &mut groups)?;
        }
        ffi::wolfSSL_CTX_SetIORecv(c, io_recv);
        ffi::wolfSSL_CTX_SetIOSend(c, io_send);
    }
    match side {
        Side::Server => {
            use_own(c, cfg.server_chain_pem(), &cfg.certs.key_pem)?;
            let mode = match (open.request_client_cert, cfg.require_client_cert) {
                (_, true) => ffi::VERIFY_PEER | ffi::VERIFY_FAIL_IF_NO_PEER_CERT,
                (true, false) => ffi::VERIFY_PEER,
                (false, false) => ffi::VERIFY_NONE,
            };
            // SAFETY: valid context.
            unsafe { ffi::wolfSSL_CTX_set_verify(c, mode, Some(accept_any_chain)) };
        }
        Side::Client => {
            if cfg.client_cert {
                use_own(c, &cfg.certs.client_chain_pem, &cfg.certs.client_key_pem)?;
            }
            // SAFETY: valid context.
            unsafe { ffi::wolfSSL_CTX_set_verify(c, ffi::VERIFY_NONE, None) };
        }
    }
    Ok(Box::new(WolfsslFactory {
        ctx: Arc::new(ctx),
        side,
        own_key: cfg.sig,
        sni: open.sni.as_deref().map(CString::new).transpose()?,
        verify_name: false,
        key_share: (side == Side::Client)
            .then(|| groups.first().copied())
            .flatten(),
        session: (side == Side::Client).then(Arc::default),
        alpn: (!cfg.alpn.is_empty())
            .then(|| CString::new(cfg.alpn.join(",")))
            .transpose()?,
    }))
}

/// Accepts the peer's chain whatever it is (the chain is not what an open configuration
/// tests); wolfSSL still checks the handshake signature against the certificate's key.
unsafe extern "C" fn accept_any_chain(_preverify: c_int, _store: *mut c_void) -> c_int {
    1
}

/// Sets what a context keeps so that a later connection can resume. wolfSSL's server cache
/// and TLS 1.3 tickets are on by default, so a full-handshake scenario turns them off.
fn resumption(c: *mut ffi::Ctx, side: Side, version: Version, mode: Resumption) -> Result<()> {
    // SAFETY: valid context.
    unsafe {
        let cache = if side == Side::Server && mode == Resumption::SessionId {
            ffi::SESS_CACHE_SERVER
        } else {
            ffi::SESS_CACHE_OFF
        };
        ffi::wolfSSL_CTX_set_session_cache_mode(c, cache);
        if side == Side::Server && version == Version::Tls13 {
            if mode == Resumption::Ticket {
                check(ffi::wolfSSL_CTX_set_num_tickets(c, 1), "a ticket count")?;
            } else {
                // Returns 0 on success, unlike most of the API.
                if ffi::wolfSSL_CTX_no_ticket_TLSv13(c) != 0 {
                    bail!("wolfSSL refused turning TLS 1.3 tickets off");
                }
            }
        }
        if mode == Resumption::Ticket && version == Version::Tls12 {
            check(ffi::wolfSSL_CTX_UseSessionTicket(c), "session tickets")?;
        }
    }
    Ok(())
}

struct Context(*mut ffi::Ctx);

// SAFETY: a wolfSSL context is shared read-only by the connections made from it.
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: made by wolfSSL_CTX_new, freed once, after every connection of it.
        unsafe { ffi::wolfSSL_CTX_free(self.0) }
    }
}

struct WolfsslFactory {
    ctx: Arc<Context>,
    side: Side,
    /// The key of this side's own certificate.
    own_key: SigAlg,
    /// Client: the name sent as SNI, if any.
    sni: Option<CString>,
    /// Client: whether the server certificate must name `sni` (a pinned configuration).
    verify_name: bool,
    /// The group a client sends its one key share for (TLS 1.3).
    key_share: Option<c_int>,
    session: Option<Arc<SessionSlot>>,
    /// The ALPN protocols offered or accepted, as wolfSSL takes them: comma-separated.
    alpn: Option<CString>,
}

impl EndpointFactory for WolfsslFactory {
    /// A server's WOLFSSL_CTX is set up before any connection and only read after, which
    /// wolfSSL allows from many threads (its session cache and reference counts take its own
    /// locks in a build with threads, as Debian's is).
    fn shared(&self) -> Option<&(dyn EndpointFactory + Sync)> {
        (self.side == Side::Server).then_some(self as &(dyn EndpointFactory + Sync))
    }

    fn endpoint(&self, io: MemIo) -> Result<Box<dyn TlsEndpoint>> {
        // SAFETY: a valid context.
        let ssl = unsafe { ffi::wolfSSL_new(self.ctx.0) };
        if ssl.is_null() {
            bail!("wolfSSL could not make a connection");
        }
        let mut io = Box::new(io);
        let io_ptr: *mut MemIo = &mut *io;
        // SAFETY: ssl is valid; the transport is boxed and lives as long as the endpoint.
        unsafe {
            ffi::wolfSSL_SetIOReadCtx(ssl, io_ptr.cast());
            ffi::wolfSSL_SetIOWriteCtx(ssl, io_ptr.cast());
        }
        // Made first, so that an error below frees the connection.
        let ep = WolfsslEndpoint {
            ssl,
            _io: io,
            _ctx: self.ctx.clone(),
            side: self.side,
            own_key: self.own_key,
            done: false,
            slot: self.session.clone(),
            peer_closed: false,
        };
        if let Some(alpn) = &self.alpn {
            let mut list = alpn.as_bytes().to_vec();
            // SAFETY: valid ssl; wolfSSL copies the list. A server with nothing in common
            // refuses with no_application_protocol.
            check(
                unsafe {
                    ffi::wolfSSL_UseALPN(
                        ssl,
                        list.as_mut_ptr().cast(),
                        list.len() as c_uint,
                        ffi::ALPN_FAILED_ON_MISMATCH,
                    )
                },
                "ALPN",
            )?;
        }
        if self.side == Side::Client {
            // SAFETY: valid ssl; the calls copy the name.
            unsafe {
                if let Some(sni) = &self.sni {
                    let name = sni.as_bytes();
                    check(
                        ffi::wolfSSL_UseSNI(
                            ssl,
                            ffi::SNI_HOST_NAME,
                            name.as_ptr().cast(),
                            name.len() as u16,
                        ),
                        "SNI",
                    )?;
                    if self.verify_name {
                        check(
                            ffi::wolfSSL_check_domain_name(ssl, sni.as_ptr()),
                            "the expected host name",
                        )?;
                    }
                }
                if let Some(g) = self.key_share {
                    ffi::wolfSSL_NoKeyShares(ssl);
                    check(ffi::wolfSSL_UseKeyShare(ssl, g as u16), "the key share")?;
                }
            }
            if let Some(slot) = &self.session {
                // SAFETY: a session of this context; wolfSSL copies it.
                if let Some(rc) = slot.with(|s| unsafe { ffi::wolfSSL_set_session(ssl, s) }) {
                    check(rc, "the session")?;
                }
            }
        }
        Ok(Box::new(ep))
    }
}

/// wolfSSL's receive callback: the harness's transport, or "want read" when it is empty.
unsafe extern "C" fn io_recv(
    _: *mut ffi::Ssl,
    buf: *mut c_char,
    len: c_int,
    ctx: *mut c_void,
) -> c_int {
    use std::io::Read;
    let io = &mut *(ctx as *mut MemIo);
    let buf = std::slice::from_raw_parts_mut(buf.cast::<u8>(), len as usize);
    match io.read(buf) {
        Ok(0) | Err(_) => ffi::CBIO_ERR_WANT_READ,
        Ok(n) => n as c_int,
    }
}

unsafe extern "C" fn io_send(
    _: *mut ffi::Ssl,
    buf: *mut c_char,
    len: c_int,
    ctx: *mut c_void,
) -> c_int {
    use std::io::Write;
    let io = &mut *(ctx as *mut MemIo);
    let buf = std::slice::from_raw_parts(buf.cast::<u8>(), len as usize);
    match io.write(buf) {
        Ok(n) => n as c_int,
        Err(_) => -1,
    }
}

struct WolfsslEndpoint {
    ssl: *mut ffi::Ssl,
    /// Boxed so the pointer wolfSSL holds stays put when the endpoint moves.
    _io: Box<MemIo>,
    _ctx: Arc<Context>,
    side: Side,
    own_key: SigAlg,
    done: bool,
    /// Client: where the session is kept for the next connection.
    slot: Option<Arc<SessionSlot>>,
    /// The peer's close_notify arrived behind data that this call returned: wolfSSL reports
    /// it only once, so the next call says so.
    peer_closed: bool,
}

impl Drop for WolfsslEndpoint {
    fn drop(&mut self) {
        // The client keeps its newest session, read at the end as a TLS 1.3 ticket arrives
        // after the handshake.
        if let (true, Some(slot)) = (self.done, &self.slot) {
            // SAFETY: valid ssl; the session returned is ours to free.
            let s = unsafe { ffi::wolfSSL_get1_session(self.ssl) };
            if !s.is_null() {
                // SAFETY: wolfSSL_get1_session's session is the caller's to free.
                slot.keep(unsafe { CSession::new(s, ffi::wolfSSL_SESSION_free) });
            }
        }
        // SAFETY: made by wolfSSL_new, freed once.
        unsafe { ffi::wolfSSL_free(self.ssl) }
    }
}

impl WolfsslEndpoint {
    fn error(&self, rc: c_int, what: &str) -> anyhow::Error {
        // SAFETY: valid ssl.
        let code = unsafe { ffi::wolfSSL_get_error(self.ssl, rc) };
        self.error_of(code, what)
    }

    /// The error for wolfSSL's code, naming the alert the peer sent when that was it.
    fn error_of(&self, code: c_int, what: &str) -> anyhow::Error {
        if code == ffi::FATAL_ERROR {
            let mut h = ffi::AlertHistory::default();
            // SAFETY: valid ssl; one struct written.
            if unsafe { ffi::wolfSSL_get_alert_history(self.ssl, &mut h) } == ffi::SUCCESS {
                return anyhow!(
                    "wolfSSL: {what}: received alert [{}]: {}",
                    h.last_rx.code,
                    error_text(code)
                );
            }
        }
        anyhow!("wolfSSL: {what}: {}", error_text(code))
    }

    /// wolfSSL's error for a call that returned `rc`, unless it only waits for the peer.
    fn waiting(&self, rc: c_int) -> bool {
        // SAFETY: valid ssl.
        let code = unsafe { ffi::wolfSSL_get_error(self.ssl, rc) };
        code == ffi::ERROR_WANT_READ || code == ffi::ERROR_WANT_WRITE
    }
}

impl TlsEndpoint for WolfsslEndpoint {
    fn handshake_step(&mut self) -> Result<()> {
        if self.done {
            return Ok(());
        }
        // SAFETY: valid ssl.
        let rc = unsafe {
            match self.side {
                Side::Client => ffi::wolfSSL_connect(self.ssl),
                Side::Server => ffi::wolfSSL_accept(self.ssl),
            }
        };
        if rc == ffi::SUCCESS {
            self.done = true;
            return Ok(());
        }
        if self.waiting(rc) {
            return Ok(());
        }
        Err(self.error(rc, "handshake"))
    }

    fn is_handshake_complete(&self) -> bool {
        self.done
    }

    fn send(&mut self, data: &[u8]) -> Result<()> {
        c_io::write_all(data, |chunk| {
            // SAFETY: valid ssl and slice.
            let n = unsafe {
                ffi::wolfSSL_write(self.ssl, chunk.as_ptr().cast(), chunk.len() as c_int)
            };
            if n <= 0 {
                return Err(self.error(n, "sending"));
            }
            Ok(n as usize)
        })
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut closed = self.peer_closed;
        let got = c_io::read_into(buf, &mut closed, |chunk| {
            // SAFETY: valid ssl and slice.
            let n = unsafe {
                ffi::wolfSSL_read(self.ssl, chunk.as_mut_ptr().cast(), chunk.len() as c_int)
            };
            if n > 0 {
                return c_io::Read::Data(n as usize);
            }
            // SAFETY: valid ssl.
            match unsafe { ffi::wolfSSL_get_error(self.ssl, n) } {
                ffi::ERROR_ZERO_RETURN => c_io::Read::Closed,
                ffi::ERROR_WANT_READ | ffi::ERROR_WANT_WRITE => c_io::Read::Empty,
                code => c_io::Read::Failed(self.error_of(code, "receiving")),
            }
        });
        self.peer_closed = closed;
        got
    }

    fn negotiated(&self) -> Negotiated {
        let s = self.ssl;
        // SAFETY: valid ssl; these read what the handshake settled.
        let (version, suite, curve, resumed) = unsafe {
            let curve = ffi::wolfSSL_get_curve_name(s);
            (
                ffi::wolfSSL_version(s),
                ffi::wolfSSL_get_current_cipher_suite(s),
                (!curve.is_null()).then(|| CStr::from_ptr(curve).to_string_lossy().into_owned()),
                ffi::wolfSSL_session_reused(s) == 1,
            )
        };
        let version = match version {
            ffi::TLS1_2_VERSION => Some(Version::Tls12),
            ffi::TLS1_3_VERSION => Some(Version::Tls13),
            _ => None,
        };
        let group = curve.as_deref().and_then(|c| match c {
            "X25519" => Some(Group::X25519),
            "SECP256R1" => Some(Group::P256),
            "SECP384R1" => Some(Group::P384),
            _ => None,
        });
        Negotiated {
            version: version.map(codes::version_code),
            cipher_suite: u16::try_from(suite).ok().filter(|c| *c != 0),
            group: group.map(codes::group_code),
            signature_scheme: self.signature_scheme(version),
            resumed: Some(resumed),
            peer_certs: Some(self.peer_certs()),
        }
    }

    fn alpn(&self) -> Option<Vec<u8>> {
        let mut name: *mut c_char = std::ptr::null_mut();
        let mut len: c_ushort = 0;
        // SAFETY: valid ssl; the name stays wolfSSL's and is copied here.
        unsafe {
            (ffi::wolfSSL_ALPN_GetProtocol(self.ssl, &mut name, &mut len) == ffi::SUCCESS
                && !name.is_null())
            .then(|| std::slice::from_raw_parts(name.cast::<u8>(), len.into()).to_vec())
        }
    }

    fn key_update(&mut self) -> Result<()> {
        // SAFETY: valid ssl.
        let rc = unsafe { ffi::wolfSSL_update_keys(self.ssl) };
        if rc == ffi::SUCCESS || self.waiting(rc) {
            return Ok(());
        }
        Err(self.error(rc, "sending a KeyUpdate"))
    }

    fn sni(&self) -> Option<String> {
        // SAFETY: valid ssl; the name is wolfSSL's, copied here.
        unsafe {
            let p = ffi::wolfSSL_get_servername(self.ssl, ffi::SNI_HOST_NAME);
            (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
        }
    }

    fn close(&mut self) -> Result<()> {
        // SAFETY: valid ssl; sends close_notify without waiting for the peer's.
        unsafe { ffi::wolfSSL_shutdown(self.ssl) };
        Ok(())
    }
}

impl WolfsslEndpoint {
    /// The signature scheme of the handshake, where wolfSSL's reports settle it. A server
    /// names the algorithm and hash it signed with (`wolfSSL_get_signature_nid`), but not
    /// RSA's padding, which TLS 1.3 fixes to PSS; an Ed25519 key has one scheme. A client
    /// reports nothing it verified, so only the server's key can settle it:
    /// ECDSA in TLS 1.3, where the curve names the hash (it gives no decoded Ed25519 leaf).
    fn signature_scheme(&self, version: Option<Version>) -> Option<u16> {
        let tls13 = version == Some(Version::Tls13);
        let scheme = |sig: SigAlg| Some(codes::signature_scheme_code(sig));
        match self.side {
            Side::Server => {
                if self.own_key == SigAlg::Ed25519 {
                    return scheme(SigAlg::Ed25519);
                }
                let mut nid = 0;
                // SAFETY: valid ssl; one int written.
                if unsafe { ffi::wolfSSL_get_signature_nid(self.ssl, &mut nid) } != ffi::SUCCESS {
                    return None;
                }
                match nid {
                    ffi::CTC_SHA256_W_ECDSA => Some(0x0403),
                    ffi::CTC_SHA384_W_ECDSA => Some(0x0503),
                    ffi::CTC_SHA256_W_RSA if tls13 => Some(0x0804),
                    _ => None,
                }
            }
            Side::Client => {
                // SAFETY: valid ssl; the certificate and key are copies we free.
                unsafe {
                    // wolfSSL 5.5.4 gives no decoded Ed25519 leaf, from the connection or
                    // its chain; the ECDSA ones it gives.
                    let cert = ffi::wolfSSL_get_peer_certificate(self.ssl);
                    if cert.is_null() {
                        return None;
                    }
                    let kind = ffi::wolfSSL_X509_get_pubkey_type(cert);
                    let bits = if kind == ffi::ECDSA_K {
                        let key = ffi::wolfSSL_X509_get_pubkey(cert);
                        let b = if key.is_null() {
                            0
                        } else {
                            ffi::wolfSSL_EVP_PKEY_bits(key)
                        };
                        ffi::wolfSSL_EVP_PKEY_free(key);
                        b
                    } else {
                        0
                    };
                    ffi::wolfSSL_X509_free(cert);
                    match (kind, bits) {
                        (ffi::ECDSA_K, 256) if tls13 => scheme(SigAlg::EcdsaP256),
                        (ffi::ECDSA_K, 384) if tls13 => scheme(SigAlg::EcdsaP384),
                        _ => None,
                    }
                }
            }
        }
    }

    fn peer_certs(&self) -> usize {
        // SAFETY: valid ssl; the chain belongs to the connection.
        unsafe {
            let chain = ffi::wolfSSL_get_peer_chain(self.ssl);
            if chain.is_null() {
                0
            } else {
                ffi::wolfSSL_get_chain_count(chain).max(0) as usize
            }
        }
    }
}
