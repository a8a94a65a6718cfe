//! The traits every TLS library adapter implements. Three small pieces instead of one big one:
//! a library (name, version, what it supports), a per-side factory built once from a
//! configuration (certificates parsed, contexts set up: not measured), and the endpoint itself,
//! which the pair driver steps and times.

use std::sync::Arc;

use crate::aead::LibraryAead;
use crate::certs::CertSet;
use crate::floor::HandshakeCrypto;
use crate::memio::MemIo;
use crate::negotiated::Negotiated;
use crate::quic_endpoint::QuicEndpointFactory;
use tlsmatrix_model::codes;
use tlsmatrix_model::scenario::{
    Aead, Chain, ConnParams, Extras, Group, Resumption, Scenario, SigAlg, Version,
};
use tlsmatrix_model::side::Side;

pub use tlsmatrix_model::bogo_flags::{CompliancePolicy, OcspCallback};

/// What one side is configured to do. Built from a scenario, so both sides pin the same
/// version, suite, group and signature scheme; tests may change a side to provoke a mismatch.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    pub version: Version,
    pub aead: Aead,
    /// The certificate key type, and so the one signature scheme offered.
    pub sig: SigAlg,
    /// Groups offered (client) or accepted (server), most preferred first. Adapters read
    /// them through [`EndpointConfig::groups_for`].
    pub groups: Vec<Group>,
    /// A group the client alone offers before `groups`, with its only key share: when the
    /// server does not accept it, the server must send a HelloRetryRequest.
    pub client_first_group: Option<Group>,
    pub resumption: Resumption,
    pub certs: Arc<CertSet>,
    /// Sent as SNI and checked against the server certificate.
    pub server_name: String,
    /// ALPN protocols offered (client) or accepted (server), most preferred first; empty for
    /// none. A server with no protocol in common must refuse with no_application_protocol.
    pub alpn: Vec<String>,
    /// Mutual TLS: the server requires a client certificate from the test CA; the client
    /// presents one when `client_cert` is set.
    pub require_client_cert: bool,
    pub client_cert: bool,
    /// How many certificates the server sends (see [`CertSet::chain_pem`]).
    pub chain: Chain,
    /// Conformance testing only (the BoGo shim): the library's own defaults wherever the
    /// runner says nothing, instead of the scenario's one version, suite and scheme. `None`
    /// for every measurement.
    pub open: Option<OpenPolicy>,
}

/// How an open configuration departs from a scenario's pinned one. With it, adapters ignore
/// `version`, `aead` and `sig`, offer their default suites and schemes, take an empty
/// `groups` as their default groups, keep a server session cache and issue and keep tickets;
/// `certs` holds the runner's own credential (see [`CertSet::from_pems`]). Peer certificates
/// are accepted whatever their chain, as BoringSSL's shim accepts them (its verify callback
/// returns success); the handshake signature is still checked against the certificate's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenPolicy {
    pub min_version: Version,
    pub max_version: Version,
    /// Server: ask for a client certificate (`require_client_cert` makes it mandatory).
    pub request_client_cert: bool,
    /// The host name a client sends as SNI; `None` sends none.
    pub sni: Option<String>,
    /// TLS 1.2: every suite the library has (the BoGo shim, as BoringSSL's own enables
    /// "ALL"), or only those it enables by default (a defaults peer for outside tools).
    pub every_tls12_suite: bool,
    /// TLS 1.3's middlebox compatibility mode (RFC 8446 D.4: a session id and a dummy
    /// ChangeCipherSpec), which BoGo's runner requires of every client. Most libraries have
    /// it on by default; one that does not (NSS) turns it on for the shim only.
    pub middlebox_compat: bool,
    /// What BoGo may ask beyond that, which few adapters take (see [`OpenExtras`]).
    pub extras: OpenExtras,
}

