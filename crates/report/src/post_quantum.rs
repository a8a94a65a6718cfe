//! Post-quantum TLS in the run: which stacks completed which ML-DSA key and ML-KEM group
//! (or why not, in the library's own words, from the run's unmeasured cells), and on each
//! stack what each post-quantum choice costs over its classical twin, per side, from the
//! run's own figures only. Published byte counts are set beside them, labelled as such.

use tlsmatrix_analysis::post_quantum::{
    instruction_costs, paired_costs, stacks, support, unpaired_costs, wire_costs, Both, Cost,
    Joined, Support,
};
use tlsmatrix_history::offers::Offers;
use tlsmatrix_history::RunData;
use tlsmatrix_model::record::{CellRecord, CellStatus, Record};
use tlsmatrix_model::scenario::Scenario;

use crate::doc::{Block, Cell, Class, Section, Table};
use crate::figures::{factor_text, figure, varying_count_note};

/// What others published about the bytes, never restated as this run's.
const PUBLISHED_BYTES: &[&str] = &[
    "Cloudflare (published): swapping ML-DSA-44 into a certificate chain adds about 17 KB to a handshake.",
    "Kampanakis and Childs-Klein, ePrint 2024/176 (published): about 14 KB (ML-DSA-44) and 19 KB (ML-DSA-65) of authentication data per handshake.",
    "A server flight above TCP's initial window (10 segments, about 14.6 KB) waits a round trip for acknowledgements; the wire section of this report measures each flight's bytes where the run took them.",
    "What differs from the published set-ups: theirs count a whole WebPKI chain (an intermediate under a root the client holds, the leaf, and the certificate transparency signatures a browser requires), where this run's ML-DSA handshake is a leaf signed by its root and CertificateVerify, and its longer chains are ML-DSA at the largest level; so the bytes table above is the lower end of what a deployment sends.",
];

/// The section, when the run (or its twin run) measured or refused a post-quantum handshake.
pub fn section(
    records: &[Record],
    cells: &[CellRecord],
    impls: &[String],
    twins: Option<&RunData>,
    instructions: Option<&RunData>,
    wire: Option<&RunData>,
    offers: Option<&Offers>,
) -> Option<Section> {
    let joined = Joined::new(records, cells, impls, twins);
    let scenarios = joined.scenarios();
    if scenarios.is_empty() {
        return None;
    }
    let stacks = stacks(&joined.impls);
    let mut blocks = vec![Block::Para(
        "Each stack with itself, TLS 1.3 (the drafts define ML-DSA and the ML-KEM groups for TLS 1.3 only), every handshake checked to negotiate the scheme and group its scenario names. A cell says yes where the stack completed such handshakes in this run, and otherwise the library's own reason.".into(),
    )];
    blocks.push(Block::Table(support_table(&joined, &stacks, &scenarios)));
    if let Some(t) = twins.and_then(|t| cost_matrix(&paired_costs(&t.records))) {
        blocks.push(Block::Para(format!("What each post-quantum choice costs a stack over its classical twin on the same stack, per side: ML-DSA over ECDSA P-256, a hybrid group over its own curve, pure ML-KEM over X25519, all else equal. Each stack ran both handshakes in one process, one short sample of each in turn (run {}, `tlsmatrix run --pairs twins`); the factor is the median of the per-round ratios of CPU time (above 1: dearer), with its interval over passes and rounds.", twins.map_or("", |t| t.run_id.as_str()))));
        blocks.push(Block::Table(t));
    } else if let Some(t) = cost_matrix(&unpaired_costs(&joined.records, &stacks, &scenarios)) {
        blocks.push(Block::Para("What each post-quantum choice costs a stack over its classical twin on the same stack, per side: ML-DSA over ECDSA P-256, a hybrid group over its own curve, pure ML-KEM over X25519, all else equal. The factor is the post-quantum handshake's CPU time over the twin's (above 1: dearer), from the two cells' samples in this run; they ran in separate rounds, so the factor is unpaired (u) and its interval is a bootstrap over both sets of samples.".into()));
        blocks.push(Block::Table(t));
    }
    blocks.extend(
        instructions
            .and_then(instruction_cost_table)
            .map(Block::Table),
    );
    blocks.extend(wire.and_then(bytes_table).map(Block::Table));
    if let Some(o) = offers {
        blocks.extend(crate::offers::sentence(o).map(Block::Para));
        blocks.push(Block::Table(crate::offers::table(o)));
    }
    blocks.push(Block::Bullets(
        PUBLISHED_BYTES.iter().map(|s| s.to_string()).collect(),
    ));
    Some(Section {
        id: "post-quantum".into(),
        title: "Post-quantum".into(),
        blocks,
    })
}

