//! Paired runs of timed handshake and bulk scenarios. Each impl's cells (as client against
//! the baseline, as server against it, with itself) form a group with the baseline's own
//! pair as reference; a group runs in one driver process that samples its cells in turns
//! (`tlsmatrix_measure::paired`). The run makes several passes over all scenarios, each pass a
//! new process per group on the next core, so a cell's samples come from several stretches
//! of the run: its interval covers drift between them (a two-level bootstrap over blocks),
//! and every factor is a median of ratios taken side by side.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use tlsmatrix_measure::paired::{self, Tagged};
use tlsmatrix_model::protocol::DriverMessage;
use tlsmatrix_model::record::{self, Env, Metric, Paired, Record};
use tlsmatrix_model::scenario::Scenario;

use tlsmatrix_registry::registry::{self as drivers, Driver, DriverProcess, ImplEntry};

/// One cell of a group: the impls it runs and the labels its records carry (the A/A copy of
/// the baseline runs the baseline under another label).
#[derive(Debug, Clone)]
pub struct GroupCell<'r> {
    pub client: &'r ImplEntry,
    pub server: &'r ImplEntry,
    pub label: (String, String),
}

/// The cells one driver process samples in turns; the first is the reference when the group
/// has one (the baseline with itself, which every driver holding the baseline can run).
#[derive(Debug, Clone)]
pub struct Group<'r> {
    pub scenario: Scenario,
    pub driver: Driver,
    pub cells: Vec<GroupCell<'r>>,
    pub has_reference: bool,
    /// Without the reference in its driver, the group is sampled in duet with the
    /// baseline's own pair in the baseline's driver (`run_duet`), when the run has that pair.
    pub companion: bool,
}

/// Whether a scenario is measured in groups: timed handshakes and bulk transfers are; memory
/// (exact counts), throughput (wall-time windows across threads) and instruction counts
/// (deterministic) run a cell at a time.
pub fn is_grouped(s: &Scenario) -> bool {
    matches!(s, Scenario::Handshake(_) | Scenario::Bulk(_))
}

/// The baseline with itself: the cell every factor is taken against.
pub fn reference_cell(baseline: &ImplEntry) -> GroupCell<'_> {
    GroupCell {
        client: baseline,
        server: baseline,
        label: (baseline.name.clone(), baseline.name.clone()),
    }
}

/// An impl's own pair alone in its driver: the companion a duet samples beside a group, and
/// one side of a `cargo xtask weather` turn.
pub fn own_pair(scenario: Scenario, e: &ImplEntry) -> Group<'_> {
    Group {
        scenario,
        driver: e.driver().clone(),
        cells: vec![reference_cell(e)],
        has_reference: true,
        companion: false,
    }
}

