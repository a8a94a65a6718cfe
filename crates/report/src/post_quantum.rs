//! Post-quantum TLS in the run: which stacks completed which ML-DSA key and ML-KEM group
//! (or why not, in the library's own words, from the run's unmeasured cells), and on each
//! stack what each post-quantum choice costs over its classical twin, per side, from the
//! run's own figures only. Published byte counts are set beside them, labelled as such.

use tlsmatrix_history::offers::Offers;
use tlsmatrix_history::RunData;
use tlsmatrix_model::record::{CellRecord, CellStatus, Metric, Record};
use tlsmatrix_model::scenario::{Group, Scenario, SigAlg};
use tlsmatrix_model::stats::{self, Factor};

use crate::doc::{Block, Cell, Class, Section, Table};
use crate::figures::{factor_text, figure, varying_count_note};

/// What others published about the bytes, never restated as this run's.
const PUBLISHED_BYTES: &[&str] = &[
    "Cloudflare (published): swapping ML-DSA-44 into a certificate chain adds about 17 KB to a handshake.",
    "Kampanakis and Childs-Klein, ePrint 2024/176 (published): about 14 KB (ML-DSA-44) and 19 KB (ML-DSA-65) of authentication data per handshake.",
    "A server flight above TCP's initial window (10 segments, about 14.6 KB) waits a round trip for acknowledgements; the wire section of this report measures each flight's bytes where the run took them.",
    "What differs from the published set-ups: theirs count a whole WebPKI chain (an intermediate under a root the client holds, the leaf, and the certificate transparency signatures a browser requires), where this run's ML-DSA handshake is a leaf signed by its root and CertificateVerify, and its longer chains are ML-DSA at the largest level; so the bytes table above is the lower end of what a deployment sends.",
];

/// A post-quantum choice a handshake can make: its key or its group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Sig(SigAlg),
    Group(Group),
}

impl Choice {
    fn name(self) -> String {
        match self {
            Choice::Sig(s) => sig_name(s),
            Choice::Group(g) => group_name(g),
        }
    }

    fn of(s: &Scenario) -> Vec<Choice> {
        let Scenario::Handshake(h) = s else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if h.sig.is_mldsa() {
            out.push(Choice::Sig(h.sig));
        }
        if h.group.is_post_quantum() {
            out.push(Choice::Group(h.group));
        }
        out
    }
}

fn sig_name(s: SigAlg) -> String {
    match s {
        SigAlg::MlDsa44 => "ML-DSA-44".into(),
        SigAlg::MlDsa65 => "ML-DSA-65".into(),
        SigAlg::MlDsa87 => "ML-DSA-87".into(),
        SigAlg::EcdsaP256 => "ECDSA P-256".into(),
        SigAlg::EcdsaP384 => "ECDSA P-384".into(),
        other => other.to_string(),
    }
}

fn group_name(g: Group) -> String {
    let code = tlsmatrix_model::codes::group_code(g);
    tlsmatrix_model::codes::openssl_group_name(code)
        .map(str::to_string)
        .unwrap_or_else(|| g.to_string())
}

/// The impls the section speaks of: each run with itself, variants and A/A copies aside.
fn stacks(impls: &[String]) -> Vec<&str> {
    impls
        .iter()
        .map(String::as_str)
        .filter(|i| !i.contains('+') && !i.contains(' '))
        .collect()
}

