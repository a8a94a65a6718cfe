//! The pair driver: one client and one server in one thread, stepped in turn over `MemIo`,
//! with each side's calls timed apart. Client and server costs differ by 2-3x, so a single
//! total would hide which side a library is good at.
//!
//! Timing uses the monotonic clock around each call (about 20 ns, vDSO) rather than the
//! thread CPU clock (a syscall per read, which would add a few percent to a handshake). Inside
//! a call there is no I/O and no waiting, so the two agree except when the OS preempts the
//! thread; repetitions and medians absorb that.

use std::time::Instant;

use crate::endpoint::{EndpointFactory, TlsEndpoint};
use crate::memio::MemIo;
use crate::negotiated::{self, CheckError};
use tlsmatrix_model::scenario::{ConnParams, Resumption};
use tlsmatrix_model::side::Side;

/// Rounds of (client step, server step) after which a handshake that has not finished is
/// declared stuck. TLS 1.2 needs three, TLS 1.3 two; the margin covers HelloRetryRequest.
pub const MAX_ROUNDS: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum PairError {
    #[error("{side} could not create its connection: {source:#}")]
    Create { side: Side, source: anyhow::Error },
    #[error("{side} failed at handshake step {step}: {source:#}")]
    Step {
        side: Side,
        step: usize,
        source: anyhow::Error,
    },
    #[error("handshake stalled after {MAX_ROUNDS} rounds (client finished: {client_done}, server finished: {server_done})")]
    Stalled {
        client_done: bool,
        server_done: bool,
    },
    #[error(transparent)]
    Check(#[from] CheckError),
    #[error("{side} failed to send application data: {source:#}")]
    Send { side: Side, source: anyhow::Error },
    #[error("{side} failed to receive application data: {source:#}")]
    Recv { side: Side, source: anyhow::Error },
    #[error("{side} stopped receiving after {got} of {expected} bytes of a write")]
    RecvStalled {
        side: Side,
        got: usize,
        expected: usize,
    },
}

/// A connected client and server, with the time each side spent getting there.
pub struct Pair {
    pub client: Box<dyn TlsEndpoint>,
    pub server: Box<dyn TlsEndpoint>,
    pub client_ns: u64,
    pub server_ns: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransferTimes {
    pub send_ns: u64,
    pub recv_ns: u64,
}

/// How the pair driver accounts for the calls it makes on each side: a clock per side when
/// timing, callgrind's collection switched on around one side when counting instructions.
pub trait Meter {
    fn on<R>(&mut self, side: Side, f: impl FnOnce() -> R) -> R;

    /// Told once per side, right after the step that finished its handshake.
    #[inline(always)]
    fn finished(&mut self, _side: Side) {}
}

/// Monotonic time per side.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock {
    pub client_ns: u64,
    pub server_ns: u64,
}

impl Clock {
    pub fn of(&self, side: Side) -> u64 {
        match side {
            Side::Client => self.client_ns,
            Side::Server => self.server_ns,
        }
    }
}

impl Meter for Clock {
    #[inline(always)]
    fn on<R>(&mut self, side: Side, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let r = f();
        let ns = start.elapsed().as_nanos() as u64;
        match side {
            Side::Client => self.client_ns += ns,
            Side::Server => self.server_ns += ns,
        }
        r
    }
}

/// Creates both endpoints and steps them to a finished handshake, then checks that both
/// sides' views of the negotiated parameters match `params`. Creating an endpoint is timed
/// too: a client builds its key share and ClientHello there in some libraries.
pub fn handshake(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
) -> Result<Pair, PairError> {
    let mut clock = Clock::default();
    let (c, s) = handshake_metered(&mut clock, client, server, params)?;
    Ok(Pair {
        client: c,
        server: s,
        client_ns: clock.client_ns,
        server_ns: clock.server_ns,
    })
}

pub type Endpoints = (Box<dyn TlsEndpoint>, Box<dyn TlsEndpoint>);

/// [`handshake`] with every call on a side made through `meter`; the checks are outside it.
/// In a resumption scenario the client also reads what the server sent after the handshake
/// (TLS 1.3 tickets), so the next connection can resume: that is part of its cost.
pub fn handshake_metered(
    meter: &mut impl Meter,
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
) -> Result<Endpoints, PairError> {
    connect(
        meter,
        client,
        server,
        params,
        params.resumption.is_resumed(),
        MemIo::pair(),
    )
}

/// [`handshake_metered`] over a transport the caller made, e.g. with its buffers reserved.
pub fn handshake_over(
    meter: &mut impl Meter,
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    io: (MemIo, MemIo),
) -> Result<Endpoints, PairError> {
    connect(meter, client, server, params, false, io)
}

/// For a resumption scenario: one full handshake, unmeasured, that leaves the client a
/// session to resume. Nothing to do for full-handshake scenarios.
pub fn prime(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
) -> Result<(), PairError> {
    if params.resumption.is_resumed() {
        let full = ConnParams {
            resumption: Resumption::Full,
            ..*params
        };
        connect(
            &mut Clock::default(),
            client,
            server,
            &full,
            true,
            MemIo::pair(),
        )?;
    }
    Ok(())
}

fn connect(
    meter: &mut impl Meter,
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    keep_session: bool,
    (client_io, server_io): (MemIo, MemIo),
) -> Result<Endpoints, PairError> {
    let client_wrote = client_io.probe();
    let mut c = meter
        .on(Side::Client, || client.endpoint(client_io))
        .map_err(|source| PairError::Create {
            side: Side::Client,
            source,
        })?;
    let mut s = meter
        .on(Side::Server, || server.endpoint(server_io))
        .map_err(|source| PairError::Create {
            side: Side::Server,
            source,
        })?;

    for step in 1..=MAX_ROUNDS {
        if !c.is_handshake_complete() {
            meter
                .on(Side::Client, || c.handshake_step())
                .map_err(|source| PairError::Step {
                    side: Side::Client,
                    step,
                    source,
                })?;
            if c.is_handshake_complete() {
                meter.finished(Side::Client);
            }
        }
        if !s.is_handshake_complete() {
            meter
                .on(Side::Server, || s.handshake_step())
                .map_err(|source| PairError::Step {
                    side: Side::Server,
                    step,
                    source,
                })?;
            if s.is_handshake_complete() {
                meter.finished(Side::Server);
            }
        }
        if c.is_handshake_complete() && s.is_handshake_complete() {
            negotiated::check(params, &c.negotiated(), &s.negotiated())?;
            negotiated::check_hellos(params, client_wrote.hellos_written())?;
            if keep_session {
                meter
                    .on(Side::Client, || read_post_handshake(c.as_mut()))
                    .map_err(|source| PairError::Recv {
                        side: Side::Client,
                        source,
                    })?;
            }
            return Ok((c, s));
        }
    }
    Err(PairError::Stalled {
        client_done: c.is_handshake_complete(),
        server_done: s.is_handshake_complete(),
    })
}

/// Processes the records that arrived after the handshake (session tickets); none of them
/// may be application data.
fn read_post_handshake(ep: &mut dyn TlsEndpoint) -> anyhow::Result<()> {
    let mut byte = [0u8; 1];
    match ep.recv(&mut byte)? {
        0 => Ok(()),
        _ => anyhow::bail!("the peer sent application data right after the handshake"),
    }
}

impl Pair {
    /// Sends `total` bytes from `from` to its peer in writes of `write_size` taken from
    /// `payload`, the receiver reading each write completely before the next. `on_recv` sees
    /// every decrypted byte, in order (tests checksum there; benchmarks pass a no-op).
    pub fn transfer(
        &mut self,
        from: Side,
        total: usize,
        write_size: usize,
        payload: &[u8],
        sink: &mut [u8],
        on_recv: impl FnMut(&[u8]),
    ) -> Result<TransferTimes, PairError> {
        let mut clock = Clock::default();
        let to = from.peer();
        self.transfer_metered(&mut clock, from, total, write_size, payload, sink, on_recv)?;
        Ok(TransferTimes {
            send_ns: clock.of(from),
            recv_ns: clock.of(to),
        })
    }

    /// [`Pair::transfer`] with every send and receive made through `meter`.
    #[allow(clippy::too_many_arguments)]
    pub fn transfer_metered(
        &mut self,
        meter: &mut impl Meter,
        from: Side,
        total: usize,
        write_size: usize,
        payload: &[u8],
        sink: &mut [u8],
        mut on_recv: impl FnMut(&[u8]),
    ) -> Result<(), PairError> {
        assert!(payload.len() >= write_size && write_size > 0 && !sink.is_empty());
        let to = from.peer();
        let (sender, receiver) = match from {
            Side::Client => (&mut self.client, &mut self.server),
            Side::Server => (&mut self.server, &mut self.client),
        };
        let mut sent = 0;
        while sent < total {
            let n = write_size.min(total - sent);
            meter
                .on(from, || sender.send(&payload[..n]))
                .map_err(|source| PairError::Send { side: from, source })?;
            let mut got = 0;
            while got < n {
                let want = sink.len().min(n - got);
                let r = meter
                    .on(to, || receiver.recv(&mut sink[..want]))
                    .map_err(|source| PairError::Recv { side: to, source })?;
                if r == 0 {
                    return Err(PairError::RecvStalled {
                        side: to,
                        got,
                        expected: n,
                    });
                }
                on_recv(&sink[..r]);
                got += r;
            }
            sent += n;
        }
        Ok(())
    }
}

/// FNV-1a, 64-bit: enough to tell that bytes arrived intact and in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checksum(pub u64);

impl Default for Checksum {
    fn default() -> Self {
        Checksum(0xcbf2_9ce4_8422_2325)
    }
}

impl Checksum {
    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_sees_order_and_content() {
        let mut a = Checksum::default();
        a.update(b"ab");
        let mut b = Checksum::default();
        b.update(b"ba");
        let mut c = Checksum::default();
        c.update(b"a");
        c.update(b"b");
        assert_ne!(a, b);
        assert_eq!(a, c);
    }
}
