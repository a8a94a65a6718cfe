//! What a connection costs beside its handshake: each library's contexts and connection
//! objects made and freed (`tlsmatrix run --measure setup`), and a connection ended after its
//! handshake (`tlsmatrix run --measure teardown`), per side, a table per scenario.

use tlsmatrix_history::RunData;
use tlsmatrix_model::measure::Measure;
use tlsmatrix_model::record::Metric;

use crate::companions::Companions;
use crate::doc::{Block, Cell, Table};
use crate::self_pairs::{micros, record, refusals};

/// One kind of cost: its measure, its figures with their column headings, what it is, and
/// what a table of it is about.
struct Costs {
    measure: Measure,
    columns: &'static [(Metric, &'static str)],
    method: &'static str,
    about: &'static str,
}

const COSTS: [Costs; 2] = [
    Costs {
        measure: Measure::Setup,
        columns: &[
            (Metric::ClientContextNs, "client context"),
            (Metric::ServerContextNs, "server context (chain and key loaded)"),
            (Metric::ClientConnectionNs, "client connection"),
            (Metric::ServerConnectionNs, "server connection"),
        ],
        method: "What an application pays per connection beside the handshake, each library with itself: a context made from the certificate chain and key in memory and freed (the client's holds its trusted CA), and a connection object made from a context and freed without a byte exchanged (perftools' sslnew is OpenSSL's own measure of the second). A library that starts its handshake when the object is made (rustls's client builds its ClientHello and key shares then) pays that here. Each figure is the median of the run's samples, each a batch of the same operation.",
        about: "what a connection costs beside its handshake",
    },
    Costs {
        measure: Measure::Teardown,
        columns: &[
            (Metric::ClientTeardownNs, "client teardown"),
            (Metric::ServerTeardownNs, "server teardown"),
        ],
        method: "What ending a connection costs each side after a full handshake, each library with itself: the client sends close_notify, the server reads it and sends its own, the client reads that, and each side frees its connection object, each side's calls timed on its own clock. Each figure is the median of the run's samples, each a batch of connections.",
        about: "what ending a connection costs",
    },
];

/// The tables of the newest setup and teardown runs, each with its method first and the
/// libraries that could not be measured last.
pub fn blocks(extra: &Companions) -> Vec<Block> {
    COSTS
        .iter()
        .filter_map(|c| extra.of(c.measure).map(|run| cost_blocks(run, c)))
        .flatten()
        .collect()
}

fn cost_blocks(run: &RunData, costs: &Costs) -> Vec<Block> {
    let metrics: Vec<Metric> = costs.columns.iter().map(|(m, _)| *m).collect();
    let mut scenarios: Vec<&str> = Vec::new();
    for r in run.records.iter().filter(|r| metrics.contains(&r.metric)) {
        if !scenarios.contains(&r.scenario.as_str()) {
            scenarios.push(&r.scenario);
        }
    }
    if scenarios.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![Block::Para(costs.method.into())];
    for scenario in scenarios {
        let mut rows = Vec::new();
        for imp in run.impls() {
            let cells: Vec<Cell> = metrics
                .iter()
                .map(|&m| record(run, scenario, &imp, m).map_or_else(|| Cell::plain("-"), micros))
                .collect();
            if cells.iter().all(|c| c.text == "-") {
                continue;
            }
            let mut row = vec![Cell::plain(imp)];
            row.extend(cells);
            rows.push(row);
        }
        blocks.push(Block::Table(Table {
            caption: format!(
                "{scenario}: {}, µs (run {}; hover: the interval)",
                costs.about, run.run_id
            ),
            header: std::iter::once("impl")
                .chain(costs.columns.iter().map(|(_, h)| *h))
                .map(String::from)
                .collect(),
            rows,
            label_cols: 1,
        }));
    }
    blocks.extend(refusals(run, "Not measured"));
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::record::{Env, Record};

    #[test]
    fn a_row_per_library_in_microseconds_and_the_refusals_named() {
        let rec = |imp: &str, m: Metric, ns: f64| {
            Record::from_samples(
                "setup",
                "handshake-tls13-ecdsa-p256-x25519-full",
                (imp, "v"),
                (imp, "v"),
                m,
                vec![ns, ns * 1.01, ns * 0.99],
                Env::default(),
            )
            .unwrap()
        };
        let mut records: Vec<Record> = COSTS[0]
            .columns
            .iter()
            .map(|&(m, _)| rec("a", m, 12_345.0))
            .collect();
        records.push(rec("b", Metric::ServerContextNs, 150_000.0));
        let run = RunData {
            run_id: "setup".into(),
            env: Env::default(),
            status: "complete".into(),
            records,
            cells: vec![tlsmatrix_model::record::CellRecord {
                schema: tlsmatrix_model::record::CELL_SCHEMA.into(),
                run_id: "setup".into(),
                scenario: "handshake-tls13-ecdsa-p256-x25519-full".into(),
                client: "go".into(),
                server: "go".into(),
                outcome: tlsmatrix_model::record::CellStatus::Unsupported,
                reason: "no contexts".into(),
            }],
        };
        let b = cost_blocks(&run, &COSTS[0]);
        let Block::Table(t) = &b[1] else {
            panic!("a table after the method")
        };
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0][1].text, "12.3");
        assert_eq!(t.rows[1][2].text, "150");
        assert_eq!(t.rows[1][1].text, "-");
        let Block::Para(p) = &b[2] else {
            panic!("the refusals last")
        };
        assert_eq!(p, "Not measured: go: no contexts.");
    }
}
