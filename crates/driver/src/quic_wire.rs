//! A QUIC endpoint over a real UDP socket on loopback, and the two roles of a QUIC interop
//! case: the handshake, then an hq-interop request for the case's bytes and its answer
//! (`tlsmatrix_harness::quic_stream`). The endpoint is the same sans-I/O connection the
//! in-memory pair drives; here each datagram it transmits is sent, each one received is
//! handed to it, and its timers (loss detection, acknowledgements) wake the loop. Every wait
//! is bounded by the case's deadline, so a silent peer, a closed port or garbage costs
//! bounded time and a clear sentence.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use tlsmatrix_harness::negotiated;
use tlsmatrix_harness::quic::{Datagrams, QuicEndpoint, QuicEndpointFactory};
use tlsmatrix_harness::quic_stream::{HqClient, HqServer, StreamPart};
use tlsmatrix_model::interop::Case;
use tlsmatrix_model::scenario::ConnParams;
use tlsmatrix_model::side::Side;

use crate::wire::{check_alpn_is, interop_view, negotiated_line};

/// How long a side keeps answering once its part is done and the peer has gone quiet: the
/// peer's last acknowledgements, or a retransmission it still needs, may be on their way.
const LINGER: Duration = Duration::from_millis(150);
/// Larger than any UDP payload.
const MAX_DATAGRAM: usize = 65_536;

/// What a side checks its handshake against: the parameters it offered and the ALPN both
/// sides must agree on.
#[derive(Debug, Clone, Copy)]
pub struct Expect {
    pub params: ConnParams,
    pub alpn: Option<&'static str>,
}

impl Expect {
    /// `side`'s expectations of connection `n` (from 0) of an interop case: the first is a
    /// full handshake, the one after it resumes when the case offers resumption.
    pub fn of_connection(case: &Case, side: Side, n: usize) -> Expect {
        Expect {
            params: case.offer(side).params_of_connection(n),
            alpn: case.alpn,
        }
    }
}

/// When a client's answer arrived, from just before its connection was made.
#[derive(Debug, Clone, Copy)]
pub struct ClientTimes {
    pub first_byte: Duration,
    pub last_byte: Duration,
}

/// How a server waits for its client's first datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstDatagram {
    /// Until the deadline; whatever arrives is the client's first datagram.
    ByDeadline,
    /// Until the deadline, skipping what is not a long-header packet: the next connection of
    /// a case, whose previous connection's last packets may still arrive.
    NextByDeadline,
    /// For as long as it takes, skipping what is not a long-header packet: a server serving
    /// one client after another, whose previous client's last acknowledgements may still
    /// arrive. The connection then has `limit` from its first datagram.
    Unbounded { limit: Duration },
}

/// The server's half: waits for the first datagram from any client, then completes the
/// handshake with that client and answers its hq-interop request. The socket stays
/// unconnected, answering that client alone, so it can serve the next client after.
pub fn server(
    factory: &dyn QuicEndpointFactory,
    expect: &Expect,
    socket: &UdpSocket,
    deadline: Instant,
    wait: FirstDatagram,
) -> Result<String> {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let (n, from) = loop {
        match wait {
            FirstDatagram::ByDeadline | FirstDatagram::NextByDeadline => {
                set_timeout(socket, deadline, "timed out: no client sent a datagram")?
            }
            FirstDatagram::Unbounded { .. } => socket.set_read_timeout(None)?,
        }
        let stale = |d: &[u8]| d.first().is_none_or(|b| b & 0x80 == 0);
        match socket.recv_from(&mut buf) {
            Ok((n, _)) if wait != FirstDatagram::ByDeadline && stale(&buf[..n]) => {}
            Ok(got) => break got,
            Err(e) if waited(&e) => continue,
            Err(e) => return Err(anyhow!(e).context("reading the first datagram")),
        }
    };
    // From the first datagram on, the connection's own deadline.
    let deadline = match wait {
        FirstDatagram::ByDeadline | FirstDatagram::NextByDeadline => deadline,
        FirstDatagram::Unbounded { limit } => Instant::now() + limit,
    };
    let link = Link::To(socket, from);
    let mut ep = factory.endpoint()?;
    let first = ep.receive(&buf[..n]);
    // What the endpoint answers a first datagram it refused (a version negotiation) is sent
    // before the refusal is reported.
    let mut out = Datagrams::default();
    let sent = ep.transmit(&mut out).and_then(|()| send(&link, &out));
    first?;
    sent?;
    let mut part = HqServer::default();
    let line = drive(
        ep.as_mut(),
        &mut part,
        &link,
        expect,
        Side::Server,
        deadline,
        out.len(),
    )?;
    let asked = part.asked().unwrap_or_default();
    Ok(format!("{line}; answered /{asked}"))
}

