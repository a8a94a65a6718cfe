//! quinn on rustls: QUIC through quinn-proto, quinn's protocol state machine, driven as
//! quinn's own runtime drives it (one endpoint per side shared by its connections, datagrams
//! in, transmits out) with the datagrams handed over in memory. The TLS configuration is the
//! one the rustls adapter measures over TCP; quinn's own keys (its stateless-reset HMACs)
//! come from the same provider, as in a build that enables one provider only.
//!
//! rustls's QUIC connection reports neither the suite nor the group it negotiated through
//! quinn, so the pinned provider's suite and groups are wrapped to record which of them made
//! keys: the group whose key exchange ran, the suite whose packet keys were derived after
//! the Initial keys (which are always AES-128-GCM, RFC 9001 §5.2, and made from the
//! unwrapped suite).

use std::cell::RefCell;
use std::net::{Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use bytes::BytesMut;
use quinn_proto::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn_proto::{
    ConnectionHandle, DatagramEvent, Dir, Endpoint, EndpointConfig as QuinnEndpointConfig,
    EndpointEvent, Event, ReadError, StreamId, WriteError,
};
use rustls::crypto::{ActiveKeyExchange, CompletedKeyExchange, CryptoProvider, SupportedKxGroup};
use rustls::pki_types::CertificateDer;
use rustls::quic::{Algorithm, HeaderProtectionKey, PacketKey};
use rustls::{CipherSuite, CipherSuiteCommon, SupportedCipherSuite, Tls13CipherSuite};
use tlsmatrix_harness::endpoint::EndpointConfig;
use tlsmatrix_harness::negotiated::Negotiated;
use tlsmatrix_harness::quic::{Datagrams, QuicEndpoint, QuicEndpointFactory, StreamRead};
use tlsmatrix_model::codes;
use tlsmatrix_model::scenario::Version;
use tlsmatrix_model::side::Side;

use super::{pinned_client_config, RecordingVerifier, RustlsLibrary};

/// The addresses the two endpoints believe they talk from: loopback, never bound.
const CLIENT_ADDR: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 50_000);
const SERVER_ADDR: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 4433);

/// Datagrams one `poll_transmit` may batch (quinn's own runtime asks for up to 10).
const MAX_BATCH: usize = 10;

/// quinn-proto's version, as Cargo.lock pins it.
pub(super) fn stack() -> String {
    format!("quinn-proto {}", env!("TLSMATRIX_VERSION_QUINN_PROTO"))
}

impl RustlsLibrary {
    /// `side`'s quinn endpoint for `cfg`, on this library's provider pinned as over TCP.
    pub(super) fn quinn_factory(
        &self,
        side: Side,
        cfg: &EndpointConfig,
    ) -> Result<Box<dyn QuicEndpointFactory>> {
        let base = (self.provider)();
        let initial = base
            .cipher_suites
            .iter()
            .find_map(|s| match s {
                SupportedCipherSuite::Tls13(t)
                    if t.common.suite == CipherSuite::TLS13_AES_128_GCM_SHA256 =>
                {
                    t.quic_suite()
                }
                _ => None,
            })
            .ok_or_else(|| anyhow!("{} has no AES-128-GCM for QUIC's Initial keys", self.name))?;
        let seen = Arc::new(Seen::default());
        let pinned = self.pinned_provider(cfg, side).map_err(|e| anyhow!(e))?;
        let provider = Arc::new(recording(pinned, &seen));
        let endpoint_config = Arc::new(QuinnEndpointConfig::new(Arc::new(ProviderHmac::new(
            &provider,
            self.reset_hmac,
        )?)));
        match side {
            Side::Client => {
                let (mut config, verifier) = pinned_client_config(provider, cfg)?;
                // Keeps what quinn's own default client configuration enables.
                config.enable_early_data = true;
                let crypto = QuicClientConfig::with_initial(Arc::new(config), initial)?;
                let endpoint = Endpoint::new(endpoint_config, None, false, None);
                Ok(Box::new(QuinnFactory {
                    endpoint: Rc::new(RefCell::new(endpoint)),
                    client: Some(quinn_proto::ClientConfig::new(Arc::new(crypto))),
                    server_name: cfg.server_name.clone(),
                    seen,
                    verifier: Some(verifier),
                }))
            }
            Side::Server => {
                let config = self.pinned_server_config(provider, cfg)?;
                let crypto = QuicServerConfig::with_initial(Arc::new(config), initial)?;
                let server = quinn_proto::ServerConfig::with_crypto(Arc::new(crypto));
                // MTU discovery off: it probes after the handshake, which is not what is timed.
                let endpoint = Endpoint::new(endpoint_config, Some(Arc::new(server)), false, None);
                Ok(Box::new(QuinnFactory {
                    endpoint: Rc::new(RefCell::new(endpoint)),
                    client: None,
                    server_name: String::new(),
                    seen,
                    verifier: None,
                }))
            }
        }
    }
}