/// Stack x post-quantum choice: yes, or why not.
fn support_table(joined: &Joined, stacks: &[&str], scenarios: &[(String, Scenario)]) -> Table {
    let (choices, rows) = support(joined, stacks, scenarios);
    let mut header = vec!["stack".to_string()];
    header.extend(choices.iter().map(|c| c.name()));
    let rows = rows
        .into_iter()
        .map(|(imp, supports)| {
            let mut row = vec![Cell::plain(imp)];
            row.extend(supports.into_iter().map(|s| match s {
                Support::Measured => Cell::with("yes", Class::Good, None),
                Support::Refused(outcome, reason) => {
                    let (class, text) = Class::of_status(outcome);
                    let text = if outcome == CellStatus::Unsupported {
                        "no"
                    } else {
                        text
                    };
                    Cell::with(text, class, Some(reason))
                }
                Support::Absent => Cell::plain("-"),
            }));
            row
        })
        .collect();
    Table {
        caption: "Post-quantum support, each stack with itself (hover: the library's reason)"
            .into(),
        header,
        rows,
        label_cols: 1,
    }
}

/// Each stack's two sides down, each choice across: the factor with its interval, and each
/// handshake's µs on hover.
fn cost_matrix(costs: &[Cost]) -> Option<Table> {
    cost_layout(
        costs,
        "What post-quantum costs each stack: CPU per handshake over the classical twin's, each side (hover: both in µs)",
        cost_cell,
    )
}

/// Each stack's two sides down, each choice across, a cell per cost.
fn cost_layout(costs: &[Cost], caption: &str, cell: impl Fn(&Cost) -> Cell) -> Option<Table> {
    let mut columns: Vec<&str> = Vec::new();
    let mut stacks: Vec<&str> = Vec::new();
    for c in costs {
        if !columns.contains(&c.choice.as_str()) {
            columns.push(&c.choice);
        }
        if !stacks.contains(&c.stack.as_str()) {
            stacks.push(&c.stack);
        }
    }
    if costs.is_empty() {
        return None;
    }
    let mut header = vec!["stack".to_string(), "side".to_string()];
    header.extend(columns.iter().map(|c| c.to_string()));
    let mut rows = Vec::new();
    for &stack in &stacks {
        for side in ["client", "server"] {
            let mut row = vec![Cell::plain(stack), Cell::plain(side)];
            for &choice in &columns {
                row.push(
                    match costs
                        .iter()
                        .find(|c| c.stack == stack && c.choice == choice && c.side == side)
                    {
                        Some(c) => cell(c),
                        None => Cell::plain("-"),
                    },
                );
            }
            rows.push(row);
        }
    }
    Some(Table {
        caption: caption.into(),
        header,
        rows,
        label_cols: 2,
    })
}

