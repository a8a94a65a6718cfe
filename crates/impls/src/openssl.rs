//! OpenSSL through the `openssl` crate: the system libssl, or whichever libssl this build links.
//! Each context pins exactly one version, suite, set of groups and signature algorithm.

use std::os::raw::{c_int, c_long, c_void};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Context, Result};
use foreign_types::ForeignTypeRef;
use openssl::pkey::PKey;
use openssl::ssl::{
    ErrorCode, ShutdownState, Ssl, SslContext, SslContextBuilder, SslMethod, SslOptions,
    SslSession, SslSessionCacheMode, SslStream, SslVerifyMode, SslVersion,
};
use openssl::x509::X509;
use openssl_sys as ffi;
use tlsmatrix_core::codes;
use tlsmatrix_core::endpoint::{
    EndpointConfig, EndpointFactory, PeerClosed, Side, TlsEndpoint, TlsLibrary,
};
use tlsmatrix_core::memio::MemIo;
use tlsmatrix_core::scenario::{Group, Resumption, SigAlg, Version};
use tlsmatrix_core::Negotiated;

// Declared in tls1.h since 1.1.1 and 3.0; the `openssl-sys` crate does not bind them.
extern "C" {
    fn SSL_get_peer_signature_type_nid(s: *const ffi::SSL, pnid: *mut c_int) -> c_int;
    fn SSL_get_signature_type_nid(s: *const ffi::SSL, pnid: *mut c_int) -> c_int;
    fn SSL_key_update(s: *mut ffi::SSL, updatetype: c_int) -> c_int;
}

// SSL_ctrl commands behind macros in ssl.h.
const SSL_CTRL_GET_PEER_SIGNATURE_NID: c_int = 108;
const SSL_CTRL_GET_SIGNATURE_NID: c_int = 132;
const SSL_CTRL_GET_NEGOTIATED_GROUP: c_int = 134;

// NIDs from obj_mac.h.
const NID_RSA_ENCRYPTION: c_int = 6;
const NID_EC_PUBLIC_KEY: c_int = 408;
const NID_X9_62_PRIME256V1: c_int = 415;
const NID_SHA256: c_int = 672;
const NID_SHA384: c_int = 673;
const NID_SECP384R1: c_int = 715;
const NID_RSASSA_PSS: c_int = 912;
const NID_X25519: c_int = 1034;
const NID_ED25519: c_int = 1087;

pub struct OpensslLibrary {
    name: &'static str,
}

impl OpensslLibrary {
    /// The libssl this build runs with (the distribution's, or a release a driver links
    /// statically), named after its release line: `openssl-3.0`, `openssl-3.6`, ...
    pub fn linked() -> Self {
        static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let name = NAME.get_or_init(|| {
            // "OpenSSL 3.6.3 1 Jul 2026" -> "openssl-3.6".
            let release = openssl::version::version()
                .split_whitespace()
                .nth(1)
                .unwrap_or("?");
            let line: Vec<&str> = release.split('.').take(2).collect();
            format!("openssl-{}", line.join("."))
        });
        OpensslLibrary { name }
    }
}

fn suite_name(code: u16) -> &'static str {
    match code {
        0x1301 => "TLS_AES_128_GCM_SHA256",
        0x1302 => "TLS_AES_256_GCM_SHA384",
        0x1303 => "TLS_CHACHA20_POLY1305_SHA256",
        0xc02b => "ECDHE-ECDSA-AES128-GCM-SHA256",
        0xc02c => "ECDHE-ECDSA-AES256-GCM-SHA384",
        0xcca9 => "ECDHE-ECDSA-CHACHA20-POLY1305",
        0xc02f => "ECDHE-RSA-AES128-GCM-SHA256",
        0xc030 => "ECDHE-RSA-AES256-GCM-SHA384",
        0xcca8 => "ECDHE-RSA-CHACHA20-POLY1305",
        _ => unreachable!("every suite tlsmatrix names has an OpenSSL name"),
    }
}

