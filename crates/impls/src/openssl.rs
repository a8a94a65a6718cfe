//! OpenSSL through the `openssl` crate: the system libssl, or whichever libssl this build links.
//! Each context pins exactly one version, suite, set of groups and signature algorithm.
//!
//! The BoringSSL build compiles this same module against the `boring` crate, a fork of the
//! `openssl` crate with the same API, under the names used here; the AWS-LC build against the
//! `openssl` crate reading AWS-LC's headers, which leaves a few calls unbound (`calls` below). Where the two libraries
//! differ (reading what was negotiated, TLS 1.3 suites, ticket counts) the code says so with
//! `cfg(feature = "boringssl")`; the reading is in `probe_openssl.rs`/`probe_boringssl.rs`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Context, Result};
#[cfg(feature = "boringssl")]
use boring as openssl;
#[cfg(feature = "boringssl")]
use boring_sys as ffi;
#[cfg(not(feature = "boringssl"))]
use foreign_types::ForeignTypeRef;
#[cfg(feature = "boringssl")]
use foreign_types_boring::ForeignTypeRef;
use openssl::pkey::PKey;
use openssl::ssl::{
    ErrorCode, ShutdownState, Ssl, SslContext, SslContextBuilder, SslMethod, SslOptions,
    SslSession, SslSessionCacheMode, SslStream, SslVerifyMode, SslVersion,
};
#[cfg(feature = "boringssl")]
use openssl::x509::X509VerifyError;
#[cfg(not(feature = "boringssl"))]
use openssl::x509::X509VerifyResult;
use openssl::x509::{X509StoreContextRef, X509};
#[cfg(not(feature = "boringssl"))]
use openssl_sys as ffi;
use tlsmatrix_harness::endpoint::{
    EndpointConfig, EndpointFactory, OpenExtras, PeerClosed, TlsEndpoint, TlsLibrary,
};
use tlsmatrix_harness::memio::MemIo;
use tlsmatrix_harness::negotiated::Negotiated;
use tlsmatrix_model::bogo_flags::Unimplemented;
use tlsmatrix_model::codes;
use tlsmatrix_model::scenario::{Resumption, SigAlg, Version};
use tlsmatrix_model::side::Side;

#[cfg(feature = "boringssl")]
#[path = "credentials_boringssl.rs"]
mod credentials;
#[cfg_attr(
    not(any(feature = "boringssl", feature = "aws-lc")),
    path = "probe_openssl.rs"
)]
#[cfg_attr(
    any(feature = "boringssl", feature = "aws-lc"),
    path = "probe_boringssl.rs"
)]
mod probe;
#[cfg(openssl_quic)]
mod quic;
#[cfg(feature = "boringssl")]
mod quiche;

pub struct OpensslLibrary {
    name: &'static str,
}

impl OpensslLibrary {
    /// The libssl this build runs with (the distribution's, or a release a driver links
    /// statically), named after its release line: `openssl-3.0`, `openssl-3.6`, ...
    #[cfg(feature = "boringssl")]
    pub fn linked() -> Self {
        OpensslLibrary { name: "boringssl" }
    }

    #[cfg(feature = "aws-lc")]
    pub fn linked() -> Self {
        OpensslLibrary { name: "aws-lc" }
    }

    #[cfg(not(any(feature = "boringssl", feature = "aws-lc")))]
    pub fn linked() -> Self {
        static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let name = NAME.get_or_init(|| {
            // "OpenSSL 3.6.3 1 Jul 2026" -> "openssl-3.6"; before 3.0 a release line had
            // three numbers and letters for its releases: "OpenSSL 1.1.1w ..." -> "openssl-1.1.1".
            let release = openssl::version::version()
                .split_whitespace()
                .nth(1)
                .unwrap_or("?");
            let numbers = if release.starts_with("1.") { 3 } else { 2 };
            let line: Vec<&str> = release
                .trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .split('.')
                .take(numbers)
                .collect();
            format!("openssl-{}", line.join("."))
        });
        OpensslLibrary { name }
    }
}

fn suite_name(code: u16) -> &'static str {
    codes::openssl_suite_name(code).expect("every suite tlsmatrix names has an OpenSSL name")
}

fn sigalg_name(s: SigAlg) -> &'static str {
    match s {
        SigAlg::EcdsaP256 => "ecdsa_secp256r1_sha256",
        SigAlg::EcdsaP384 => "ecdsa_secp384r1_sha384",
        SigAlg::Rsa2048 | SigAlg::Rsa3072 => "rsa_pss_rsae_sha256",
        SigAlg::Ed25519 => "ed25519",
        // The names OpenSSL 3.5+, BoringSSL and AWS-LC all take.
        SigAlg::MlDsa44 => "mldsa44",
        SigAlg::MlDsa65 => "mldsa65",
        SigAlg::MlDsa87 => "mldsa87",
    }
}