/// A UDP socket talking to one peer: a client's, connected to its server; or a server's,
/// unconnected, answering the client that came first and passing over any other sender.
#[derive(Clone, Copy)]
enum Link<'a> {
    Connected(&'a UdpSocket),
    To(&'a UdpSocket, SocketAddr),
}

impl Link<'_> {
    fn socket(&self) -> &UdpSocket {
        match self {
            Link::Connected(s) | Link::To(s, _) => s,
        }
    }

    fn send(&self, d: &[u8]) -> std::io::Result<usize> {
        match self {
            Link::Connected(s) => s.send(d),
            Link::To(s, peer) => s.send_to(d, peer),
        }
    }

    fn recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Link::Connected(s) => s.recv(buf),
            Link::To(s, peer) => loop {
                let (n, from) = s.recv_from(buf)?;
                if from == *peer {
                    return Ok(n);
                }
            },
        }
    }
}

/// The client's half: connects to the server at `addr`, completes the handshake, and
/// downloads `/bytes`.
pub fn client(
    factory: &dyn QuicEndpointFactory,
    expect: &Expect,
    addr: SocketAddr,
    bytes: u64,
    deadline: Instant,
) -> Result<(String, ClientTimes)> {
    let socket = UdpSocket::bind("127.0.0.1:0").context("cannot bind a UDP socket")?;
    socket
        .connect(addr)
        .with_context(|| format!("cannot reach {addr}"))?;
    let start = Instant::now();
    let mut ep = factory.endpoint()?;
    let mut part = HqClient::new(bytes);
    let line = drive(
        ep.as_mut(),
        &mut part,
        &Link::Connected(&socket),
        expect,
        Side::Client,
        deadline,
        0,
    )?;
    let (first, last) = part.times();
    let since = |t: Option<Instant>| t.map_or(Duration::ZERO, |t| t - start);
    let times = ClientTimes {
        first_byte: since(first),
        last_byte: since(last),
    };
    Ok((format!("{line}; read /{bytes} whole"), times))
}

