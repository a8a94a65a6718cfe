//! A TLS endpoint over a real TCP socket, and the two roles of an interop case. The endpoint
//! still talks to its `MemIo`; the wire moves bytes between the other end of that `MemIo` and
//! the socket, so every adapter works over TCP unchanged. Every wait is bounded by the case's
//! deadline, so a silent or vanished peer costs bounded time and a clear sentence.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use tlsmatrix_harness::endpoint::{EndpointFactory, PeerClosed, TlsEndpoint};
use tlsmatrix_harness::memio::MemIo;
use tlsmatrix_harness::negotiated::{self, Negotiated};
use tlsmatrix_harness::pair::Checksum;
use tlsmatrix_harness::tcp;
use tlsmatrix_model::interop::{payload, Case, Echo, Expect};
use tlsmatrix_model::scenario::ConnParams;
use tlsmatrix_model::side::Side;
use tlsmatrix_model::trace::REQUEST_BYTES;
use tlsmatrix_model::trace::RESPONSE_BYTES;

pub struct Wire {
    tcp: TcpStream,
    /// The far end of the endpoint's `MemIo`: what the endpoint wrote, and where its input goes.
    far: MemIo,
    deadline: Instant,
}

/// What arrived when the endpoint was asked for data.
pub(crate) enum Received {
    Data(usize),
    /// close_notify.
    Closed,
    /// The TCP stream ended without close_notify.
    Eof,
}

