//! QUIC memory (`--measure quic-memory`): the heap each side keeps per QUIC connection with
//! the scenario's many connections alive in memory, after the handshake and after 1 KiB each
//! way on the connection's stream, beside the same library's TCP connections as many (after
//! the handshake), in turns within a sample. A side is charged with the net heap its own calls
//! left allocated, as `--measure time` charges a TCP memory scenario's
//! (`workload::memory`); the datagrams' buffers are the harness's, grown before counting, and
//! so is what an adapter makes to stand in for a socket (`tlsmatrix_harness::uncounted`).

use std::time::Duration;

use crate::heap::{self, HeapMeter};
use crate::quic_bulk::one_way;
use crate::sample::Sample;
use crate::workload::{ensure_heap_counted, memory_sample, MEMORY_IO_BYTES};
use tlsmatrix_harness::endpoint::EndpointFactory;
use tlsmatrix_harness::pair::{self, Clock};
use tlsmatrix_harness::quic::{self, Datagrams, QuicEndpointFactory, QuicEndpoints};
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::scenario::ConnParams;
use tlsmatrix_model::side::Side;

/// How long 1 KiB one way on a live connection may take before it is declared stalled.
const EXCHANGE_LIMIT: Duration = Duration::from_secs(10);

/// One sample per run: `sessions` QUIC connections, then as many TCP connections, of the
/// same library.
pub fn quic_memory_against_tcp(
    tcp: (&dyn EndpointFactory, &dyn EndpointFactory),
    quic: (&dyn QuicEndpointFactory, &dyn QuicEndpointFactory),
    params: &ConnParams,
    sessions: usize,
    runs: usize,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    ensure_heap_counted()?;
    // An adapter's stand-in for a socket (OpenSSL's datagram pair) is made outside the count.
    tlsmatrix_harness::uncounted::register(heap::swap_counting);
    let mut buffers: [Datagrams; 2] = Default::default();
    let payload = vec![0x5au8; MEMORY_IO_BYTES];
    let mut sink = vec![0u8; MEMORY_IO_BYTES];
    // Lazy initialisation is the library's, not a connection's; one connection's exchange
    // also grows the datagram buffers to what the counted ones need.
    pair::handshake(tcp.0, tcp.1, params)?;
    let mut warm =
        quic::handshake_metered(&mut Clock::default(), quic.0, quic.1, params, &mut buffers)?.0;
    one_kib_each_way(
        &mut Clock::default(),
        &mut warm,
        &mut buffers,
        &payload,
        &mut sink,
    )?;
    drop(warm);
    let per = |bytes: i64| bytes as f64 / sessions as f64;
    for _ in 0..runs {
        let (handshaken, after_io) =
            quic_sample(quic, params, sessions, &mut buffers, &payload, &mut sink)?;
        let over_tcp = memory_sample(tcp.0, tcp.1, params, sessions)?.handshaken;
        on_sample(vec![
            (Metric::ClientQuicHeapBytes, per(handshaken.client_bytes)),
            (Metric::ServerQuicHeapBytes, per(handshaken.server_bytes)),
            (
                Metric::ClientQuicHeapBytesAfterIo,
                per(after_io.client_bytes),
            ),
            (
                Metric::ServerQuicHeapBytesAfterIo,
                per(after_io.server_bytes),
            ),
            (Metric::ClientTcpHeapBytes, per(over_tcp.client_bytes)),
            (Metric::ServerTcpHeapBytes, per(over_tcp.server_bytes)),
        ]);
    }
    Ok(())
}

/// `sessions` QUIC connections handshaken one after another and all kept alive, then 1 KiB
/// each way on each: what each side holds after the handshakes, and after the data besides.
fn quic_sample(
    quic: (&dyn QuicEndpointFactory, &dyn QuicEndpointFactory),
    params: &ConnParams,
    sessions: usize,
    buffers: &mut [Datagrams; 2],
    payload: &[u8],
    sink: &mut [u8],
) -> anyhow::Result<(HeapMeter, HeapMeter)> {
    let mut alive: Vec<QuicEndpoints> = Vec::with_capacity(sessions);
    let mut meter = HeapMeter::default();
    heap::set_counting(true);
    let counted = (|| -> anyhow::Result<HeapMeter> {
        for _ in 0..sessions {
            alive.push(quic::handshake_metered(&mut meter, quic.0, quic.1, params, buffers)?.0);
        }
        let handshaken = meter;
        for endpoints in &mut alive {
            one_kib_each_way(&mut meter, endpoints, buffers, payload, sink)?;
        }
        Ok(handshaken)
    })();
    heap::set_counting(false);
    Ok((counted?, meter))
}

/// 1 KiB client to server on the connection's stream, then 1 KiB back.
fn one_kib_each_way(
    meter: &mut impl pair::Meter,
    endpoints: &mut QuicEndpoints,
    buffers: &mut [Datagrams; 2],
    payload: &[u8],
    sink: &mut [u8],
) -> anyhow::Result<()> {
    for from in [Side::Client, Side::Server] {
        let total = MEMORY_IO_BYTES as u64;
        one_way(
            meter,
            endpoints,
            buffers,
            from,
            (payload, &mut *sink),
            total,
            EXCHANGE_LIMIT,
        )?;
    }
    Ok(())
}