/// Splits one scenario's planned pairs into groups: per impl other than the baseline, every
/// pair it takes part in (the first of them it meets as client, else as server), with the
/// baseline's own pair in front when that impl's driver holds the baseline; then the A/A
/// group, the baseline's pair twice. Pairs whose impls share no driver are returned apart.
pub fn plan<'r>(
    scenario: Scenario,
    pairs: &[(&'r ImplEntry, &'r ImplEntry)],
    baseline: &'r ImplEntry,
) -> (Vec<Group<'r>>, Vec<(&'r ImplEntry, &'r ImplEntry)>) {
    let mut apart = Vec::new();
    let mut keyed: Vec<(String, Driver, Vec<GroupCell<'r>>)> = Vec::new();
    let mut baseline_pair = false;
    for &(c, s) in pairs {
        let Some(driver) = drivers::shared_driver(c, s) else {
            apart.push((c, s));
            continue;
        };
        if c.name == baseline.name && s.name == baseline.name {
            baseline_pair = true;
            continue;
        }
        let key = if c.name != baseline.name {
            &c.name
        } else {
            &s.name
        };
        let cell = GroupCell {
            client: c,
            server: s,
            label: (c.name.clone(), s.name.clone()),
        };
        match keyed.iter_mut().find(|(k, d, _)| k == key && d == driver) {
            Some((_, _, cells)) => cells.push(cell),
            None => keyed.push((key.clone(), driver.clone(), vec![cell])),
        }
    }
    let reference = || reference_cell(baseline);
    let mut groups: Vec<Group> = keyed
        .into_iter()
        .map(|(_, driver, cells)| {
            let has_reference = baseline_pair && baseline.drivers.contains(&driver);
            let mut all: Vec<GroupCell> = Vec::new();
            if has_reference {
                all.push(reference());
            }
            all.extend(cells);
            Group {
                scenario,
                driver,
                cells: all,
                has_reference,
                companion: baseline_pair && !has_reference,
            }
        })
        .collect();
    if baseline_pair {
        let aa = record::aa_label(&baseline.name);
        groups.push(Group {
            scenario,
            driver: baseline.driver().clone(),
            cells: vec![
                reference(),
                GroupCell {
                    client: baseline,
                    server: baseline,
                    label: (aa.clone(), aa),
                },
            ],
            has_reference: true,
            companion: false,
        });
    }
    (groups, apart)
}

/// How a group process is run.
pub struct GroupRequest<'a> {
    pub certs: &'a Path,
    pub rounds: u32,
    pub warmup_ms: u64,
    pub sample_ms: u64,
    pub silence_limit: Duration,
    /// The core the process is pinned to, so that all its cells share one core's speed.
    pub core: Option<usize>,
    /// Bytes the driver shifts its heap by before setting up the cells
    /// (`tlsmatrix_measure::heap::shift_heap_from_env`): each pass samples another placement.
    pub heap_shift: usize,
}

/// What a group's cell gave in one process.
#[derive(Debug)]
pub enum CellRun {
    Measured {
        versions: (String, String),
        samples: Vec<RoundSample>,
    },
    Unsupported(String),
    Failed(String),
}

fn group_command(g: &Group, req: &GroupRequest, stepped: bool) -> Command {
    let mut cmd = g.driver.command();
    if stepped {
        cmd.arg("group").arg("--stepped");
    } else {
        cmd.arg("group");
    }
    cmd.args(["--scenario", &g.scenario.to_string(), "--certs"])
        .arg(req.certs)
        .args(["--rounds", &req.rounds.to_string()])
        .args(["--warmup-ms", &req.warmup_ms.to_string()])
        .args(["--sample-ms", &req.sample_ms.to_string()])
        .env(
            tlsmatrix_model::allocator::HEAP_SHIFT_ENV,
            req.heap_shift.to_string(),
        );
    for c in &g.cells {
        cmd.arg("--cell")
            .arg(format!("{},{}", c.client.name, c.server.name));
    }
    if let Some(core) = req.core {
        drivers::pin_to_core(&mut cmd, core);
    }
    cmd
}

/// One sample of a cell: the round it was taken in and its metric values.
pub type RoundSample = (u32, Vec<(Metric, f64)>);

/// What a group process has said so far.
struct GroupState {
    versions: Vec<Option<(String, String)>>,
    samples: Vec<Vec<RoundSample>>,
    ended: Vec<Option<CellRun>>,
}

/// What one message meant for the process as a whole.
enum Heard {
    Going,
    Stepped(u32),
    Done,
    Failed(String),
}

impl GroupState {
    fn new(n: usize) -> Self {
        GroupState {
            versions: vec![None; n],
            samples: vec![Vec::new(); n],
            ended: (0..n).map(|_| None).collect(),
        }
    }