fn group_name(g: Group) -> &'static str {
    match g {
        Group::X25519 => "X25519",
        Group::P256 => "P-256",
        Group::P384 => "P-384",
        Group::X25519Mlkem768 => "X25519MLKEM768",
    }
}

fn sigalg_name(s: SigAlg) -> &'static str {
    match s {
        SigAlg::EcdsaP256 => "ecdsa_secp256r1_sha256",
        SigAlg::EcdsaP384 => "ecdsa_secp384r1_sha384",
        SigAlg::Rsa2048 | SigAlg::Rsa3072 => "rsa_pss_rsae_sha256",
        SigAlg::Ed25519 => "ed25519",
    }
}

/// "OpenSSL 3.5.0 ..." and later have X25519MLKEM768.
fn has_mlkem(version: &str) -> bool {
    codes::version_at_least(version, &[3, 5])
}

/// OpenSSL's marker for a group without a NID (e.g. X25519MLKEM768 in 3.5+): the TLS
/// group code is in the low 16 bits.
const TLSEXT_NID_UNKNOWN: c_int = 0x0100_0000;

fn group_code_of_nid(nid: c_int) -> Option<u16> {
    if nid & TLSEXT_NID_UNKNOWN != 0 {
        return u16::try_from(nid & 0xffff).ok();
    }
    let g = match nid {
        NID_X25519 => Group::X25519,
        NID_X9_62_PRIME256V1 => Group::P256,
        NID_SECP384R1 => Group::P384,
        _ => return None,
    };
    Some(codes::group_code(g))
}

/// OpenSSL reports a signature as (key type, hash) NIDs; this turns the pair into the
/// TLS SignatureScheme. RSA-PSS with an rsaEncryption key is the `rsae` scheme.
fn scheme_of_nids(sig_type: c_int, hash: c_int) -> Option<u16> {
    Some(match (sig_type, hash) {
        (NID_EC_PUBLIC_KEY, NID_SHA256) => 0x0403,
        (NID_EC_PUBLIC_KEY, NID_SHA384) => 0x0503,
        (NID_RSASSA_PSS, NID_SHA256) => 0x0804,
        (NID_RSASSA_PSS, NID_SHA384) => 0x0805,
        (NID_RSA_ENCRYPTION, NID_SHA256) => 0x0401,
        (NID_ED25519, _) => 0x0807,
        _ => return None,
    })
}

fn ssl_version(v: Version) -> SslVersion {
    match v {
        Version::Tls12 => SslVersion::TLS1_2,
        Version::Tls13 => SslVersion::TLS1_3,
    }
}

