//! QUIC instructions (`--measure quic-instructions`): each side's QUIC handshake counted by
//! callgrind beside the same library's TLS-over-TCP handshake on the same scenario, in one
//! process, both split by what the code does (`crate::split`): the instructions QUIC adds, and
//! the class they fall in (packet protection is crypto, the transport's own machinery the rest).
//!
//! A QUIC stack reads the clock, and under callgrind a handshake runs tens of times slower: an
//! acknowledgement or loss timer may expire mid-handshake and send a datagram a native
//! handshake never sends (1 handshake in 48 of quinn's on an idle machine, more on a busy
//! one). Timers only add datagrams, so the fewest each side sent in uninstrumented warm-ups
//! are the native handshake's, and a batch in which any handshake sent more is counted again.

use anyhow::{bail, Result};

use crate::callgrind::Counter;
use crate::sample::Sample;
use crate::split::Split;
use crate::workload::{counted_handshakes, per_sample_of};
use tlsmatrix_harness::endpoint::EndpointFactory;
use tlsmatrix_harness::pair::{self, Clock};
use tlsmatrix_harness::quic::{self, Datagrams, QuicEndpointFactory};
use tlsmatrix_model::class::Carrier;
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::scenario::ConnParams;
use tlsmatrix_model::side::Side;

/// Uninstrumented QUIC handshakes whose fewest datagrams per side are the native count.
const WARM_HANDSHAKES: usize = 4;
/// Batches of a side's QUIC handshakes tried before a cell fails for its timers.
const BATCH_TRIES: usize = 6;

/// One sample per run: for each side, `per_sample` TCP handshakes (raised as
/// `--measure instructions` raises it) with only that side's calls collected, then as many
/// QUIC handshakes.
pub fn quic_instructions_against_tcp(
    tcp: (&dyn EndpointFactory, &dyn EndpointFactory),
    quic: (&dyn QuicEndpointFactory, &dyn QuicEndpointFactory),
    params: &ConnParams,
    runs: usize,
    per_sample: u32,
    counter: &mut Counter,
    mut on_sample: impl FnMut(Sample),
) -> Result<()> {
    let mut buffers: [Datagrams; 2] = Default::default();
    // Lazy initialisation (CPU feature probes, provider caches) happens once, uncounted.
    pair::prime(tcp.0, tcp.1, params)?;
    quic::prime(quic.0, quic.1, params, &mut buffers)?;
    let mut native = [u32::MAX; 2];
    for _ in 0..WARM_HANDSHAKES {
        pair::handshake(tcp.0, tcp.1, params)?;
        let (_, wire) =
            quic::handshake_metered(&mut Clock::default(), quic.0, quic.1, params, &mut buffers)?;
        for (least, sent) in native.iter_mut().zip(wire.datagrams) {
            *least = (*least).min(sent);
        }
    }
    let n = per_sample_of(per_sample, params);
    for _ in 0..runs {
        let mut sample = Vec::new();
        for side in [Side::Client, Side::Server] {
            for carrier in Carrier::BOTH {
                let (total, split) = match carrier {
                    Carrier::Tcp => counted_handshakes(counter, side, tcp.0, tcp.1, params, n)?,
                    Carrier::Quic => {
                        quic_batch(counter, side, quic, params, n, native, &mut buffers)?
                    }
                };
                let (whole, parts) = Metric::carried_split_of(side, carrier);
                sample.push((whole, total as f64 / f64::from(n)));
                sample.extend(split.per_handshake(parts, n));
            }
        }
        on_sample(sample);
    }
    Ok(())
}

/// `n` QUIC handshakes with `side`'s calls collected, each sending the `native` datagrams;
/// a batch in which a timer added one is counted again.
fn quic_batch(
    counter: &mut Counter,
    side: Side,
    quic: (&dyn QuicEndpointFactory, &dyn QuicEndpointFactory),
    params: &ConnParams,
    n: u32,
    native: [u32; 2],
    buffers: &mut [Datagrams; 2],
) -> Result<(u64, Split)> {
    let mut seen = Vec::new();
    for _ in 0..BATCH_TRIES {
        counter.zero();
        let mut timer_sent = None;
        for _ in 0..n {
            let meter = &mut counter.side(side);
            let (_, wire) = quic::handshake_metered(meter, quic.0, quic.1, params, buffers)?;
            if wire.datagrams != native {
                timer_sent = Some(wire.datagrams);
            }
        }
        let counted = counter.take_split(&format!("{side} over QUIC x{n}"))?;
        match timer_sent {
            None => return Ok(counted),
            Some(d) => seen.push(d),
        }
    }
    bail!(
        "in each of {BATCH_TRIES} batches of {n} QUIC handshakes under callgrind one sent more datagrams (client, server) than the native {native:?}: {seen:?}; a timer expired on the slowed clock every time, and its datagrams would be counted"
    )
}
