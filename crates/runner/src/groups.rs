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
    /// The scenario this cell runs when not its group's: a post-quantum handshake's
    /// classical twin, sampled in turns with it (`twin_plan`).
    pub scenario: Option<Scenario>,
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
    /// The impl the group is about (the A/A group: the copy's label). A pass runs one
    /// subject's groups of every scenario in one process (`run_batch`).
    pub subject: String,
    /// The label of the cell the others are paired with, when not the run's baseline pair
    /// (a twin group's classical cell).
    pub reference: Option<(String, String)>,
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
        scenario: None,
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
        subject: e.name.clone(),
        reference: None,
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
            scenario: None,
        };
        match keyed.iter_mut().find(|(k, d, _)| k == key && d == driver) {
            Some((_, _, cells)) => cells.push(cell),
            None => keyed.push((key.clone(), driver.clone(), vec![cell])),
        }
    }
    let reference = || reference_cell(baseline);
    let mut groups: Vec<Group> = keyed
        .into_iter()
        .map(|(subject, driver, cells)| {
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
                subject,
                reference: None,
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
                    label: (aa.clone(), aa.clone()),
                    scenario: None,
                },
            ],
            has_reference: true,
            companion: false,
            subject: aa,
            reference: None,
        });
    }
    (groups, apart)
}

/// The label of an impl's classical-twin cell in the twin group of `scenario`: unique per
/// post-quantum scenario, since several share one twin.
pub fn twin_label(imp: &str, scenario: Scenario) -> String {
    format!("{imp} (twin of {scenario})")
}

/// Twin groups of a post-quantum handshake: each impl with itself on `scenario`, paired
/// round by round with itself on the classical twin (`twin`), in one process; `None` when
/// the scenario has no twin other than itself.
pub fn twin_plan<'r>(
    scenario: Scenario,
    twin: Scenario,
    impls: &[&'r ImplEntry],
) -> Vec<Group<'r>> {
    impls
        .iter()
        .map(|&e| {
            let label = twin_label(&e.name, scenario);
            Group {
                scenario,
                driver: e.driver().clone(),
                cells: vec![
                    GroupCell {
                        client: e,
                        server: e,
                        label: (label.clone(), label.clone()),
                        scenario: Some(twin),
                    },
                    GroupCell {
                        client: e,
                        server: e,
                        label: (e.name.clone(), e.name.clone()),
                        scenario: None,
                    },
                ],
                has_reference: true,
                companion: false,
                subject: e.name.clone(),
                reference: Some((label.clone(), label)),
            }
        })
        .collect()
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
    /// The process ended in an earlier part of its batch, before this one began: the cell
    /// has no block in this pass and runs again in the next.
    NotStarted,
}

/// The command of a process that runs `parts` (groups of one driver) one after another.
fn group_command(parts: &[&Group], req: &GroupRequest, stepped: bool) -> Command {
    let mut cmd = parts[0].driver.command();
    cmd.arg("group");
    if stepped {
        cmd.arg("--stepped");
    }
    cmd.arg("--certs")
        .arg(req.certs)
        .args(["--rounds", &req.rounds.to_string()])
        .args(["--warmup-ms", &req.warmup_ms.to_string()])
        .args(["--sample-ms", &req.sample_ms.to_string()])
        .env(
            tlsmatrix_model::allocator::HEAP_SHIFT_ENV,
            req.heap_shift.to_string(),
        );
    for g in parts {
        let mut part = g.scenario.to_string();
        for c in &g.cells {
            part.push_str(&format!(" {},{}", c.client.name, c.server.name));
            if let Some(own) = c.scenario {
                part.push_str(&format!("@{own}"));
            }
        }
        cmd.arg("--part").arg(part);
    }
    if let Some(core) = req.core {
        drivers::pin_to_core(&mut cmd, core);
    }
    cmd
}

/// One sample of a cell: the round it was taken in and its metric values.
pub type RoundSample = (u32, Vec<(Metric, f64)>);

/// What a group process has said so far, its cells numbered across its parts.
struct GroupState {
    versions: Vec<Option<(String, String)>>,
    samples: Vec<Vec<RoundSample>>,
    ended: Vec<Option<CellRun>>,
    /// The number of cells of each part, in order.
    part_sizes: Vec<usize>,
}

/// What one message meant for the process as a whole.
enum Heard {
    Going,
    Stepped(u32),
    Done,
    Failed(String),
}

