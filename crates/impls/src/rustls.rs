//! rustls 0.23, with either crypto provider. The provider is cut down to the scenario's one
//! suite and its groups, so rustls cannot negotiate anything else.

use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{Resumption, Tls12Resumption, WebPkiServerVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::{
    NoServerSessionStorage, ProducesTickets, ServerSessionMemoryCache, WebPkiClientVerifier,
};
use rustls::{
    ClientConfig, ClientConnection, Connection, DigitallySignedStruct, RootCertStore, ServerConfig,
    ServerConnection, SignatureScheme, SupportedProtocolVersion,
};
use tlsmatrix_harness::aead::LibraryAead;
use tlsmatrix_harness::endpoint::CAllocation;
use tlsmatrix_harness::endpoint::{
    refuse_extras, EndpointConfig, EndpointFactory, OpenExtras, PeerClosed, TlsEndpoint, TlsLibrary,
};
use tlsmatrix_harness::floor::HandshakeCrypto;
use tlsmatrix_harness::memio::MemIo;
use tlsmatrix_harness::negotiated::Negotiated;
use tlsmatrix_model::codes;
use tlsmatrix_model::scenario::Aead;
use tlsmatrix_model::scenario::{Resumption as ResumptionMode, Version};
use tlsmatrix_model::side::Side;

mod open;
pub(crate) mod quinn;

type Ticketer = fn() -> Result<Arc<dyn ProducesTickets>, rustls::Error>;

pub struct RustlsLibrary {
    name: &'static str,
    provider: fn() -> CryptoProvider,
    /// Every key-exchange group the provider has, beyond the few its default offers (the
    /// pure and P-256 ML-KEM groups are in aws-lc-rs's list only).
    all_kx_groups: &'static [&'static dyn rustls::crypto::SupportedKxGroup],
    /// The provider's AEAD through its own API (the bulk ceiling).
    record_aead: fn(Aead) -> Result<LibraryAead, String>,
    /// Its C library's allocation call, if its C code allocates.
    c_allocation: Option<fn() -> CAllocation>,
    /// The provider's stateless ticket encrypter, for ticket resumption.
    ticketer: Ticketer,
    /// HMAC-SHA256 through the provider's own crate, keyed once: quinn's stateless-reset
    /// key, as quinn keys it with the one crypto crate a build enables.
    reset_hmac: fn(&[u8]) -> quinn::ResetHmac,
    provider_version: String,
}

impl RustlsLibrary {
    #[cfg(feature = "rustls-aws-lc")]
    pub fn aws_lc_rs() -> Self {
        RustlsLibrary {
            name: "rustls-aws-lc",
            provider: rustls::crypto::aws_lc_rs::default_provider,
            all_kx_groups: rustls::crypto::aws_lc_rs::ALL_KX_GROUPS,
            record_aead: crate::ceiling::aws_lc::record_aead,
            c_allocation: Some(crate::ceiling::aws_lc_allocation),
            ticketer: rustls::crypto::aws_lc_rs::Ticketer::new,
            reset_hmac: |key| {
                use aws_lc_rs::hmac;
                let key = hmac::Key::new(hmac::HMAC_SHA256, key);
                Box::new(move |data, out| out.copy_from_slice(hmac::sign(&key, data).as_ref()))
            },
            provider_version: format!(
                "aws-lc-rs {} (aws-lc-sys {})",
                env!("TLSMATRIX_VERSION_AWS_LC_RS"),
                env!("TLSMATRIX_VERSION_AWS_LC_SYS")
            ),
        }
    }

    #[cfg(feature = "rustls-ring")]
    pub fn ring() -> Self {
        RustlsLibrary {
            name: "rustls-ring",
            provider: rustls::crypto::ring::default_provider,
            all_kx_groups: rustls::crypto::ring::ALL_KX_GROUPS,
            record_aead: crate::ceiling::ring_aead::record_aead,
            c_allocation: None,
            ticketer: rustls::crypto::ring::Ticketer::new,
            reset_hmac: |key| {
                use ring::hmac;
                let key = hmac::Key::new(hmac::HMAC_SHA256, key);
                Box::new(move |data, out| out.copy_from_slice(hmac::sign(&key, data).as_ref()))
            },
            provider_version: format!("ring {}", env!("TLSMATRIX_VERSION_RING")),
        }
    }