/// Settings and reports an open configuration may ask for beyond the ones every adapter
/// takes. Each adapter says which it honours ([`TlsLibrary::open_extras`]); a test that asks
/// for one it lacks is unimplemented for that library, never run with the setting ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenExtras {
    /// Signature schemes (IANA code points) to sign with, most preferred first.
    pub signing_prefs: Vec<u16>,
    /// Signature schemes to accept from the peer and advertise, most preferred first.
    pub verify_prefs: Vec<u16>,
    /// TLS 1.2 cipher suites in OpenSSL's syntax, which a server takes as its order of
    /// preference over the client's (as BoringSSL's shim does with `-cipher`).
    pub cipher_list: Option<String>,
    /// One of BoringSSL's named compliance policies.
    pub compliance: Option<CompliancePolicy>,
    /// The certificate verification callback fails on the first connection, so a handshake
    /// that verifies the peer must not complete.
    pub verify_fails: bool,
    /// The callback fails on the connections after the first (which resume), which matters
    /// where the library verifies a resumed session again.
    pub verify_fails_on_resume: bool,
    /// A client's failed verification does not stop the handshake, and is still reported
    /// ([`TlsEndpoint::verify_result`]): a client that verifies without insisting, as
    /// BoringSSL's shim is without `-verify-peer`. Asked only with `verify_fails`.
    pub verify_soft: bool,
    /// Verification through BoringSSL's custom callback (`SSL_CTX_set_custom_verify`), which
    /// replaces the chain check and refuses with its own alert.
    pub custom_verify: bool,
    /// Verify the peer again when a session resumes.
    pub reverify_on_resume: bool,
    /// BoringSSL's workaround for JDK 11's TLS 1.3 ClientHello (`SSL_set_jdk11_workaround`).
    pub jdk11_workaround: bool,
    /// No session tickets: sessions resume by session ID only.
    pub no_ticket: bool,
    /// Accept a client's Channel ID (BoringSSL's extension, which AWS-LC kept).
    pub channel_id_enabled: bool,
    /// The private key (PEM) a client sends its Channel ID with.
    pub channel_id_key_pem: Option<String>,
    /// The caller reads [`TlsEndpoint::channel_id`].
    pub reads_channel_id: bool,
    /// The caller reads [`TlsEndpoint::verify_result`].
    pub reads_verify_result: bool,
    /// The caller reads [`TlsEndpoint::peer_signature_scheme`].
    pub reads_peer_signature: bool,
    /// The caller reads [`TlsEndpoint::hello_retry`].
    pub reads_hello_retry: bool,
    /// The caller exports keying material ([`TlsEndpoint::export_keying_material`]).
    pub exports_keying_material: bool,
    /// All the groups, by code point, most preferred first, in place of
    /// [`EndpointConfig::groups`] (left empty): asked when one of them has no name in the
    /// scenario model (P-521, ML-KEM-1024), which only measures what every stack has.
    pub group_codes: Vec<u16>,
    /// Credentials beyond `EndpointConfig::certs` (which may then be empty), in order; the
    /// library picks one per handshake (BoringSSL's `SSL_CTX_add1_credential`).
    pub credentials: Vec<Credential>,
    /// The caller reads [`TlsEndpoint::selected_credential`].
    pub reads_selected_credential: bool,
    /// Certificate types (RFC 7250 codes) accepted from the peer, most preferred first;
    /// empty for X.509 only.
    pub accepted_peer_cert_types: Vec<u8>,
    /// Certificate types a client offers for itself; empty for its credentials' types.
    pub available_client_cert_types: Vec<u8>,
    /// The SHA-256 of the SubjectPublicKeyInfo a peer's raw public key must have: the
    /// verification that accepts raw public keys.
    pub peer_rpk_sha256: Option<Vec<u8>>,
    /// The caller reads [`TlsEndpoint::peer_cert_type`].
    pub reads_peer_cert_type: bool,
    /// Client: ask for a stapled OCSP response (status_request).
    pub requests_ocsp: bool,
    /// Server: the OCSP response to staple when a client asks.
    pub ocsp_response: Option<Vec<u8>>,
    /// The application's OCSP callback and what it answers.
    pub ocsp_callback: Option<OcspCallback>,
    /// The caller reads [`TlsEndpoint::ocsp_response`].
    pub reads_ocsp_response: bool,
    /// A client's certificate is handed over by OpenSSL's oldest callback
    /// (`SSL_CTX_set_client_cert_cb`: the leaf and its key, no chain) when a server asks.
    pub old_client_cert_callback: bool,
    /// Server: the protocols Next Protocol Negotiation advertises (wire form, each prefixed
    /// by its length; empty advertises an empty list).
    pub npn_advertised: Option<Vec<u8>>,
    /// Client: the protocol it picks when a server advertises NPN (may be empty).
    pub npn_selected: Option<Vec<u8>>,
    /// The caller reads [`TlsEndpoint::next_proto`].
    pub reads_next_proto: bool,
    /// A TLS 1.2 pre-shared key (the PSK suites), which a server may take in place of a
    /// certificate.
    pub psk: Option<Vec<u8>>,
    /// The PSK's identity: what a client sends and a server requires and sends as its hint
    /// (empty: none, and a client then requires no hint).
    pub psk_identity: String,
    /// The caller reads [`TlsEndpoint::extended_master_secret`].
    pub reads_extended_master_secret: bool,
}