impl GroupState {
    fn new(parts: &[&Group]) -> Self {
        let n = parts.iter().map(|g| g.cells.len()).sum();
        GroupState {
            versions: vec![None; n],
            samples: vec![Vec::new(); n],
            ended: (0..n).map(|_| None).collect(),
            part_sizes: parts.iter().map(|g| g.cells.len()).collect(),
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

    /// Whether cell `c` has ended or given every round's sample.
    fn cell_done(&self, c: usize, rounds: u32) -> bool {
        self.ended[c].is_some() || self.samples[c].len() >= rounds as usize
    }

    /// Whether the driver has said anything of cell `c`.
    fn cell_touched(&self, c: usize) -> bool {
        self.versions[c].is_some() || self.ended[c].is_some() || !self.samples[c].is_empty()
    }

    /// Each part's cells' ends, once the process ended with `failure` (or none). A failure
    /// belongs to the first part not done and to every part after it that the driver began;
    /// the parts after it that it never began are `NotStarted`, so that one cell's crash
    /// costs the other scenarios one block only. A process that failed after every part was
    /// done (at its exit) fails them all, as it would have one group.
    fn outcomes(self, failure: Option<String>, rounds: u32) -> Vec<Vec<CellRun>> {
        let mut bounds = Vec::new();
        let mut at = 0;
        for &size in &self.part_sizes {
            bounds.push(at..at + size);
            at += size;
        }
        let failed_part = failure.as_ref().and_then(|_| {
            bounds
                .iter()
                .position(|r| !r.clone().all(|c| self.cell_done(c, rounds)))
        });
        let skipped: Vec<bool> = bounds
            .iter()
            .enumerate()
            .map(|(p, r)| {
                failed_part.is_some_and(|f| p > f) && !r.clone().any(|c| self.cell_touched(c))
            })
            .collect();
        let mut cells = self.ended.into_iter().zip(self.versions).zip(self.samples);
        bounds
            .iter()
            .enumerate()
            .map(|(p, r)| {
                let failure = failure
                    .as_ref()
                    .filter(|_| failed_part.is_none_or(|f| p >= f));
                let part = cells.by_ref().take(r.len());
                if skipped[p] {
                    return part.map(|_| CellRun::NotStarted).collect();
                }
                part.map(
                    |((ended, versions), samples)| match (ended, failure, versions) {
                        (Some(e), _, _) => e,
                        (None, Some(f), _) => CellRun::Failed(f.clone()),
                        (None, None, Some(versions)) => CellRun::Measured { versions, samples },
                        (None, None, None) => CellRun::Failed(
                            "driver finished without saying which versions ran".into(),
                        ),
                    },
                )
                .collect()
            })
            .collect()
    }
}

/// Every cell of every part failed with `why` (a process that could not start).
fn all_failed(parts: &[&Group], why: &str) -> Vec<Vec<CellRun>> {
    parts
        .iter()
        .map(|g| {
            g.cells
                .iter()
                .map(|_| CellRun::Failed(why.into()))
                .collect()
        })
        .collect()
}

/// Runs groups of one driver (one scenario each) one after another in one driver process;
/// `on_sample` is called as samples arrive. Each group's cells' runs, in order.
pub fn run_batch(
    parts: &[&Group],
    req: &GroupRequest,
    mut on_sample: impl FnMut(),
) -> Vec<Vec<CellRun>> {
    let mut proc = match DriverProcess::spawn(group_command(parts, req, false), req.silence_limit) {
        Ok(p) => p,
        Err(e) => return all_failed(parts, &e),
    };
    let mut state = GroupState::new(parts);
    let failure = loop {
        match state.take(proc.next_message(), &mut on_sample) {
            Heard::Going => {}
            Heard::Stepped(_) => break Some("driver stepped unasked".into()),
            Heard::Done => break None,
            Heard::Failed(e) => break Some(e),
        }
    };
    state.outcomes(proc.finish(failure), req.rounds)
}

/// Two batches (as `run_batch`, the same scenarios in the same order) in two driver
/// processes on one core, stepped in turns: each part's set-up, then round by round, then a
/// last step that lets each end. Two drivers that cannot share a process (go-crypto-tls and
/// the baseline) are so sampled side by side, as duet benchmarking does: while one samples,
/// the other waits on its stdin. A process that fails leaves the other going on alone.
///
/// The two take turns strictly (A B A B ...), so that every sample follows one of the other
/// process. Alternating who goes first in each round (A B B A A B ...) made every other
/// sample follow one of its own process, with its caches warm: go-crypto-tls's resumed
/// handshakes came out 6% faster in those rounds, and with an odd number of rounds the two
/// kinds did not even balance. A process never ends while the other samples either: the
/// baseline's exit ran beside go-crypto-tls's last sample of every block and slowed it by 20%.
pub fn run_duet(
    batches: [&[&Group]; 2],
    req: &GroupRequest,
    mut on_sample: impl FnMut(),
) -> [Vec<Vec<CellRun>>; 2] {
    debug_assert_eq!(batches[0].len(), batches[1].len(), "a duet's parts pair up");
    let mut procs: Vec<Option<DriverProcess>> = Vec::new();
    let mut failures: [Option<String>; 2] = [None, None];
    for (i, parts) in batches.iter().enumerate() {
        match DriverProcess::spawn_stepped(group_command(parts, req, true), req.silence_limit) {
            Ok(p) => procs.push(Some(p)),
            Err(e) => {
                procs.push(None);
                failures[i] = Some(e);
            }
        }
    }
    let mut states = batches.map(GroupState::new);
    // Each part: its set-up, then a step per round, each ended by `stepped`; then one step
    // ended by `done`.
    let steps = (req.rounds + 1) * batches[0].len().max(batches[1].len()) as u32;
    for step in 0..=steps {
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
                    step < steps,
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
        .zip(batches)
        .map(|(((p, state), failure), parts)| match (p, failure) {
            (Some(p), failure) => state.outcomes(p.finish(failure), req.rounds),
            (None, failure) => all_failed(parts, failure.as_deref().unwrap_or("not started")),
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
    reference_scenario: Option<&str>,
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
                        reference_scenario: reference_scenario.map(str::to_string),
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
            quic: None,
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

    /// A state for parts of the given sizes, as if the driver had said, of each cell in
    /// `said`, its versions and `samples` samples.
    fn state_with(sizes: &[usize], said: &[(usize, usize)]) -> GroupState {
        let n = sizes.iter().sum();
        let mut st = GroupState {
            versions: vec![None; n],
            samples: vec![Vec::new(); n],
            ended: (0..n).map(|_| None).collect(),
            part_sizes: sizes.to_vec(),
        };
        for &(c, k) in said {
            st.versions[c] = Some(("a 1".into(), "a 1".into()));
            st.samples[c] = (0..k as u32).map(|r| (r, Vec::new())).collect();
        }
        st
    }

    fn kinds(parts: &[Vec<CellRun>]) -> Vec<Vec<&'static str>> {
        parts
            .iter()
            .map(|p| {
                p.iter()
                    .map(|c| match c {
                        CellRun::Measured { .. } => "measured",
                        CellRun::Unsupported(_) => "unsupported",
                        CellRun::Failed(_) => "failed",
                        CellRun::NotStarted => "not started",
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_batch_that_dies_fails_its_current_part_and_leaves_the_later_ones_for_the_next_pass() {
        // Three parts of two cells, three rounds: the first part done, the second's second
        // cell two samples in when the process died, the third never begun.
        let mut st = state_with(&[2, 2, 2], &[(0, 3), (1, 3), (2, 3), (3, 2)]);
        st.ended[1] = Some(CellRun::Unsupported("no".into()));
        let out = st.outcomes(Some("driver killed by signal 11".into()), 3);
        assert_eq!(
            kinds(&out),
            [
                vec!["measured", "unsupported"],
                vec!["failed", "failed"],
                vec!["not started", "not started"]
            ]
        );
        match &out[1][1] {
            CellRun::Failed(why) => assert!(why.contains("signal 11"), "{why}"),
            other => panic!("{other:?}"),
        }
        // A process that died before saying anything fails its first part only.
        let out = state_with(&[1, 1], &[]).outcomes(Some("exited".into()), 3);
        assert_eq!(kinds(&out), [vec!["failed"], vec!["not started"]]);
        // One that finished: every part as the driver said.
        let out = state_with(&[1, 1], &[(0, 3), (1, 3)]).outcomes(None, 3);
        assert_eq!(kinds(&out), [vec!["measured"], vec!["measured"]]);
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
            None,
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
            None,
            &Env::default(),
        );
        assert!(own[0].paired.is_none());
        // A twin cell's ratios name the scenario of the cell they are taken against.
        let twin = records(
            "r",
            "handshake-tls13-mldsa44-x25519-full",
            &label,
            &cell,
            Some((&ref_label, &reference)),
            Some("handshake-tls13-ecdsa-p256-x25519-full"),
            &Env::default(),
        );
        assert_eq!(
            twin[0]
                .paired
                .as_ref()
                .unwrap()
                .reference_scenario
                .as_deref(),
            Some("handshake-tls13-ecdsa-p256-x25519-full")
        );
    }

    #[test]
    fn a_twin_group_pairs_each_impl_with_itself_on_the_classical_twin() {
        let a = entry("a", &["main"]);
        let b = entry("b", &["other"]);
        let pq: Scenario = "handshake-tls13-mldsa44-x25519-full".parse().unwrap();
        let twin: Scenario = "handshake-tls13-ecdsa-p256-x25519-full".parse().unwrap();
        let groups = twin_plan(pq, twin, &[&a, &b]);
        assert_eq!(groups.len(), 2);
        for (g, name, driver) in [(&groups[0], "a", "main"), (&groups[1], "b", "other")] {
            assert_eq!(g.driver.path, std::path::PathBuf::from(driver));
            assert!(g.has_reference && !g.companion);
            let reference = g.reference.clone().unwrap();
            assert_eq!(g.cells[0].label, reference, "the twin is the reference");
            assert_eq!(g.cells[0].scenario, Some(twin));
            assert_eq!(g.cells[1].label, (name.to_string(), name.to_string()));
            assert_eq!(g.cells[1].scenario, None, "the group's own scenario");
            assert!(reference.0.contains("twin of handshake-tls13-mldsa44"));
        }
        // The process is told which cell runs the twin.
        let req = GroupRequest {
            certs: std::path::Path::new("c"),
            rounds: 1,
            warmup_ms: 1,
            sample_ms: 1,
            silence_limit: std::time::Duration::from_secs(1),
            core: None,
            heap_shift: 0,
        };
        let cmd = group_command(&[&groups[0]], &req, false);
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(args.contains(&format!("{pq} a,a@{twin} a,a")), "{args:?}");
    }
}