    /// The provider's own calls for the crypto floor.
    pub fn provider_crypto(&self) -> crate::floor_rustls::ProviderCrypto {
        crate::floor_rustls::ProviderCrypto {
            api: format!("{} through rustls's provider API", self.provider_version),
            provider: (self.provider)(),
            kx_groups: self.all_kx_groups,
        }
    }

    /// The provider with only the scenario's suite and `side`'s groups, or why it has none.
    /// A client sends its key share for the first group only.
    fn pinned_provider(&self, cfg: &EndpointConfig, side: Side) -> Result<CryptoProvider, String> {
        let base = (self.provider)();
        let suite = codes::cipher_suite_code(cfg.version, cfg.aead, cfg.sig);
        let cipher_suites: Vec<_> = base
            .cipher_suites
            .iter()
            .filter(|s| u16::from(s.suite()) == suite)
            .copied()
            .collect();
        if cipher_suites.is_empty() {
            return Err(format!("{} has no {}", self.name, codes::suite_name(suite)));
        }
        let scheme = SignatureScheme::from(codes::signature_scheme_code(cfg.sig));
        if !base
            .signature_verification_algorithms
            .mapping
            .iter()
            .any(|(s, _)| *s == scheme)
        {
            return Err(format!(
                "{} has no {} signature scheme: its provider verifies none",
                self.name,
                codes::scheme_name(codes::signature_scheme_code(cfg.sig))
            ));
        }
        let mut kx_groups = Vec::new();
        for g in &cfg.groups_for(side) {
            let code = codes::group_code(*g);
            let found = self
                .all_kx_groups
                .iter()
                .find(|k| u16::from(k.name()) == code)
                .ok_or_else(|| format!("{} has no key exchange group {g}", self.name))?;
            kx_groups.push(*found);
        }
        Ok(CryptoProvider {
            cipher_suites,
            kx_groups,
            ..base
        })
    }

    /// What the server keeps or issues so that clients can resume. A full-handshake scenario
    /// issues nothing: tickets and the cache cost server time.
    fn server_resumption(&self, config: &mut ServerConfig, mode: ResumptionMode) -> Result<()> {
        config.session_storage = Arc::new(NoServerSessionStorage {});
        config.send_tls13_tickets = 0;
        match mode {
            ResumptionMode::Full => {}
            ResumptionMode::SessionId => {
                config.session_storage = ServerSessionMemoryCache::new(SESSION_CACHE_SIZE);
            }
            ResumptionMode::Ticket => {
                config.ticketer = (self.ticketer)()?;
                // One ticket per connection: a client uses one per resumption.
                config.send_tls13_tickets = 1;
            }
        }
        Ok(())
    }
}

/// Sessions a server or client cache holds; a benchmark only ever resumes one.
const SESSION_CACHE_SIZE: usize = 256;

fn client_resumption(mode: ResumptionMode) -> Resumption {
    match mode {
        ResumptionMode::Full => Resumption::disabled(),
        ResumptionMode::SessionId => Resumption::in_memory_sessions(SESSION_CACHE_SIZE)
            .tls12_resumption(Tls12Resumption::SessionIdOnly),
        ResumptionMode::Ticket => Resumption::in_memory_sessions(SESSION_CACHE_SIZE)
            .tls12_resumption(Tls12Resumption::SessionIdOrTickets),
    }
}

static TLS12_ONLY: &[&SupportedProtocolVersion] = &[&rustls::version::TLS12];
static TLS13_ONLY: &[&SupportedProtocolVersion] = &[&rustls::version::TLS13];

fn protocol_versions(v: Version) -> &'static [&'static SupportedProtocolVersion] {
    match v {
        Version::Tls12 => TLS12_ONLY,
        Version::Tls13 => TLS13_ONLY,
    }
}