/// What a side's provider did: the group whose key exchange ran and the suite whose
/// handshake and 1-RTT keys were made (IANA code points; 0 for none yet).
#[derive(Debug, Default)]
struct Seen {
    group: AtomicU16,
    suite: AtomicU16,
}

impl Seen {
    fn clear(&self) {
        self.group.store(0, Ordering::Relaxed);
        self.suite.store(0, Ordering::Relaxed);
    }

    fn get(value: &AtomicU16) -> Option<u16> {
        Some(value.load(Ordering::Relaxed)).filter(|&v| v != 0)
    }
}

/// `pinned` with each group and TLS 1.3 suite wrapped to record its use in `seen`. rustls
/// takes `'static` groups and suites, so the wrappers are leaked: a few dozen bytes per
/// factory, and a driver makes a few factories per cell.
fn recording(pinned: CryptoProvider, seen: &Arc<Seen>) -> CryptoProvider {
    let kx_groups = pinned
        .kx_groups
        .iter()
        .map(|&inner| -> &'static dyn SupportedKxGroup {
            Box::leak(Box::new(RecordingGroup {
                inner,
                seen: seen.clone(),
            }))
        })
        .collect();
    let cipher_suites = pinned
        .cipher_suites
        .iter()
        .map(|s| match s {
            SupportedCipherSuite::Tls13(t) => {
                SupportedCipherSuite::Tls13(Box::leak(Box::new(recording_suite(t, seen))))
            }
            other => *other,
        })
        .collect();
    CryptoProvider {
        kx_groups,
        cipher_suites,
        ..pinned
    }
}

fn recording_suite(t: &'static Tls13CipherSuite, seen: &Arc<Seen>) -> Tls13CipherSuite {
    let quic = t.quic.map(|inner| -> &'static dyn Algorithm {
        Box::leak(Box::new(RecordingAlgorithm {
            inner,
            suite: u16::from(t.common.suite),
            seen: seen.clone(),
        }))
    });
    Tls13CipherSuite {
        common: CipherSuiteCommon {
            suite: t.common.suite,
            hash_provider: t.common.hash_provider,
            confidentiality_limit: t.common.confidentiality_limit,
        },
        hkdf_provider: t.hkdf_provider,
        aead_alg: t.aead_alg,
        quic,
    }
}

#[derive(Debug)]
struct RecordingGroup {
    inner: &'static dyn SupportedKxGroup,
    seen: Arc<Seen>,
}

impl RecordingGroup {
    fn record(&self) {
        self.seen
            .group
            .store(u16::from(self.inner.name()), Ordering::Relaxed);
    }
}

impl SupportedKxGroup for RecordingGroup {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, rustls::Error> {
        self.record();
        self.inner.start()
    }

    fn start_and_complete(&self, peer: &[u8]) -> Result<CompletedKeyExchange, rustls::Error> {
        self.record();
        self.inner.start_and_complete(peer)
    }