impl Wire {
    /// Sends whatever the endpoint has written.
    pub(crate) fn flush(&mut self) -> Result<()> {
        let mut buf = [0u8; 64 * 1024];
        loop {
            match self.far.read(&mut buf) {
                Ok(n) => self
                    .tcp
                    .write_all(&buf[..n])
                    .context("the peer stopped accepting data")?,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Waits for bytes from the peer and hands them to the endpoint; false at end of stream.
    fn fill(&mut self) -> Result<bool> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            bail!("timed out waiting for the peer");
        }
        self.tcp.set_read_timeout(Some(left))?;
        let mut buf = [0u8; 64 * 1024];
        match self.tcp.read(&mut buf) {
            Ok(0) => Ok(false),
            Ok(n) => {
                self.far.write_all(&buf[..n])?;
                Ok(true)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                bail!("timed out waiting for the peer")
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                bail!("the peer reset the connection")
            }
            Err(e) => Err(anyhow!(e).context("reading from the peer")),
        }
    }

    pub(crate) fn handshake(&mut self, ep: &mut dyn TlsEndpoint) -> Result<()> {
        loop {
            let step = ep.handshake_step();
            // An alert the endpoint queued while failing still goes out.
            let _ = self.flush();
            step?;
            if ep.is_handshake_complete() {
                return Ok(());
            }
            if !self.fill()? {
                // Whatever arrived last (an alert) is read before blaming the peer.
                ep.handshake_step()?;
                bail!("the peer closed the connection during the handshake");
            }
        }
    }

    pub(crate) fn send(&mut self, ep: &mut dyn TlsEndpoint, data: &[u8]) -> Result<()> {
        let r = ep.send(data);
        self.flush()?;
        r
    }

    pub(crate) fn recv(&mut self, ep: &mut dyn TlsEndpoint, buf: &mut [u8]) -> Result<Received> {
        loop {
            match ep.recv(buf) {
                Ok(0) => {}
                Ok(n) => return Ok(Received::Data(n)),
                Err(e) if e.is::<PeerClosed>() => return Ok(Received::Closed),
                Err(e) => {
                    let _ = self.flush();
                    return Err(e);
                }
            }
            // What the endpoint wrote while reading (a warning alert refusing a
            // renegotiation, a KeyUpdate answer) goes out before waiting on the peer.
            self.flush()?;
            if !self.fill()? {
                return Ok(Received::Eof);
            }
        }
    }
}

pub(crate) fn connect(
    factory: &dyn EndpointFactory,
    tcp: TcpStream,
    deadline: Instant,
) -> Result<(Wire, Box<dyn TlsEndpoint>)> {
    tcp.set_nodelay(true)?;
    let (near, far) = MemIo::pair();
    let ep = factory.endpoint(near)?;
    Ok((Wire { tcp, far, deadline }, ep))
}

/// The client's half: for each of the case's connections, handshake, check, send the payload
/// and read each write's echo back, then close_notify and wait for the server's. The factory
/// is kept across connections, so the second one can resume the first's session. Returns a
/// one-line summary.
pub fn client(
    factory: &dyn EndpointFactory,
    case: &Case,
    echo: Echo,
    addr: SocketAddr,
    deadline: Instant,
) -> Result<String> {
    each_connection(case, |n| {
        client_connection(factory, case, n, echo, addr, deadline)
    })
}

/// Runs `one` for each of the case's connections and joins their summaries; a failure names
/// the connection it happened on when there is more than one.
pub(crate) fn each_connection(
    case: &Case,
    mut one: impl FnMut(usize) -> Result<String>,
) -> Result<String> {
    let mut summaries = Vec::new();
    for n in 0..case.connections() {
        let r = one(n);
        summaries.push(match (case.connections(), n) {
            (1, _) => r,
            (_, 0) => r.context("the first (full) connection"),
            _ => r.with_context(|| format!("the resuming connection ({})", case.client.resumption)),
        }?);
    }
    Ok(summaries.join("; then "))
}

/// What an endpoint negotiated, less the count of certificates it received: over the wire
/// a peer may send more than its leaf (`openssl s_client` adds the root it finds in its
/// store), and the mTLS cases judge the certificate by the handshake's outcome instead.
pub(crate) fn interop_view(negotiated: Negotiated) -> Negotiated {
    Negotiated {
        peer_certs: None,
        ..negotiated
    }
}

fn client_connection(
    factory: &dyn EndpointFactory,
    case: &Case,
    n: usize,
    echo: Echo,
    addr: SocketAddr,
    deadline: Instant,
) -> Result<String> {
    let left = deadline.saturating_duration_since(Instant::now());
    let tcp = TcpStream::connect_timeout(&addr, left.max(Duration::from_millis(1)))
        .with_context(|| format!("cannot connect to {addr}"))?;
    let (mut wire, mut ep) = connect(factory, tcp, deadline)?;
    wire.handshake(ep.as_mut())?;
    negotiated::check_one(
        &case.client.params_of_connection(n),
        Side::Client,
        &interop_view(ep.negotiated()),
    )?;
    check_alpn(case, ep.alpn())?;
    if case.bytes == 0 {
        // Nothing to send: wait for the server's word first. In TLS 1.3 a server refuses a
        // client certificate only after the client has finished its handshake.
        let mut buf = [0u8; 1024];
        match wire.recv(ep.as_mut(), &mut buf)? {
            Received::Closed | Received::Eof => {}
            Received::Data(_) => bail!("the server sent data where the case sends none"),
        }
    }
    let data = payload(case.bytes);
    let back = echo.expected(&data);
    let mut buf = vec![0u8; 64 * 1024];
    let (mut sent, mut echoed) = (0, 0);
    let mut sum = Checksum::default();
    while sent < data.len() {
        let n = case.write_size.min(data.len() - sent);
        if case.key_update && sent == data.len() / 2 {
            wire.key_update(ep.as_mut())?;
        }
        wire.send(ep.as_mut(), &data[sent..sent + n])?;
        sent += n;
        // Lockstep per write: neither side can fill the other's socket buffer and stall.
        while echoed < sent {
            match wire.recv(ep.as_mut(), &mut buf)? {
                Received::Data(k) => {
                    if echoed + k > sent || buf[..k] != back[echoed..echoed + k] {
                        bail!("the echo differs from what was sent at byte {echoed}");
                    }
                    sum.update(&buf[..k]);
                    echoed += k;
                }
                Received::Closed => {
                    bail!("the server sent close_notify after {echoed} of {sent} echoed bytes")
                }
                Received::Eof => bail!(
                    "the server closed the connection without close_notify after {echoed} of {sent} echoed bytes (truncation)"
                ),
            }
        }
    }
    if case.expect == Expect::Truncation {
        return match wire.recv(ep.as_mut(), &mut buf)? {
            Received::Eof => {
                bail!("the server closed the connection without close_notify (truncation detected)")
            }
            Received::Closed => Ok("the server sent close_notify where the case drops it".into()),
            Received::Data(_) => bail!("the server sent data after the echo"),
        };
    }
    wire.send_close(ep.as_mut())?;
    match wire.recv(ep.as_mut(), &mut buf)? {
        Received::Closed => {}
        Received::Eof => bail!("the server closed the connection without close_notify"),
        Received::Data(_) => bail!("the server sent data after the echo"),
    }
    Ok(summary(ep.as_ref(), case.bytes, sum))
}

/// The server's half: for each of the case's connections, accept, handshake, check, echo
/// until close_notify, then answer it (or, when the case says so, drop the connection
/// without it).
pub fn server(
    factory: &dyn EndpointFactory,
    case: &Case,
    listener: TcpListener,
    deadline: Instant,
) -> Result<String> {
    each_connection(case, |n| {
        let tcp = accept(&listener, deadline)?;
        let (wire, ep) = server_handshake(factory, case, true, n, tcp, deadline)?;
        echo(wire, ep, case)
    })
}

/// What a server does once a connection's handshake is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Respond {
    /// Echo every byte until the client's close_notify (the interop protocol).
    Echo,
    /// Read one HTTP/1.1 request head and answer `200 OK` with a short text body, then close
    /// (for curl, `openssl s_time`, h2load and the like).
    Http,
}