fn own<'a>(records: &'a [Record], scenario: &str, imp: &str, m: Metric) -> Option<&'a Record> {
    records
        .iter()
        .find(|r| r.scenario == scenario && r.client == imp && r.server == imp && r.metric == m)
}

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
    // The twin run's cells of each stack with itself join the run's own.
    let mut records: Vec<Record> = records.to_vec();
    let mut cells: Vec<CellRecord> = cells.to_vec();
    let mut impls: Vec<String> = impls.to_vec();
    if let Some(t) = twins {
        let stack = |c: &str, s: &str| c == s && !c.contains(" (twin of ");
        records.extend(
            t.records
                .iter()
                .filter(|r| stack(&r.client, &r.server))
                .filter(|r| !records.iter().any(|m| same_cell(m, r)))
                .cloned()
                .collect::<Vec<_>>(),
        );
        cells.extend(
            t.cells
                .iter()
                .filter(|c| stack(&c.client, &c.server))
                .cloned()
                .collect::<Vec<_>>(),
        );
        for i in t.impls() {
            if !impls.contains(&i) {
                impls.push(i);
            }
        }
    }
    let (records, cells, impls) = (&records[..], &cells[..], &impls[..]);
    let mut scenarios: Vec<(String, Scenario)> = Vec::new();
    for id in records
        .iter()
        .map(|r| r.scenario.as_str())
        .chain(cells.iter().map(|c| c.scenario.as_str()))
    {
        if let Ok(s) = id.parse::<Scenario>() {
            if !Choice::of(&s).is_empty() && !scenarios.iter().any(|(have, _)| have == id) {
                scenarios.push((id.to_string(), s));
            }
        }
    }
    if scenarios.is_empty() {
        return None;
    }
    let stacks = stacks(impls);
    let mut blocks = vec![Block::Para(
        "Each stack with itself, TLS 1.3 (the drafts define ML-DSA and the ML-KEM groups for TLS 1.3 only), every handshake checked to negotiate the scheme and group its scenario names. A cell says yes where the stack completed such handshakes in this run, and otherwise the library's own reason.".into(),
    )];
    blocks.push(Block::Table(support_table(
        records, cells, &stacks, &scenarios,
    )));
    if let Some(t) = twins.and_then(|t| paired_cost_table(&t.records)) {
        blocks.push(Block::Para(format!("What each post-quantum choice costs a stack over its classical twin on the same stack, per side: ML-DSA over ECDSA P-256, a hybrid group over its own curve, pure ML-KEM over X25519, all else equal. Each stack ran both handshakes in one process, one short sample of each in turn (run {}, `tlsmatrix run --pairs twins`); the factor is the median of the per-round ratios of CPU time (above 1: dearer), with its interval over passes and rounds.", twins.map_or("", |t| t.run_id.as_str()))));
        blocks.push(Block::Table(t));
    } else if let Some(t) = cost_table(records, &stacks, &scenarios) {
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
fn support_table(
    records: &[Record],
    cells: &[CellRecord],
    stacks: &[&str],
    scenarios: &[(String, Scenario)],
) -> Table {
    let mut choices: Vec<Choice> = Vec::new();
    for (_, s) in scenarios {
        for c in Choice::of(s) {
            if !choices.contains(&c) {
                choices.push(c);
            }
        }
    }
    let mut header = vec!["stack".to_string()];
    header.extend(choices.iter().map(|c| c.name()));
    let rows = stacks
        .iter()
        .map(|&imp| {
            let mut row = vec![Cell::plain(imp)];
            for &choice in &choices {
                let ids: Vec<&str> = scenarios
                    .iter()
                    .filter(|(_, s)| Choice::of(s).contains(&choice))
                    .map(|(id, _)| id.as_str())
                    .collect();
                let measured = ids
                    .iter()
                    .any(|id| own(records, id, imp, Metric::ServerCpuNs).is_some());
                let refused = cells.iter().find(|c| {
                    c.client == imp && c.server == imp && ids.contains(&c.scenario.as_str())
                });
                row.push(match (measured, refused) {
                    (true, _) => Cell::with("yes", Class::Good, None),
                    (false, Some(c)) => {
                        let (class, text) = Class::of_status(c.outcome);
                        let text = if c.outcome == CellStatus::Unsupported {
                            "no"
                        } else {
                            text
                        };
                        Cell::with(text, class, Some(c.reason.clone()))
                    }
                    (false, None) => Cell::plain("-"),
                });
            }
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

/// Per stack and post-quantum scenario with its twin in the run: each side's µs and the
/// cost factor.
fn cost_table(
    records: &[Record],
    stacks: &[&str],
    scenarios: &[(String, Scenario)],
) -> Option<Table> {
    let mut rows = Vec::new();
    for &imp in stacks {
        for (id, s) in scenarios {
            let Some(classical) = s.classical_twin().map(|t| t.to_string()) else {
                continue;
            };
            for (m, side) in [
                (Metric::ClientCpuNs, "client"),
                (Metric::ServerCpuNs, "server"),
            ] {
                let (Some(pq), Some(cl)) =
                    (own(records, id, imp, m), own(records, &classical, imp, m))
                else {
                    continue;
                };
                let Some(f) = stats::factor(&pq.samples, &cl.samples) else {
                    continue;
                };
                rows.push(Cost {
                    stack: imp.to_string(),
                    choice: choice_text(s),
                    side,
                    classical_us: cl.median / 1000.0,
                    post_quantum_us: pq.median / 1000.0,
                    factor: f,
                });
            }
        }
    }
    cost_matrix(&rows)
}

fn same_cell(a: &Record, b: &Record) -> bool {
    a.scenario == b.scenario && a.client == b.client && a.server == b.server && a.metric == b.metric
}

/// The twin run's post-quantum records, each paired with its twin cell: per stack and
/// scenario, each side's µs and the paired cost factor.
fn paired_cost_table(records: &[Record]) -> Option<Table> {
    let mut rows = Vec::new();
    for r in records {
        let Some(p) = &r.paired else { continue };
        let Some(twin_id) = &p.reference_scenario else {
            continue;
        };
        let side = match r.metric {
            Metric::ClientCpuNs => "client",
            Metric::ServerCpuNs => "server",
            _ => continue,
        };
        let (Ok(s), Some(f)) = (r.scenario.parse::<Scenario>(), p.factor()) else {
            continue;
        };
        let twin = records.iter().find(|t| {
            &t.scenario == twin_id && t.client == p.reference_client && t.metric == r.metric
        });
        rows.push(Cost {
            stack: r.client.clone(),
            choice: choice_text(&s),
            side,
            classical_us: twin.map_or(f64::NAN, |t| t.median / 1000.0),
            post_quantum_us: r.median / 1000.0,
            factor: f,
        });
    }
    cost_matrix(&rows)
}

/// "ML-DSA-44 vs ECDSA P-256": the post-quantum parts and the classical ones they replace
/// (what both handshakes share is the rest of the scenario).
fn choice_text(s: &Scenario) -> String {
    let what = Choice::of(s)
        .iter()
        .map(|c| c.name())
        .collect::<Vec<_>>()
        .join(" + ");
    let Scenario::Handshake(h) = s else {
        return what;
    };
    let mut replaced = Vec::new();
    if h.sig.is_mldsa() {
        replaced.push(sig_name(h.sig.classical_twin()));
    }
    if h.group.is_post_quantum() {
        replaced.push(group_name(h.group.classical_twin()));
    }
    format!("{what} vs {}", replaced.join(" + "))
}

/// One stack's cost of one post-quantum choice on one side.
struct Cost {
    stack: String,
    choice: String,
    side: &'static str,
    /// Each handshake's figure: µs, or instructions in the instruction table.
    classical_us: f64,
    post_quantum_us: f64,
    factor: Factor,
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

/// The records of `metrics` of a stack with itself on a post-quantum handshake, each with its
/// scenario and its classical twin's id.
fn with_twins<'a>(
    records: &'a [Record],
    metrics: &'a [Metric],
) -> impl Iterator<Item = (&'a Record, Scenario, String)> + 'a {
    records.iter().filter_map(move |r| {
        let s = r.scenario.parse::<Scenario>().ok()?;
        let post_quantum = r.client == r.server && !Choice::of(&s).is_empty();
        let twin = s.classical_twin().map(|t| t.to_string())?;
        (metrics.contains(&r.metric) && post_quantum).then_some((r, s, twin))
    })
}

/// What each post-quantum choice adds on the wire, from a wire run holding both handshakes of
/// a stack with itself: each side's bytes over the twin's, the largest flight, and the round
/// trips until the client can send (a server flight over TCP's initial window adds one).
fn bytes_table(run: &RunData) -> Option<Table> {
    let mut rows = Vec::new();
    for (r, s, twin) in with_twins(&run.records, &[Metric::ServerWireBytes]) {
        let both = |m: Metric| {
            own(&run.records, &r.scenario, &r.client, m)
                .zip(own(&run.records, &twin, &r.client, m))
                .map(|(p, c)| (p.median, c.median))
        };
        let (Some(client), Some(server), Some(largest), Some(rtts)) = (
            both(Metric::ClientWireBytes),
            both(Metric::ServerWireBytes),
            both(Metric::LargestFlightBytes),
            both(Metric::ClientReadyRtts),
        ) else {
            continue;
        };
        // Whole bytes: `figure` keeps a decimal under 100.
        let bytes = |v: f64| {
            if v.abs() < 100.0 {
                format!("{v:.0}")
            } else {
                figure(v)
            }
        };
        let more = |(p, c): (f64, f64)| Cell::plain(format!("{} (+{})", bytes(p), bytes(p - c)));
        rows.push(vec![
            Cell::plain(r.client.clone()),
            Cell::plain(s.to_string()),
            more(client),
            more(server),
            more(largest),
            Cell::plain(format!("{} (twin {})", rtts.0, rtts.1)),
        ]);
    }
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
    let mut costs = Vec::new();
    let sides = [Metric::ClientInstructions, Metric::ServerInstructions];
    for (r, s, twin) in with_twins(&run.records, &sides) {
        let side = if r.metric == Metric::ClientInstructions {
            "client"
        } else {
            "server"
        };
        let Some(cl) = own(&run.records, &twin, &r.client, r.metric) else {
            continue;
        };
        if cl.median <= 0.0 {
            continue;
        }
        let ratio = r.median / cl.median;
        costs.push(Cost {
            stack: r.client.clone(),
            choice: choice_text(&s),
            side,
            classical_us: cl.median,
            post_quantum_us: r.median,
            factor: Factor {
                ratio,
                ci_low: ratio,
                ci_high: ratio,
                significant: true,
                paired: false,
            },
        });
    }
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
                    figure(c.classical_us),
                    figure(c.post_quantum_us)
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
            figure(c.classical_us),
            figure(c.post_quantum_us)
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::record::Env;

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
