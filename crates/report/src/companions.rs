//! The runs a report sets beside its main run, as `write` finds them in the database and the
//! results folder: the newest run of each companion measure, the areas measured apart, the Go
//! transport's benchmarks, interop, conformance, the outside scan and the step times.

use std::collections::BTreeMap;

use tlsmatrix_history::interop_file::CellLine;
use tlsmatrix_history::proxy_check::ProxyCheck;
use tlsmatrix_history::RunData;
use tlsmatrix_model::measure::Measure;

/// Runs reported beside the main one: the newest run of each measure the measure table marks
/// as a companion, the areas measured apart, the Go transport's benchmarks, interop and the rest.
#[derive(Default)]
pub struct Companions {
    /// The newest run of each companion measure (`MeasureRow::companion`) other than the
    /// main run.
    pub measured: BTreeMap<Measure, RunData>,
    /// The newest run of each measure that took a system library's rebuild with symbols
    /// (`impl+symbols`), which names what the system's stripped build leaves unnamed.
    pub symbols: BTreeMap<Measure, RunData>,
    /// The newest runs of the areas measured apart (`memory-*`, `throughput-*`); each joins
    /// the report unless the main run covers its area already.
    pub areas: Vec<RunData>,
    pub libp2p: Option<RunData>,
    /// The newest `tlsmatrix interop` run.
    pub interop: Option<Vec<CellLine>>,
    /// What each client offered on its defaults, as the newest full interop run read it.
    pub offers: Option<tlsmatrix_history::offers::Offers>,
    /// The newest delay-proxy check (`tlsmatrix wire --check`).
    pub proxy_check: Option<ProxyCheck>,
    /// The newest QUIC check through the UDP delay proxy (`tlsmatrix wire --check --quic`).
    pub quic_proxy_check: Option<ProxyCheck>,
    pub allocators: Option<RunData>,
    /// The newest post-quantum twin run (`--pairs twins`): each post-quantum handshake paired
    /// with its classical twin on the same stack.
    pub twins: Option<RunData>,
    /// The newest run of each named plan (`tlsmatrix run --plan`): published figures beside
    /// ours.
    pub published: Vec<RunData>,
    /// The newest conformance run: its id and every test's row.
    pub conformance: Option<(String, Vec<tlsmatrix_history::conformance::ConformanceRow>)>,
    /// The newest outside scan (`tlsmatrix scan`): testssl.sh against the defaults peers.
    pub outside_scan: Option<tlsmatrix_history::outside_scan::OutsideScan>,
    /// How long each step of the `make report` that made this report took.
    pub timings: Option<tlsmatrix_history::timings::Timings>,
}

impl Companions {
    /// The newest run of a companion measure, if the database has one.
    pub fn of(&self, measure: Measure) -> Option<&RunData> {
        self.measured.get(&measure)
    }

    /// The newest run of a measure with a build with symbols, if the database has one.
    pub fn with_symbols(&self, measure: Measure) -> Option<&RunData> {
        self.symbols.get(&measure)
    }
}
