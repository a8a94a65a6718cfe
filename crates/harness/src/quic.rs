//! TLS inside QUIC (RFC 9001): the pair that steps a client and a server of a QUIC stack
//! (`crate::quic_endpoint`'s contract, re-exported here) against each other over in-memory
//! datagrams, each side's calls metered as the TCP pair meters them (`crate::pair`).
//!
//! A QUIC handshake runs until both sides are done and no datagram is in flight: the
//! server's HANDSHAKE_DONE, the connection IDs each side issues and the acknowledgements are
//! QUIC's own handshake work, so they are in it. Every datagram is read on its way: each
//! long-header packet must carry QUIC version 1, and the bytes per side, the client's first
//! datagram (its padding) and the round trips until the client can send are counted there.

use crate::negotiated::{self, CheckError};
use crate::pair::{Clock, Meter};
pub use crate::quic_endpoint::{
    Datagrams, QuicEndpoint, QuicEndpointFactory, QuicFactories, StreamRead, ALPN,
    MIN_INITIAL_DATAGRAM, QUIC_V1, STREAM_ID,
};
use crate::quic_stream::StreamPart;
use std::time::{Duration, Instant};
use tlsmatrix_model::scenario::{ConnParams, Resumption};
use tlsmatrix_model::side::Side;

/// Rounds of (client step, server step) after which a QUIC handshake that has not gone
/// quiet is declared stuck: two for the handshake, one more per flight the server's
/// amplification limit holds back, and the acknowledgements after.
pub const MAX_ROUNDS: usize = 16;

/// What the datagrams of one handshake showed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuicWire {
    /// Datagrams and bytes each side sent, indexed by `Side::index`.
    pub datagrams: [u32; 2],
    pub bytes: [u64; 2],
    /// The size of the client's first datagram (its Initial, padded).
    pub client_first_datagram: usize,
    /// The client's flights until it could send application data: 1 for a QUIC handshake
    /// the server answered in one flight, one more for each round trip the server's
    /// amplification limit or congestion window added.
    pub client_ready_rtts: u32,
    /// Bytes the server sent after its first flight, before the client could send: what its
    /// first flight held back.
    pub server_held_bytes: u64,
    /// The bytes of the server's first flight.
    pub server_first_flight: u64,
}

impl QuicWire {
    /// The server's first flight over the client's first datagram: at most 3 under the
    /// amplification limit (RFC 9000 §8.1).
    pub fn first_flight_ratio(&self) -> f64 {
        self.server_first_flight as f64 / self.client_first_datagram.max(1) as f64
    }
}