impl Respond {
    pub fn parse(s: &str) -> Result<Respond, String> {
        match s {
            "echo" => Ok(Respond::Echo),
            "http" => Ok(Respond::Http),
            _ => Err(format!("'{s}' is not a way to respond; use echo or http")),
        }
    }
}

/// A server for tools: serves `connections` connections one after another (`None`: until
/// killed), each with the case's configuration and bounded by `per_connection` from its
/// accept; waiting for a client is not bounded. A connection that fails (a fuzzer's
/// malformed message, a client that vanishes) is told to `on_done` and the next is served.
/// Each may resume a session of an earlier one when the case offers resumption. A server on
/// the library's defaults (`pinned` false) negotiates what each client offers, so its
/// connections are reported, not held to the case's version, suite, group and scheme.
#[allow(clippy::too_many_arguments)]
pub fn serve_many(
    factory: &dyn EndpointFactory,
    case: &Case,
    pinned: bool,
    listener: &TcpListener,
    connections: Option<usize>,
    respond: Respond,
    per_connection: Duration,
    mut on_done: impl FnMut(usize, Result<String>),
) -> Result<()> {
    // Far enough to mean "until a client comes"; a year of seconds cannot overflow.
    let forever = Duration::from_secs(365 * 24 * 3600);
    for n in (0..).take_while(|n| connections.is_none_or(|c| *n < c)) {
        let tcp = accept(listener, Instant::now() + forever)?;
        let deadline = Instant::now() + per_connection;
        let served = server_handshake(factory, case, pinned, usize::MAX, tcp, deadline).and_then(
            |(wire, ep)| match respond {
                Respond::Echo => echo(wire, ep, case),
                Respond::Http => answer_http(wire, ep),
            },
        );
        on_done(n, served);
    }
    Ok(())
}

/// Accepts the handshake of connection `n` of the case (`usize::MAX`: any connection of a
/// server for tools, which may or may not resume) and, when the case is `pinned`, checks it.
fn server_handshake(
    factory: &dyn EndpointFactory,
    case: &Case,
    pinned: bool,
    n: usize,
    tcp: TcpStream,
    deadline: Instant,
) -> Result<(Wire, Box<dyn TlsEndpoint>)> {
    let (mut wire, mut ep) = connect(factory, tcp, deadline)?;
    wire.handshake(ep.as_mut())?;
    if !pinned {
        return Ok((wire, ep));
    }
    let n = match n {
        usize::MAX => usize::from(ep.negotiated().resumed == Some(true)),
        n => n,
    };
    negotiated::check_one(
        &case.server.params_of_connection(n),
        Side::Server,
        &interop_view(ep.negotiated()),
    )?;
    check_alpn(case, ep.alpn())?;
    if let Some(want) = case.sni {
        match ep.sni() {
            Some(got) if got == want => {}
            got => bail!("the server received SNI {got:?}, but the case asks for {want}"),
        }
    }
    Ok((wire, ep))
}