/// A credential to authenticate with, beside the configuration's own certificate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credential {
    /// A raw public key (RFC 7250) made from `key_pem`; `chain_pem` is then unused.
    pub raw_public_key: bool,
    /// Leaf first.
    pub chain_pem: String,
    pub key_pem: String,
    /// Signature schemes this credential signs with, most preferred first; empty for all.
    pub signing_prefs: Vec<u16>,
    /// Chosen only when the peer names the issuer of its chain.
    pub must_match_issuer: bool,
    /// The OCSP response stapled with this credential.
    pub ocsp_response: Option<Vec<u8>>,
}

impl OpenExtras {
    /// Whether Channel ID is asked for in any form: accepted, sent, or read back.
    pub fn asks_channel_id(&self) -> bool {
        self.channel_id_enabled || self.channel_id_key_pem.is_some() || self.reads_channel_id
    }

    /// Whether credentials to choose from are asked for, or a report of the one chosen.
    pub fn asks_credentials(&self) -> bool {
        !self.credentials.is_empty() || self.reads_selected_credential
    }

    /// Whether raw public keys (RFC 7250) are asked for in any form: certificate types
    /// offered or accepted, a key to verify, or a report of the peer's type.
    pub fn asks_raw_public_keys(&self) -> bool {
        !self.accepted_peer_cert_types.is_empty()
            || !self.available_client_cert_types.is_empty()
            || self.peer_rpk_sha256.is_some()
            || self.reads_peer_cert_type
    }

    /// What is asked, in words, for an adapter that honours none of it.
    pub fn asked(&self) -> Vec<&'static str> {
        [
            (!self.signing_prefs.is_empty(), "signing preferences"),
            (!self.verify_prefs.is_empty(), "verification preferences"),
            (self.cipher_list.is_some(), "a cipher list"),
            (self.compliance.is_some(), "a BoringSSL compliance policy"),
            (
                self.verify_fails || self.verify_fails_on_resume,
                "a failing verification callback",
            ),
            (
                self.custom_verify,
                "BoringSSL's custom verification callback",
            ),
            (self.reverify_on_resume, "verification again on resumption"),
            (self.jdk11_workaround, "BoringSSL's JDK 11 workaround"),
            (self.no_ticket, "a switch that turns tickets off"),
            (self.asks_channel_id(), "Channel ID"),
            (
                self.reads_verify_result,
                "a report of the verification result",
            ),
            (
                self.reads_peer_signature,
                "a report of the peer's signature scheme",
            ),
            (self.reads_hello_retry, "a report of HelloRetryRequest"),
            (self.exports_keying_material, "keying material exports"),
            (
                !self.group_codes.is_empty(),
                "groups the scenario model does not name",
            ),
            (
                self.asks_credentials(),
                "several credentials to choose from",
            ),
            (self.asks_raw_public_keys(), "raw public keys (RFC 7250)"),
            (
                self.requests_ocsp
                    || self.ocsp_response.is_some()
                    || self.ocsp_callback.is_some()
                    || self.reads_ocsp_response,
                "OCSP stapling",
            ),
            (
                self.old_client_cert_callback,
                "OpenSSL's client certificate callback",
            ),
            (
                self.npn_advertised.is_some()
                    || self.npn_selected.is_some()
                    || self.reads_next_proto,
                "Next Protocol Negotiation",
            ),
            (self.psk.is_some(), "TLS 1.2 pre-shared keys"),
            (
                self.reads_extended_master_secret,
                "a report of the extended master secret",
            ),
        ]
        .into_iter()
        .filter_map(|(asked, what)| asked.then_some(what))
        .collect()
    }
}

