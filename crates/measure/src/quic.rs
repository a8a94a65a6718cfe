//! What QUIC adds (`--measure quic`): a library's QUIC handshake (RFC 9001) sampled in turns
//! with the same library's TLS-over-TCP handshake on the same scenario, so each sample's two
//! figures are taken milliseconds apart in one process and their ratio is paired. Each QUIC
//! sample also carries what its datagrams showed (`tlsmatrix_harness::quic::QuicWire`).

use std::time::Duration;

use crate::quic_flights::{self, modelled_ttfb_ms, MODEL_RTTS_MS};
use crate::sample::{in_turns, value_of, Sample, Sampler};
use crate::workload::{handshake_batch, Budget, HandshakeSampler, REWARM_HANDSHAKES};
use tlsmatrix_harness::endpoint::EndpointFactory;
use tlsmatrix_harness::pair::Clock;
use tlsmatrix_harness::quic::{self, Datagrams, QuicEndpointFactory, QuicError, QuicWire};
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::scenario::ConnParams;
use tlsmatrix_model::side::Side;

/// QUIC handshakes in batches sized to take about a sample's target.
pub struct QuicHandshakeSampler<'a> {
    client: &'a dyn QuicEndpointFactory,
    server: &'a dyn QuicEndpointFactory,
    params: ConnParams,
    batch: u64,
    buffers: [Datagrams; 2],
    /// The same library over TCP, whose modelled time to first byte each sample carries
    /// beside QUIC's.
    tcp_twin: Option<(&'a dyn EndpointFactory, &'a dyn EndpointFactory)>,
}

impl<'a> QuicHandshakeSampler<'a> {
    /// Warms up for `warmup` and sizes the batch as `HandshakeSampler` does
    /// ([`handshake_batch`]).
    pub fn warm(
        client: &'a dyn QuicEndpointFactory,
        server: &'a dyn QuicEndpointFactory,
        params: &ConnParams,
        warmup: Duration,
        sample_target: Duration,
    ) -> Result<Self, QuicError> {
        let mut s = QuicHandshakeSampler {
            client,
            server,
            params: *params,
            batch: 1,
            buffers: Default::default(),
            tcp_twin: None,
        };
        quic::prime(client, server, params, &mut s.buffers)?;
        s.batch = handshake_batch(warmup, sample_target, params.handshake_period(), || {
            s.handshake().map(drop)
        })?;
        Ok(s)
    }

    /// One checked handshake: each side's time and what the datagrams showed.
    pub fn handshake(&mut self) -> Result<(Clock, QuicWire), QuicError> {
        let mut clock = Clock::default();
        let (_endpoints, wire) = quic::handshake_metered(
            &mut clock,
            self.client,
            self.server,
            &self.params,
            &mut self.buffers,
        )?;
        Ok((clock, wire))
    }
}

impl Sampler for QuicHandshakeSampler<'_> {
    /// Each side's mean time per QUIC handshake, and the last handshake's datagrams (the
    /// same every handshake but for a signature's length).
    fn sample(&mut self) -> anyhow::Result<Sample> {
        for _ in 0..REWARM_HANDSHAKES {
            self.handshake()?;
        }
        let (mut client_ns, mut server_ns) = (0u64, 0u64);
        let mut wire = QuicWire::default();
        for _ in 0..self.batch {
            let (clock, w) = self.handshake()?;
            client_ns += clock.client_ns;
            server_ns += clock.server_ns;
            wire = w;
        }
        let n = self.batch as f64;
        let mut sample = vec![
            (Metric::ClientQuicNs, client_ns as f64 / n),
            (Metric::ServerQuicNs, server_ns as f64 / n),
        ];
        sample.extend(wire_figures(&wire));
        if let Some((c, s)) = self.tcp_twin {
            sample.extend(self.modelled_first_byte(c, s)?);
        }
        Ok(sample)
    }
}

impl QuicHandshakeSampler<'_> {
    /// The network model's time to first byte at each of [`MODEL_RTTS_MS`], over QUIC and
    /// over TCP, each from one traced connection.
    fn modelled_first_byte(
        &self,
        tcp_client: &dyn EndpointFactory,
        tcp_server: &dyn EndpointFactory,
    ) -> anyhow::Result<Sample> {
        let quic = quic_flights::trace(self.client, self.server, &self.params)?;
        let tcp = crate::flights::trace(tcp_client, tcp_server, &self.params)?;
        let metrics = [
            (Metric::QuicModelTtfb20Ms, Metric::TcpModelTtfb20Ms),
            (Metric::QuicModelTtfb100Ms, Metric::TcpModelTtfb100Ms),
        ];
        Ok(MODEL_RTTS_MS
            .iter()
            .zip(metrics)
            .flat_map(|(&rtt, (over_quic, over_tcp))| {
                [
                    (over_quic, modelled_ttfb_ms(&quic, rtt, false)),
                    (over_tcp, modelled_ttfb_ms(&tcp, rtt, true)),
                ]
            })
            .collect())
    }
}

/// A handshake's datagrams as figures.
pub fn wire_figures(w: &QuicWire) -> Sample {
    let c = Side::Client.index();
    let s = Side::Server.index();
    vec![
        (Metric::ClientQuicDatagrams, f64::from(w.datagrams[c])),
        (Metric::ServerQuicDatagrams, f64::from(w.datagrams[s])),
        (Metric::ClientQuicBytes, w.bytes[c] as f64),
        (Metric::ServerQuicBytes, w.bytes[s] as f64),
        (
            Metric::ClientQuicFirstDatagram,
            w.client_first_datagram as f64,
        ),
        (Metric::ClientQuicReadyRtts, f64::from(w.client_ready_rtts)),
        (Metric::ServerQuicHeldBytes, w.server_held_bytes as f64),
        (Metric::ServerQuicFirstFlightRatio, w.first_flight_ratio()),
    ]
}

/// QUIC samples and TCP samples of the same library and scenario in turns (the order
/// alternating); each carries both, and QUIC's time over TCP's per side.
pub fn quic_against_tcp(
    tcp: (&dyn EndpointFactory, &dyn EndpointFactory),
    quic: (&dyn QuicEndpointFactory, &dyn QuicEndpointFactory),
    params: &ConnParams,
    budget: &Budget,
    on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    let mut over_tcp =
        HandshakeSampler::warm(tcp.0, tcp.1, params, budget.warmup, budget.sample_target)?;
    let mut over_quic =
        QuicHandshakeSampler::warm(quic.0, quic.1, params, budget.warmup, budget.sample_target)?;
    over_quic.tcp_twin = Some(tcp);
    let ratios = |tcp: &Sample, quic: &Sample| -> Sample {
        [Side::Client, Side::Server]
            .into_iter()
            .map(|side| {
                let took = value_of(tcp, Metric::handshake_ns_of(side));
                (
                    Metric::quic_over_tcp_of(side),
                    value_of(quic, Metric::quic_ns_of(side)) / took.max(1e-9),
                )
            })
            .collect()
    };
    in_turns(
        &mut over_tcp,
        &mut over_quic,
        budget.runs,
        ratios,
        on_sample,
    )?;
    Ok(())
}