    fn ffdhe_group(&self) -> Option<rustls::ffdhe_groups::FfdheGroup<'static>> {
        self.inner.ffdhe_group()
    }

    fn name(&self) -> rustls::NamedGroup {
        self.inner.name()
    }

    fn fips(&self) -> bool {
        self.inner.fips()
    }

    fn usable_for_version(&self, version: rustls::ProtocolVersion) -> bool {
        self.inner.usable_for_version(version)
    }
}

struct RecordingAlgorithm {
    inner: &'static dyn Algorithm,
    suite: u16,
    seen: Arc<Seen>,
}

impl Algorithm for RecordingAlgorithm {
    fn packet_key(
        &self,
        key: rustls::crypto::cipher::AeadKey,
        iv: rustls::crypto::cipher::Iv,
    ) -> Box<dyn PacketKey> {
        self.seen.suite.store(self.suite, Ordering::Relaxed);
        self.inner.packet_key(key, iv)
    }

    fn header_protection_key(
        &self,
        key: rustls::crypto::cipher::AeadKey,
    ) -> Box<dyn HeaderProtectionKey> {
        self.inner.header_protection_key(key)
    }

    fn aead_key_len(&self) -> usize {
        self.inner.aead_key_len()
    }

    fn fips(&self) -> bool {
        self.inner.fips()
    }
}

/// HMAC-SHA256 into a 32-byte output, keyed once.
pub(super) type ResetHmac = Box<dyn Fn(&[u8], &mut [u8]) + Send + Sync>;

/// quinn's stateless-reset key, which signs every connection ID an endpoint issues: keyed
/// at random by the provider's generator, signing through the provider's crate.
struct ProviderHmac(ResetHmac);

impl ProviderHmac {
    fn new(provider: &CryptoProvider, make: fn(&[u8]) -> ResetHmac) -> Result<Self> {
        let mut key = [0u8; 64];
        provider
            .secure_random
            .fill(&mut key)
            .map_err(|_| anyhow!("the provider's random generator failed"))?;
        Ok(ProviderHmac(make(&key)))
    }
}

impl quinn_proto::crypto::HmacKey for ProviderHmac {
    fn sign(&self, data: &[u8], out: &mut [u8]) {
        (self.0)(data, out);
    }

    fn signature_len(&self) -> usize {
        32
    }

    fn verify(
        &self,
        data: &[u8],
        signature: &[u8],
    ) -> Result<(), quinn_proto::crypto::CryptoError> {
        let mut tag = [0u8; 32];
        (self.0)(data, &mut tag);
        // Compared in constant time: the tag authenticates what a peer sent.
        let differ = tag.len() != signature.len()
            || tag.iter().zip(signature).fold(0u8, |d, (a, b)| d | (a ^ b)) != 0;
        if differ {
            Err(quinn_proto::crypto::CryptoError)
        } else {
            Ok(())
        }
    }
}

/// One side's quinn endpoint and the configuration its connections start from.
struct QuinnFactory {
    endpoint: Rc<RefCell<Endpoint>>,
    /// Client side only: what `connect` takes.
    client: Option<quinn_proto::ClientConfig>,
    server_name: String,
    seen: Arc<Seen>,
    /// Client side only: where the server's signature scheme is recorded.
    verifier: Option<Arc<RecordingVerifier>>,
}

impl QuicEndpointFactory for QuinnFactory {
    fn endpoint(&self) -> Result<Box<dyn QuicEndpoint>> {
        // One connection at a time per factory, so what is recorded from here on is this
        // connection's.
        self.seen.clear();
        if let Some(v) = &self.verifier {
            v.last_scheme.store(0, Ordering::Relaxed);
        }
        let (conn, peer) = match &self.client {
            Some(config) => {
                let connected = self.endpoint.borrow_mut().connect(
                    Instant::now(),
                    config.clone(),
                    SERVER_ADDR,
                    &self.server_name,
                );
                (
                    Some(connected.context("quinn could not start a connection")?),
                    SERVER_ADDR,
                )
            }
            None => (None, CLIENT_ADDR),
        };
        Ok(Box::new(QuinnConnection {
            endpoint: self.endpoint.clone(),
            conn,
            stream: None,
            peer_finished: false,
            peer,
            responses: Datagrams::default(),
            buf: Vec::new(),
            seen: self.seen.clone(),
            verifier: self.verifier.clone(),
        }))
    }
}