impl TlsLibrary for OpensslLibrary {
    fn name(&self) -> &'static str {
        self.name
    }

    /// `OpenSSL_version(OPENSSL_VERSION)` from the library loaded at run time.
    fn version(&self) -> String {
        openssl::version::version().to_string()
    }

    fn supports(&self, cfg: &EndpointConfig) -> Result<(), String> {
        if cfg.groups.contains(&Group::X25519Mlkem768) && !has_mlkem(&self.version()) {
            return Err(format!(
                "{} has no ML-KEM (OpenSSL added it in 3.5)",
                self.version()
            ));
        }
        Ok(())
    }

    fn factory(&self, side: Side, cfg: &EndpointConfig) -> Result<Box<dyn EndpointFactory>> {
        let method = match side {
            Side::Client => SslMethod::tls_client(),
            Side::Server => SslMethod::tls_server(),
        };
        let mut b = SslContextBuilder::new(method)?;
        let v = ssl_version(cfg.version);
        b.set_min_proto_version(Some(v))?;
        b.set_max_proto_version(Some(v))?;
        let suite = suite_name(codes::cipher_suite_code(cfg.version, cfg.aead, cfg.sig));
        match cfg.version {
            Version::Tls13 => b.set_ciphersuites(suite)?,
            Version::Tls12 => b.set_cipher_list(suite)?,
        }
        let groups: Vec<&str> = cfg.groups.iter().map(|g| group_name(*g)).collect();
        b.set_groups_list(&groups.join(":"))
            .with_context(|| format!("OpenSSL rejects the group list {groups:?}"))?;
        b.set_sigalgs_list(sigalg_name(cfg.sig))?;
        let session = resumption(&mut b, side, cfg.resumption)?;

        match side {
            Side::Client => {
                for ca in X509::stack_from_pem(cfg.certs.ca_pem.as_bytes())? {
                    b.cert_store_mut().add_cert(ca)?;
                }
                b.set_verify(SslVerifyMode::PEER);
                b.verify_param_mut().set_host(&cfg.server_name)?;
                if !cfg.alpn.is_empty() {
                    b.set_alpn_protos(&alpn_wire(&cfg.alpn))?;
                }
                if cfg.client_cert {
                    use_pem_pair(
                        &mut b,
                        &cfg.certs.client_chain_pem,
                        &cfg.certs.client_key_pem,
                    )?;
                }
            }
            Side::Server => {
                use_pem_pair(&mut b, &cfg.certs.chain_pem, &cfg.certs.key_pem)?;
                if cfg.require_client_cert {
                    for ca in X509::stack_from_pem(cfg.certs.ca_pem.as_bytes())? {
                        b.cert_store_mut().add_cert(ca)?;
                    }
                    b.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
                }
                if !cfg.alpn.is_empty() {
                    let ours = alpn_wire(&cfg.alpn);
                    // No protocol in common is fatal (RFC 7301, 3.2), as rustls does it.
                    b.set_alpn_select_callback(move |_, theirs| {
                        alpn_pick(&ours, theirs).ok_or(openssl::ssl::AlpnError::ALERT_FATAL)
                    });
                }
            }
        }
        Ok(Box::new(OpensslFactory {
            ctx: b.build(),
            side,
            server_name: cfg.server_name.clone(),
            session,
        }))
    }
}

/// The newest session a client received, which its next connection resumes.
type SessionSlot = Arc<Mutex<Option<SslSession>>>;

/// Sets up what each side keeps so that a later connection can resume; returns the client's
/// session slot. A full-handshake scenario issues nothing: tickets and the cache cost time.
fn resumption(
    b: &mut SslContextBuilder,
    side: Side,
    mode: Resumption,
) -> Result<Option<SessionSlot>> {
    b.set_session_cache_mode(SslSessionCacheMode::OFF);
    b.set_options(SslOptions::NO_TICKET);
    b.set_num_tickets(0)?;
    if mode == Resumption::Full {
        return Ok(None);
    }
    if mode == Resumption::Ticket {
        b.clear_options(SslOptions::NO_TICKET);
        // One ticket per connection: a client uses one per resumption.
        b.set_num_tickets(1)?;
    }
    match side {
        Side::Server => {
            if mode == Resumption::SessionId {
                b.set_session_cache_mode(SslSessionCacheMode::SERVER);
            }
            b.set_session_id_context(b"tlsmatrix")?;
            Ok(None)
        }
        Side::Client => {
            // With the client cache mode set, a ticket arriving after a TLS 1.3 handshake
            // becomes the connection's session, which the endpoint keeps when it ends.
            b.set_session_cache_mode(SslSessionCacheMode::CLIENT);
            Ok(Some(SessionSlot::default()))
        }
    }
}

/// Sets a certificate chain (leaf first) and its key, and checks they belong together.
fn use_pem_pair(b: &mut SslContextBuilder, chain_pem: &str, key_pem: &str) -> Result<()> {
    let mut chain = X509::stack_from_pem(chain_pem.as_bytes())?.into_iter();
    let leaf = chain.next().context("the certificate chain is empty")?;
    b.set_certificate(&leaf)?;
    for extra in chain {
        b.add_extra_chain_cert(extra)?;
    }
    let key = PKey::private_key_from_pem(key_pem.as_bytes())?;
    b.set_private_key(&key)?;
    b.check_private_key()
        .context("the key does not match its certificate")
}

/// ALPN's wire form: each protocol prefixed by its length.
fn alpn_wire(protocols: &[String]) -> Vec<u8> {
    protocols
        .iter()
        .flat_map(|p| std::iter::once(p.len() as u8).chain(p.bytes()))
        .collect()
}