/// Sends what the endpoint has and reads what comes, playing `part` on the stream once the
/// handshake is done, until the part is done and the peer has been quiet for `LINGER`; then
/// checks what the handshake negotiated against the case.
fn drive(
    ep: &mut dyn QuicEndpoint,
    part: &mut dyn StreamPart,
    link: &Link,
    expect: &Expect,
    side: Side,
    deadline: Instant,
    sent_before: usize,
) -> Result<String> {
    let mut out = Datagrams::default();
    let mut buf = vec![0u8; MAX_DATAGRAM];
    // A server has read the client's first datagram and answered it already.
    let (mut sent, mut received) = (sent_before, usize::from(side == Side::Server));
    let mut part_done = false;
    let mut closed = None;
    let mut last_heard = Instant::now();
    loop {
        let was_complete = ep.is_handshake_complete();
        if was_complete && !part_done {
            part_done = part.turn(ep).context("on the stream")?;
        }
        out.clear();
        if let Some(e) = after_part(ep.transmit(&mut out), part_done)? {
            closed = Some(e);
            break;
        }
        send(link, &out)?;
        sent += out.len();
        if !was_complete && ep.is_handshake_complete() {
            // A stack that finishes its handshake while it transmits (OpenSSL's, in
            // SSL_handle_events) plays its part now, as the others do on the datagram that
            // finished theirs: the client's request leaves with its Finished.
            continue;
        }
        let quiet_until = last_heard + LINGER;
        if part_done && Instant::now() >= quiet_until {
            break;
        }
        let mut until = deadline;
        if part_done {
            until = until.min(quiet_until);
        }
        if let Some(t) = ep.timeout() {
            until = until.min(Instant::now() + t);
        }
        let left = until.saturating_duration_since(Instant::now());
        if Instant::now() >= deadline {
            let stage = if ep.is_handshake_complete() {
                "the hq-interop exchange did not finish"
            } else {
                "the QUIC handshake did not complete"
            };
            bail!("timed out: {stage} ({received} datagrams received, {sent} sent)");
        }
        // A zero timeout would block for ever; a timer due now is run by the next transmit.
        let socket = link.socket();
        socket.set_read_timeout(Some(left.max(Duration::from_micros(50))))?;
        match link.recv(&mut buf) {
            Ok(n) => {
                received += 1;
                last_heard = Instant::now();
                // Whatever else already waits is read before the next transmit.
                socket.set_nonblocking(true)?;
                let taken = ep
                    .receive(&buf[..n])
                    .and_then(|()| drain(link, ep, &mut buf, &mut received));
                socket.set_nonblocking(false)?;
                if let Some(e) = after_part(taken, part_done)? {
                    closed = Some(e);
                    break;
                }
            }
            Err(e) if waited(&e) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                if part_done {
                    // The peer finished and left: nothing more to answer.
                    break;
                }
                bail!("the peer's UDP port is closed (ICMP port unreachable)")
            }
            Err(e) => return Err(anyhow!(e).context("reading from the peer")),
        }
    }
    let view = interop_view(ep.negotiated());
    negotiated::check_one(&expect.params, side, &view)?;
    check_alpn_is(expect.alpn, ep.alpn())?;
    let mut line = format!(
        "QUIC v1 {}; ALPN {}; {sent} datagrams sent, {received} received",
        negotiated_line(&view),
        expect.alpn.unwrap_or_default()
    );
    if let Some(e) = closed {
        line.push_str(&format!("; then the peer closed the connection ({e:#})"));
    }
    Ok(line)
}

/// What a step of the endpoint's came to once the side's part may be done: before, an error
/// fails the side; after, it is the peer closing the connection (as quic-go's client does
/// with CONNECTION_CLOSE once it has its answer), which ends the side in order, returned to
/// be told.
fn after_part(step: Result<()>, part_done: bool) -> Result<Option<anyhow::Error>> {
    match step {
        Ok(()) => Ok(None),
        Err(e) if part_done => Ok(Some(e)),
        Err(e) => Err(e),
    }
}

/// Hands the endpoint every datagram already waiting on the (non-blocking) socket.
fn drain(
    link: &Link,
    ep: &mut dyn QuicEndpoint,
    buf: &mut [u8],
    received: &mut usize,
) -> Result<()> {
    loop {
        match link.recv(buf) {
            Ok(n) => {
                *received += 1;
                ep.receive(&buf[..n])?;
            }
            Err(e) if waited(&e) || e.kind() == ErrorKind::ConnectionRefused => return Ok(()),
            Err(e) => return Err(anyhow!(e).context("reading from the peer")),
        }
    }
}

fn send(link: &Link, out: &Datagrams) -> Result<()> {
    for d in out.iter() {
        match link.send(d) {
            Ok(_) => {}
            // A peer that already left after its handshake; the next read says so.
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {}
            Err(e) => return Err(anyhow!(e).context("sending a datagram")),
        }
    }
    Ok(())
}

/// Sets the socket's read timeout to what is left until `until`; past it, `expired`.
fn set_timeout(socket: &UdpSocket, until: Instant, expired: &str) -> Result<()> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        bail!("{expired}");
    }
    socket.set_read_timeout(Some(left))?;
    Ok(())
}

fn waited(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}