impl OpenPolicy {
    /// The versions allowed, oldest first.
    pub fn versions(&self) -> Vec<Version> {
        Version::ALL
            .iter()
            .copied()
            .filter(|v| codes::version_code(*v) >= codes::version_code(self.min_version))
            .filter(|v| codes::version_code(*v) <= codes::version_code(self.max_version))
            .collect()
    }
}

impl EndpointConfig {
    pub fn for_scenario(scenario: &Scenario, certs: Arc<CertSet>) -> Self {
        Self::for_params(&scenario.params(), certs)
    }

    pub fn for_params(p: &ConnParams, certs: Arc<CertSet>) -> Self {
        let p = *p;
        let mut groups = vec![p.group];
        // In TLS 1.2 `supported_groups` also says which curves an ECDSA certificate may use
        // (RFC 8422, 5.1), and OpenSSL enforces it; so the certificate's curve is listed
        // after the key-exchange group. The negotiated-group check still holds the key
        // exchange to the scenario's group.
        if p.version == Version::Tls12 {
            if let Some(curve) = p.sig.ecdsa_curve() {
                if curve != p.group {
                    groups.push(curve);
                }
            }
        }
        EndpointConfig {
            version: p.version,
            aead: p.aead,
            sig: p.sig,
            groups,
            client_first_group: p.extras.hrr.then(|| Extras::hrr_decoy(p.group)),
            resumption: p.resumption,
            certs,
            server_name: tlsmatrix_model::scenario::SERVER_NAME.to_string(),
            alpn: Vec::new(),
            require_client_cert: p.extras.mtls,
            client_cert: p.extras.mtls,
            chain: p.extras.chain,
            open: None,
        }
    }

    /// The groups `side` offers or accepts, most preferred first.
    pub fn groups_for(&self, side: Side) -> Vec<Group> {
        let first = match side {
            Side::Client => self.client_first_group,
            Side::Server => None,
        };
        first
            .into_iter()
            .chain(self.groups.iter().copied())
            .collect()
    }

    /// Whether the client offers a post-quantum group (what a library without ML-KEM
    /// refuses).
    pub fn offers_post_quantum(&self) -> bool {
        self.groups_for(Side::Client)
            .iter()
            .any(|g| g.is_post_quantum())
    }

    /// The ALPN protocols in their wire form, each prefixed by its length; a protocol name
    /// longer than 255 bytes cannot be sent and is an error.
    pub fn alpn_wire(&self) -> anyhow::Result<Vec<u8>> {
        let mut wire = Vec::new();
        for p in &self.alpn {
            let len = u8::try_from(p.len())
                .map_err(|_| anyhow::anyhow!("the ALPN protocol name {p:?} is over 255 bytes"))?;
            wire.push(len);
            wire.extend_from_slice(p.as_bytes());
        }
        Ok(wire)
    }

    /// The server's certificates, leaf first, as PEM.
    pub fn server_chain_pem(&self) -> &str {
        self.certs.chain_pem(self.chain)
    }
}

impl EndpointConfig {
    /// Combinations QUIC itself rules out, whatever the stack: `Err(reason)`.
    pub fn quic_limits(&self) -> Result<(), String> {
        if self.version != Version::Tls13 {
            return Err("QUIC carries TLS 1.3 only (RFC 9001 §4.2)".into());
        }
        if self.client_first_group.is_some() {
            // Over TCP the pair counts the ClientHellos a client writes; inside QUIC they travel
            // in Initial packets, which the pair does not decrypt yet.
            return Err(
                "a HelloRetryRequest inside QUIC cannot be checked yet: the pair does not read the ClientHellos in Initial packets"
                    .into(),
            );
        }
        if self.alpn.is_empty() {
            return Err("QUIC requires ALPN (RFC 9001 §8.1); the configuration offers none".into());
        }
        if self.resumption == Resumption::SessionId {
            return Err("QUIC resumes by TLS 1.3 ticket only (RFC 9001 §4.5)".into());
        }
        Ok(())
    }

