//! QUIC bulk (`--measure quic-bulk`): stream data over a library's QUIC stack in memory,
//! sampled in turns with the same library's TLS bulk over TCP on the same scenario, so each
//! sample's QUIC and TCP rates are taken milliseconds apart in one process.
//!
//! A QUIC sample opens a new connection for each size (1 MiB, then 16 MiB) and sends that
//! many bytes client to server on the connection's stream, then as many back, in the
//! scenario's writes; each side's CPU time in its calls gives its rate. A new connection
//! each time keeps slow start and the first flow-control updates in the figure, as an
//! HTTP/3 download on a new connection has them. The TCP sample sends 16 MiB client to
//! server, as `--measure time` does on a bulk scenario.

use std::time::Duration;

use crate::sample::{in_turns, value_of, Sample, Sampler};
use crate::workload::{BulkSampler, BulkSize, PageOffsetBuf, APP_BUFFER_PAGE_OFFSET};
use tlsmatrix_harness::endpoint::EndpointFactory;
use tlsmatrix_harness::pair::{Clock, Meter};
use tlsmatrix_harness::quic::{self, Datagrams, QuicEndpointFactory, QuicEndpoints, QuicError};
use tlsmatrix_harness::quic_stream::{ReceiveBytes, SendBytes, StreamPart};
use tlsmatrix_model::measure::QUIC_BULK_SIZES;
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::scenario::ConnParams;
use tlsmatrix_model::side::Side;

const MIB: u64 = QUIC_BULK_SIZES[0];

/// The sizes a QUIC sample sends each way, and their figures: the client sending, the
/// server receiving, the server sending, the client receiving.
pub const SIZES: [(u64, [Metric; 4]); 2] = [
    (
        QUIC_BULK_SIZES[0],
        [
            Metric::ClientQuicSend1mMbPerS,
            Metric::ServerQuicRecv1mMbPerS,
            Metric::ServerQuicSend1mMbPerS,
            Metric::ClientQuicRecv1mMbPerS,
        ],
    ),
    (
        QUIC_BULK_SIZES[1],
        [
            Metric::ClientQuicSend16mMbPerS,
            Metric::ServerQuicRecv16mMbPerS,
            Metric::ServerQuicSend16mMbPerS,
            Metric::ClientQuicRecv16mMbPerS,
        ],
    ),
];

/// Bytes the TCP twin sends per sample: the larger QUIC size.
pub const TCP_BYTES: usize = QUIC_BULK_SIZES[1] as usize;

/// How long one size's exchange may take before it is declared stalled.
const EXCHANGE_LIMIT: Duration = Duration::from_secs(60);

/// Stream data both ways over QUIC, a new connection per size.
pub struct QuicBulkSampler<'a> {
    client: &'a dyn QuicEndpointFactory,
    server: &'a dyn QuicEndpointFactory,
    params: ConnParams,
    buffers: [Datagrams; 2],
    payload: PageOffsetBuf,
    sink: PageOffsetBuf,
}

impl<'a> QuicBulkSampler<'a> {
    /// Sends 1 MiB each way on new connections until `warmup` has passed.
    pub fn warm(
        client: &'a dyn QuicEndpointFactory,
        server: &'a dyn QuicEndpointFactory,
        params: &ConnParams,
        write_size: usize,
        warmup: Duration,
    ) -> anyhow::Result<Self> {
        let mut s = QuicBulkSampler {
            client,
            server,
            params: *params,
            buffers: Default::default(),
            payload: PageOffsetBuf::new(write_size.max(1), APP_BUFFER_PAGE_OFFSET, 0x5a),
            sink: PageOffsetBuf::new(64 * 1024, APP_BUFFER_PAGE_OFFSET, 0),
        };
        let start = std::time::Instant::now();
        while start.elapsed() < warmup {
            s.both_ways(MIB)?;
        }
        Ok(s)
    }

    /// A new connection carrying `total` bytes client to server, then as many back: each
    /// direction's CPU time per side, and the datagrams the client sent sending.
    fn both_ways(&mut self, total: u64) -> anyhow::Result<([Clock; 2], u64)> {
        let (mut endpoints, _) = quic::handshake_metered(
            &mut Clock::default(),
            self.client,
            self.server,
            &self.params,
            &mut self.buffers,
        )?;
        let mut clocks = [Clock::default(); 2];
        let mut client_datagrams = 0;
        for (from, clock) in [Side::Client, Side::Server].into_iter().zip(&mut clocks) {
            let sent = one_way(
                clock,
                &mut endpoints,
                &mut self.buffers,
                from,
                (self.payload.get(), self.sink.get_mut()),
                total,
                EXCHANGE_LIMIT,
            )?;
            if from == Side::Client {
                client_datagrams = sent[Side::Client.index()];
            }
        }
        Ok((clocks, client_datagrams))
    }
}