/// What each post-quantum choice adds on the wire, from a wire run holding both handshakes of
/// a stack with itself: each side's bytes over the twin's, the largest flight, and the round
/// trips until the client can send (a server flight over TCP's initial window adds one).
fn bytes_table(run: &RunData) -> Option<Table> {
    // Whole bytes: `figure` keeps a decimal under 100.
    let bytes = |v: f64| {
        if v.abs() < 100.0 {
            format!("{v:.0}")
        } else {
            figure(v)
        }
    };
    let more = |(p, c): Both| Cell::plain(format!("{} (+{})", bytes(p), bytes(p - c)));
    let rows: Vec<Vec<Cell>> = wire_costs(run)
        .into_iter()
        .map(|w| {
            vec![
                Cell::plain(w.stack),
                Cell::plain(w.scenario),
                more(w.client_bytes),
                more(w.server_bytes),
                more(w.largest_flight),
                Cell::plain(format!(
                    "{} (twin {})",
                    w.client_ready_rtts.0, w.client_ready_rtts.1
                )),
            ]
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Table {
        caption: format!("What each post-quantum handshake sends, each stack with itself, over its classical twin (run {}): bytes per side and the largest flight, in brackets what the post-quantum choice adds; round trips until the client can send, the model's, with TCP's initial window of 10 segments (a flight over it waits a round trip)", run.run_id),
        header: ["stack", "handshake", "client bytes", "server bytes", "largest flight", "client ready, RTTs"]
            .map(String::from)
            .to_vec(),
        rows,
        label_cols: 2,
    })
}

/// The same costs in instructions, from an instruction-count run holding both handshakes of
/// a stack with itself (`make report` counts them): counts repeat within 0.1% (save an
/// ML-DSA server's, which the caption says), so the factor is their plain ratio.
fn instruction_cost_table(run: &RunData) -> Option<Table> {
    let costs = instruction_costs(run);
    cost_layout(
        &costs,
        &format!(
            "The same in instructions: each side's instructions per handshake over the classical twin's, counted by callgrind (run {}; hover: both counts).{}",
            run.run_id,
            varying_count_note(run.records.iter().map(|r| r.scenario.as_str()))
        ),
        |c| {
            let f = c.factor.ratio;
            let class = if f > 1.01 {
                Class::Bad
            } else if f < 0.99 {
                Class::Good
            } else {
                Class::Same
            };
            Cell::with(
                format!("{f:.2}x"),
                class,
                Some(format!(
                    "{} instructions classical, {} post-quantum",
                    figure(c.classical),
                    figure(c.post_quantum)
                )),
            )
        },
    )
}

/// A cost factor: above 1 is dearer, so it is classed the other way round from a speed-up.
fn cost_cell(c: &Cost) -> Cell {
    let f = &c.factor;
    let class = if !f.significant {
        Class::Same
    } else if f.ratio > 1.0 {
        Class::Bad
    } else {
        Class::Good
    };
    Cell::with(
        factor_text(f),
        class,
        Some(format!(
            "{} µs classical, {} µs post-quantum",
            figure(c.classical),
            figure(c.post_quantum)
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::record::{Env, Metric};

    fn rec(scenario: &str, imp: &str, m: Metric, ns: &[f64]) -> Record {
        Record::from_samples(
            "run",
            scenario,
            (imp, "v"),
            (imp, "v"),
            m,
            ns.to_vec(),
            Env::default(),
        )
        .unwrap()
    }

    #[test]
    fn support_says_yes_or_the_reason_and_costs_set_each_choice_beside_its_twin() {
        let pq = "handshake-tls13-mldsa44-x25519-full";
        let twin = "handshake-tls13-ecdsa-p256-x25519-full";
        let mut records = Vec::new();
        for m in [Metric::ClientCpuNs, Metric::ServerCpuNs] {
            records.push(rec(pq, "a", m, &[300e3, 310e3, 305e3, 302e3]));
            records.push(rec(twin, "a", m, &[100e3, 101e3, 99e3, 100e3]));
            records.push(rec(twin, "b", m, &[200e3, 201e3, 199e3, 200e3]));
        }
        let cells = vec![CellRecord {
            schema: String::new(),
            run_id: "run".into(),
            scenario: pq.into(),
            client: "b".into(),
            server: "b".into(),
            outcome: CellStatus::Unsupported,
            reason: "b has no mldsa44".into(),
        }];
        let impls = vec!["a".to_string(), "b".to_string(), "a (A/A)".to_string()];
        let s = section(&records, &cells, &impls, None, None, None, None).unwrap();
        let tables: Vec<&Table> = s
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
            .collect();
        let support = tables[0];
        assert_eq!(support.header, ["stack", "ML-DSA-44"]);
        assert_eq!(support.rows.len(), 2, "the A/A copy is not a stack");
        assert_eq!(support.rows[0][1].text, "yes");
        assert_eq!(support.rows[1][1].text, "no");
        assert_eq!(
            support.rows[1][1].title.as_deref(),
            Some("b has no mldsa44")
        );
        let cost = tables[1];
        assert_eq!(
            cost.rows.len(),
            2,
            "a's two sides; b has no post-quantum figure"
        );
        assert_eq!(cost.header, ["stack", "side", "ML-DSA-44 vs ECDSA P-256"]);
        assert_eq!(cost.rows[0][1].text, "client");
        let client = &cost.rows[0][2];
        assert!(client.text.starts_with("3.0"), "{}", client.text);
        assert_eq!(client.class, Class::Bad);
        assert!(client.text.ends_with('u'), "unpaired");
        assert_eq!(
            client.title.as_deref(),
            Some("100 µs classical, 304 µs post-quantum")
        );
    }

    #[test]
    fn instruction_costs_set_each_post_quantum_handshake_over_its_twin_per_side() {
        let (pq, twin) = (
            "handshake-tls13-mldsa44-x25519-full",
            "handshake-tls13-ecdsa-p256-x25519-full",
        );
        let run = RunData {
            run_id: "instr".into(),
            env: Env::default(),
            status: "complete".into(),
            records: vec![
                rec(pq, "a", Metric::ServerInstructions, &[1_500_000.0]),
                rec(twin, "a", Metric::ServerInstructions, &[1_000_000.0]),
                rec(pq, "a", Metric::ClientInstructions, &[700_000.0]),
                rec(twin, "a", Metric::ClientInstructions, &[1_000_000.0]),
                // A stack without the twin in the run has no row.
                rec(pq, "b", Metric::ServerInstructions, &[2_000_000.0]),
            ],
            cells: Vec::new(),
        };
        let t = instruction_cost_table(&run).unwrap();
        assert_eq!(t.rows.len(), 2, "a's client and server rows only");
        assert_eq!(t.rows[0][1].text, "client");
        assert_eq!(t.rows[0][2].text, "0.70x");
        assert_eq!(t.rows[0][2].class, Class::Good);
        assert_eq!(t.rows[1][2].text, "1.50x");
        assert_eq!(t.rows[1][2].class, Class::Bad);
    }

    #[test]
    fn bytes_set_each_post_quantum_handshake_beside_its_twin() {
        let (pq, twin) = (
            "handshake-tls13-mldsa44-x25519-full",
            "handshake-tls13-ecdsa-p256-x25519-full",
        );
        let mut records = Vec::new();
        for (id, server, rtts) in [(pq, 8_000.0, 1.0), (twin, 2_000.0, 1.0)] {
            records.push(rec(id, "a", Metric::ServerWireBytes, &[server]));
            records.push(rec(id, "a", Metric::ClientWireBytes, &[500.0]));
            records.push(rec(id, "a", Metric::LargestFlightBytes, &[server]));
            records.push(rec(id, "a", Metric::ClientReadyRtts, &[rtts]));
        }
        let run = RunData {
            run_id: "wire".into(),
            env: Env::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        };
        let t = bytes_table(&run).unwrap();
        assert_eq!(t.rows.len(), 1, "the twin is no row of its own");
        assert_eq!(t.rows[0][3].text, "8,000 (+6,000)");
        assert_eq!(t.rows[0][2].text, "500 (+0)");
        assert_eq!(t.rows[0][5].text, "1 (twin 1)");
    }

    #[test]
    fn a_run_without_post_quantum_handshakes_has_no_section() {
        let r = rec(
            "handshake-tls13-ecdsa-p256-x25519-full",
            "a",
            Metric::ServerCpuNs,
            &[1.0, 2.0],
        );
        assert!(section(&[r], &[], &["a".to_string()], None, None, None, None).is_none());
    }
}