    /// Combinations no TLS version allows, whatever the library: `Err(reason)`.
    pub fn protocol_limits(&self) -> Result<(), String> {
        if self.version == Version::Tls12 {
            if let Some(g) = self.groups.iter().find(|g| g.is_post_quantum()) {
                return Err(format!(
                    "{g} is defined for TLS 1.3 only (the ML-KEM key-agreement drafts use TLS 1.3's key_share)"
                ));
            }
            if self.sig.is_mldsa() {
                return Err(format!(
                    "{} is defined for TLS 1.3 only (draft-ietf-tls-mldsa assigns it no TLS 1.2 use)",
                    self.sig
                ));
            }
        }
        if self.version == Version::Tls13 && self.resumption == Resumption::SessionId {
            return Err("TLS 1.3 has no session-id resumption; it resumes with tickets".into());
        }
        if self.version == Version::Tls12 && self.client_first_group.is_some() {
            return Err(
                "TLS 1.2 has no HelloRetryRequest; a server picks from the groups offered".into(),
            );
        }
        Ok(())
    }
}

/// A TLS stack build, e.g. rustls with the aws-lc-rs provider, or the system OpenSSL.
pub trait TlsLibrary: Send + Sync {
    /// The impl name used on the command line and in records, e.g. `openssl-3.0`.
    fn name(&self) -> &'static str;
    /// The exact version running, read from the library at run time where it can tell.
    fn version(&self) -> String;
    /// The shared object its code was loaded from, where it is one (the dynamic loader's
    /// answer, so a companion build loaded in place of the system's is told from it); `None`
    /// for a library linked into the driver.
    fn library_file(&self) -> Option<std::path::PathBuf> {
        None
    }
    /// `Err(reason)` when this library cannot run the configuration as asked.
    fn supports(&self, _cfg: &EndpointConfig) -> Result<(), String> {
        Ok(())
    }
    /// `Err(reason)` unless the adapter honours everything `extras` asks; by default it
    /// honours none of it.
    fn open_extras(&self, extras: &OpenExtras) -> Result<(), String> {
        refuse_extras(self.name(), extras)
    }
    /// Whether it can play `side` of a cell: [`TlsLibrary::supports`] unless a library can
    /// play one side only (e.g. it cannot report what it verified as a client).
    fn supports_side(&self, _side: Side, cfg: &EndpointConfig) -> Result<(), String> {
        self.supports(cfg)
    }
    fn factory(&self, side: Side, cfg: &EndpointConfig)
        -> anyhow::Result<Box<dyn EndpointFactory>>;
    /// `Err(reason)` when its endpoints cannot send a TLS 1.3 KeyUpdate on request
    /// ([`TlsEndpoint::key_update`]), so a case that asks a client for one is unsupported.
    fn sends_key_update(&self) -> Result<(), String> {
        Ok(())
    }
    /// The library's own AEAD (its crypto API, no TLS) keyed with `aead::KEY`/`aead::IV`,
    /// for the ceiling its bulk figures are read against; `Err(reason)` when it has none.
    fn record_aead(&self, _aead: Aead) -> Result<LibraryAead, String> {
        Err(format!(
            "{} has no AEAD apart from its TLS stack here",
            self.name()
        ))
    }
    /// The library's own crypto API for the operations a handshake must perform (the crypto
    /// floor, `tlsmatrix_model::floor`); `Err(reason)` when it cannot be called apart here.
    fn handshake_crypto(&self) -> Result<Box<dyn HandshakeCrypto>, String> {
        Err(format!(
            "tlsmatrix does not yet call {}'s crypto API apart from its TLS stack",
            self.name()
        ))
    }
    /// The library's QUIC stack (RFC 9001) with its exact version, e.g. "quinn-proto
    /// 0.11.19"; `Err(reason)` when tlsmatrix drives none on this library.
    fn quic_stack(&self) -> Result<String, String> {
        Err(format!(
            "tlsmatrix drives no QUIC stack on {} yet",
            self.name()
        ))
    }
    /// `Err(reason)` when its QUIC stack cannot run the configuration as asked: it has none,
    /// QUIC rules it out ([`EndpointConfig::quic_limits`]), or the library's TLS does
    /// ([`TlsLibrary::supports`]), whose sessions the stack drives.
    fn quic_supports(&self, cfg: &EndpointConfig) -> Result<(), String> {
        self.quic_stack()?;
        cfg.quic_limits()?;
        if cfg.resumption.is_resumed() {
            self.quic_resumes()?;
        }
        self.supports(cfg)
    }
    /// `Err(reason)` where its QUIC adapter does not resume a session by ticket: the client
    /// keeping the ticket a connection received and offering it on the next, the server
    /// issuing tickets and saying whether it accepted one.
    fn quic_resumes(&self) -> Result<(), String> {
        Err(format!(
            "tlsmatrix's QUIC adapter on {} does not resume sessions yet",
            self.name()
        ))
    }
    /// `side`'s QUIC connections for `cfg`, where [`TlsLibrary::quic_supports`] takes it.
    fn quic_factory(
        &self,
        _side: Side,
        _cfg: &EndpointConfig,
    ) -> anyhow::Result<Box<dyn QuicEndpointFactory>> {
        Err(anyhow::anyhow!(self.quic_stack().err().unwrap_or_default()))
    }
    /// The library's own C allocation call, to check which allocator its blocks land in;
    /// `None` when its C code allocates nothing (ring) and all goes through Rust's allocator.
    fn c_allocation(&self) -> Option<CAllocation> {
        None
    }
}

