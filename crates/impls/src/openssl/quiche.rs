//! quiche on BoringSSL: Cloudflare's QUIC stack through its `boringssl-boring-crate` build,
//! which takes the same `boring` crate (and so the same BoringSSL build) as the TLS adapter.
//! quiche is sans-I/O, so it is driven as its own examples drive it: a client connection
//! from `quiche::connect`, a server connection from `quiche::accept` on the client's first
//! Initial (no Retry, as every stack here is measured), datagrams in through `recv` and out
//! through `send`. The TLS context is the TCP adapter's own for the scenario
//! (`OpensslLibrary::configure`), handed to quiche.
//!
//! quiche does not report the suite, group or scheme it negotiated, so the context's info
//! callback reads them from BoringSSL when the handshake is done.

use std::cell::RefCell;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use boring::ssl::{SslContextBuilder, SslInfoCallbackMode, SslMethod};
use foreign_types_boring::ForeignTypeRef;
use tlsmatrix_harness::endpoint::EndpointConfig;
use tlsmatrix_harness::negotiated::Negotiated;
use tlsmatrix_harness::quic::{
    Datagrams, QuicEndpoint, QuicEndpointFactory, StreamRead, STREAM_ID,
};
use tlsmatrix_model::scenario::Resumption;
use tlsmatrix_model::side::Side;

use super::{negotiated_of, OpensslLibrary};

const CLIENT_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 50_000);
const SERVER_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 4433);
/// The largest datagram quiche writes (its default maximum UDP payload).
const MAX_DATAGRAM: usize = 65_527;

/// quiche's version, as the driver's lock file pins it.
pub(super) fn stack() -> String {
    format!("quiche {}", env!("TLSMATRIX_VERSION_QUICHE"))
}

/// What the handshake negotiated, as the info callback read it; one connection at a time
/// per factory.
type Seen = Arc<Mutex<Option<Negotiated>>>;

impl OpensslLibrary {
    /// `side`'s quiche connections for `cfg`.
    pub(super) fn quiche_factory(
        &self,
        side: Side,
        cfg: &EndpointConfig,
    ) -> Result<Box<dyn QuicEndpointFactory>> {
        let mut b = SslContextBuilder::new(SslMethod::tls())?;
        self.configure(&mut b, side, cfg)?;
        let seen: Seen = Arc::default();
        let slot = seen.clone();
        b.set_info_callback(move |ssl, mode, _| {
            if mode == SslInfoCallbackMode::HANDSHAKE_DONE {
                // SAFETY: the connection the callback is called for.
                let version = u16::try_from(unsafe { boring_sys::SSL_version(ssl.as_ptr()) }).ok();
                *slot.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(negotiated_of(ssl, side, version));
            }
        });
        let mut config = quiche::Config::with_boring_ssl_ctx_builder(quiche::PROTOCOL_VERSION, b)
            .map_err(|e| anyhow!("quiche refused the context: {e}"))?;
        config
            .set_application_protos(&cfg.alpn.iter().map(|p| p.as_bytes()).collect::<Vec<_>>())
            .map_err(|e| anyhow!("quiche refused the ALPN list: {e}"))?;
        // Path MTU discovery probes after the handshake, which is not what is timed.
        config.discover_pmtu(false);
        // quiche grants no stream credit by default; these are its example server's and
        // client's windows.
        config.set_initial_max_data(10_000_000);
        config.set_initial_max_stream_data_bidi_local(1_000_000);
        config.set_initial_max_stream_data_bidi_remote(1_000_000);
        config.set_initial_max_stream_data_uni(1_000_000);
        config.set_initial_max_streams_bidi(100);
        config.set_initial_max_streams_uni(100);
        // quiche installs its own new-session callback on the context, over the one the
        // TLS adapter set: a client's tickets reach it as quiche's session bytes.
        let ticket = (side == Side::Client && cfg.resumption == Resumption::Ticket)
            .then(TicketSlot::default);
        Ok(Box::new(QuicheFactory {
            side,
            config: Rc::new(RefCell::new(config)),
            server_name: cfg.server_name.clone(),
            seen,
            ticket,
        }))
    }
}