impl TlsLibrary for RustlsLibrary {
    fn name(&self) -> &'static str {
        self.name
    }

    fn record_aead(&self, aead: Aead) -> Result<LibraryAead, String> {
        (self.record_aead)(aead)
    }

    fn c_allocation(&self) -> Option<CAllocation> {
        self.c_allocation.map(|f| f())
    }

    fn handshake_crypto(&self) -> Result<Box<dyn HandshakeCrypto>, String> {
        Ok(Box::new(self.provider_crypto()))
    }

    fn version(&self) -> String {
        format!(
            "rustls {} with {}",
            env!("TLSMATRIX_VERSION_RUSTLS"),
            self.provider_version
        )
    }

    fn open_extras(&self, extras: &OpenExtras) -> Result<(), String> {
        // rustls exports keying material (`export_keying_material`) and takes groups by code
        // point (`open_provider`); of the rest it has none.
        let rest = OpenExtras {
            exports_keying_material: false,
            group_codes: Vec::new(),
            ..extras.clone()
        };
        refuse_extras(self.name, &rest)
    }

    fn quic_stack(&self) -> Result<String, String> {
        Ok(quinn::stack())
    }

    /// quinn resumes as rustls does over TCP: the client configuration's session cache
    /// keeps the tickets, the server configuration issues them (`server_resumption`).
    fn quic_resumes(&self) -> Result<(), String> {
        Ok(())
    }

    fn quic_factory(
        &self,
        side: Side,
        cfg: &EndpointConfig,
    ) -> Result<Box<dyn tlsmatrix_harness::quic::QuicEndpointFactory>> {
        self.quinn_factory(side, cfg)
    }

    fn supports(&self, cfg: &EndpointConfig) -> Result<(), String> {
        if cfg.open.is_some() {
            return self.open_provider(cfg).map(|_| ());
        }
        // The client's groups include the server's.
        self.pinned_provider(cfg, Side::Client).map(|_| ())
    }

    fn factory(&self, side: Side, cfg: &EndpointConfig) -> Result<Box<dyn EndpointFactory>> {
        if let Some(open) = &cfg.open {
            return self.open_factory(side, cfg, open);
        }
        let provider = Arc::new(self.pinned_provider(cfg, side).map_err(|e| anyhow!(e))?);
        match side {
            Side::Client => {
                let (config, verifier) = pinned_client_config(provider, cfg)?;
                Ok(Box::new(ClientFactory {
                    config: Arc::new(config),
                    server_name: ServerName::try_from(cfg.server_name.clone())?,
                    verifier,
                }))
            }
            Side::Server => Ok(Box::new(ServerFactory {
                config: Arc::new(self.pinned_server_config(provider, cfg)?),
            })),
        }
    }
}

impl RustlsLibrary {
    /// The server's configuration for a scenario: `provider` (pinned), the scenario's one
    /// version, its chain and key signing with its one scheme, client certificates when it
    /// asks for them, resumption and ALPN as configured.
    fn pinned_server_config(
        &self,
        provider: Arc<CryptoProvider>,
        cfg: &EndpointConfig,
    ) -> Result<ServerConfig> {
        let (chain, key) = pem_pair(cfg.server_chain_pem(), &cfg.certs.key_pem)?;
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(protocol_versions(cfg.version))?;
        let builder = if cfg.require_client_cert {
            builder.with_client_cert_verifier(
                WebPkiClientVerifier::builder_with_provider(roots(cfg)?, provider.clone())
                    .build()?,
            )
        } else {
            builder.with_no_client_auth()
        };
        // Sign with the scenario's scheme only: left to itself, rustls picks the first its
        // key allows among the client's offers (rsa_pss_rsae_sha512 for an RSA key when the
        // client offers everything, as s2n-tls does).
        let key = PinnedScheme {
            inner: provider.key_provider.load_private_key(key)?,
            scheme: SignatureScheme::from(codes::signature_scheme_code(cfg.sig)),
        };
        let certified = rustls::sign::CertifiedKey::new(chain, Arc::new(key));
        let mut config =
            builder.with_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(certified)));
        self.server_resumption(&mut config, cfg.resumption)?;
        config.alpn_protocols = cfg.alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
        Ok(config)
    }
}

/// The client's configuration for a scenario: `provider` (pinned), the scenario's one
/// version, webpki against the test CA offering the scenario's one scheme, and the rest as
/// [`client_config`] sets it.
fn pinned_client_config(
    provider: Arc<CryptoProvider>,
    cfg: &EndpointConfig,
) -> Result<(ClientConfig, Arc<RecordingVerifier>)> {
    let webpki =
        WebPkiServerVerifier::builder_with_provider(roots(cfg)?, provider.clone()).build()?;
    client_config(
        provider,
        protocol_versions(cfg.version),
        webpki,
        Some(SignatureScheme::from(codes::signature_scheme_code(cfg.sig))),
        cfg,
    )
}