/// Why this build cannot run a cell's post-quantum parts, in the library's own words: each
/// ML-KEM group and ML-DSA scheme is set on a scratch context as `factory` would set it,
/// and the library's refusal is the reason. (The release that brought them differs across
/// the family, and BoringSSL and AWS-LC each took a different subset of the groups.)
fn post_quantum_refusal(version: &str, cfg: &EndpointConfig) -> Option<String> {
    let mut b = SslContextBuilder::new(SslMethod::tls()).ok()?;
    for g in cfg.groups.iter().filter(|g| g.is_post_quantum()) {
        let name = codes::openssl_group_name(codes::group_code(*g))?;
        #[cfg(feature = "boringssl")]
        let set = b.set_curves_list(name);
        #[cfg(not(feature = "boringssl"))]
        let set = b.set_groups_list(name);
        if let Err(e) = set {
            return Some(format!("{version} refuses the group {name} ({e})"));
        }
    }
    if cfg.sig.is_mldsa() {
        if let Err(e) = calls::set_sigalgs_list(&mut b, sigalg_name(cfg.sig)) {
            return Some(format!(
                "{version} has no {name} signature scheme: SSL_CTX_set1_sigalgs_list(\"{name}\") fails{}",
                match e.to_string().as_str() {
                    "OpenSSL error" => String::new(),
                    why => format!(" ({why})"),
                },
                name = sigalg_name(cfg.sig)
            ));
        }
    }
    None
}