/// `Err(reason)` naming all that `extras` asks of the `library` adapter, which takes none of it;
/// `Ok` when it asks nothing.
pub fn refuse_extras(library: &str, extras: &OpenExtras) -> Result<(), String> {
    match extras.asked().as_slice() {
        [] => Ok(()),
        asked => Err(format!(
            "the {library} adapter does not take {}",
            asked.join(", ")
        )),
    }
}

/// A C library's allocation call and its matching free, e.g. OpenSSL's `OPENSSL_malloc`.
pub struct CAllocation {
    pub call: &'static str,
    pub alloc: unsafe fn(usize) -> *mut std::ffi::c_void,
    pub free: unsafe fn(*mut std::ffi::c_void),
}

/// Holds one side's parsed configuration and makes connections from it.
pub trait EndpointFactory {
    fn endpoint(&self, io: MemIo) -> anyhow::Result<Box<dyn TlsEndpoint>>;
    /// This factory for threads that make connections from it at once, as a server shares
    /// one context among its threads; `None` when the adapter's context may not be shared
    /// (its handles are not thread-safe, or the adapter has not been checked for it).
    fn shared(&self) -> Option<&(dyn EndpointFactory + Sync)> {
        None
    }
}

/// One side of a connection, exchanging TLS bytes through its `MemIo`.
pub trait TlsEndpoint {
    /// Consume whatever TLS bytes have arrived and write whatever the handshake produces.
    /// Returns once no more progress is possible without the peer.
    fn handshake_step(&mut self) -> anyhow::Result<()>;
    fn is_handshake_complete(&self) -> bool;
    /// Encrypt all of `data` and write the records to the transport.
    fn send(&mut self, data: &[u8]) -> anyhow::Result<()>;
    /// Decrypt what has arrived into `buf`; 0 means nothing is available yet.
    fn recv(&mut self, buf: &mut [u8]) -> anyhow::Result<usize>;
    /// What this side believes was negotiated.
    fn negotiated(&self) -> Negotiated;
    /// The ALPN protocol agreed on, if any.
    fn alpn(&self) -> Option<Vec<u8>>;
    /// Sends a TLS 1.3 KeyUpdate; the data written after it uses the new keys.
    fn key_update(&mut self) -> anyhow::Result<()>;
    /// Server side: the host name the client sent as SNI, if any.
    fn sni(&self) -> Option<String>;
    /// The signature scheme the peer signed the handshake with, where the library tells
    /// (see [`OpenExtras::reads_peer_signature`]).
    fn peer_signature_scheme(&self) -> Option<u16> {
        None
    }
    /// Whether the handshake had a HelloRetryRequest, where the library tells.
    fn hello_retry(&self) -> Option<bool> {
        None
    }
    /// The verification result as an X.509 code (`X509_V_OK`, 0, when the chain was taken),
    /// where the library tells (see [`OpenExtras::reads_verify_result`]).
    fn verify_result(&self) -> Option<i64> {
        None
    }
    /// Server side: the client's Channel ID (empty when none came), where the library has it.
    fn channel_id(&self) -> Option<Vec<u8>> {
        None
    }
    /// `len` bytes of keying material for `label` and, when given, `context` (RFC 5705;
    /// RFC 8446 7.5, where no context is the empty one), where the library exports it (see
    /// [`OpenExtras::exports_keying_material`]).
    fn export_keying_material(
        &self,
        _label: &[u8],
        _context: Option<&[u8]>,
        _len: usize,
    ) -> Option<anyhow::Result<Vec<u8>>> {
        None
    }
    /// Which of [`OpenExtras::credentials`] the handshake used (its index), or -1 for the
    /// configuration's own certificate or none, where the library tells.
    fn selected_credential(&self) -> Option<i32> {
        None
    }
    /// Whether the connection uses the extended master secret (RFC 7627), where the library
    /// tells.
    fn extended_master_secret(&self) -> Option<bool> {
        None
    }
    /// The protocol Next Protocol Negotiation agreed on (empty: none), where the library
    /// tells.
    fn next_proto(&self) -> Option<Vec<u8>> {
        None
    }
    /// The OCSP response the server stapled (empty when none came), where the library tells.
    fn ocsp_response(&self) -> Option<Vec<u8>> {
        None
    }
    /// The certificate type (RFC 7250 code) the peer authenticated with, where the library
    /// tells.
    fn peer_cert_type(&self) -> Option<u8> {
        None
    }
    /// Sends close_notify. Over a socket the peer learns the stream ended where the sender
    /// meant it to, not where an attacker cut it.
    fn close(&mut self) -> anyhow::Result<()>;
}

