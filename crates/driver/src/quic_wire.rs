//! A QUIC endpoint over a real UDP socket on loopback, and the two roles of a QUIC interop
//! case. The endpoint is the same sans-I/O connection the in-memory pair drives; here each
//! datagram it transmits is sent, and each one received is handed to it. Every wait is bounded
//! by the case's deadline, so a silent peer, a closed port or garbage costs bounded time and a
//! clear sentence.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use tlsmatrix_harness::negotiated;
use tlsmatrix_harness::quic::{Datagrams, QuicEndpoint, QuicEndpointFactory};
use tlsmatrix_model::interop::Case;
use tlsmatrix_model::side::Side;

use crate::wire::{check_alpn, interop_view, negotiated_line};

/// How long a side keeps answering after its handshake is done: the peer's last flight (the
/// client's Finished, the server's HANDSHAKE_DONE and acknowledgements) may still be on its
/// way, and nothing here retransmits on a timer.
const LINGER: Duration = Duration::from_millis(150);
/// Larger than any UDP payload.
const MAX_DATAGRAM: usize = 65_536;

/// The server's half: waits for the first datagram from any client, then completes the
/// handshake with that client.
pub fn server(
    factory: &dyn QuicEndpointFactory,
    case: &Case,
    socket: UdpSocket,
    deadline: Instant,
) -> Result<String> {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let (n, from) = loop {
        set_timeout(&socket, deadline, "timed out: no client sent a datagram")?;
        match socket.recv_from(&mut buf) {
            Ok(got) => break got,
            Err(e) if waited(&e) => continue,
            Err(e) => return Err(anyhow!(e).context("reading the first datagram")),
        }
    };
    socket
        .connect(from)
        .with_context(|| format!("cannot answer {from}"))?;
    let mut ep = factory.endpoint()?;
    let first = ep.receive(&buf[..n]);
    // What the endpoint answers a first datagram it refused (a version negotiation) is sent
    // before the refusal is reported.
    let mut out = Datagrams::default();
    let sent = ep.transmit(&mut out).and_then(|()| send(&socket, &out));
    first?;
    sent?;
    drive(
        ep.as_mut(),
        &socket,
        case,
        Side::Server,
        deadline,
        out.len(),
    )
}

/// The client's half: connects to the server at `addr` and completes the handshake.
pub fn client(
    factory: &dyn QuicEndpointFactory,
    case: &Case,
    addr: SocketAddr,
    deadline: Instant,
) -> Result<String> {
    let socket = UdpSocket::bind("127.0.0.1:0").context("cannot bind a UDP socket")?;
    socket
        .connect(addr)
        .with_context(|| format!("cannot reach {addr}"))?;
    let mut ep = factory.endpoint()?;
    drive(ep.as_mut(), &socket, case, Side::Client, deadline, 0)
}

/// Sends what the endpoint has and reads what comes until its handshake is done and `LINGER`
/// has passed; then checks what it negotiated against the case.
fn drive(
    ep: &mut dyn QuicEndpoint,
    socket: &UdpSocket,
    case: &Case,
    side: Side,
    deadline: Instant,
    sent_before: usize,
) -> Result<String> {
    let mut out = Datagrams::default();
    let mut buf = vec![0u8; MAX_DATAGRAM];
    // A server has read the client's first datagram and answered it already.
    let (mut sent, mut received) = (sent_before, usize::from(side == Side::Server));
    let mut done_at = None;
    loop {
        out.clear();
        ep.transmit(&mut out)?;
        send(socket, &out)?;
        sent += out.len();
        if ep.is_handshake_complete() {
            done_at.get_or_insert_with(Instant::now);
        }
        let until = done_at.map_or(deadline, |t: Instant| (t + LINGER).min(deadline));
        let left = until.saturating_duration_since(Instant::now());
        match (left.is_zero(), done_at) {
            (true, Some(_)) => break,
            (true, None) => bail!(
                "timed out: the QUIC handshake did not complete ({received} datagrams received, {sent} sent)"
            ),
            (false, _) => socket.set_read_timeout(Some(left))?,
        }
        match socket.recv(&mut buf) {
            Ok(n) => {
                received += 1;
                ep.receive(&buf[..n])?;
            }
            Err(e) if waited(&e) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                if done_at.is_some() {
                    // The peer finished and left: nothing more to answer.
                    break;
                }
                bail!("the peer's UDP port is closed (ICMP port unreachable)")
            }
            Err(e) => return Err(anyhow!(e).context("reading from the peer")),
        }
    }
    let view = interop_view(ep.negotiated());
    negotiated::check_one(&case.offer(side).params(), side, &view)?;
    check_alpn(case, ep.alpn())?;
    Ok(format!(
        "QUIC v1 {}; ALPN {}; {sent} datagrams sent, {received} received",
        negotiated_line(&view),
        case.alpn.unwrap_or_default()
    ))
}

fn send(socket: &UdpSocket, out: &Datagrams) -> Result<()> {
    for d in out.iter() {
        match socket.send(d) {
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