    fn take(&mut self, msg: Result<DriverMessage, String>, on_sample: &mut impl FnMut()) -> Heard {
        let n = self.versions.len();
        let cell_of = |c: Option<usize>| c.filter(|&c| c < n);
        match msg {
            Ok(DriverMessage::Hello {
                cell,
                client_version,
                server_version,
            }) => match cell_of(cell) {
                Some(c) => self.versions[c] = Some((client_version, server_version)),
                None => {
                    return Heard::Failed("driver sent a hello for no cell of the group".into())
                }
            },
            Ok(DriverMessage::Sample {
                cell,
                round: Some(round),
                values,
            }) if cell_of(cell).is_some() => {
                self.samples[cell.expect("checked")].push((round, values));
                on_sample();
            }
            Ok(DriverMessage::Sample { .. }) => {
                return Heard::Failed("driver sent a sample without its cell and round".into())
            }
            Ok(DriverMessage::Unsupported { cell, reason }) => match cell_of(cell) {
                Some(c) => self.ended[c] = Some(CellRun::Unsupported(reason)),
                None => return Heard::Failed(format!("unsupported: {reason}")),
            },
            Ok(DriverMessage::Error { cell, message }) => match cell_of(cell) {
                Some(c) => self.ended[c] = Some(CellRun::Failed(message)),
                None => return Heard::Failed(message),
            },
            Ok(DriverMessage::Trace { .. }) => {
                return Heard::Failed("driver sent a wire trace to a timed group".into())
            }
            Ok(DriverMessage::Stepped { step }) => return Heard::Stepped(step),
            Ok(DriverMessage::Done) => return Heard::Done,
            Err(e) => return Heard::Failed(e),
        }
        Heard::Going
    }

    /// Each cell's end, once the process ended with `failure` (or none).
    fn outcomes(self, failure: Option<String>) -> Vec<CellRun> {
        self.ended
            .into_iter()
            .zip(self.versions)
            .zip(self.samples)
            .map(
                |((ended, versions), samples)| match (ended, &failure, versions) {
                    (Some(e), _, _) => e,
                    (None, Some(f), _) => CellRun::Failed(f.clone()),
                    (None, None, Some(versions)) => CellRun::Measured { versions, samples },
                    (None, None, None) => {
                        CellRun::Failed("driver finished without saying which versions ran".into())
                    }
                },
            )
            .collect()
    }
}

/// Runs one group in one driver process; `on_sample` is called as samples arrive.
pub fn run_group(g: &Group, req: &GroupRequest, mut on_sample: impl FnMut()) -> Vec<CellRun> {
    let n = g.cells.len();
    let mut proc = match DriverProcess::spawn(group_command(g, req, false), req.silence_limit) {
        Ok(p) => p,
        Err(e) => return (0..n).map(|_| CellRun::Failed(e.clone())).collect(),
    };
    let mut state = GroupState::new(n);
    let failure = loop {
        match state.take(proc.next_message(), &mut on_sample) {
            Heard::Going => {}
            Heard::Stepped(_) => break Some("driver stepped unasked".into()),
            Heard::Done => break None,
            Heard::Failed(e) => break Some(e),
        }
    };
    state.outcomes(proc.finish(failure))
}