/// What `recv` fails with once the peer's close_notify has arrived: the clean end of the
/// stream, which callers tell apart from every other error with `is::<PeerClosed>()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the peer closed the connection with close_notify")]
pub struct PeerClosed;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpn_goes_on_the_wire_length_prefixed_and_a_long_name_is_refused() {
        let certs = Arc::new(CertSet::from_pems(
            String::new(),
            String::new(),
            String::new(),
        ));
        let scenario: Scenario = "handshake-tls13-ecdsa-p256-x25519-full".parse().unwrap();
        let mut cfg = EndpointConfig::for_scenario(&scenario, certs);
        cfg.alpn = vec!["h2".into(), "http/1.1".into()];
        assert_eq!(cfg.alpn_wire().unwrap(), b"\x02h2\x08http/1.1");
        cfg.alpn = vec!["x".repeat(256)];
        assert!(cfg
            .alpn_wire()
            .unwrap_err()
            .to_string()
            .contains("over 255 bytes"));
    }

    #[test]
    fn quic_refuses_tls12_and_a_configuration_without_alpn() {
        let certs = Arc::new(CertSet::from_pems(
            String::new(),
            String::new(),
            String::new(),
        ));
        let tls13: tlsmatrix_model::scenario::Scenario =
            "handshake-tls13-ecdsa-p256-x25519-full".parse().unwrap();
        let mut cfg = EndpointConfig::for_scenario(&tls13, certs.clone());
        assert!(cfg.quic_limits().unwrap_err().contains("ALPN"));
        cfg.alpn = vec![crate::quic_endpoint::ALPN.into()];
        assert_eq!(cfg.quic_limits(), Ok(()));
        let tls12: tlsmatrix_model::scenario::Scenario =
            "handshake-tls12-ecdsa-p256-x25519-full".parse().unwrap();
        let mut cfg = EndpointConfig::for_scenario(&tls12, certs);
        cfg.alpn = vec![crate::quic_endpoint::ALPN.into()];
        assert!(cfg.quic_limits().unwrap_err().contains("TLS 1.3 only"));
    }
}