struct QuicheFactory {
    side: Side,
    /// Shared with the connections: a server's `accept` takes it.
    config: Rc<RefCell<quiche::Config>>,
    server_name: String,
    seen: Seen,
    /// Client side, when resuming: the newest session quiche handed out (its TLS session and
    /// the server's transport parameters), which the next connection offers.
    ticket: Option<TicketSlot>,
}

/// A client's newest session as `quiche::Connection::session` serialises it.
type TicketSlot = Rc<RefCell<Option<Vec<u8>>>>;

/// A fresh connection ID from BoringSSL's generator.
fn connection_id() -> Result<quiche::ConnectionId<'static>> {
    let mut id = vec![0u8; quiche::MAX_CONN_ID_LEN];
    boring::rand::rand_bytes(&mut id)?;
    Ok(quiche::ConnectionId::from_vec(id))
}

impl QuicEndpointFactory for QuicheFactory {
    fn endpoint(&self) -> Result<Box<dyn QuicEndpoint>> {
        *self.seen.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let conn = match self.side {
            Side::Client => {
                let mut conn = quiche::connect(
                    Some(&self.server_name),
                    &connection_id()?,
                    CLIENT_ADDR,
                    SERVER_ADDR,
                    &mut self.config.borrow_mut(),
                )
                .map_err(|e| anyhow!("quiche could not start a connection: {e}"))?;
                if let Some(session) = self.ticket.as_ref().and_then(|t| t.borrow_mut().take()) {
                    conn.set_session(&session)
                        .map_err(|e| anyhow!("quiche refused the session to resume: {e}"))?;
                }
                Some(conn)
            }
            Side::Server => None,
        };
        Ok(Box::new(QuicheConnection {
            side: self.side,
            config: self.config.clone(),
            conn,
            pending: Datagrams::default(),
            peer_finished: false,
            // What a socket send path reads from: the harness's, outside a heap count.
            buf: tlsmatrix_harness::uncounted::outside_count(|| vec![0u8; MAX_DATAGRAM]),
            seen: self.seen.clone(),
            ticket: self.ticket.clone(),
        }))
    }
}

struct QuicheConnection {
    side: Side,
    config: Rc<RefCell<quiche::Config>>,
    conn: Option<quiche::Connection>,
    /// What the server answers without a connection (a version negotiation).
    pending: Datagrams,
    /// The peer's end of the stream was read (quiche forgets the stream then).
    peer_finished: bool,
    buf: Vec<u8>,
    seen: Seen,
    ticket: Option<TicketSlot>,
}

impl Drop for QuicheConnection {
    /// A client keeps the newest session it received for the next connection, as the TLS
    /// adapter's endpoints do when they end.
    fn drop(&mut self) {
        if let (Some(slot), Some(conn)) = (&self.ticket, &self.conn) {
            if let Some(session) = conn.session() {
                *slot.borrow_mut() = Some(session.to_vec());
            }
        }
    }
}

impl QuicheConnection {
    /// A server's connection from the client's first datagram, or a version negotiation
    /// for a version quiche does not speak.
    fn accept(&mut self, datagram: &mut [u8]) -> Result<()> {
        let header = quiche::Header::from_slice(datagram, quiche::MAX_CONN_ID_LEN)
            .map_err(|e| anyhow!("quiche cannot read the first datagram's header: {e}"))?;
        if !quiche::version_is_supported(header.version) {
            let n = quiche::negotiate_version(&header.scid, &header.dcid, &mut self.buf)
                .map_err(|e| anyhow!("quiche: {e}"))?;
            self.pending.push(&self.buf[..n]);
            bail!(
                "the client's first datagram is of QUIC version {:#010x}",
                header.version
            );
        }
        if header.ty != quiche::Type::Initial {
            bail!("the client's first packet is not an Initial");
        }
        let conn = quiche::accept(
            &connection_id()?,
            None,
            SERVER_ADDR,
            CLIENT_ADDR,
            &mut self.config.borrow_mut(),
        )
        .map_err(|e| anyhow!("quiche refused the connection: {e}"))?;
        self.conn = Some(conn);
        Ok(())
    }
}