/// Two groups in two driver processes on one core, stepped in turns: the set-up of each,
/// then round by round, then a last step that lets each end. Two drivers that cannot share a
/// process (go-crypto-tls and the baseline) are so sampled side by side, as duet benchmarking
/// does: while one samples, the other waits on its stdin. A process that fails leaves the
/// other going on alone.
///
/// The two take turns strictly (A B A B ...), so that every sample follows one of the other
/// process. Alternating who goes first in each round (A B B A A B ...) made every other
/// sample follow one of its own process, with its caches warm: go-crypto-tls's resumed
/// handshakes came out 6% faster in those rounds, and with an odd number of rounds the two
/// kinds did not even balance. A process never ends while the other samples either: the
/// baseline's exit ran beside go-crypto-tls's last sample of every block and slowed it by 20%.
pub fn run_duet(
    groups: [&Group; 2],
    req: &GroupRequest,
    mut on_sample: impl FnMut(),
) -> [Vec<CellRun>; 2] {
    let mut procs: Vec<Option<DriverProcess>> = Vec::new();
    let mut failures: [Option<String>; 2] = [None, None];
    for (i, g) in groups.iter().enumerate() {
        match DriverProcess::spawn_stepped(group_command(g, req, true), req.silence_limit) {
            Ok(p) => procs.push(Some(p)),
            Err(e) => {
                procs.push(None);
                failures[i] = Some(e);
            }
        }
    }
    let mut states = groups.map(|g| GroupState::new(g.cells.len()));
    // Steps 0..=rounds, each ended by `stepped`; then one ended by `done`.
    for step in 0..=req.rounds + 1 {
        for i in [0, 1] {
            let Some(p) = procs[i].as_mut().filter(|_| failures[i].is_none()) else {
                continue;
            };
            if let Err(e) = p.step() {
                failures[i] = Some(e);
                continue;
            }
            failures[i] = loop {
                match (
                    states[i].take(p.next_message(), &mut on_sample),
                    step <= req.rounds,
                ) {
                    (Heard::Going, _) => {}
                    (Heard::Stepped(s), true) if s == step => break None,
                    (Heard::Done, false) => break None,
                    (Heard::Stepped(s), _) => {
                        break Some(format!("driver ended step {s} where step {step} was asked"))
                    }
                    (Heard::Done, true) => {
                        break Some("driver finished before its last step".into())
                    }
                    (Heard::Failed(e), _) => break Some(e),
                }
            };
        }
    }
    let mut outcomes = procs
        .into_iter()
        .zip(states)
        .zip(failures)
        .map(|((p, state), failure)| match p {
            Some(p) => state.outcomes(p.finish(failure)),
            None => state.outcomes(failure),
        });
    let a = outcomes.next().expect("two");
    let b = outcomes.next().expect("two");
    [a, b]
}

/// A cell's samples gathered over every block (process) it ran in, tagged by block and round.
#[derive(Debug, Default)]
pub struct Gathered {
    pub versions: Option<(String, String)>,
    pub by_metric: BTreeMap<Metric, Vec<Tagged>>,
}

impl Gathered {
    pub fn add(
        &mut self,
        block: u32,
        versions: (String, String),
        samples: Vec<(u32, Vec<(Metric, f64)>)>,
    ) {
        self.versions.get_or_insert(versions);
        for (round, values) in samples {
            for (m, v) in values {
                self.by_metric.entry(m).or_default().push(Tagged {
                    value: v,
                    block,
                    round,
                });
            }
        }
    }
}

