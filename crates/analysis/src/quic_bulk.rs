//! A QUIC bulk run (`tlsmatrix run --measure quic-bulk`) as data: per scenario and impl, the
//! rates each side reached sending and receiving over its QUIC stack, the same library's
//! TLS bulk over TCP taken in turns, and QUIC's CPU per byte over TCP's.

use tlsmatrix_history::RunData;
use tlsmatrix_model::record::{Metric, Record};

use crate::self_pairs::record;

/// The QUIC rates a cell shows, 16 MiB first: per size, the client sending, the server
/// receiving, the server sending, the client receiving.
pub const QUIC_RATES: [Metric; 8] = [
    Metric::ClientQuicSend16mMbPerS,
    Metric::ServerQuicRecv16mMbPerS,
    Metric::ServerQuicSend16mMbPerS,
    Metric::ClientQuicRecv16mMbPerS,
    Metric::ClientQuicSend1mMbPerS,
    Metric::ServerQuicRecv1mMbPerS,
    Metric::ServerQuicSend1mMbPerS,
    Metric::ClientQuicRecv1mMbPerS,
];

/// The TCP twin's rates: the client sending, the server receiving.
pub const TCP_RATES: [Metric; 2] = [
    Metric::ClientTcpSend16mMbPerS,
    Metric::ServerTcpRecv16mMbPerS,
];

/// QUIC's CPU per byte over TCP's: the client sending, the server receiving.
pub const COSTS: [Metric; 2] = [
    Metric::ClientQuicSendCostOverTcp,
    Metric::ServerQuicRecvCostOverTcp,
];

/// One impl's QUIC bulk figures on one scenario.
#[derive(Debug, Clone)]
pub struct BulkCell<'a> {
    pub scenario: String,
    pub imp: String,
    /// In [`QUIC_RATES`]' order.
    pub quic: [&'a Record; 8],
    /// In [`TCP_RATES`]' order.
    pub tcp: [&'a Record; 2],
    /// In [`COSTS`]' order.
    pub costs: [&'a Record; 2],
    /// The stream bytes a datagram carried, the client sending 16 MiB.
    pub datagram_bytes: Option<&'a Record>,
}

/// Every impl's complete QUIC bulk figures per scenario, in the order the run met them; a
/// cell missing any figure is left out (its reason is among the run's cells).
pub fn cells(run: &RunData) -> Vec<BulkCell<'_>> {
    let mut out = Vec::new();
    for scenario in run.scenarios() {
        for imp in run.impls() {
            let get = |m| record(run, scenario, &imp, m);
            let all = |ms: &[Metric]| ms.iter().map(|&m| get(m)).collect::<Option<Vec<_>>>();
            let (Some(quic), Some(tcp), Some(costs)) =
                (all(&QUIC_RATES), all(&TCP_RATES), all(&COSTS))
            else {
                continue;
            };
            let datagram_bytes = get(Metric::ClientQuicSend16mDatagramBytes);
            out.push(BulkCell {
                scenario: scenario.to_string(),
                imp,
                quic: quic.try_into().expect("eight"),
                tcp: tcp.try_into().expect("two"),
                costs: costs.try_into().expect("two"),
                datagram_bytes,
            });
        }
    }
    out
}

/// A median and the impl that gave it.
pub type Extreme<'a> = (f64, &'a str);

/// The lowest and highest median of `cost` over the cells, with the impls that gave them.
pub fn cost_range<'a>(
    cells: &'a [BulkCell<'_>],
    cost: usize,
) -> Option<(Extreme<'a>, Extreme<'a>)> {
    let by = |c: &'a BulkCell<'_>| (c.costs[cost].median, c.imp.as_str());
    let lo = cells.iter().map(by).min_by(|a, b| a.0.total_cmp(&b.0))?;
    let hi = cells.iter().map(by).max_by(|a, b| a.0.total_cmp(&b.0))?;
    Some((lo, hi))
}