/// `total` bytes of `payload` from `from` to its peer on the connection's stream, read into
/// `sink`; the datagrams each side sent.
pub(crate) fn one_way(
    meter: &mut impl Meter,
    endpoints: &mut QuicEndpoints,
    buffers: &mut [Datagrams; 2],
    from: Side,
    (payload, sink): (&[u8], &mut [u8]),
    total: u64,
    limit: Duration,
) -> Result<[u64; 2], QuicError> {
    let mut send = SendBytes::new(payload, total, false);
    let mut recv = ReceiveBytes::new(sink, total, false, |_, _| Ok(()));
    let parts: [&mut dyn StreamPart; 2] = match from {
        Side::Client => [&mut send, &mut recv],
        Side::Server => [&mut recv, &mut send],
    };
    quic::exchange_metered(meter, endpoints, buffers, parts, limit)
}

impl Sampler for QuicBulkSampler<'_> {
    fn sample(&mut self) -> anyhow::Result<Sample> {
        let mut sample = Sample::new();
        for (total, [c_send, s_recv, s_send, c_recv]) in SIZES {
            let ([up, down], datagrams) = self.both_ways(total)?;
            let rate = |ns: u64| total as f64 * 1e3 / ns.max(1) as f64;
            sample.extend([
                (c_send, rate(up.client_ns)),
                (s_recv, rate(up.server_ns)),
                (s_send, rate(down.server_ns)),
                (c_recv, rate(down.client_ns)),
            ]);
            if total == QUIC_BULK_SIZES[1] {
                sample.push((
                    Metric::ClientQuicSend16mDatagramBytes,
                    total as f64 / datagrams.max(1) as f64,
                ));
            }
        }
        Ok(sample)
    }
}

/// The TCP bulk sampler's rates under the names this measure gives them.
struct TcpTwin(BulkSampler);

impl Sampler for TcpTwin {
    fn sample(&mut self) -> anyhow::Result<Sample> {
        let s = self.0.sample()?;
        Ok(vec![
            (
                Metric::ClientTcpSend16mMbPerS,
                value_of(&s, Metric::SendMbPerS),
            ),
            (
                Metric::ServerTcpRecv16mMbPerS,
                value_of(&s, Metric::RecvMbPerS),
            ),
        ])
    }
}

/// QUIC bulk samples and TCP bulk samples of the same library and scenario in turns (the
/// order alternating); each carries both, and QUIC's CPU per byte over TCP's for the client
/// sending and the server receiving 16 MiB.
pub fn quic_bulk_against_tcp(
    tcp: (&dyn EndpointFactory, &dyn EndpointFactory),
    quic: (&dyn QuicEndpointFactory, &dyn QuicEndpointFactory),
    params: &ConnParams,
    write_size: usize,
    runs: usize,
    warmup: Duration,
    on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    let mut over_tcp = TcpTwin(BulkSampler::warm(
        tcp.0,
        tcp.1,
        params,
        write_size,
        warmup,
        BulkSize::Bytes(TCP_BYTES),
    )?);
    let mut over_quic = QuicBulkSampler::warm(quic.0, quic.1, params, write_size, warmup)?;
    // Rates, so the cost ratio is TCP's rate over QUIC's.
    let costs = |tcp: &Sample, quic: &Sample| -> Sample {
        [
            (
                Metric::ClientQuicSendCostOverTcp,
                Metric::ClientTcpSend16mMbPerS,
                Metric::ClientQuicSend16mMbPerS,
            ),
            (
                Metric::ServerQuicRecvCostOverTcp,
                Metric::ServerTcpRecv16mMbPerS,
                Metric::ServerQuicRecv16mMbPerS,
            ),
        ]
        .into_iter()
        .map(|(cost, t, q)| (cost, value_of(tcp, t) / value_of(quic, q).max(1e-9)))
        .collect()
    };
    in_turns(&mut over_tcp, &mut over_quic, runs, costs, on_sample)
}