impl QuicEndpoint for QuicheConnection {
    fn receive(&mut self, datagram: &[u8]) -> Result<()> {
        let mut data = datagram.to_vec();
        if self.conn.is_none() {
            self.accept(&mut data)?;
        }
        let (from, to) = match self.side {
            Side::Client => (SERVER_ADDR, CLIENT_ADDR),
            Side::Server => (CLIENT_ADDR, SERVER_ADDR),
        };
        let conn = self.conn.as_mut().expect("made above");
        match conn.recv(&mut data, quiche::RecvInfo { from, to }) {
            Ok(_) | Err(quiche::Error::Done) => Ok(()),
            Err(e) => Err(anyhow!("quiche: {e}")),
        }
    }

    fn transmit(&mut self, out: &mut Datagrams) -> Result<()> {
        for d in self.pending.iter() {
            out.push(d);
        }
        self.pending.clear();
        let Some(conn) = &mut self.conn else {
            return Ok(());
        };
        if conn.timeout().is_some_and(|t| t.is_zero()) {
            conn.on_timeout();
        }
        loop {
            match conn.send(&mut self.buf) {
                Ok((n, _)) => out.push(&self.buf[..n]),
                Err(quiche::Error::Done) => break,
                Err(e) => return Err(anyhow!("quiche: {e}")),
            }
        }
        if let Some(e) = conn.local_error().or(conn.peer_error()) {
            bail!(
                "quiche: the connection closed with error {:#x}: {}",
                e.error_code,
                String::from_utf8_lossy(&e.reason)
            );
        }
        Ok(())
    }

    fn timeout(&mut self) -> Option<Duration> {
        self.conn.as_ref()?.timeout()
    }

    fn stream_write(&mut self, data: &[u8], fin: bool) -> Result<usize> {
        let Some(conn) = &mut self.conn else {
            return Ok(0);
        };
        match conn.stream_send(STREAM_ID, data, fin) {
            Ok(n) => Ok(n),
            // No credit yet, or (a server) the client has not opened the stream yet.
            Err(quiche::Error::Done | quiche::Error::InvalidStreamState(_)) => Ok(0),
            Err(e) => Err(anyhow!("quiche: writing to the stream: {e}")),
        }
    }

    fn stream_read(&mut self, buf: &mut [u8]) -> Result<StreamRead> {
        let Some(conn) = self.conn.as_mut().filter(|_| !self.peer_finished) else {
            return Ok(StreamRead {
                bytes: 0,
                fin: self.peer_finished,
            });
        };
        let mut got = StreamRead::default();
        while got.bytes < buf.len() && !got.fin {
            match conn.stream_recv(STREAM_ID, &mut buf[got.bytes..]) {
                Ok((n, fin)) => {
                    got.bytes += n;
                    got.fin = fin;
                }
                Err(quiche::Error::Done | quiche::Error::InvalidStreamState(_)) => break,
                Err(e) => return Err(anyhow!("quiche: reading the stream: {e}")),
            }
        }
        self.peer_finished = got.fin;
        Ok(got)
    }

    fn is_handshake_complete(&self) -> bool {
        self.conn.as_ref().is_some_and(|c| c.is_established())
    }

    fn negotiated(&self) -> Negotiated {
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unwrap_or_default()
    }

    fn alpn(&self) -> Option<Vec<u8>> {
        let proto = self.conn.as_ref()?.application_proto();
        (!proto.is_empty()).then(|| proto.to_vec())
    }
}
