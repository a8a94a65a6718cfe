//! A QUIC instruction-count run (`tlsmatrix run --measure quic-instructions`) as data: per
//! scenario and impl, each side's instructions per QUIC handshake beside the same library's
//! TCP handshake, both split by class, and what QUIC adds in each class.

use tlsmatrix_history::RunData;
use tlsmatrix_model::class::{Carrier, Class, SPLIT_CLASSES};
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::side::Side;

use crate::self_pairs::record;

/// One side's count of one carrier's handshake: the total and its classes, medians.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Count {
    pub total: f64,
    /// In the instruction split's order (`Class::split`).
    pub parts: [f64; SPLIT_CLASSES],
}

/// One impl's QUIC instruction counts on one scenario, each `[client, server]`.
#[derive(Debug, Clone, PartialEq)]
pub struct InstructionCell {
    pub scenario: String,
    pub imp: String,
    pub quic: [Count; 2],
    pub tcp: [Count; 2],
}

impl InstructionCell {
    /// A side's QUIC count over its TCP count.
    pub fn over_tcp(&self, side: Side) -> f64 {
        let i = side.index();
        self.quic[i].total / self.tcp[i].total.max(1.0)
    }

    /// What QUIC adds on a side: its instructions less TCP's, in all and per class (a class
    /// may be negative where QUIC does less of it).
    pub fn added(&self, side: Side) -> (f64, Vec<(Class, f64)>) {
        let (q, t) = (&self.quic[side.index()], &self.tcp[side.index()]);
        let parts = Class::split()
            .zip(q.parts.iter().zip(&t.parts))
            .map(|(class, (q, t))| (class, q - t))
            .collect();
        (q.total - t.total, parts)
    }

    /// The class that takes the most of what QUIC adds on a side, with its share of it.
    pub fn largest_addition(&self, side: Side) -> Option<(Class, f64)> {
        let (all, parts) = self.added(side);
        if all <= 0.0 {
            return None;
        }
        parts
            .into_iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(class, n)| (class, n / all))
    }
}

/// A side's count of one carrier's handshake, where the run has its total and every class.
fn count(run: &RunData, scenario: &str, imp: &str, side: Side, carrier: Carrier) -> Option<Count> {
    let (whole, metrics) = Metric::carried_split_of(side, carrier);
    let mut parts = [0.0; SPLIT_CLASSES];
    for (slot, m) in parts.iter_mut().zip(metrics) {
        *slot = record(run, scenario, imp, m)?.median;
    }
    Some(Count {
        total: record(run, scenario, imp, whole)?.median,
        parts,
    })
}

/// Every impl's complete counts per scenario, in the order the run met them; a cell missing
/// any figure is left out (its reason is among the run's cells).
pub fn cells(run: &RunData) -> Vec<InstructionCell> {
    let mut out = Vec::new();
    for scenario in run.scenarios() {
        for imp in run.impls() {
            let sides = |carrier| -> Option<[Count; 2]> {
                Some([
                    count(run, scenario, &imp, Side::Client, carrier)?,
                    count(run, scenario, &imp, Side::Server, carrier)?,
                ])
            };
            let (Some(quic), Some(tcp)) = (sides(Carrier::Quic), sides(Carrier::Tcp)) else {
                continue;
            };
            out.push(InstructionCell {
                scenario: scenario.to_string(),
                imp,
                quic,
                tcp,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::quic_instruction_records;
    use tlsmatrix_model::record::Record;

    fn run(records: Vec<Record>) -> RunData {
        RunData {
            run_id: "qi".into(),
            env: Default::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        }
    }

    #[test]
    fn a_cell_joins_both_carriers_and_names_where_quic_adds() {
        let s = "handshake-tls13-ecdsa-p256-x25519-full";
        let mut records = quic_instruction_records(s, "a", Class::Crypto, 8_000.0);
        // A cell with one class missing is left out.
        records.extend(
            quic_instruction_records(s, "b", Class::Crypto, 0.0)
                .into_iter()
                .filter(|r| r.metric != Metric::ServerTcpCopyInstructions),
        );
        let cells = cells(&run(records));
        assert_eq!(cells.len(), 1, "{cells:?}");
        let c = &cells[0];
        assert_eq!(c.imp, "a");
        let tcp_total = 1000.0 * SPLIT_CLASSES as f64;
        assert_eq!(c.over_tcp(Side::Server), (tcp_total + 8000.0) / tcp_total);
        let (all, parts) = c.added(Side::Client);
        assert_eq!(all, 8000.0);
        assert_eq!(parts[0], (Class::Crypto, 8000.0));
        assert!(parts[1..].iter().all(|p| p.1 == 0.0), "{parts:?}");
        assert_eq!(c.largest_addition(Side::Client), Some((Class::Crypto, 1.0)));
    }
}