/// A client configuration: the provider and versions, `inner` to verify the server (wrapped
/// so that the scheme the server signed with is recorded), the client certificate when the
/// configuration has one, resumption and ALPN as configured.
fn client_config(
    provider: Arc<CryptoProvider>,
    versions: &[&'static SupportedProtocolVersion],
    inner: Arc<dyn ServerCertVerifier>,
    offered: Option<SignatureScheme>,
    cfg: &EndpointConfig,
) -> Result<(ClientConfig, Arc<RecordingVerifier>)> {
    let verifier = Arc::new(RecordingVerifier {
        inner,
        offered,
        last_scheme: AtomicU16::new(0),
    });
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)?
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone());
    let mut config = if cfg.client_cert {
        let (chain, key) = pem_pair(&cfg.certs.client_chain_pem, &cfg.certs.client_key_pem)?;
        builder.with_client_auth_cert(chain, key)?
    } else {
        builder.with_no_client_auth()
    };
    config.resumption = client_resumption(cfg.resumption);
    config.alpn_protocols = cfg.alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    Ok((config, verifier))
}

/// A server key that signs with one scheme or none.
#[derive(Debug)]
struct PinnedScheme {
    inner: Arc<dyn rustls::sign::SigningKey>,
    scheme: SignatureScheme,
}

impl rustls::sign::SigningKey for PinnedScheme {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn rustls::sign::Signer>> {
        if offered.contains(&self.scheme) {
            self.inner.choose_scheme(&[self.scheme])
        } else {
            None
        }
    }

    fn algorithm(&self) -> rustls::SignatureAlgorithm {
        self.inner.algorithm()
    }
}

/// Verifies as webpki does, offers exactly the scenario's signature scheme, and remembers the
/// scheme the server used, since rustls does not expose it. The factory is used by one thread,
/// one connection at a time, so "the last one seen" is this connection's.
#[derive(Debug)]
struct RecordingVerifier {
    inner: Arc<dyn ServerCertVerifier>,
    /// The one scheme offered; `None` offers what `inner` verifies.
    offered: Option<SignatureScheme>,
    last_scheme: AtomicU16,
}

impl ServerCertVerifier for RecordingVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.last_scheme
            .store(u16::from(dss.scheme), Ordering::Relaxed);
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.last_scheme
            .store(u16::from(dss.scheme), Ordering::Relaxed);
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        match self.offered {
            Some(scheme) => vec![scheme],
            None => self.inner.supported_verify_schemes(),
        }
    }
}

/// The test CA as a root store.
fn roots(cfg: &EndpointConfig) -> Result<Arc<RootCertStore>> {
    let mut roots = RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(cfg.certs.ca_pem.as_bytes()) {
        roots.add(ca.context("unreadable CA certificate")?)?;
    }
    Ok(Arc::new(roots))
}

/// A certificate chain and its key from PEM.
fn pem_pair(
    chain_pem: &str,
    key_pem: &str,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let chain = CertificateDer::pem_slice_iter(chain_pem.as_bytes())
        .collect::<Result<_, _>>()
        .context("unreadable certificate chain")?;
    let key =
        PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).context("unreadable private key")?;
    Ok((chain, key))
}

struct ClientFactory {
    config: Arc<ClientConfig>,
    server_name: ServerName<'static>,
    verifier: Arc<RecordingVerifier>,
}

impl EndpointFactory for ClientFactory {
    fn endpoint(&self, io: MemIo) -> Result<Box<dyn TlsEndpoint>> {
        self.verifier.last_scheme.store(0, Ordering::Relaxed);
        let conn = ClientConnection::new(self.config.clone(), self.server_name.clone())?;
        Ok(Box::new(RustlsEndpoint {
            conn: conn.into(),
            io,
            verifier: Some(self.verifier.clone()),
        }))
    }
}

struct ServerFactory {
    config: Arc<ServerConfig>,
}

impl EndpointFactory for ServerFactory {
    /// Its context is shared by reference (the library's handles are thread-safe).
    fn shared(&self) -> Option<&(dyn EndpointFactory + Sync)> {
        Some(self)
    }