/// The server's most preferred protocol that the client offered, as a slice of the
/// client's list (which is what OpenSSL's callback must return).
fn alpn_pick<'c>(ours: &[u8], theirs: &'c [u8]) -> Option<&'c [u8]> {
    let offered = alpn_split(theirs);
    alpn_split(ours)
        .into_iter()
        .find_map(|p| offered.iter().find(|o| **o == p).copied())
}

fn alpn_split(mut wire: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while let Some((&n, rest)) = wire.split_first() {
        let n = usize::from(n);
        if rest.len() < n {
            break;
        }
        out.push(&rest[..n]);
        wire = &rest[n..];
    }
    out
}

struct OpensslFactory {
    ctx: SslContext,
    side: Side,
    server_name: String,
    session: Option<SessionSlot>,
}

impl EndpointFactory for OpensslFactory {
    fn endpoint(&self, io: MemIo) -> Result<Box<dyn TlsEndpoint>> {
        let mut ssl = Ssl::new(&self.ctx)?;
        match self.side {
            Side::Client => {
                ssl.set_hostname(&self.server_name)?; // SNI, as rustls sends it
                let kept = self
                    .session
                    .as_ref()
                    .and_then(|slot| slot.lock().unwrap_or_else(|e| e.into_inner()).clone());
                if let Some(session) = kept {
                    // SAFETY: the session comes from a connection of this same context.
                    unsafe { ssl.set_session(&session)? };
                }
                ssl.set_connect_state();
            }
            Side::Server => ssl.set_accept_state(),
        }
        Ok(Box::new(OpensslEndpoint {
            stream: SslStream::new(ssl, io)?,
            side: self.side,
            done: false,
            session: self.session.clone(),
        }))
    }
}

struct OpensslEndpoint {
    stream: SslStream<MemIo>,
    side: Side,
    done: bool,
    /// Client side, when resuming: where the session is kept for the next connection.
    session: Option<SessionSlot>,
}

fn describe(e: openssl::ssl::Error) -> anyhow::Error {
    match e.ssl_error() {
        Some(stack) => anyhow!("OpenSSL: {stack}"),
        None => anyhow!("OpenSSL: {e}"),
    }
}

/// OpenSSL's error queue after a call that reports failure without an `ssl::Error`.
fn describe_stack(what: &str) -> anyhow::Error {
    anyhow!("OpenSSL: {what}: {}", openssl::error::ErrorStack::get())
}

impl OpensslEndpoint {
    fn ssl_ptr(&self) -> *mut ffi::SSL {
        self.stream.ssl().as_ptr()
    }

    fn ctrl_nid(&self, cmd: c_int) -> Option<c_int> {
        let mut nid: c_int = 0;
        // SAFETY: these SSL_ctrl commands write one int through parg, or ignore it.
        let r = unsafe {
            ffi::SSL_ctrl(
                self.ssl_ptr(),
                cmd,
                0,
                &mut nid as *mut c_int as *mut c_void,
            )
        };
        (r > 0).then_some(nid)
    }

    /// For SSL_ctrl commands that return their answer rather than write it.
    fn ctrl_nid_value(&self, cmd: c_int) -> Option<c_int> {
        // SAFETY: this command takes no argument and returns a NID or 0.
        let r: c_long = unsafe { ffi::SSL_ctrl(self.ssl_ptr(), cmd, 0, std::ptr::null_mut()) };
        (r > 0).then_some(r as c_int)
    }

    fn signature_scheme(&self) -> Option<u16> {
        let mut sig_type: c_int = 0;
        // SAFETY: valid SSL pointer, one int written.
        let (ok, hash) = unsafe {
            match self.side {
                Side::Client => (
                    SSL_get_peer_signature_type_nid(self.ssl_ptr(), &mut sig_type),
                    self.ctrl_nid(SSL_CTRL_GET_PEER_SIGNATURE_NID),
                ),
                Side::Server => (
                    SSL_get_signature_type_nid(self.ssl_ptr(), &mut sig_type),
                    self.ctrl_nid(SSL_CTRL_GET_SIGNATURE_NID),
                ),
            }
        };
        if ok != 1 {
            return None;
        }
        scheme_of_nids(sig_type, hash.unwrap_or(0))
    }
}