/// One connection on its side's endpoint; a server's starts with the client's first
/// datagram.
struct QuinnConnection {
    endpoint: Rc<RefCell<Endpoint>>,
    conn: Option<(ConnectionHandle, quinn_proto::Connection)>,
    /// The stream data crosses, once the client opened it or the server took it up.
    stream: Option<StreamId>,
    /// The peer's end of the stream was read.
    peer_finished: bool,
    peer: SocketAddr,
    /// What the endpoint answered on its own (a refusal, a version negotiation), sent at
    /// the next transmit.
    responses: Datagrams,
    buf: Vec<u8>,
    seen: Arc<Seen>,
    verifier: Option<Arc<RecordingVerifier>>,
}

impl QuinnConnection {
    /// Hands the connection's events to the endpoint and back, and fails on a lost
    /// connection with quinn's reason.
    fn pump(&mut self) -> Result<()> {
        let Some((ch, conn)) = &mut self.conn else {
            return Ok(());
        };
        while let Some(event) = conn.poll_endpoint_events() {
            if let Some(back) = self.endpoint.borrow_mut().handle_event(*ch, event) {
                conn.handle_event(back);
            }
        }
        while let Some(event) = conn.poll() {
            if let Event::ConnectionLost { reason } = event {
                bail!("quinn: the connection was lost: {reason}");
            }
        }
        Ok(())
    }

    /// The stream: a client opens it, a server takes up the one the client opened.
    fn stream(&mut self) -> Option<(StreamId, &mut quinn_proto::Connection)> {
        let (_, conn) = self.conn.as_mut()?;
        if self.stream.is_none() {
            self.stream = if self.peer == SERVER_ADDR {
                conn.streams().open(Dir::Bi)
            } else {
                conn.streams().accept(Dir::Bi)
            };
        }
        Some((self.stream?, conn))
    }
}

impl QuicEndpoint for QuinnConnection {
    fn receive(&mut self, datagram: &[u8]) -> Result<()> {
        let now = Instant::now();
        self.buf.clear();
        let event = self.endpoint.borrow_mut().handle(
            now,
            self.peer,
            None,
            None,
            BytesMut::from(datagram),
            &mut self.buf,
        );
        match event {
            // quinn drops what it cannot route or decode, as over a socket.
            None => {}
            Some(DatagramEvent::ConnectionEvent(ch, event)) => match &mut self.conn {
                Some((ours, conn)) if *ours == ch => conn.handle_event(event),
                _ => bail!("quinn routed a datagram to a connection that is not this one"),
            },
            Some(DatagramEvent::NewConnection(incoming)) => {
                if self.conn.is_some() {
                    bail!("a second connection arrived where one was expected");
                }
                let accepted =
                    self.endpoint
                        .borrow_mut()
                        .accept(incoming, now, &mut self.buf, None);
                match accepted {
                    Ok(conn) => self.conn = Some(conn),
                    Err(e) => {
                        if let Some(t) = e.response {
                            self.responses
                                .push_segments(&self.buf[..t.size], t.segment_size);
                        }
                        bail!("quinn refused the connection: {}", e.cause);
                    }
                }
            }
            Some(DatagramEvent::Response(t)) => {
                self.responses
                    .push_segments(&self.buf[..t.size], t.segment_size);
            }
        }
        self.pump()
    }

    fn transmit(&mut self, out: &mut Datagrams) -> Result<()> {
        for d in self.responses.iter() {
            out.push(d);
        }
        self.responses.clear();
        let Some((_, conn)) = &mut self.conn else {
            return Ok(());
        };
        let now = Instant::now();
        if conn.poll_timeout().is_some_and(|t| t <= now) {
            conn.handle_timeout(now);
        }
        loop {
            self.buf.clear();
            let Some(t) = conn.poll_transmit(now, MAX_BATCH, &mut self.buf) else {
                break;
            };
            out.push_segments(&self.buf[..t.size], t.segment_size);
        }
        self.pump()
    }