#[derive(Debug, thiserror::Error)]
pub enum QuicError {
    #[error("{side} could not create its QUIC connection: {source:#}")]
    Create { side: Side, source: anyhow::Error },
    #[error("{side} failed in round {round}: {source:#}")]
    Step {
        side: Side,
        round: usize,
        source: anyhow::Error,
    },
    #[error("{side} sent a datagram QUIC v1 does not allow: {reason}")]
    Datagram { side: Side, reason: String },
    #[error("the QUIC handshake did not go quiet after {MAX_ROUNDS} rounds (client done: {client_done}, server done: {server_done})")]
    Stalled {
        client_done: bool,
        server_done: bool,
    },
    #[error("the stream exchange did not finish within {limit:?} (client done: {client_done}, server done: {server_done})")]
    ExchangeStalled {
        limit: Duration,
        client_done: bool,
        server_done: bool,
    },
    #[error("nothing was in flight and no timer was set, but the stream exchange was not done (client done: {client_done}, server done: {server_done})")]
    ExchangeStuck {
        client_done: bool,
        server_done: bool,
    },
    #[error(transparent)]
    Check(#[from] CheckError),
    #[error("{side} agreed on ALPN {got}, but {ALPN:?} was offered alone")]
    Alpn { side: Side, got: String },
}

pub type QuicEndpoints = (Box<dyn QuicEndpoint>, Box<dyn QuicEndpoint>);

/// Creates both connections and steps them in turns, each side's calls made through
/// `meter`, until the handshake is done and no datagram is in flight; then checks each
/// side's view of what was negotiated against `params` and the ALPN against [`ALPN`].
pub fn handshake_metered(
    meter: &mut impl Meter,
    client: &dyn QuicEndpointFactory,
    server: &dyn QuicEndpointFactory,
    params: &ConnParams,
    buffers: &mut [Datagrams; 2],
) -> Result<(QuicEndpoints, QuicWire), QuicError> {
    handshake_observed(meter, client, server, params, buffers, |_, _, _| {})
}

/// For a resumption scenario: one full handshake, unmeasured, that leaves the client a
/// ticket to resume with (each resumed handshake leaves the next one its own). Nothing to do
/// for full-handshake scenarios.
pub fn prime(
    client: &dyn QuicEndpointFactory,
    server: &dyn QuicEndpointFactory,
    params: &ConnParams,
    buffers: &mut [Datagrams; 2],
) -> Result<(), QuicError> {
    if params.resumption.is_resumed() {
        let full = ConnParams {
            resumption: Resumption::Full,
            ..*params
        };
        handshake_metered(&mut Clock::default(), client, server, &full, buffers)?;
    }
    Ok(())
}

/// [`handshake_metered`], telling `observe` after each side's step what it sent and whether
/// the client was done then. The meter is called once per connection's creation (client,
/// then server), then once per step, in the same order.
pub fn handshake_observed(
    meter: &mut impl Meter,
    client: &dyn QuicEndpointFactory,
    server: &dyn QuicEndpointFactory,
    params: &ConnParams,
    buffers: &mut [Datagrams; 2],
    mut observe: impl FnMut(Side, &Datagrams, bool),
) -> Result<(QuicEndpoints, QuicWire), QuicError> {
    let created =
        |side, r: anyhow::Result<_>| r.map_err(|source| QuicError::Create { side, source });
    let mut c = created(Side::Client, meter.on(Side::Client, || client.endpoint()))?;
    let mut s = created(Side::Server, meter.on(Side::Server, || server.endpoint()))?;
    let mut wire = QuicWire::default();
    let [to_server, to_client] = buffers;
    to_server.clear();
    to_client.clear();
    for round in 1..=MAX_ROUNDS {
        step(meter, Side::Client, c.as_mut(), to_client, to_server, round)?;
        if round == 1 {
            wire.client_first_datagram = to_server.iter().next().map_or(0, <[u8]>::len);
        }
        if c.is_handshake_complete() && wire.client_ready_rtts == 0 {
            // Done in round r: it has waited on r - 1 answers.
            wire.client_ready_rtts = round as u32 - 1;
        }
        tally(&mut wire, Side::Client, to_server)?;
        observe(Side::Client, to_server, c.is_handshake_complete());
        step(meter, Side::Server, s.as_mut(), to_server, to_client, round)?;
        tally(&mut wire, Side::Server, to_client)?;
        observe(Side::Server, to_client, c.is_handshake_complete());
        let sent = to_client.total_bytes() as u64;
        if wire.server_first_flight == 0 {
            wire.server_first_flight = sent;
        } else if !c.is_handshake_complete() {
            wire.server_held_bytes += sent;
        }
        if c.is_handshake_complete()
            && s.is_handshake_complete()
            && to_server.is_empty()
            && to_client.is_empty()
        {
            negotiated::check(params, &c.negotiated(), &s.negotiated())?;
            for (side, ep) in [(Side::Client, &c), (Side::Server, &s)] {
                let got = ep.alpn();
                if got.as_deref() != Some(ALPN.as_bytes()) {
                    let got = got.map_or("none".into(), |p| {
                        format!("{:?}", String::from_utf8_lossy(&p))
                    });
                    return Err(QuicError::Alpn { side, got });
                }
            }
            return Ok(((c, s), wire));
        }
    }
    Err(QuicError::Stalled {
        client_done: c.is_handshake_complete(),
        server_done: s.is_handshake_complete(),
    })
}

/// The longest a timer-driven pause (pacing, a delayed acknowledgement) is slept in one go
/// while an exchange waits on it.
const MAX_NAP: Duration = Duration::from_millis(1);

/// Plays `parts` (the client's, the server's) on an established connection's stream in
/// rounds of (client step, server step), each side's part played between the datagrams it
/// receives and those it sends, its calls made through `meter`, until both parts are done.
/// A round that leaves nothing in flight waits on the sides' timers outside the meter; with
/// no timer set the exchange is stuck, and past `limit` it is stalled.
///
/// Datagrams still in flight when the parts are done stay in `buffers` (those to the
/// client: a round ends with the server's step), so a next exchange on the same connection
/// delivers them first. Returns the datagrams each side sent, indexed by `Side::index`.
pub fn exchange_metered(
    meter: &mut impl Meter,
    endpoints: &mut QuicEndpoints,
    buffers: &mut [Datagrams; 2],
    parts: [&mut dyn StreamPart; 2],
    limit: Duration,
) -> Result<[u64; 2], QuicError> {
    let start = Instant::now();
    let (c, s) = endpoints;
    let [to_server, to_client] = buffers;
    let [client_part, server_part] = parts;
    let mut sent = [0u64; 2];
    for round in 1.. {
        let client_done = step_playing(
            meter,
            Side::Client,
            c.as_mut(),
            to_client,
            to_server,
            round,
            |ep| client_part.turn(ep),
        )?;
        sent[0] += to_server.len() as u64;
        let server_done = step_playing(
            meter,
            Side::Server,
            s.as_mut(),
            to_server,
            to_client,
            round,
            |ep| server_part.turn(ep),
        )?;
        sent[1] += to_client.len() as u64;
        if client_done && server_done {
            return Ok(sent);
        }
        if start.elapsed() > limit {
            return Err(QuicError::ExchangeStalled {
                limit,
                client_done,
                server_done,
            });
        }
        if to_server.is_empty() && to_client.is_empty() {
            let wait = [c.timeout(), s.timeout()].into_iter().flatten().min();
            match wait {
                Some(w) => std::thread::sleep(w.min(MAX_NAP)),
                None => {
                    return Err(QuicError::ExchangeStuck {
                        client_done,
                        server_done,
                    })
                }
            }
        }
    }
    unreachable!("the rounds are endless")
}

/// One side's turn: every datagram that arrived for it, then whatever it sends.
fn step(
    meter: &mut impl Meter,
    side: Side,
    ep: &mut dyn QuicEndpoint,
    inbox: &mut Datagrams,
    outbox: &mut Datagrams,
    round: usize,
) -> Result<(), QuicError> {
    step_playing(meter, side, ep, inbox, outbox, round, |_| Ok(true)).map(drop)
}

/// [`step`], with `play` run between what the side receives and what it sends; what `play`
/// said (whether the side's part is done).
fn step_playing(
    meter: &mut impl Meter,
    side: Side,
    ep: &mut dyn QuicEndpoint,
    inbox: &mut Datagrams,
    outbox: &mut Datagrams,
    round: usize,
    play: impl FnOnce(&mut dyn QuicEndpoint) -> anyhow::Result<bool>,
) -> Result<bool, QuicError> {
    outbox.clear();
    let done = meter
        .on(side, || {
            for d in inbox.iter() {
                ep.receive(d)?;
            }
            let done = play(ep)?;
            ep.transmit(outbox)?;
            Ok(done)
        })
        .map_err(|source| QuicError::Step {
            side,
            round,
            source,
        })?;
    inbox.clear();
    Ok(done)
}

/// Counts what `side` sent and checks each datagram's packets.
fn tally(wire: &mut QuicWire, side: Side, sent: &Datagrams) -> Result<(), QuicError> {
    for d in sent.iter() {
        long_header_versions(d)
            .and_then(|versions| match versions.iter().find(|&&v| v != QUIC_V1) {
                Some(v) => Err(format!("a long-header packet of version {v:#010x}")),
                None => Ok(()),
            })
            .map_err(|reason| QuicError::Datagram { side, reason })?;
        wire.datagrams[side.index()] += 1;
        wire.bytes[side.index()] += d.len() as u64;
    }
    Ok(())
}

/// The versions of the long-header packets a datagram coalesces (RFC 9000 §12.2, §17.2),
/// read from the parts header protection leaves in the clear; a short-header packet ends the
/// datagram. `Err` when a header runs past the datagram's end.
pub fn long_header_versions(datagram: &[u8]) -> Result<Vec<u32>, String> {
    let mut versions = Vec::new();
    let mut rest = datagram;
    while let Some(&first) = rest.first() {
        if first & 0x80 == 0 {
            break;
        }
        let mut r = Reader(rest);
        r.take(1)?;
        let version = u32::from_be_bytes(r.take(4)?.try_into().expect("four bytes"));
        versions.push(version);
        if version == 0 {
            // Version negotiation: the rest of the datagram is the list of versions.
            break;
        }
        for _cid in 0..2 {
            let len = r.take(1)?[0] as usize;
            r.take(len)?;
        }
        let packet_type = (first >> 4) & 0x03;
        match packet_type {
            // Retry: a token and the integrity tag fill the datagram.
            3 => break,
            // Initial: a token before the length.
            0 => {
                let token = r.varint()?;
                r.take(token)?;
            }
            _ => {}
        }
        let len = r.varint()?;
        r.take(len)?;
        rest = r.0;
    }
    Ok(versions)
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.0.len() {
            return Err(format!(
                "a packet header runs {} bytes past the datagram's end",
                n - self.0.len()
            ));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    /// A variable-length integer (RFC 9000 §16).
    fn varint(&mut self) -> Result<usize, String> {
        let first = self.take(1)?[0];
        let extra = (1usize << (first >> 6)) - 1;
        let mut v = u64::from(first & 0x3f);
        for &b in self.take(extra)? {
            v = (v << 8) | u64::from(b);
        }
        usize::try_from(v).map_err(|_| "a length beyond this machine's address space".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long-header packet of `version` and type `kind` with a payload of `len` bytes.
    fn packet(kind: u8, version: u32, len: usize) -> Vec<u8> {
        let mut p = vec![0xc0 | (kind << 4)];
        p.extend_from_slice(&version.to_be_bytes());
        p.extend_from_slice(&[4, 1, 2, 3, 4, 0]);
        if kind == 0 {
            p.push(0); // no token
        }
        p.extend_from_slice(&[0x40 | (len >> 8) as u8, len as u8]);
        p.extend(std::iter::repeat_n(0xaa, len));
        p
    }

    #[test]
    fn coalesced_packets_each_show_their_version() {
        let mut d = packet(0, 1, 300);
        d.extend(packet(2, 1, 40));
        d.extend([0x40, 1, 2, 3]); // a short-header packet ends the datagram
        assert_eq!(long_header_versions(&d).unwrap(), vec![1, 1]);
        let mut other = packet(0, 1, 10);
        other.extend(packet(2, 0x6b33_43cf, 10));
        assert_eq!(long_header_versions(&other).unwrap(), vec![1, 0x6b33_43cf]);
    }

    #[test]
    fn a_truncated_header_is_named() {
        let d = packet(0, 1, 300);
        let err = long_header_versions(&d[..200]).unwrap_err();
        assert!(err.contains("past the datagram's end"), "{err}");
        assert!(long_header_versions(&[0xc0, 0, 0]).is_err());
    }

    #[test]
    fn datagrams_keep_their_boundaries() {
        let mut d = Datagrams::default();
        d.push(b"abc");
        d.push_segments(b"0123456789", Some(4));
        let all: Vec<&[u8]> = d.iter().collect();
        assert_eq!(all, vec![&b"abc"[..], b"0123", b"4567", b"89"]);
        assert_eq!((d.len(), d.total_bytes()), (4, 13));
        d.clear();
        assert!(d.is_empty() && d.iter().next().is_none());
    }
}