impl Drop for OpensslEndpoint {
    /// OpenSSL treats a connection freed without SSL_shutdown as failed and makes its session
    /// unresumable. The harness drops finished connections without closing them (no library
    /// pays for close_notify in a handshake figure), so a completed one is marked as shut.
    fn drop(&mut self) {
        if self.done {
            self.stream.set_shutdown(ShutdownState::SENT);
            // The client keeps its newest session for the next connection. A resumed TLS 1.2
            // connection that got a fresh ticket holds a new session object, and OpenSSL
            // retires the old one, so the session is read here rather than when first issued.
            if let (Some(slot), Some(session)) = (&self.session, self.stream.ssl().session()) {
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(session.to_owned());
            }
        }
    }
}

impl TlsEndpoint for OpensslEndpoint {
    fn handshake_step(&mut self) -> Result<()> {
        match self.stream.do_handshake() {
            Ok(()) => {
                self.done = true;
                Ok(())
            }
            Err(e) if e.code() == ErrorCode::WANT_READ => Ok(()),
            Err(e) => Err(describe(e)),
        }
    }

    fn is_handshake_complete(&self) -> bool {
        self.done
    }

    fn send(&mut self, data: &[u8]) -> Result<()> {
        let mut off = 0;
        while off < data.len() {
            off += self.stream.ssl_write(&data[off..]).map_err(describe)?;
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut got = 0;
        while got < buf.len() {
            match self.stream.ssl_read(&mut buf[got..]) {
                Ok(n) => got += n,
                Err(e) if e.code() == ErrorCode::WANT_READ => break,
                Err(e) if e.code() == ErrorCode::ZERO_RETURN => {
                    if got == 0 {
                        return Err(PeerClosed.into());
                    }
                    break;
                }
                Err(e) => return Err(describe(e)),
            }
        }
        Ok(got)
    }

    fn key_update(&mut self) -> Result<()> {
        const SSL_KEY_UPDATE_REQUESTED: c_int = 1;
        // SAFETY: valid SSL pointer; the call only schedules the message.
        if unsafe { SSL_key_update(self.ssl_ptr(), SSL_KEY_UPDATE_REQUESTED) } != 1 {
            return Err(describe_stack("scheduling a KeyUpdate"));
        }
        // Scheduled messages go out on the next write or handshake call.
        match self.stream.do_handshake() {
            Ok(()) => Ok(()),
            Err(e) if e.code() == ErrorCode::WANT_READ => Ok(()),
            Err(e) => Err(describe(e)),
        }
    }

    fn sni(&self) -> Option<String> {
        self.stream
            .ssl()
            .servername(openssl::ssl::NameType::HOST_NAME)
            .map(str::to_string)
    }

    fn alpn(&self) -> Option<Vec<u8>> {
        self.stream
            .ssl()
            .selected_alpn_protocol()
            .map(<[u8]>::to_vec)
    }

    fn close(&mut self) -> Result<()> {
        match self.stream.shutdown() {
            Ok(_) => Ok(()),
            // Our close_notify is written; the peer's has not arrived yet.
            Err(e) if e.code() == ErrorCode::WANT_READ => Ok(()),
            Err(e) => Err(describe(e)),
        }
    }

    fn negotiated(&self) -> Negotiated {
        // SAFETY: valid SSL pointer.
        let version = unsafe { ffi::SSL_version(self.ssl_ptr()) };
        let group = self
            .ctrl_nid_value(SSL_CTRL_GET_NEGOTIATED_GROUP)
            .and_then(group_code_of_nid);
        Negotiated {
            version: u16::try_from(version).ok(),
            cipher_suite: self
                .stream
                .ssl()
                .current_cipher()
                .map(|c| u16::from_be_bytes(c.protocol_id())),
            group,
            signature_scheme: self.signature_scheme(),
            resumed: Some(self.stream.ssl().session_reused()),
        }
    }
}