    fn timeout(&mut self) -> Option<Duration> {
        let (_, conn) = self.conn.as_mut()?;
        let at = conn.poll_timeout()?;
        Some(at.saturating_duration_since(Instant::now()))
    }

    fn stream_write(&mut self, data: &[u8], fin: bool) -> Result<usize> {
        let Some((id, conn)) = self.stream() else {
            return Ok(0);
        };
        let mut send = conn.send_stream(id);
        let taken = match send.write(data) {
            Ok(n) => n,
            Err(WriteError::Blocked) => 0,
            Err(e) => bail!("quinn: writing to the stream: {e}"),
        };
        if fin && taken == data.len() {
            send.finish().context("quinn: finishing the stream")?;
        }
        Ok(taken)
    }

    fn stream_read(&mut self, buf: &mut [u8]) -> Result<StreamRead> {
        if self.peer_finished {
            // quinn forgets a stream once its end was read.
            return Ok(StreamRead {
                bytes: 0,
                fin: true,
            });
        }
        let Some((id, conn)) = self.stream() else {
            return Ok(StreamRead::default());
        };
        let mut recv = conn.recv_stream(id);
        let mut chunks = recv.read(true).context("quinn: reading the stream")?;
        let mut got = StreamRead::default();
        while got.bytes < buf.len() {
            match chunks.next(buf.len() - got.bytes) {
                Ok(Some(chunk)) => {
                    buf[got.bytes..got.bytes + chunk.bytes.len()].copy_from_slice(&chunk.bytes);
                    got.bytes += chunk.bytes.len();
                }
                Ok(None) => {
                    got.fin = true;
                    break;
                }
                Err(ReadError::Blocked) => break,
                Err(e) => {
                    let _ = chunks.finalize();
                    bail!("quinn: reading the stream: {e}");
                }
            }
        }
        // Releases the credit the read freed; the next transmit carries it.
        let _ = chunks.finalize();
        self.peer_finished = got.fin;
        Ok(got)
    }

    fn is_handshake_complete(&self) -> bool {
        self.conn.as_ref().is_some_and(|(_, c)| !c.is_handshaking())
    }

    fn negotiated(&self) -> Negotiated {
        let suite = Seen::get(&self.seen.suite);
        let scheme = self
            .verifier
            .as_ref()
            .map(|v| v.last_scheme.load(Ordering::Relaxed))
            .filter(|&s| s != 0);
        let peer_certs = self.conn.as_ref().map(|(_, c)| {
            c.crypto_session()
                .peer_identity()
                .and_then(|p| p.downcast::<Vec<CertificateDer<'static>>>().ok())
                .map_or(0, |chain| chain.len())
        });
        Negotiated {
            // Keys of a TLS 1.3 suite were made: rustls's QUIC runs nothing else.
            version: suite.map(|_| codes::version_code(Version::Tls13)),
            cipher_suite: suite,
            group: Seen::get(&self.seen.group),
            signature_scheme: scheme,
            // A TLS 1.3 client skips verifying the server's certificate only when the server
            // accepted its ticket (the PSK), so the client's verifier tells a resumption
            // apart; the server's side is not reported (quinn keeps rustls's handshake kind).
            resumed: self.verifier.as_ref().map(|_| scheme.is_none()),
            peer_certs,
        }
    }

    fn alpn(&self) -> Option<Vec<u8>> {
        let (_, conn) = self.conn.as_ref()?;
        conn.crypto_session()
            .handshake_data()?
            .downcast::<quinn_proto::crypto::rustls::HandshakeData>()
            .ok()?
            .protocol
    }
}

impl Drop for QuinnConnection {
    /// Frees the connection's state in the shared endpoint, as quinn does when a
    /// connection is dropped.
    fn drop(&mut self) {
        if let Some((ch, _)) = self.conn.take() {
            self.endpoint
                .borrow_mut()
                .handle_event(ch, EndpointEvent::drained());
        }
    }
}