fn echo(mut wire: Wire, mut ep: Box<dyn TlsEndpoint>, case: &Case) -> Result<String> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut sum = Checksum::default();
    let mut echoed = 0;
    loop {
        if case.expect == Expect::Truncation && echoed >= case.bytes {
            // Dropping the socket sends a FIN and nothing else.
            return Ok("dropped the connection without close_notify, as the case asks".into());
        }
        match wire.recv(ep.as_mut(), &mut buf)? {
            Received::Data(k) => {
                sum.update(&buf[..k]);
                wire.send(ep.as_mut(), &buf[..k])?;
                echoed += k;
            }
            Received::Closed => break,
            Received::Eof => bail!("the client closed the connection without close_notify"),
        }
    }
    wire.send_close(ep.as_mut())?;
    Ok(summary(ep.as_ref(), echoed, sum))
}

/// The most of a request head a server for tools reads.
const MAX_REQUEST_HEAD: usize = 16 * 1024;

/// Reads one HTTP/1.1 request head, answers `200 OK` naming what was negotiated, and closes
/// with close_notify.
fn answer_http(mut wire: Wire, mut ep: Box<dyn TlsEndpoint>) -> Result<String> {
    let mut head = Vec::new();
    let mut buf = vec![0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_REQUEST_HEAD {
            bail!("no end of an HTTP request head in {MAX_REQUEST_HEAD} bytes");
        }
        match wire.recv(ep.as_mut(), &mut buf)? {
            Received::Data(k) => head.extend_from_slice(&buf[..k]),
            Received::Closed | Received::Eof => {
                bail!("the client closed before a whole HTTP request head")
            }
        }
    }
    let line =
        String::from_utf8_lossy(head.split(|&b| b == b'\r').next().unwrap_or(&[])).into_owned();
    if !line.ends_with(" HTTP/1.1") && !line.ends_with(" HTTP/1.0") {
        bail!("not an HTTP/1.x request: {line:?}");
    }
    let body = format!("tlsmatrix: {}\n", negotiated_line(&ep.negotiated()));
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    wire.send(ep.as_mut(), response.as_bytes())?;
    wire.send_close(ep.as_mut())?;
    Ok(format!("answered {line}"))
}

impl Wire {
    /// Ends the stream as BoringSSL's shim does: stop sending, then read whatever the peer
    /// still sends until it closes or `limit` passes. Closing a socket with unread input
    /// resets the connection, and the reset can destroy an alert just sent before the peer
    /// reads it.
    pub(crate) fn drain(&mut self, limit: Duration) {
        let _ = self.tcp.shutdown(std::net::Shutdown::Write);
        let until = Instant::now() + limit;
        let mut buf = [0u8; 16 * 1024];
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() || self.tcp.set_read_timeout(Some(left)).is_err() {
                return;
            }
            match self.tcp.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    }

    pub(crate) fn key_update(&mut self, ep: &mut dyn TlsEndpoint) -> Result<()> {
        let r = ep.key_update();
        self.flush()?;
        r
    }

    pub(crate) fn send_close(&mut self, ep: &mut dyn TlsEndpoint) -> Result<()> {
        let r = ep.close();
        self.flush()?;
        r
    }
}

/// The ALPN protocol an endpoint agreed on (`got`) against the one the case asks for.
pub(crate) fn check_alpn(case: &Case, got: Option<Vec<u8>>) -> Result<()> {
    check_alpn_is(case.alpn, got)
}

/// The agreed ALPN protocol against `want`, when something is wanted.
pub(crate) fn check_alpn_is(want: Option<&str>, got: Option<Vec<u8>>) -> Result<()> {
    let Some(want) = want else {
        return Ok(());
    };
    match got {
        Some(got) if got == want.as_bytes() => Ok(()),
        Some(got) => bail!(
            "ALPN agreed on {}, but the case asks for {want}",
            String::from_utf8_lossy(&got)
        ),
        None => bail!("no ALPN protocol was agreed on, but the case asks for {want}"),
    }
}

