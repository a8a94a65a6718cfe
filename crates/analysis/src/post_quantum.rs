//! Post-quantum TLS as data: which post-quantum choices (an ML-DSA key, an ML-KEM group) a
//! run's handshakes make, which stack completed or refused each, and what each choice costs
//! a stack over its classical twin on the same stack, per side, in CPU time (paired where a
//! twin run sampled both in turns, unpaired otherwise), in instructions and on the wire.

use tlsmatrix_history::RunData;
use tlsmatrix_model::record::{CellRecord, CellStatus, Metric, Record};
use tlsmatrix_model::scenario::{Group, Scenario, SigAlg};
use tlsmatrix_model::stats::{self, Factor};

/// A post-quantum choice a handshake can make: its key or its group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Sig(SigAlg),
    Group(Group),
}

impl Choice {
    pub fn name(self) -> String {
        match self {
            Choice::Sig(s) => sig_name(s),
            Choice::Group(g) => group_name(g),
        }
    }

    /// The post-quantum choices of a scenario; none for a classical one or a non-handshake.
    pub fn of(s: &Scenario) -> Vec<Choice> {
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

/// "ML-DSA-44 vs ECDSA P-256": the post-quantum parts and the classical ones they replace
/// (what both handshakes share is the rest of the scenario).
pub fn choice_text(s: &Scenario) -> String {
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

/// The impls the section speaks of: each run with itself, variants and A/A copies aside.
pub fn stacks(impls: &[String]) -> Vec<&str> {
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

fn same_cell(a: &Record, b: &Record) -> bool {
    a.scenario == b.scenario && a.client == b.client && a.server == b.server && a.metric == b.metric
}

/// A run's records, unmeasured cells and impls, joined with a twin run's cells of each stack
/// with itself (a cell the run has already keeps the run's figure).
pub struct Joined {
    pub records: Vec<Record>,
    pub cells: Vec<CellRecord>,
    pub impls: Vec<String>,
}

impl Joined {
    pub fn new(
        records: &[Record],
        cells: &[CellRecord],
        impls: &[String],
        twins: Option<&RunData>,
    ) -> Joined {
        let mut j = Joined {
            records: records.to_vec(),
            cells: cells.to_vec(),
            impls: impls.to_vec(),
        };
        let Some(t) = twins else { return j };
        let stack = |c: &str, s: &str| c == s && !c.contains(" (twin of ");
        let extra: Vec<Record> = t
            .records
            .iter()
            .filter(|r| stack(&r.client, &r.server))
            .filter(|r| !j.records.iter().any(|m| same_cell(m, r)))
            .cloned()
            .collect();
        j.records.extend(extra);
        j.cells.extend(
            t.cells
                .iter()
                .filter(|c| stack(&c.client, &c.server))
                .cloned(),
        );
        for i in t.impls() {
            if !j.impls.contains(&i) {
                j.impls.push(i);
            }
        }
        j
    }

    /// The post-quantum scenarios the records and cells name, in the order met.
    pub fn scenarios(&self) -> Vec<(String, Scenario)> {
        let mut out: Vec<(String, Scenario)> = Vec::new();
        let ids = self.records.iter().map(|r| r.scenario.as_str());
        for id in ids.chain(self.cells.iter().map(|c| c.scenario.as_str())) {
            if let Ok(s) = id.parse::<Scenario>() {
                if !Choice::of(&s).is_empty() && !out.iter().any(|(have, _)| have == id) {
                    out.push((id.to_string(), s));
                }
            }
        }
        out
    }
}

/// Whether a stack completed handshakes making a choice.
#[derive(Debug, Clone, PartialEq)]
pub enum Support {
    Measured,
    /// Not measured: the cell's outcome and the library's reason.
    Refused(CellStatus, String),
    /// Neither measured nor refused in this run.
    Absent,
}

/// The choices the scenarios make (in the order met), and per stack one [`Support`] each.
pub fn support<'a>(
    joined: &Joined,
    stacks: &[&'a str],
    scenarios: &[(String, Scenario)],
) -> (Vec<Choice>, Vec<(&'a str, Vec<Support>)>) {
    let mut choices: Vec<Choice> = Vec::new();
    for (_, s) in scenarios {
        for c in Choice::of(s) {
            if !choices.contains(&c) {
                choices.push(c);
            }
        }
    }
    let rows = stacks
        .iter()
        .map(|&imp| {
            let of = |&choice: &Choice| {
                let ids: Vec<&str> = scenarios
                    .iter()
                    .filter(|(_, s)| Choice::of(s).contains(&choice))
                    .map(|(id, _)| id.as_str())
                    .collect();
                let measured = ids
                    .iter()
                    .any(|id| own(&joined.records, id, imp, Metric::ServerCpuNs).is_some());
                let refused = joined.cells.iter().find(|c| {
                    c.client == imp && c.server == imp && ids.contains(&c.scenario.as_str())
                });
                match (measured, refused) {
                    (true, _) => Support::Measured,
                    (false, Some(c)) => Support::Refused(c.outcome, c.reason.clone()),
                    (false, None) => Support::Absent,
                }
            };
            (imp, choices.iter().map(of).collect())
        })
        .collect();
    (choices, rows)
}

/// One stack's cost of one post-quantum choice on one side.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    pub stack: String,
    pub choice: String,
    pub side: &'static str,
    /// Each handshake's figure: µs, or instructions in [`instruction_costs`].
    pub classical: f64,
    pub post_quantum: f64,
    /// Above 1: dearer.
    pub factor: Factor,
}

const SIDES: [(Metric, &str); 2] = [
    (Metric::ClientCpuNs, "client"),
    (Metric::ServerCpuNs, "server"),
];

/// Costs from two cells of the same run sampled in separate rounds: unpaired factors,
/// bootstrapped over both cells' samples.
pub fn unpaired_costs(
    records: &[Record],
    stacks: &[&str],
    scenarios: &[(String, Scenario)],
) -> Vec<Cost> {
    let mut out = Vec::new();
    for &imp in stacks {
        for (id, s) in scenarios {
            let Some(classical) = s.classical_twin().map(|t| t.to_string()) else {
                continue;
            };
            for (m, side) in SIDES {
                let (Some(pq), Some(cl)) =
                    (own(records, id, imp, m), own(records, &classical, imp, m))
                else {
                    continue;
                };
                let Some(f) = stats::factor(&pq.samples, &cl.samples) else {
                    continue;
                };
                out.push(Cost {
                    stack: imp.to_string(),
                    choice: choice_text(s),
                    side,
                    classical: cl.median / 1000.0,
                    post_quantum: pq.median / 1000.0,
                    factor: f,
                });
            }
        }
    }
    out
}

/// Costs from a twin run (`--pairs twins`): each post-quantum record paired round by round
/// with its twin cell on the same stack.
pub fn paired_costs(records: &[Record]) -> Vec<Cost> {
    let mut out = Vec::new();
    for r in records {
        let Some(p) = &r.paired else { continue };
        let Some(twin_id) = &p.reference_scenario else {
            continue;
        };
        let Some(&(_, side)) = SIDES.iter().find(|(m, _)| *m == r.metric) else {
            continue;
        };
        let (Ok(s), Some(f)) = (r.scenario.parse::<Scenario>(), p.factor()) else {
            continue;
        };
        let twin = records.iter().find(|t| {
            &t.scenario == twin_id && t.client == p.reference_client && t.metric == r.metric
        });
        out.push(Cost {
            stack: r.client.clone(),
            choice: choice_text(&s),
            side,
            classical: twin.map_or(f64::NAN, |t| t.median / 1000.0),
            post_quantum: r.median / 1000.0,
            factor: f,
        });
    }
    out
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

/// The same costs in instructions: counts repeat within 0.1% (save an ML-DSA server's), so
/// the factor is their plain ratio, with no interval.
pub fn instruction_costs(run: &RunData) -> Vec<Cost> {
    let mut out = Vec::new();
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
        out.push(Cost {
            stack: r.client.clone(),
            choice: choice_text(&s),
            side,
            classical: cl.median,
            post_quantum: r.median,
            factor: Factor {
                ratio,
                ci_low: ratio,
                ci_high: ratio,
                significant: true,
                paired: false,
            },
        });
    }
    out
}

/// A figure of a post-quantum handshake and of its twin.
pub type Both = (f64, f64);

/// What a post-quantum handshake sends over its twin's, from a wire run.
#[derive(Debug, Clone, PartialEq)]
pub struct WireCost {
    pub stack: String,
    pub scenario: String,
    pub client_bytes: Both,
    pub server_bytes: Both,
    pub largest_flight: Both,
    pub client_ready_rtts: Both,
}

/// Each post-quantum handshake of a stack with itself whose twin the wire run also holds.
pub fn wire_costs(run: &RunData) -> Vec<WireCost> {
    let mut out = Vec::new();
    for (r, _, twin) in with_twins(&run.records, &[Metric::ServerWireBytes]) {
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
        out.push(WireCost {
            stack: r.client.clone(),
            scenario: r.scenario.clone(),
            client_bytes: client,
            server_bytes: server,
            largest_flight: largest,
            client_ready_rtts: rtts,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::record::Env;

    const PQ: &str = "handshake-tls13-mldsa44-x25519-full";
    const TWIN: &str = "handshake-tls13-ecdsa-p256-x25519-full";

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

    fn run(id: &str, records: Vec<Record>) -> RunData {
        RunData {
            run_id: id.into(),
            env: Env::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        }
    }

    #[test]
    fn support_is_measured_or_the_reason_and_costs_set_each_choice_over_its_twin() {
        let mut records = Vec::new();
        for m in [Metric::ClientCpuNs, Metric::ServerCpuNs] {
            records.push(rec(PQ, "a", m, &[300e3, 310e3, 305e3, 302e3]));
            records.push(rec(TWIN, "a", m, &[100e3, 101e3, 99e3, 100e3]));
            records.push(rec(TWIN, "b", m, &[200e3, 201e3, 199e3, 200e3]));
        }
        let cells = vec![CellRecord {
            schema: String::new(),
            run_id: "run".into(),
            scenario: PQ.into(),
            client: "b".into(),
            server: "b".into(),
            outcome: CellStatus::Unsupported,
            reason: "b has no mldsa44".into(),
        }];
        let impls = vec!["a".to_string(), "b".to_string(), "a (A/A)".to_string()];
        let j = Joined::new(&records, &cells, &impls, None);
        let scenarios = j.scenarios();
        assert_eq!(
            scenarios.len(),
            1,
            "the classical twin is no post-quantum scenario"
        );
        let stacks = stacks(&j.impls);
        assert_eq!(stacks, ["a", "b"], "the A/A copy is not a stack");
        let (choices, rows) = support(&j, &stacks, &scenarios);
        assert_eq!(choices, [Choice::Sig(SigAlg::MlDsa44)]);
        assert_eq!(rows[0].1, [Support::Measured]);
        assert_eq!(
            rows[1].1,
            [Support::Refused(
                CellStatus::Unsupported,
                "b has no mldsa44".into()
            )]
        );
        let costs = unpaired_costs(&j.records, &stacks, &scenarios);
        assert_eq!(
            costs.len(),
            2,
            "a's two sides; b has no post-quantum figure"
        );
        let client = &costs[0];
        assert_eq!(
            (client.side, client.choice.as_str()),
            ("client", "ML-DSA-44 vs ECDSA P-256")
        );
        assert!(
            (client.factor.ratio - 3.04).abs() < 0.05,
            "{:?}",
            client.factor
        );
        assert!(!client.factor.paired);
        assert_eq!((client.classical, client.post_quantum), (100.0, 303.5));
    }

    #[test]
    fn a_twin_run_adds_its_stacks_cells_but_not_its_twin_copies_or_cells_the_run_has() {
        let own_record = rec(TWIN, "a", Metric::ServerCpuNs, &[1.0, 2.0]);
        let mut twin_copy = rec(PQ, "a (twin of x)", Metric::ServerCpuNs, &[1.0, 2.0]);
        twin_copy.server = twin_copy.client.clone();
        let twins = run(
            "t",
            vec![
                rec(TWIN, "a", Metric::ServerCpuNs, &[9.0, 9.0]),
                rec(PQ, "a", Metric::ServerCpuNs, &[5.0, 6.0]),
                twin_copy,
            ],
        );
        let j = Joined::new(&[own_record], &[], &["a".into()], Some(&twins));
        assert_eq!(j.records.len(), 2, "{:?}", j.records);
        assert_eq!(j.records[0].median, 1.5, "the run's own figure stays");
    }

    #[test]
    fn instruction_costs_are_plain_ratios_per_side_and_need_the_twin() {
        let run = run(
            "instr",
            vec![
                rec(PQ, "a", Metric::ServerInstructions, &[1_500_000.0]),
                rec(TWIN, "a", Metric::ServerInstructions, &[1_000_000.0]),
                rec(PQ, "a", Metric::ClientInstructions, &[700_000.0]),
                rec(TWIN, "a", Metric::ClientInstructions, &[1_000_000.0]),
                rec(PQ, "b", Metric::ServerInstructions, &[2_000_000.0]),
            ],
        );
        let costs = instruction_costs(&run);
        assert_eq!(costs.len(), 2, "b has no twin");
        assert_eq!(costs[0].side, "server");
        assert_eq!(costs[0].factor.ratio, 1.5);
        assert_eq!(costs[1].factor.ratio, 0.7);
    }

    #[test]
    fn wire_costs_set_each_post_quantum_handshake_beside_its_twin() {
        let mut records = Vec::new();
        for (id, server) in [(PQ, 8_000.0), (TWIN, 2_000.0)] {
            records.push(rec(id, "a", Metric::ServerWireBytes, &[server]));
            records.push(rec(id, "a", Metric::ClientWireBytes, &[500.0]));
            records.push(rec(id, "a", Metric::LargestFlightBytes, &[server]));
            records.push(rec(id, "a", Metric::ClientReadyRtts, &[1.0]));
        }
        let costs = wire_costs(&run("wire", records));
        assert_eq!(costs.len(), 1, "the twin is no row of its own");
        assert_eq!(costs[0].server_bytes, (8_000.0, 2_000.0));
        assert_eq!(costs[0].client_ready_rtts, (1.0, 1.0));
    }
}