/// The records of one cell: each metric's samples with their blocks, and, unless the cell is
/// the reference itself, its ratios to the reference's samples of the same block and round.
pub fn records(
    run_id: &str,
    scenario: &str,
    label: &(String, String),
    cell: &Gathered,
    reference: Option<(&(String, String), &Gathered)>,
    env: &Env,
) -> Vec<Record> {
    let Some((cv, sv)) = &cell.versions else {
        return Vec::new();
    };
    cell.by_metric
        .iter()
        .filter_map(|(&metric, tagged)| {
            let mut r = Record::from_blocks(
                run_id,
                scenario,
                (&label.0, cv),
                (&label.1, sv),
                metric,
                tagged.iter().map(|t| t.value).collect(),
                tagged.iter().map(|t| t.block).collect(),
                env.clone(),
            )?;
            if let Some((ref_label, ref_cell)) = reference.filter(|(l, _)| *l != label) {
                let pairs = paired::ratios(tagged, ref_cell.by_metric.get(&metric)?);
                if !pairs.is_empty() {
                    let (ratios, blocks) = pairs.into_iter().unzip();
                    r.paired = Some(Paired {
                        reference_client: ref_label.0.clone(),
                        reference_server: ref_label.1.clone(),
                        ratios,
                        blocks,
                    });
                }
            }
            Some(r)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, drivers: &[&str]) -> ImplEntry {
        ImplEntry {
            refuses: Vec::new(),
            name: name.into(),
            version: format!("{name} 1"),
            allocator: tlsmatrix_model::allocator::Allocator::Glibc,
            drivers: drivers
                .iter()
                .map(|d| Driver::new(d, tlsmatrix_model::allocator::Allocator::Glibc))
                .collect(),
        }
    }

    #[test]
    fn groups_hold_each_impl_with_the_reference_and_an_aa_group() {
        let b = entry("base", &["main", "other"]);
        let x = entry("x", &["main"]);
        let y = entry("y", &["other"]);
        let z = entry("z", &["third"]);
        let impls = [&b, &x, &y, &z];
        let mut pairs = Vec::new();
        for &c in &impls {
            for &s in &impls {
                if c.name == s.name || c.name == "base" || s.name == "base" {
                    pairs.push((c, s));
                }
            }
        }
        let scenario: Scenario = "handshake-tls13-ecdsa-p256-x25519-full".parse().unwrap();
        let (groups, apart) = plan(scenario, &pairs, &b);
        let names = |g: &Group| -> Vec<String> {
            g.cells
                .iter()
                .map(|c| format!("{}>{}", c.label.0, c.label.1))
                .collect()
        };
        assert_eq!(groups.len(), 4, "x, y, z and the A/A group");
        assert_eq!(names(&groups[0]), ["base>base", "base>x", "x>base", "x>x"]);
        assert_eq!(groups[0].driver.path, std::path::PathBuf::from("main"));
        assert_eq!(names(&groups[1]), ["base>base", "base>y", "y>base", "y>y"]);
        assert_eq!(groups[1].driver.path, std::path::PathBuf::from("other"));
        // z lives where the baseline does not: unpaired, alone.
        assert_eq!(names(&groups[2]), ["z>z"]);
        assert!(!groups[2].has_reference);
        assert!(
            groups[2].companion,
            "sampled beside the baseline's own pair"
        );
        assert!(!groups[0].companion);
        let aa = record::aa_label("base");
        assert_eq!(
            names(&groups[3]),
            ["base>base".to_string(), format!("{aa}>{aa}")]
        );
        assert_eq!(apart.len(), 2, "base with z cannot share a process");
        // Every planned pair is in exactly one group or apart; the reference in every group
        // that can hold it.
        let planned: usize = groups
            .iter()
            .map(|g| g.cells.len() - usize::from(g.has_reference))
            .sum::<usize>();
        assert_eq!(planned - 1 + 1 + apart.len(), pairs.len());
    }

    #[test]
    fn records_carry_blocks_and_ratios_to_the_reference() {
        let t = |value, block, round| Tagged {
            value,
            block,
            round,
        };
        let versions = ("a 1".to_string(), "a 1".to_string());
        let mut reference = Gathered {
            versions: Some(versions.clone()),
            ..Gathered::default()
        };
        reference.by_metric.insert(
            Metric::ClientCpuNs,
            vec![t(100.0, 0, 0), t(100.0, 0, 1), t(200.0, 1, 0)],
        );
        let mut cell = Gathered {
            versions: Some(versions),
            ..Gathered::default()
        };
        cell.by_metric.insert(
            Metric::ClientCpuNs,
            vec![t(150.0, 0, 0), t(150.0, 0, 1), t(300.0, 1, 0)],
        );
        let ref_label = ("a".to_string(), "a".to_string());
        let label = ("b".to_string(), "a".to_string());
        let recs = records(
            "r",
            "s",
            &label,
            &cell,
            Some((&ref_label, &reference)),
            &Env::default(),
        );
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].blocks, [0, 0, 1]);
        let p = recs[0].paired.as_ref().unwrap();
        assert_eq!(p.ratios, [1.5, 1.5, 1.5]);
        assert_eq!(p.factor().unwrap().ratio, 1.5);
        // The reference has no ratio to itself.
        let own = records(
            "r",
            "s",
            &ref_label,
            &reference,
            Some((&ref_label, &reference)),
            &Env::default(),
        );
        assert!(own[0].paired.is_none());
    }
}