/// The next connection that sends something. One that closes before its first byte (a port
/// probe, such as a readiness check) is said on stderr and skipped, so the real client that
/// follows is served instead of failing the case on an empty handshake.
fn accept(listener: &TcpListener, deadline: Instant) -> Result<TcpStream> {
    loop {
        let Some((s, from)) = tcp::accept_by(listener, deadline, || Ok(()))? else {
            bail!("timed out: no client connected");
        };
        let left = deadline.saturating_duration_since(Instant::now());
        s.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
        // A close or a reset before the first byte is a probe.
        let probe = match s.peek(&mut [0u8; 1]) {
            Ok(0) => Some("closed"),
            Ok(_) => None,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => Some("reset"),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                bail!("timed out: {from} connected but sent nothing")
            }
            Err(e) => return Err(anyhow!(e).context("reading the client's first bytes")),
        };
        if let Some(how) = probe {
            eprintln!(
                "note: {from} connected and {how} without sending a byte (a port probe?); waiting for the client"
            );
            continue;
        }
        s.set_read_timeout(None)?;
        return Ok(s);
    }
}

fn summary(ep: &dyn TlsEndpoint, bytes: usize, sum: Checksum) -> String {
    format!(
        "{}; {bytes} bytes echoed, checksum {:016x}",
        negotiated_line(&ep.negotiated()),
        sum.0
    )
}

/// "TLS 1.3 TLS_AES_128_GCM_SHA256 x25519 ecdsa_secp256r1_sha256 resumed".
pub(crate) fn negotiated_line(n: &Negotiated) -> String {
    let show = |v: Option<u16>, f: fn(u16) -> String| v.map_or("?".into(), f);
    format!(
        "{} {} {} {}{}",
        show(n.version, tlsmatrix_model::codes::version_name),
        show(n.cipher_suite, tlsmatrix_model::codes::suite_name),
        show(n.group, tlsmatrix_model::codes::group_name),
        show(n.signature_scheme, tlsmatrix_model::codes::scheme_name),
        if n.resumed == Some(true) {
            " resumed"
        } else {
            ""
        },
    )
}

/// Serves `connections` connections of a scenario, one after another: handshake, check the
/// server's view, read the client's request (`trace::REQUEST_BYTES`), answer with the
/// response (`trace::RESPONSE_BYTES`), close. The accept blocks: the caller bounds the wait
/// (the time-to-first-byte client always connects or the process is killed).
pub fn serve_requests(
    factory: &dyn EndpointFactory,
    params: &ConnParams,
    listener: &TcpListener,
    connections: usize,
    deadline: Instant,
) -> Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    for n in 0..connections {
        let (tcp, _) = listener.accept().context("accepting a connection")?;
        let (mut wire, mut ep) = connect(factory, tcp, deadline)?;
        let served = (|| -> Result<()> {
            wire.handshake(ep.as_mut())?;
            negotiated::check_one(params, Side::Server, &ep.negotiated())?;
            let mut got = 0;
            while got < REQUEST_BYTES {
                match wire.recv(ep.as_mut(), &mut buf)? {
                    Received::Data(k) => got += k,
                    _ => bail!("the client closed before its whole request ({got} bytes)"),
                }
            }
            wire.send(ep.as_mut(), &payload(RESPONSE_BYTES))?;
            wire.send_close(ep.as_mut())
        })();
        served.with_context(|| format!("connection {} of {connections}", n + 1))?;
    }
    Ok(())
}

/// One connection to `addr`: connect, handshake, send the request, and the time until the
/// response's first bytes arrive. The client's view is checked after the clock stops.
pub fn time_to_first_byte(
    factory: &dyn EndpointFactory,
    params: &ConnParams,
    addr: SocketAddr,
    deadline: Instant,
) -> Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    let start = Instant::now();
    let tcp = TcpStream::connect_timeout(&addr, left.max(Duration::from_millis(1)))
        .with_context(|| format!("cannot connect to {addr}"))?;
    let (mut wire, mut ep) = connect(factory, tcp, deadline)?;
    wire.handshake(ep.as_mut())?;
    wire.send(ep.as_mut(), &payload(REQUEST_BYTES))?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut got = match wire.recv(ep.as_mut(), &mut buf)? {
        Received::Data(k) => k,
        _ => bail!("the server closed without answering"),
    };
    let elapsed = start.elapsed();
    negotiated::check_one(params, Side::Client, &ep.negotiated())?;
    while got < RESPONSE_BYTES {
        match wire.recv(ep.as_mut(), &mut buf)? {
            Received::Data(k) => got += k,
            _ => bail!("the server closed after {got} of {RESPONSE_BYTES} response bytes"),
        }
    }
    wire.send_close(ep.as_mut())?;
    Ok(elapsed)
}