/// The cipher suite's TLS code point.
fn cipher_code(c: &openssl::ssl::SslCipherRef) -> u16 {
    #[cfg(feature = "boringssl")]
    return c.protocol_id();
    // SAFETY: a valid cipher; the call reads its id.
    #[cfg(feature = "aws-lc")]
    return unsafe { ffi::SSL_CIPHER_get_protocol_id(c.as_ptr()) };
    #[cfg(not(any(feature = "boringssl", feature = "aws-lc")))]
    u16::from_be_bytes(c.protocol_id())
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

    fn record_aead(
        &self,
        aead: tlsmatrix_model::scenario::Aead,
    ) -> Result<tlsmatrix_harness::aead::LibraryAead, String> {
        crate::ceiling::evp::record_aead(aead)
    }

    fn c_allocation(&self) -> Option<tlsmatrix_harness::endpoint::CAllocation> {
        Some(crate::ceiling::openssl_allocation())
    }

    fn handshake_crypto(
        &self,
    ) -> Result<Box<dyn tlsmatrix_harness::floor::HandshakeCrypto>, String> {
        #[cfg(feature = "boringssl")]
        return Ok(Box::new(crate::floor_boringssl::BoringCrypto {
            api: "BoringSSL's libcrypto (X25519, EC_KEY, MLKEM768/1024, EVP_DigestSign, HMAC_CTX)"
                .into(),
        }));
        #[cfg(not(feature = "boringssl"))]
        Ok(Box::new(crate::floor_openssl::EvpCrypto {
            api: format!(
                "{}'s libcrypto (EVP_PKEY and EC_KEY, EVP_PKEY_sign, HMAC_CTX)",
                self.name
            ),
        }))
    }

    /// `OpenSSL_version(OPENSSL_VERSION)` from the library loaded at run time. BoringSSL has
    /// no release numbers; the `boring` crates' versions name the sources they build.
    fn version(&self) -> String {
        #[cfg(feature = "boringssl")]
        return format!(
            "BoringSSL (boring {}, boring-sys {})",
            env!("TLSMATRIX_VERSION_BORING"),
            env!("TLSMATRIX_VERSION_BORING_SYS")
        );
        #[cfg(not(feature = "boringssl"))]
        openssl::version::version().to_string()
    }

    fn library_file(&self) -> Option<std::path::PathBuf> {
        #[cfg(not(feature = "boringssl"))]
        return crate::loaded::object_of(ffi::OpenSSL_version as *const std::ffi::c_void);
        #[cfg(feature = "boringssl")]
        None
    }

    fn supports(&self, cfg: &EndpointConfig) -> Result<(), String> {
        if cfg!(feature = "boringssl")
            && cfg.open.is_none()
            && cfg.version == Version::Tls13
            && !matches!(
                codes::cipher_suite_code(cfg.version, cfg.aead, cfg.sig),
                0x1301 | 0x1302
            )
        {
            return Err("BoringSSL lets no application choose its TLS 1.3 cipher suites: it takes AES-128-GCM first on AES hardware, or AES-256-GCM under its CNSA policy, never ChaCha20-Poly1305 while AES-GCM is offered".into());
        }
        if cfg!(feature = "aws-lc")
            && cfg.open.is_none()
            && cfg.client_first_group.is_some()
            && cfg.offers_post_quantum()
        {
            return Err(format!("{}'s client sends a key share for its first post-quantum and its first classical group at once (ssl_setup_key_shares), with no call to send one alone, so the server never needs to ask for another", self.version()));
        }
        match post_quantum_refusal(&self.version(), cfg) {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    fn quic_stack(&self) -> Result<String, String> {
        #[cfg(openssl_quic)]
        return Ok(quic::stack());
        #[cfg(feature = "boringssl")]
        return Ok(quiche::stack());
        #[cfg(not(any(openssl_quic, feature = "boringssl")))]
        Err(if cfg!(feature = "aws-lc") {
            "AWS-LC has no QUIC transport of its own: its QUIC API serves stacks such as s2n-quic, which tlsmatrix does not build yet".into()
        } else {
            format!(
                "{} has no QUIC server: OpenSSL's own QUIC client came in 3.2 and its server in 3.5",
                self.version()
            )
        })
    }

    /// quiche resumes as the TLS adapter does over TCP: the context's tickets, the client's
    /// newest session offered by its next connection. OpenSSL's own QUIC is driven the same
    /// way (`openssl/quic.rs` keeps the client's session), but does not resume.
    #[cfg(any(openssl_quic, feature = "boringssl"))]
    fn quic_resumes(&self) -> Result<(), String> {
        if cfg!(openssl_quic) {
            return Err(format!(
                "{}'s own QUIC does not resume: its client receives the server's ticket (a resumable session), but a new QUIC connection given it with SSL_set_session makes a full handshake (see openssl#30750, \"make TLS session resumption working for QUIC\")",
                self.version()
            ));
        }
        Ok(())
    }

    #[cfg(any(openssl_quic, feature = "boringssl"))]
    fn quic_factory(
        &self,
        side: Side,
        cfg: &EndpointConfig,
    ) -> Result<Box<dyn tlsmatrix_harness::quic::QuicEndpointFactory>> {
        #[cfg(openssl_quic)]
        return self.openssl_quic_factory(side, cfg);
        #[cfg(feature = "boringssl")]
        self.quiche_factory(side, cfg)
    }

    fn open_extras(&self, extras: &OpenExtras) -> Result<(), String> {
        // Every libssl takes a cipher list and a failing verification callback; the rest
        // are calls BoringSSL has and AWS-LC kept, bar the compliance policies.
        let boring_family = cfg!(any(feature = "boringssl", feature = "aws-lc"));
        let mut refused = Vec::new();
        if !boring_family {
            if !extras.signing_prefs.is_empty() || !extras.verify_prefs.is_empty() {
                refused.push("signature preferences as code point lists (OpenSSL takes names)");
            }
            if extras.reads_peer_signature || extras.reads_hello_retry {
                refused.push("reports of the peer's signature scheme or of HelloRetryRequest");
            }
        }
        let mut lacks_suites = None;
        if let Some(list) = &extras.cipher_list {
            if list.contains('[') && !boring_family {
                refused.push("equal-preference groups in a cipher list (BoringSSL's syntax)");
            } else if !takes_cipher_list(list) {
                // e.g. "3DES": OpenSSL 1.1.0 and later build without those suites by default.
                lacks_suites = Some(format!("cipher suite matching {list:?} in this build"));
            }
        }
        refused.extend(lacks_suites.as_deref());
        if extras.compliance.is_some() && !cfg!(feature = "boringssl") {
            refused.push("BoringSSL's compliance policies");
        }
        if extras.custom_verify && !cfg!(feature = "boringssl") {
            refused.push("BoringSSL's custom verification callback");
        }
        if extras.asks_channel_id() && !boring_family {
            refused.push("Channel ID (BoringSSL's extension)");
        }
        if !cfg!(feature = "boringssl") {
            if extras.asks_credentials() {
                refused.push("credentials to choose from (BoringSSL's SSL_CREDENTIAL)");
            }
            if extras.asks_raw_public_keys() {
                refused.push("raw public keys (RFC 7250)");
            }
        }
        if (extras.reverify_on_resume || extras.jdk11_workaround) && !boring_family {
            refused.push("verification again on resumption or the JDK 11 workaround (BoringSSL's)");
        }
        match refused.as_slice() {
            [] => Ok(()),
            _ => Err(format!("{} has no {}", self.name, refused.join(", no "))),
        }
    }

    fn factory(&self, side: Side, cfg: &EndpointConfig) -> Result<Box<dyn EndpointFactory>> {
        #[cfg(feature = "boringssl")]
        let method = SslMethod::tls();
        #[cfg(not(feature = "boringssl"))]
        let method = match side {
            Side::Client => SslMethod::tls_client(),
            Side::Server => SslMethod::tls_server(),
        };
        let mut b = SslContextBuilder::new(method)?;
        let (session, verify_plan) = self.configure(&mut b, side, cfg)?;
        Ok(Box::new(OpensslFactory {
            ctx: b.build(),
            side,
            // SNI as rustls sends it; an open configuration sends what it was told, if anything.
            sni: match &cfg.open {
                Some(open) => open.sni.clone(),
                None => Some(cfg.server_name.clone()),
            },
            verify_host: cfg.open.is_none().then(|| cfg.server_name.clone()),
            key_share: match (&cfg.open, side) {
                (None, Side::Client) => cfg.groups_for(side).first().map(|g| codes::group_code(*g)),
                _ => None,
            },
            session,
            write_tickets: cfg.resumption == Resumption::Ticket,
            jdk11_workaround: cfg.open.as_ref().is_some_and(|o| o.extras.jdk11_workaround),
            verify_plan,
            requests_ocsp: cfg.open.as_ref().is_some_and(|o| o.extras.requests_ocsp),
            ocsp_response: match &cfg.open {
                Some(open) if side == Side::Server && !ocsp::set_in_callback(&open.extras) => {
                    open.extras.ocsp_response.clone()
                }
                _ => None,
            },
        }))
    }
}

impl OpensslLibrary {
    /// Everything a context of `side` takes from `cfg` (versions, suites, groups,
    /// resumption, trust and credentials, an open configuration's extras), whatever its
    /// method: TLS over TCP, or QUIC.
    fn configure(
        &self,
        b: &mut SslContextBuilder,
        side: Side,
        cfg: &EndpointConfig,
    ) -> Result<(Option<SessionSlot>, Arc<VerifyPlan>)> {
        versions_and_suites(b, cfg)?;
        set_groups(b, side, cfg, self.name)?;
        let session = resumption(b, side, cfg.resumption)?;
        if cfg.open.as_ref().is_some_and(|o| o.extras.no_ticket) {
            // OpenSSL's TLS 1.3 server still issues (stateful) tickets under NO_TICKET; a
            // count of zero stops them.
            b.set_options(SslOptions::NO_TICKET);
            #[cfg(not(feature = "boringssl"))]
            calls::set_num_tickets(b, 0)?;
        }
        if cfg.open.is_some() && side == Side::Server {
            // Session ids as well as tickets, as BoringSSL's server resumes by default.
            b.set_session_cache_mode(SslSessionCacheMode::SERVER);
            // A server that serves the name it was asked for acknowledges it (RFC 6066, 3);
            // BoringSSL does so only through this callback, which its own shim installs.
            // OpenSSL goes without (see config/openssl.json in the conformance crate).
            #[cfg(feature = "boringssl")]
            b.set_servername_callback(|_, _| Ok(()));
        }
        // Send certificates as configured: with the CA in its store (a client always, a
        // server for mTLS) OpenSSL would complete the chain itself and send the root too.
        #[cfg(not(feature = "boringssl"))]
        b.set_mode(openssl::ssl::SslMode::NO_AUTO_CHAIN);

        let verify_plan = Arc::new(VerifyPlan::new(
            cfg.open
                .as_ref()
                .map_or(&OpenExtras::default(), |o| &o.extras),
        ));
        match side {
            Side::Client => client_context(b, cfg, &verify_plan)?,
            Side::Server => server_context(b, cfg, &verify_plan)?,
        }
        if let Some(open) = &cfg.open {
            ocsp::install_callback(b, side, &open.extras)?;
            npn::install(b, &open.extras)?;
            psk::install(b, &open.extras)?;
            extras::apply(b, &open.extras)?;
        }
        Ok((session, verify_plan))
    }
}

/// The versions, cipher suites and signature schemes of a context: an open configuration's
/// (BoGo's), or exactly the scenario's.
fn versions_and_suites(b: &mut SslContextBuilder, cfg: &EndpointConfig) -> Result<()> {
    match &cfg.open {
        Some(open) => {
            // For BoGo every TLS 1.2 suite the library has, as BoringSSL's shim enables
            // "ALL" (and the two CBC-SHA256 suites "ALL" leaves out of BoringSSL); else the
            // library's default list. TLS 1.3 suites and signature schemes as the library
            // defaults them, within the versions allowed.
            b.set_min_proto_version(Some(ssl_version(open.min_version)))?;
            b.set_max_proto_version(Some(ssl_version(open.max_version)))?;
            if open.every_tls12_suite {
                #[cfg(any(feature = "boringssl", feature = "aws-lc"))]
                b.set_cipher_list(
                    "ALL:TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256:TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
                )?;
                #[cfg(not(any(feature = "boringssl", feature = "aws-lc")))]
                b.set_cipher_list("ALL")?;
            }
            if let Some(list) = &open.extras.cipher_list {
                b.set_cipher_list(list)
                    .with_context(|| format!("the library rejects the cipher list {list:?}"))?;
                b.set_options(SslOptions::CIPHER_SERVER_PREFERENCE);
            }
        }
        None => {
            let v = ssl_version(cfg.version);
            b.set_min_proto_version(Some(v))?;
            b.set_max_proto_version(Some(v))?;
            let suite = suite_name(codes::cipher_suite_code(cfg.version, cfg.aead, cfg.sig));
            match cfg.version {
                // BoringSSL's TLS 1.3 suites are fixed; its one knob over them is the
                // CNSA 2024-07 compliance policy, which puts AES-256-GCM first on both
                // sides and changes nothing else. `supports` admits AES-128-GCM (the
                // default) and AES-256-GCM (this policy) only.
                #[cfg(feature = "boringssl")]
                Version::Tls13 => {
                    if codes::cipher_suite_code(cfg.version, cfg.aead, cfg.sig) == 0x1302 {
                        // SAFETY: a valid context; the policy is one of the enum's values.
                        let r = unsafe {
                            ffi::SSL_CTX_set_compliance_policy(
                                b.as_ptr(),
                                ffi::ssl_compliance_policy_t::ssl_compliance_policy_cnsa_202407,
                            )
                        };
                        if r != 1 {
                            return Err(anyhow!(
                                "BoringSSL refused its CNSA 2024-07 policy (AES-256-GCM first)"
                            ));
                        }
                    }
                }
                #[cfg(not(feature = "boringssl"))]
                Version::Tls13 => calls::set_ciphersuites(b, suite)?,
                Version::Tls12 => b.set_cipher_list(suite)?,
            }
            calls::set_sigalgs_list(b, sigalg_name(cfg.sig))?;
        }
    }
    Ok(())
}

/// The groups a context offers or accepts, by the scenario or an open configuration's codes;
/// a client sends its key share for the first only. An open configuration without groups keeps
/// the library's.
fn set_groups(
    b: &mut SslContextBuilder,
    side: Side,
    cfg: &EndpointConfig,
    library: &str,
) -> Result<()> {
    // A client sends its key share for the first group only. An open configuration
    // without groups keeps the library's.
    let named = cfg.groups_for(side).into_iter().map(codes::group_code);
    let by_code = cfg
        .open
        .iter()
        .flat_map(|o| o.extras.group_codes.iter().copied());
    let groups = named
        .chain(by_code)
        .map(|code| {
            codes::openssl_group_name(code).ok_or_else(|| {
                Unimplemented(format!("{} has no name for group {code:#06x}", library))
            })
        })
        .collect::<Result<Vec<&str>, _>>()?;
    if !groups.is_empty() {
        #[cfg(feature = "boringssl")]
        let set = b.set_curves_list(&groups.join(":"));
        #[cfg(not(feature = "boringssl"))]
        let set = b.set_groups_list(&groups.join(":"));
        // A group this build lacks (P-521 in a build without it, ML-KEM before OpenSSL
        // 3.5) makes the test unimplemented on this library, not failed.
        if let Err(e) = set {
            let why = format!("the library rejects the group list {groups:?}: {e}");
            return Err(match cfg.open {
                Some(_) => Unimplemented(why).into(),
                None => anyhow!(why),
            });
        }
    }
    Ok(())
}

/// Puts the test CA in the context's store, for verifying the peer's chain.
fn trust_test_ca(b: &mut SslContextBuilder, cfg: &EndpointConfig) -> Result<()> {
    for ca in X509::stack_from_pem(cfg.certs.ca_pem.as_bytes())? {
        b.cert_store_mut().add_cert(ca)?;
    }
    Ok(())
}

/// A client context's trust, verification, ALPN and certificate.
fn client_context(
    b: &mut SslContextBuilder,
    cfg: &EndpointConfig,
    verify_plan: &Arc<VerifyPlan>,
) -> Result<()> {
    trust_test_ca(b, cfg)?;
    // An open configuration takes any chain (see `OpenPolicy`); the signature
    // over the handshake is still checked.
    match &cfg.open {
        Some(open) => {
            let mode = match open.extras.verify_soft {
                true => SslVerifyMode::NONE,
                false => SslVerifyMode::PEER,
            };
            open_verify(b, mode, verify_plan, &open.extras)
        }
        None => b.set_verify(SslVerifyMode::PEER),
    }
    // BoringSSL takes the expected host per connection (see `endpoint`).
    #[cfg(not(feature = "boringssl"))]
    if cfg.open.is_none() {
        b.verify_param_mut().set_host(&cfg.server_name)?;
    }
    if !cfg.alpn.is_empty() {
        b.set_alpn_protos(&cfg.alpn_wire()?)?;
    }
    let from_callback = cfg
        .open
        .as_ref()
        .is_some_and(|o| o.extras.old_client_cert_callback);
    if from_callback {
        old_client_cert::install(b, cfg)?;
    } else if cfg.client_cert {
        use_pem_pair(b, &cfg.certs.client_chain_pem, &cfg.certs.client_key_pem)?;
    }
    Ok(())
}

/// A server context's chain and key, client-certificate request and ALPN choice.
fn server_context(
    b: &mut SslContextBuilder,
    cfg: &EndpointConfig,
    verify_plan: &Arc<VerifyPlan>,
) -> Result<()> {
    // A server may have only the credentials or the pre-shared key of an open
    // configuration.
    let credentials_only = cfg.certs.key_pem.is_empty()
        && cfg
            .open
            .as_ref()
            .is_some_and(|o| !o.extras.credentials.is_empty() || o.extras.psk.is_some());
    if !credentials_only {
        use_pem_pair(b, cfg.server_chain_pem(), &cfg.certs.key_pem)?;
    }
    let mut mode = SslVerifyMode::PEER;
    if cfg.require_client_cert {
        mode |= SslVerifyMode::FAIL_IF_NO_PEER_CERT;
    }
    match &cfg.open {
        Some(open) if open.request_client_cert => open_verify(b, mode, verify_plan, &open.extras),
        Some(_) => {}
        None if cfg.require_client_cert => {
            trust_test_ca(b, cfg)?;
            b.set_verify(mode);
        }
        None => {}
    }
    if !cfg.alpn.is_empty() {
        let ours = cfg.alpn_wire()?;
        // No protocol in common is fatal (RFC 7301, 3.2), as rustls does it.
        b.set_alpn_select_callback(move |_, theirs| {
            alpn_pick(&ours, theirs).ok_or(openssl::ssl::AlpnError::ALERT_FATAL)
        });
    }
    Ok(())
}

/// Whether the verification callback fails, connection by connection: BoGo's runner may ask
/// for a callback that fails on resumption only (`-on-resume-verify-fail`), which matters
/// where the library verifies a resumed session again. The factory sets the verdict as it
/// makes each connection; the shim makes them one at a time.
struct VerifyPlan {
    first: bool,
    later: bool,
    made: AtomicU32,
}

impl VerifyPlan {
    fn new(extras: &OpenExtras) -> Self {
        VerifyPlan {
            first: extras.verify_fails,
            later: extras.verify_fails_on_resume,
            made: AtomicU32::new(0),
        }
    }

    /// A connection is being made.
    fn next_connection(&self) {
        self.made.fetch_add(1, Ordering::Relaxed);
    }

    /// The verdict for the connection made last.
    fn fails(&self) -> bool {
        match self.made.load(Ordering::Relaxed) {
            0 | 1 => self.first,
            _ => self.later,
        }
    }
}

/// An open configuration's verification: any chain, or none when the test asks for a
/// failing callback; through BoringSSL's custom callback, which replaces its chain check and
/// refuses with certificate_unknown, when asked for that.
fn open_verify(
    b: &mut SslContextBuilder,
    mode: SslVerifyMode,
    plan: &Arc<VerifyPlan>,
    extras: &OpenExtras,
) {
    let plan = Arc::clone(plan);
    #[cfg(feature = "boringssl")]
    if let Some(want) = &extras.peer_rpk_sha256 {
        credentials::verify_raw_public_key(b, mode, want.clone());
        return;
    }
    #[cfg(feature = "boringssl")]
    if extras.custom_verify {
        use openssl::ssl::{SslAlert, SslVerifyError};
        b.set_custom_verify_callback(mode, move |_| match plan.fails() {
            true => Err(SslVerifyError::Invalid(SslAlert::CERTIFICATE_UNKNOWN)),
            false => Ok(()),
        });
        return;
    }
    #[cfg(not(feature = "boringssl"))]
    let _ = extras;
    b.set_verify_callback(mode, move |_, ctx| open_verdict(plan.fails(), ctx));
}

/// The per-certificate verdict: the application's refusal (as BoringSSL's shim reports it),
/// or acceptance, which leaves the verification result X509_V_OK as BoringSSL's shim does by
/// replacing the chain check.
fn open_verdict(fails: bool, ctx: &mut X509StoreContextRef) -> bool {
    // The `boring` crate spells a verification result as a `Result`.
    #[cfg(feature = "boringssl")]
    ctx.set_error(match fails {
        true => Err(X509VerifyError::APPLICATION_VERIFICATION),
        false => Ok(()),
    });
    #[cfg(not(feature = "boringssl"))]
    ctx.set_error(match fails {
        true => X509VerifyResult::APPLICATION_VERIFICATION,
        false => X509VerifyResult::OK,
    });
    !fails
}

/// Where a context keeps a `T` for its callbacks (`SSL_CTX` ex_data).
type ContextIndex<T> = openssl::ex_data::Index<SslContext, T>;

/// The index for `T`, made once per process and kept in `cell`.
fn context_index<T: Send + Sync + 'static>(
    cell: &std::sync::OnceLock<ContextIndex<T>>,
) -> Result<ContextIndex<T>> {
    if let Some(i) = cell.get() {
        return Ok(*i);
    }
    let i = SslContext::new_ex_index::<T>()?;
    Ok(*cell.get_or_init(|| i))
}

mod old_client_cert;

mod npn;

mod psk;

mod ocsp;

mod extras;

mod resumption;
use resumption::{keep_session, offer_kept_session, resumption, SessionSlot};

/// Context calls the `openssl` crate binds for OpenSSL (and the `boring` crate for
/// BoringSSL, where it has them) but not for AWS-LC, which has them.
#[cfg(not(feature = "aws-lc"))]
mod calls {
    use super::*;

    #[cfg(not(feature = "boringssl"))]
    pub fn set_ciphersuites(b: &mut SslContextBuilder, list: &str) -> Result<()> {
        Ok(b.set_ciphersuites(list)?)
    }

    pub fn set_sigalgs_list(b: &mut SslContextBuilder, list: &str) -> Result<()> {
        Ok(b.set_sigalgs_list(list)?)
    }

    #[cfg(not(feature = "boringssl"))]
    pub fn set_num_tickets(b: &mut SslContextBuilder, n: usize) -> Result<()> {
        Ok(b.set_num_tickets(n)?)
    }
}

/// The same calls made on AWS-LC directly.
#[cfg(feature = "aws-lc")]
mod calls {
    use super::*;
    use std::ffi::CString;

    fn ok(r: std::os::raw::c_int, what: &str) -> Result<()> {
        if r == 1 {
            Ok(())
        } else {
            Err(anyhow!("AWS-LC refused {what}"))
        }
    }

    pub fn set_ciphersuites(b: &mut SslContextBuilder, list: &str) -> Result<()> {
        let c = CString::new(list)?;
        // SAFETY: a valid context and a NUL-terminated list the call copies.
        ok(
            unsafe { ffi::SSL_CTX_set_ciphersuites(b.as_ptr(), c.as_ptr()) },
            &format!("the TLS 1.3 suites {list}"),
        )
    }

    pub fn set_sigalgs_list(b: &mut SslContextBuilder, list: &str) -> Result<()> {
        let c = CString::new(list)?;
        // SAFETY: as above.
        ok(
            unsafe { ffi::SSL_CTX_set1_sigalgs_list(b.as_ptr(), c.as_ptr()) },
            &format!("the signature algorithms {list}"),
        )
    }

    pub fn set_num_tickets(b: &mut SslContextBuilder, n: usize) -> Result<()> {
        // SAFETY: a valid context.
        ok(
            unsafe { ffi::SSL_CTX_set_num_tickets(b.as_ptr(), n) },
            "a ticket count",
        )
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
    sni: Option<String>,
    /// The name the server's certificate must carry (BoringSSL sets it per connection).
    #[cfg_attr(not(feature = "boringssl"), allow(dead_code))]
    verify_host: Option<String>,
    /// Client, BoringSSL: the one group to send a key share for. Left to itself it sends a
    /// second, post-quantum or classical, share beside the first, which would answer a
    /// HelloRetryRequest cell's decoy before the server could ask.
    #[cfg_attr(not(feature = "boringssl"), allow(dead_code))]
    key_share: Option<u16>,
    session: Option<SessionSlot>,
    write_tickets: bool,
    /// Set per connection, where BoringSSL (and AWS-LC) take it.
    #[cfg_attr(not(any(feature = "boringssl", feature = "aws-lc")), allow(dead_code))]
    jdk11_workaround: bool,
    verify_plan: Arc<VerifyPlan>,
    /// Client: ask for a stapled OCSP response.
    requests_ocsp: bool,
    /// Server, BoringSSL and AWS-LC: the response each connection staples (OpenSSL's server
    /// staples only from its status callback; see `ocsp`).
    #[cfg_attr(not(any(feature = "boringssl", feature = "aws-lc")), allow(dead_code))]
    ocsp_response: Option<Vec<u8>>,
}

impl EndpointFactory for OpensslFactory {
    /// A server's context is shared by reference (the library's handles are thread-safe); a
    /// client's records what it verified for the harness's check, per context.
    fn shared(&self) -> Option<&(dyn EndpointFactory + Sync)> {
        (self.side == Side::Server).then_some(self as &(dyn EndpointFactory + Sync))
    }

    fn endpoint(&self, io: MemIo) -> Result<Box<dyn TlsEndpoint>> {
        self.verify_plan.next_connection();
        let mut ssl = Ssl::new(&self.ctx)?;
        match self.side {
            Side::Client => {
                if let Some(sni) = &self.sni {
                    ssl.set_hostname(sni)?;
                }
                #[cfg(feature = "boringssl")]
                if let Some(host) = &self.verify_host {
                    ssl.verify_param_mut().set_host(host)?;
                }
                #[cfg(feature = "boringssl")]
                if let Some(group) = self.key_share {
                    // SAFETY: a fresh SSL and one group id, which the call copies.
                    if unsafe { ffi::SSL_set1_client_key_shares(ssl.as_ptr(), &group, 1) } != 1 {
                        return Err(describe_stack("setting the client's one key share"));
                    }
                }
                offer_kept_session(self.session.as_ref(), &mut ssl)?;
                // SAFETY: a fresh SSL; sets which side it plays. (The `boring` crate puts
                // this on its stream builder only.)
                unsafe { ffi::SSL_set_connect_state(ssl.as_ptr()) };
            }
            // SAFETY: as above.
            Side::Server => unsafe { ffi::SSL_set_accept_state(ssl.as_ptr()) },
        }
        #[cfg(any(feature = "boringssl", feature = "aws-lc"))]
        if self.jdk11_workaround {
            // SAFETY: a fresh SSL.
            unsafe { ffi::SSL_set_jdk11_workaround(ssl.as_ptr(), 1) };
        }
        if self.requests_ocsp {
            ssl.set_status_type(openssl::ssl::StatusType::OCSP)?;
        }
        #[cfg(any(feature = "boringssl", feature = "aws-lc"))]
        if let Some(response) = &self.ocsp_response {
            if !probe::set_ocsp_response(ssl.as_ptr(), response) {
                return Err(describe_stack("setting the OCSP response"));
            }
        }
        Ok(Box::new(OpensslEndpoint {
            stream: SslStream::new(ssl, io)?,
            side: self.side,
            done: false,
            write_tickets: self.write_tickets,
            session: self.session.clone(),
        }))
    }
}

struct OpensslEndpoint {
    stream: SslStream<MemIo>,
    side: Side,
    done: bool,
    /// Server side: send the session tickets as soon as the handshake is done.
    #[cfg_attr(not(any(feature = "boringssl", feature = "aws-lc")), allow(dead_code))]
    write_tickets: bool,
    /// Client side, when resuming: where the session is kept for the next connection.
    /// (BoringSSL's and AWS-LC's clients fill it from the new-session callback instead.)
    #[cfg_attr(any(feature = "boringssl", feature = "aws-lc"), allow(dead_code))]
    session: Option<SessionSlot>,
}

fn describe(e: openssl::ssl::Error) -> anyhow::Error {
    match e.ssl_error() {
        Some(stack) => anyhow!("OpenSSL: {stack}"),
        None => anyhow!("OpenSSL: {e}"),
    }
}

/// Whether this build of the library has a suite that `list` (OpenSSL's syntax) names.
fn takes_cipher_list(list: &str) -> bool {
    SslContextBuilder::new(SslMethod::tls()).is_ok_and(|mut b| b.set_cipher_list(list).is_ok())
}

/// OpenSSL's error queue after a call that reports failure without an `ssl::Error`.
fn describe_stack(what: &str) -> anyhow::Error {
    anyhow!("OpenSSL: {what}: {}", openssl::error::ErrorStack::get())
}

impl OpensslEndpoint {
    fn ssl_ptr(&self) -> *mut ffi::SSL {
        self.stream.ssl().as_ptr()
    }
}

/// Certificates the peer sent. OpenSSL's peer chain holds the leaf on a client only; a server
/// gets the client's leaf separately.
fn peer_certs(ssl: &openssl::ssl::SslRef, side: Side) -> usize {
    let chain = ssl.peer_cert_chain().map_or(0, |c| c.len());
    match side {
        Side::Client => chain,
        Side::Server => chain + usize::from(ssl.peer_certificate().is_some()),
    }
}

/// What `side` of a connection negotiated, its TLS version read as the caller knows it (a
/// QUIC connection's `SSL_version` is QUIC's).
fn negotiated_of(ssl: &openssl::ssl::SslRef, side: Side, version: Option<u16>) -> Negotiated {
    let ptr = ssl.as_ptr();
    Negotiated {
        version,
        cipher_suite: ssl.current_cipher().map(cipher_code),
        group: probe::group(ptr),
        signature_scheme: probe::signature_scheme(ptr, side),
        resumed: Some(ssl.session_reused()),
        peer_certs: Some(peer_certs(ssl, side)),
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
            #[cfg(not(any(feature = "boringssl", feature = "aws-lc")))]
            keep_session(self.session.as_ref(), self.stream.ssl());
        }
    }
}

impl TlsEndpoint for OpensslEndpoint {
    fn handshake_step(&mut self) -> Result<()> {
        match self.stream.do_handshake() {
            Ok(()) => {
                self.done = true;
                // BoringSSL (and AWS-LC) holds a TLS 1.3 server's tickets back until it
                // writes; its documented way to send them without data is a zero-byte write.
                #[cfg(any(feature = "boringssl", feature = "aws-lc"))]
                if self.side == Side::Server && self.write_tickets {
                    // SAFETY: valid SSL pointer; zero bytes from a valid pointer.
                    unsafe { ffi::SSL_write(self.ssl_ptr(), [0u8; 0].as_ptr().cast(), 0) };
                }
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
        if !probe::key_update(self.ssl_ptr()) {
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

    fn peer_signature_scheme(&self) -> Option<u16> {
        probe::peer_signature_scheme(self.ssl_ptr())
    }

    fn hello_retry(&self) -> Option<bool> {
        probe::hello_retry(self.ssl_ptr())
    }

    fn channel_id(&self) -> Option<Vec<u8>> {
        probe::channel_id(self.ssl_ptr())
    }

    fn ocsp_response(&self) -> Option<Vec<u8>> {
        Some(probe::ocsp_response(self.ssl_ptr()))
    }

    fn next_proto(&self) -> Option<Vec<u8>> {
        Some(npn::negotiated(self.ssl_ptr()))
    }

    fn extended_master_secret(&self) -> Option<bool> {
        Some(probe::extended_master_secret(self.ssl_ptr()))
    }

    #[cfg(feature = "boringssl")]
    fn selected_credential(&self) -> Option<i32> {
        Some(credentials::selected(self.stream.ssl()))
    }

    #[cfg(feature = "boringssl")]
    fn peer_cert_type(&self) -> Option<u8> {
        Some(credentials::peer_cert_type(self.stream.ssl()))
    }

    fn export_keying_material(
        &self,
        label: &[u8],
        context: Option<&[u8]>,
        len: usize,
    ) -> Option<Result<Vec<u8>>> {
        let mut out = vec![0u8; len];
        let ctx = context.unwrap_or_default();
        // SAFETY: valid SSL pointer; every buffer is valid for the length given with it.
        let ok = unsafe {
            ffi::SSL_export_keying_material(
                self.ssl_ptr(),
                out.as_mut_ptr().cast(),
                out.len(),
                label.as_ptr().cast(),
                label.len(),
                ctx.as_ptr().cast(),
                ctx.len(),
                std::ffi::c_int::from(context.is_some()),
            )
        };
        Some(if ok == 1 {
            Ok(out)
        } else {
            Err(describe_stack("exporting keying material"))
        })
    }

    // The result is a C long: the same type as i64 on this target, not on every target.
    #[allow(clippy::useless_conversion)]
    fn verify_result(&self) -> Option<i64> {
        // SAFETY: valid SSL pointer.
        Some(i64::from(unsafe {
            ffi::SSL_get_verify_result(self.ssl_ptr())
        }))
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
        negotiated_of(self.stream.ssl(), self.side, u16::try_from(version).ok())
    }
}
