//! A QUIC memory run (`tlsmatrix run --measure quic-memory`) as data: per scenario (how many
//! connections were alive) and impl, the heap each side kept per QUIC connection, after the
//! handshake and after 1 KiB each way, beside the same library's TCP connection.

use tlsmatrix_history::RunData;
use tlsmatrix_model::record::Metric;

use crate::self_pairs::record;

/// The figures a cell shows, each per connection: the client's and the server's heap over
/// QUIC after the handshake, after 1 KiB each way, and over TCP after the handshake.
pub const FIGURES: [[Metric; 2]; 3] = [
    [Metric::ClientQuicHeapBytes, Metric::ServerQuicHeapBytes],
    [
        Metric::ClientQuicHeapBytesAfterIo,
        Metric::ServerQuicHeapBytesAfterIo,
    ],
    [Metric::ClientTcpHeapBytes, Metric::ServerTcpHeapBytes],
];

/// One impl's QUIC memory figures on one scenario: medians, bytes per connection, in
/// [`FIGURES`]' order, each `[client, server]`.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryCell {
    pub scenario: String,
    pub imp: String,
    pub quic: [f64; 2],
    pub quic_after_io: [f64; 2],
    pub tcp: [f64; 2],
}

impl MemoryCell {
    /// QUIC's heap per connection after the handshake over TCP's, per side; none where TCP
    /// kept nothing.
    pub fn over_tcp(&self) -> [Option<f64>; 2] {
        [0, 1].map(|i| (self.tcp[i] > 0.0).then(|| self.quic[i] / self.tcp[i]))
    }
}

/// Every impl's complete figures per scenario, in the order the run met them; a cell
/// missing any is left out (its reason is among the run's cells).
pub fn cells(run: &RunData) -> Vec<MemoryCell> {
    let mut out = Vec::new();
    for scenario in run.scenarios() {
        for imp in run.impls() {
            let pair = |[c, s]: [Metric; 2]| -> Option<[f64; 2]> {
                Some([
                    record(run, scenario, &imp, c)?.median,
                    record(run, scenario, &imp, s)?.median,
                ])
            };
            let (Some(quic), Some(quic_after_io), Some(tcp)) =
                (pair(FIGURES[0]), pair(FIGURES[1]), pair(FIGURES[2]))
            else {
                continue;
            };
            out.push(MemoryCell {
                scenario: scenario.to_string(),
                imp,
                quic,
                quic_after_io,
                tcp,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::RecordFixture;

    fn run(records: Vec<tlsmatrix_model::record::Record>) -> RunData {
        RunData {
            run_id: "qm".into(),
            env: Default::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        }
    }

    /// Every figure of `imp` on `scenario`, the client's QUIC heap `quic` and TCP's `tcp`.
    fn figures(
        scenario: &str,
        imp: &str,
        quic: f64,
        tcp: f64,
    ) -> Vec<tlsmatrix_model::record::Record> {
        FIGURES
            .iter()
            .flatten()
            .map(|&m| {
                let v = match m {
                    Metric::ClientQuicHeapBytes => quic,
                    Metric::ClientTcpHeapBytes => tcp,
                    _ => 1000.0,
                };
                RecordFixture::new(m, 0.0)
                    .samples(vec![v; 3])
                    .scenario(scenario)
                    .pair(imp, imp)
                    .build()
            })
            .collect()
    }

    #[test]
    fn a_cell_joins_its_six_figures_and_one_missing_leaves_it_out() {
        let s = "memory-tls13-ecdsa-p256-n100";
        let mut records = figures(s, "a", 30_000.0, 10_000.0);
        records.extend(
            figures(s, "b", 1.0, 1.0)
                .into_iter()
                .filter(|r| r.metric != Metric::ServerTcpHeapBytes),
        );
        let cells = cells(&run(records));
        assert_eq!(cells.len(), 1, "{cells:?}");
        assert_eq!(cells[0].imp, "a");
        assert_eq!(cells[0].over_tcp(), [Some(3.0), Some(1.0)]);
    }
}