    fn endpoint(&self, io: MemIo) -> Result<Box<dyn TlsEndpoint>> {
        let conn = ServerConnection::new(self.config.clone())?;
        Ok(Box::new(RustlsEndpoint {
            conn: conn.into(),
            io,
            verifier: None,
        }))
    }
}

struct RustlsEndpoint {
    conn: Connection,
    io: MemIo,
    /// Client side only: where the server's signature scheme is recorded.
    verifier: Option<Arc<RecordingVerifier>>,
}

impl RustlsEndpoint {
    /// Feeds one read's worth of arrived records to rustls. On a protocol error the alert
    /// rustls queued is still sent, so the peer learns why.
    fn read_some(&mut self) -> Result<()> {
        match self.conn.read_tls(&mut self.io) {
            Ok(0) => bail!("the peer closed the connection"),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e).context("reading TLS records"),
        }
        if let Err(e) = self.conn.process_new_packets() {
            let _ = self.flush();
            return Err(anyhow!("rustls: {e}"));
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        while self.conn.wants_write() {
            self.conn
                .write_tls(&mut self.io)
                .context("writing TLS records")?;
        }
        Ok(())
    }
}

impl TlsEndpoint for RustlsEndpoint {
    fn handshake_step(&mut self) -> Result<()> {
        while self.io.has_input() && self.conn.is_handshaking() {
            self.read_some()?;
        }
        self.flush()
    }

    fn is_handshake_complete(&self) -> bool {
        !self.conn.is_handshaking()
    }

    fn send(&mut self, data: &[u8]) -> Result<()> {
        let mut off = 0;
        while off < data.len() {
            // rustls buffers a bounded amount of plaintext; write what it takes, then flush.
            let n = self.conn.writer().write(&data[off..])?;
            self.flush()?;
            if n == 0 {
                bail!("rustls accepted no plaintext");
            }
            off += n;
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut got = 0;
        loop {
            match self.conn.reader().read(&mut buf[got..]) {
                // Ok(0) from the plaintext reader means close_notify arrived.
                Ok(0) if got == 0 => return Err(PeerClosed.into()),
                Ok(0) => return Ok(got),
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => return Err(e).context("reading plaintext"),
            }
            if got == buf.len() || !self.io.has_input() {
                // What rustls queued while reading (a warning alert refusing a
                // renegotiation, a KeyUpdate answer) is written now, not at the next send.
                if self.conn.wants_write() {
                    self.flush()?;
                }
                return Ok(got);
            }
            self.read_some()?;
        }
    }

    fn key_update(&mut self) -> Result<()> {
        self.conn
            .refresh_traffic_keys()
            .map_err(|e| anyhow!("rustls: {e}"))?;
        self.flush()
    }

    fn export_keying_material(
        &self,
        label: &[u8],
        context: Option<&[u8]>,
        len: usize,
    ) -> Option<Result<Vec<u8>>> {
        Some(
            self.conn
                .export_keying_material(vec![0u8; len], label, context)
                .map_err(|e| anyhow!("rustls: exporting keying material: {e}")),
        )
    }

    fn sni(&self) -> Option<String> {
        match &self.conn {
            Connection::Server(s) => s.server_name().map(str::to_string),
            Connection::Client(_) => None,
        }
    }

    fn alpn(&self) -> Option<Vec<u8>> {
        self.conn.alpn_protocol().map(<[u8]>::to_vec)
    }

    fn close(&mut self) -> Result<()> {
        self.conn.send_close_notify();
        self.flush()
    }

    fn negotiated(&self) -> Negotiated {
        let scheme = self
            .verifier
            .as_ref()
            .map(|v| v.last_scheme.load(Ordering::Relaxed))
            .filter(|&s| s != 0);
        Negotiated {
            version: self.conn.protocol_version().map(u16::from),
            cipher_suite: self
                .conn
                .negotiated_cipher_suite()
                .map(|s| s.suite().into()),
            group: self
                .conn
                .negotiated_key_exchange_group()
                .map(|g| g.name().into()),
            signature_scheme: scheme,
            resumed: self
                .conn
                .handshake_kind()
                .map(|k| k == rustls::HandshakeKind::Resumed),
            peer_certs: Some(self.conn.peer_certificates().map_or(0, |c| c.len())),
        }
    }
}
