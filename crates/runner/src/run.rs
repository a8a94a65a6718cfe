//! `tlsmatrix run`: plan the cells (scenario x client x server), run each in its driver,
//! turn samples into records, append them, and print the summary.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};
pub use tlsmatrix_registry::shard::Shard;

use anyhow::{bail, Result};
use indicatif::ProgressBar;
use tlsmatrix_model::glob;
use tlsmatrix_model::impls;
use tlsmatrix_model::protocol::Measure;
use tlsmatrix_model::record::{CellRecord, CellStatus, Env, Metric, Record, CELL_SCHEMA};
use tlsmatrix_model::scenario::{Cores, Scenario};

use crate::groups;
use tlsmatrix_history::results_file::ResultsFile;
use tlsmatrix_history::Store;
use tlsmatrix_registry::registry::{
    self as drivers, CellOutcome, CellRequest, ImplEntry, Registry,
};
use tlsmatrix_report::summary;

pub struct RunOptions {
    pub impls: Vec<String>,
    pub scenarios: Vec<String>,
    pub runs: u32,
    pub out: PathBuf,
    /// Warm-up and sample length; `None` for each kind's own default (paired samples are
    /// short, throughput windows long).
    pub warmup_ms: Option<u64>,
    pub sample_ms: Option<u64>,
    /// Timed handshake and bulk scenarios: passes over the run, a new process per group each.
    pub passes: u32,
    /// Stop sampling a timed group once each of its factors' 95% intervals is within this
    /// share of the factor (0.015 for ±1.5%), after `min_passes` passes (`settle`); `None`:
    /// every group gets every pass.
    pub until_within: Option<f64>,
    pub min_passes: u32,
    /// Read the memory weather before the first pass and after each (`weather`); off, the
    /// records carry none and the run saves building the probe.
    pub weather: bool,
    /// Timed groups (and one-thread cells measured alone) run at once, each on its own core
    /// (at most the number of cores).
    pub lanes: usize,
    pub cell_timeout: Duration,
    pub command_line: String,
    pub db: PathBuf,
    pub measure: Measure,
    /// Only each impl with itself and against the baseline (`--pairs baseline`).
    pub baseline_pairs_only: bool,
    /// Only each impl with itself (`--pairs self`): the allocator comparison, where impls on
    /// different allocators cannot share a process and so cannot pair with each other.
    pub self_pairs_only: bool,
    /// Each impl with itself on each post-quantum handshake, paired with its classical twin
    /// (`--pairs twins`; implies `self_pairs_only`).
    pub twins: bool,
    /// This run's share of the scenarios (`--shard K/N`).
    pub shard: Shard,
    /// A run id to use instead of a new one, so that shards store into one run.
    pub run_id: Option<String>,
    /// Print every pair's table and each unmeasured cell's reason after the run.
    pub verbose: bool,
}

/// One (scenario, client, server) and what became of it.
pub struct Cell {
    pub scenario: Scenario,
    pub client: String,
    pub server: String,
    pub outcome: CellOutcome,
}

/// Turns `--scenario` arguments into scenarios: exact ids are parsed (so a typo gets the
/// parser's explanation), patterns are matched against the catalogue.
pub fn select_scenarios(args: &[String]) -> Result<Vec<Scenario>> {
    if args.is_empty() {
        return Ok(Scenario::default_suite());
    }
    let catalogue = Scenario::catalogue();
    let mut out: Vec<Scenario> = Vec::new();
    for arg in args.iter().flat_map(|a| a.split(',')).map(str::trim) {
        if arg.is_empty() {
            continue;
        }
        let found: Vec<Scenario> = if glob::is_pattern(arg) {
            let m: Vec<_> = catalogue
                .iter()
                .copied()
                .filter(|s| glob::matches(arg, &s.to_string()))
                .collect();
            if m.is_empty() {
                bail!("scenario pattern '{arg}' matches no scenario; `tlsmatrix list` shows them");
            }
            m
        } else {
            vec![arg.parse()?]
        };
        for s in found {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    if out.is_empty() {
        bail!("--scenario names no scenario");
    }
    Ok(out)
}

/// The impls to compare, each checked to run the library its name promises.
pub(crate) fn select_impls<'r>(reg: &'r Registry, args: &[String]) -> Result<Vec<&'r ImplEntry>> {
    let mut out: Vec<&ImplEntry> = Vec::new();
    if args.is_empty() {
        out.extend(reg.defaults());
    }
    for name in args.iter().flat_map(|a| a.split(',')).map(str::trim) {
        if name.is_empty() {
            continue;
        }
        // A pattern takes every impl it matches, allocator variants included.
        let found: Vec<&ImplEntry> = if tlsmatrix_model::glob::is_pattern(name) {
            let m: Vec<_> = reg
                .impls
                .iter()
                .filter(|e| tlsmatrix_model::glob::matches(name, &e.name))
                .collect();
            if m.is_empty() {
                bail!(
                    "--impl {name} matches no impl; available: {}",
                    reg.names().join(", ")
                );
            }
            m
        } else {
            vec![reg.get(name)?]
        };
        for entry in found {
            if out.iter().all(|e| e.name != entry.name) {
                out.push(entry);
            }
        }
    }
    for entry in &out {
        // An impl the table knows must run the library its row names; one it does not know
        // (a test's fake driver) cannot be held to anything, and `run` refuses to measure it.
        if impls::row(&entry.name).is_some() && !impls::version_matches(&entry.name, &entry.version)
        {
            bail!(
                "impl '{}' runs {}, not the library its name promises; rebuild its driver",
                entry.name,
                entry.version
            );
        }
    }
    Ok(out)
}

/// A private folder for callgrind's dumps, removed when the run ends however it ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new(run_id: &str) -> Result<Scratch> {
        let dir = std::env::temp_dir().join(format!("tlsmatrix-{run_id}"));
        std::fs::create_dir_all(&dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run_id(now: SystemTime) -> String {
    format!(
        "{}-{:04x}",
        tlsmatrix_registry::env::compact(now),
        std::process::id() & 0xffff
    )
}

/// "3m05s" or "42s".
fn eta(secs: f64) -> String {
    let s = secs.round() as u64;
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Records for a measured cell, one per metric, after checking the driver ran the versions
/// the registry promised.
fn records_for(
    cell: &Cell,
    expected: [&ImplEntry; 2],
    runs: u32,
    run_id: &str,
    env: &Env,
) -> Result<Vec<Record>, String> {
    let CellOutcome::Measured {
        client_version,
        server_version,
        samples,
        trace,
    } = &cell.outcome
    else {
        return Ok(Vec::new());
    };
    for (entry, reported) in expected.iter().zip([client_version, server_version]) {
        if *reported != entry.version {
            return Err(format!(
                "{} reported version '{reported}' while measuring, but its driver lists '{}'",
                entry.name, entry.version
            ));
        }
    }
    if samples.len() != runs as usize {
        return Err(format!(
            "driver produced {} samples where {runs} were asked for",
            samples.len()
        ));
    }
    let mut by_metric: BTreeMap<Metric, Vec<f64>> = BTreeMap::new();
    for sample in samples {
        for &(m, v) in sample {
            if !v.is_finite() || v < 0.0 || (v == 0.0 && !m.may_be_zero()) {
                return Err(format!("driver produced an impossible {m} of {v}"));
            }
            by_metric.entry(m).or_default().push(v);
        }
    }
    Ok(by_metric
        .into_iter()
        .filter_map(|(metric, samples)| {
            let mut r = Record::from_samples(
                run_id,
                &cell.scenario.to_string(),
                (&cell.client, client_version),
                (&cell.server, server_version),
                metric,
                samples,
                env.clone(),
            )?;
            if metric == Metric::PathCpuNs {
                r.trace = trace.clone();
            }
            Some(r)
        })
        .collect())
}

/// The line that says why a cell has no figures, if it has none.
fn not_measured(cell: &Cell, run_id: &str) -> Option<CellRecord> {
    let (outcome, reason) = match &cell.outcome {
        CellOutcome::Measured { .. } => return None,
        CellOutcome::Unsupported(r) => (CellStatus::Unsupported, r),
        CellOutcome::Failed(r) => (CellStatus::Failed, r),
    };
    Some(CellRecord {
        schema: CELL_SCHEMA.into(),
        run_id: run_id.into(),
        scenario: cell.scenario.to_string(),
        client: cell.client.clone(),
        server: cell.server.clone(),
        outcome,
        reason: reason.clone(),
    })
}

/// Where finished cells go: the results file and the database (each cell in one write and one
/// transaction), the summary's inputs, and a line for the user.
struct Sink {
    run_id: String,
    results: ResultsFile,
    store: Store,
    bar: ProgressBar,
    interactive: bool,
    started: Instant,
    planned: usize,
    cells: Vec<Cell>,
    records: Vec<Record>,
    cell_lines: Vec<CellRecord>,
}

impl Sink {
    fn finish(&mut self, cell: Cell, records: Vec<Record>) -> Result<()> {
        let line = not_measured(&cell, &self.run_id);
        self.results.append(&records, line.as_ref())?;
        self.store.add_cell(&records, line.as_ref())?;
        self.records.extend(records);
        self.cell_lines.extend(line);
        let status = match &cell.outcome {
            CellOutcome::Measured { .. } => "ok".to_string(),
            CellOutcome::Unsupported(r) => format!("unsupported: {r}"),
            CellOutcome::Failed(r) => format!("FAILED: {r}"),
        };
        let line = format!(
            "{} {} -> {}: {status}",
            cell.scenario, cell.client, cell.server
        );
        let failed = matches!(cell.outcome, CellOutcome::Failed(_));
        // Counted before the line is printed, so that the line counts its own cell.
        self.cells.push(cell);
        if self.interactive {
            if failed {
                self.bar.println(line);
            }
        } else {
            self.log(&line);
        }
        Ok(())
    }

    /// Without a terminal there is no bar, so each line carries the progress and estimate
    /// instead, from the samples taken so far (the unit the bar counts).
    fn log(&self, text: &str) {
        let (done, all) = (self.bar.position(), self.bar.length().unwrap_or(0).max(1));
        let left = if done == 0 {
            "?".to_string()
        } else {
            let spent = self.started.elapsed().as_secs_f64();
            eta(spent / done as f64 * all.saturating_sub(done) as f64)
        };
        // Paired cells are written only after their last pass, so the share of samples taken
        // is the progress; the cell count says what is already on disk.
        eprintln!(
            "[{:.0}% of samples, {}/{} cells written, ~{left} left] {text}",
            100.0 * done as f64 / all as f64,
            self.cells.len(),
            self.planned,
        );
    }
}

/// Runs every cell; returns whether all of them were measured or unsupported. The steps:
/// what to run (scenarios, lanes, impls), the plan (which pairs, which cells sampled in
/// turns), the run's start (its id, store and progress), the cells run apart, the paired
/// groups, and the summary.
pub fn run(opts: RunOptions) -> Result<bool> {
    let scenarios = scenarios_of(&opts)?;
    let cpus = lane_cpus(opts.lanes)?;
    let reg = Registry::discover()?;
    let impls = checked_impls(&reg, &opts)?;
    let twins: Vec<(Scenario, Scenario)> = if opts.twins {
        twin_pairs(&scenarios, opts.measure)?
    } else {
        Vec::new()
    };
    let results = ResultsFile::open(&opts.out)?;
    let store = Store::open(&opts.db)?;
    let certs_dir = write_certs(&opts, &scenarios, &twins)?;
    let plan = plan(&opts, &scenarios, &twins, &impls);

    let env = tlsmatrix_registry::env::capture(opts.command_line.clone());
    let mut sink = start(&opts, &plan, &env, results, store)?;
    let scratch = Scratch::new(&sink.run_id)?;
    let settings = SingleSettings {
        opts: &opts,
        cpus: &cpus,
        certs: &certs_dir,
        scratch: &scratch.0,
        env: &env,
    };
    run_single(&settings, &plan.single, &mut sink)?;
    run_paired(
        &plan.paired,
        &PairedOptions {
            passes: plan.passes,
            until_within: opts.until_within,
            min_passes: opts.min_passes,
            weather: opts.weather,
            lanes: opts.lanes,
            cpus: &cpus,
            rounds: plan.rounds,
            certs: &certs_dir,
            warmup_ms: opts.warmup_ms.unwrap_or(20),
            sample_ms: opts.sample_ms.unwrap_or(5),
            silence_limit: opts.cell_timeout,
            env: &env,
        },
        plan.baseline,
        &mut sink,
    )?;
    summarize(&opts, &impls, sink)
}

/// What `--measure contention` runs without --scenario.
const CONTENTION_SCENARIO: &str = "handshake-tls13-ecdsa-p256-x25519-full";

/// The scenarios to run: the named ones, or the measure's default suite, this shard's part.
fn scenarios_of(opts: &RunOptions) -> Result<Vec<Scenario>> {
    let scenarios = if opts.scenarios.is_empty() && opts.measure == Measure::Wire {
        opts.shard.select(&Scenario::wire_suite())
    } else if opts.scenarios.is_empty() && opts.measure == Measure::Contention {
        // The handshake the report leads with; threads share its server context.
        opts.shard.select(&[CONTENTION_SCENARIO
            .parse()
            .expect("a listed scenario id parses")])
    } else if opts.scenarios.is_empty() && opts.measure == Measure::Floor {
        // A floor is a handshake's: the default suite's handshakes, full and resumed.
        let handshakes: Vec<Scenario> = Scenario::default_suite()
            .into_iter()
            .filter(|s| matches!(s, Scenario::Handshake(_)))
            .collect();
        opts.shard.select(&handshakes)
    } else if opts.scenarios.is_empty() && opts.twins {
        let suite: Vec<Scenario> = tlsmatrix_model::scenario::TWIN_SUITE
            .iter()
            .map(|id| id.parse().expect("a listed scenario id parses"))
            .collect();
        opts.shard.select(&suite)
    } else {
        opts.shard.select(&select_scenarios(&opts.scenarios)?)
    };
    if scenarios.is_empty() {
        bail!(
            "shard {}/{} has no scenario: there are fewer scenarios than shards",
            opts.shard.index,
            opts.shard.count
        );
    }
    Ok(scenarios)
}

/// The CPUs lanes are pinned to: the mask's, as many as a CPU quota (cgroups) leaves; at
/// least one per lane.
fn lane_cpus(lanes: usize) -> Result<Vec<usize>> {
    let cpus: Vec<usize> = drivers::usable_cpus()
        .into_iter()
        .take(std::thread::available_parallelism().map_or(1, |n| n.get()))
        .collect();
    let cores = cpus.len();
    if lanes == 0 || lanes > cores {
        bail!(
            "--lanes {lanes}: this run may use {cores} core(s), and each lane samples on a core of its own"
        );
    }
    Ok(cpus)
}

/// The chosen impls, each with a row in the impl table, and the tools the measure needs.
fn checked_impls<'r>(reg: &'r Registry, opts: &RunOptions) -> Result<Vec<&'r ImplEntry>> {
    let impls = select_impls(reg, &opts.impls)?;
    if let Some(e) = impls.iter().find(|e| impls::row(&e.name).is_none()) {
        bail!(
            "impl '{}' has no row in the impl table (crates/model/src/impls.rs); add one saying \
             which library version it must run before measuring it",
            e.name
        );
    }
    if opts.measure == Measure::Instructions {
        drivers::check_valgrind()?;
    }
    if opts.measure == Measure::Profile {
        drivers::check_perf()?;
    }
    Ok(impls)
}

/// The run's certificates, beside its results file: written here once, before any driver
/// starts, since the Go driver reads them and cannot write them.
fn write_certs(
    opts: &RunOptions,
    scenarios: &[Scenario],
    twins: &[(Scenario, Scenario)],
) -> Result<PathBuf> {
    let certs_dir = opts
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join("certs");
    let mut sigs: Vec<_> = scenarios
        .iter()
        .chain(twins.iter().map(|(_, t)| t))
        .map(|s| s.params().sig)
        .collect();
    sigs.sort();
    sigs.dedup();
    for sig in sigs {
        tlsmatrix_harness::certs::load_or_generate(&certs_dir, sig)?;
    }
    Ok(certs_dir)
}

/// What a run does: its pairs, the cells run apart, the scenarios sampled in turns, and how.
struct Plan<'r> {
    baseline: &'r ImplEntry,
    scenarios: usize,
    pairs: usize,
    single: Vec<(Scenario, &'r ImplEntry, &'r ImplEntry)>,
    paired: Vec<ScenarioGroups<'r>>,
    passes: u32,
    rounds: u32,
}

impl Plan<'_> {
    /// Samples the whole run takes, for its progress bar.
    fn samples(&self, runs: u32) -> u64 {
        let paired: u64 = self
            .paired
            .iter()
            .flat_map(|p| &p.groups)
            .map(|g| (g.cells.len() + usize::from(g.companion)) as u64)
            .sum::<u64>()
            * u64::from(self.rounds * self.passes);
        self.single.len() as u64 * u64::from(runs) + paired
    }

    /// Cells the run writes, a line each.
    /// The cells the run writes: a group's reference is the baseline's pair, written once per
    /// scenario, or a twin group's own classical cell, written with the group.
    fn cells(&self) -> usize {
        let shared = |g: &groups::Group| g.has_reference && g.reference.is_none();
        self.single.len()
            + self
                .paired
                .iter()
                .map(|p| {
                    p.apart.len()
                        + p.groups
                            .iter()
                            .map(|g| g.cells.len() - usize::from(shared(g)))
                            .sum::<usize>()
                        + usize::from(p.groups.iter().any(shared))
                })
                .sum::<usize>()
    }
}

fn plan<'r>(
    opts: &RunOptions,
    scenarios: &[Scenario],
    twins: &[(Scenario, Scenario)],
    impls: &[&'r ImplEntry],
) -> Plan<'r> {
    let baseline = impls[0];
    let wanted = |c: &ImplEntry, v: &ImplEntry| {
        // A ceiling is one library's own AEAD, a profile one stack's time split by side and
        // a setup one library's contexts and connections, a floor one library's crypto and
        // contention one library's context shared by threads, so each impl runs them with
        // itself.
        if matches!(
            opts.measure,
            Measure::Ceiling
                | Measure::Profile
                | Measure::Setup
                | Measure::Floor
                | Measure::Contention
        ) || opts.self_pairs_only
        {
            return c.name == v.name;
        }
        !opts.baseline_pairs_only
            || c.name == v.name
            || c.name == baseline.name
            || v.name == baseline.name
    };
    // Two impls of different drivers cannot share an in-memory pair: such a pair is not
    // planned (the report compares each with the baseline through their own pairs), and
    // the plan says once which it leaves out.
    let (pairs, apart): (Vec<(&ImplEntry, &ImplEntry)>, Vec<_>) = impls
        .iter()
        .flat_map(|&c| impls.iter().map(move |&v| (c, v)))
        .filter(|(c, v)| wanted(c, v))
        .partition(|(c, v)| drivers::shared_driver(c, v).is_some());
    if !apart.is_empty() {
        let names: Vec<String> = apart
            .iter()
            .map(|(c, v)| format!("{} -> {}", c.name, v.name))
            .collect();
        eprintln!(
            "not planned: {} pair(s) whose impls live in different drivers and so cannot share an in-memory pair ({}); each impl is compared through its own pair",
            apart.len(),
            names.join(", ")
        );
    }
    let grouped = |s: &Scenario| opts.measure == Measure::Time && groups::is_grouped(s);
    let single: Vec<(Scenario, &ImplEntry, &ImplEntry)> = scenarios
        .iter()
        .filter(|s| !grouped(s))
        .flat_map(|s| pairs.iter().map(move |&(c, v)| (*s, c, v)))
        .collect();
    let paired: Vec<ScenarioGroups> = scenarios
        .iter()
        .filter(|s| grouped(s))
        .map(|s| {
            let (groups, apart) = match twins.iter().find(|(pq, _)| pq == s) {
                Some(&(pq, twin)) => (groups::twin_plan(pq, twin, impls), Vec::new()),
                None => groups::plan(*s, &pairs, baseline),
            };
            ScenarioGroups {
                scenario: *s,
                groups,
                apart,
            }
        })
        .collect();
    // No pass without a round: fewer samples than passes means fewer passes.
    let passes = opts.passes.clamp(1, opts.runs.max(1));
    Plan {
        baseline,
        scenarios: scenarios.len(),
        pairs: pairs.len(),
        single,
        paired,
        passes,
        rounds: opts.runs.div_ceil(passes),
    }
}

/// The run begins: its id in the store, its progress bar, and one line saying what it does.
fn start(
    opts: &RunOptions,
    plan: &Plan,
    env: &Env,
    results: ResultsFile,
    mut store: Store,
) -> Result<Sink> {
    let run_id = opts
        .run_id
        .clone()
        .unwrap_or_else(|| run_id(SystemTime::now()));
    store.begin_run(&run_id, opts.measure.as_str(), env)?;
    let interactive = std::io::stderr().is_terminal();
    let bar = crate::progress::bar(plan.samples(opts.runs), "samples");
    if !interactive {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    eprintln!(
        "run {run_id}: {} scenarios x {} pairs{}, {} samples each{} -> {}",
        plan.scenarios,
        plan.pairs,
        if opts.twins {
            ", each with itself on the classical twin too".to_string()
        } else {
            format!(" (+ an A/A copy of {})", plan.baseline.name)
        },
        opts.runs,
        if plan.paired.is_empty() {
            String::new()
        } else {
            format!(
                ", timed ones paired in {} passes of {} rounds, {} group(s) at once",
                plan.passes, plan.rounds, opts.lanes
            )
        },
        results.path().display()
    );
    Ok(Sink {
        run_id,
        results,
        store,
        bar,
        interactive,
        started: Instant::now(),
        planned: plan.cells(),
        cells: Vec::new(),
        records: Vec::new(),
        cell_lines: Vec::new(),
    })
}

/// What every cell run apart shares.
struct SingleSettings<'a> {
    opts: &'a RunOptions,
    cpus: &'a [usize],
    certs: &'a Path,
    scratch: &'a Path,
    env: &'a Env,
}

/// How many single cells run at once, and whether each is pinned to its lane's core:
/// instruction counts, wire figures and heap bytes do not depend on what else the machine
/// runs, so one per core. One-thread timed cells whose figures are counts or are taken in turns
/// inside the process (own-AEAD ceilings, OS counters), compare no two cells side by side
/// anyway (one-thread throughput windows) or are shares of one thread's own CPU time (perf
/// profiles, whose perf runs on the driver's pinned core too): `lanes` at once, each pinned to
/// its own core as paired groups are. Every-core throughput: alone.
fn single_lanes(
    measure: Measure,
    scenario: &Scenario,
    lanes: usize,
    cores: usize,
) -> (usize, bool) {
    if matches!(measure, Measure::Instructions | Measure::Wire)
        || matches!(scenario, Scenario::Memory(_))
    {
        (cores, false)
    } else if matches!(
        measure,
        Measure::Ceiling | Measure::Counters | Measure::Setup | Measure::Floor | Measure::Profile
    ) || matches!(scenario, Scenario::Throughput(t) if t.cores == Cores::One)
    {
        (lanes, lanes > 1)
    } else {
        (1, false)
    }
}

/// Runs the cells that are not sampled in turns, each in a driver of its own, as many at once
/// as [`single_lanes`] says. Cells are written in plan order.
fn run_single(
    settings: &SingleSettings,
    single: &[(Scenario, &ImplEntry, &ImplEntry)],
    sink: &mut Sink,
) -> Result<()> {
    let opts = settings.opts;
    let side_by_side =
        |s: &Scenario| single_lanes(opts.measure, s, opts.lanes, settings.cpus.len());
    let bar = sink.bar.clone();
    for segment in single.chunk_by(|a, b| side_by_side(&a.0) == side_by_side(&b.0)) {
        let (jobs, pinned) = side_by_side(&segment[0].0);
        crate::lanes::in_order(
            segment.len(),
            jobs,
            |i, lane| {
                measure_single(
                    settings,
                    &bar,
                    &segment[i],
                    pinned.then(|| settings.cpus[lane]),
                )
            },
            |i, outcome| -> Result<()> {
                let (scenario, client_entry, server_entry) = segment[i];
                let mut cell = Cell {
                    scenario,
                    client: client_entry.name.clone(),
                    server: server_entry.name.clone(),
                    outcome,
                };
                let records = records_for(
                    &cell,
                    [client_entry, server_entry],
                    opts.runs,
                    &sink.run_id,
                    settings.env,
                )
                .unwrap_or_else(|why| {
                    cell.outcome = CellOutcome::Failed(why);
                    Vec::new()
                });
                sink.finish(cell, records)
            },
        )?;
    }
    Ok(())
}

/// A sample's time where `--sample-ms` names none. A profile sample needs a few hundred perf
/// samples per side at 4 kHz: a bulk transfer's sides share its time about evenly, but a
/// handshake's server may take a quarter of it, and perf samples CPU time, which a loaded
/// machine gives the thread less of (200 ms charged 78-89 samples to servers with another
/// build running beside). `make report` takes one sample a cell, as for bulk: most of a
/// cell's time is fixed (the driver starting, perf attaching and naming its samples), and one
/// long sample gives each side as many perf samples as three short ones.
fn default_sample_ms(measure: Measure, scenario: Scenario) -> u64 {
    match (measure, scenario) {
        (Measure::Profile, Scenario::Handshake(_)) => 900,
        (Measure::Profile, _) => 200,
        _ => 100,
    }
}

/// One cell run apart, in its driver: measured, or refused with the reason.
fn measure_single(
    settings: &SingleSettings,
    bar: &ProgressBar,
    &(scenario, client_entry, server_entry): &(Scenario, &ImplEntry, &ImplEntry),
    core: Option<usize>,
) -> CellOutcome {
    let opts = settings.opts;
    let (client, server) = (&client_entry.name, &server_entry.name);
    let id = scenario.to_string();
    bar.set_message(format!("{id} {client} -> {server}"));
    let shared = drivers::shared_driver(client_entry, server_entry);
    let req = CellRequest {
        driver: shared.unwrap_or(client_entry.driver()),
        core,
        scenario: &id,
        client,
        server,
        certs: settings.certs,
        runs: opts.runs,
        warmup_ms: opts.warmup_ms.unwrap_or(200),
        sample_ms: opts
            .sample_ms
            .unwrap_or(default_sample_ms(opts.measure, scenario)),
        silence_limit: opts.cell_timeout,
        measure: opts.measure,
        scratch: settings.scratch,
    };
    let mut ticks = 0u64;
    // Cross-library pairs must live in one driver to run in memory.
    let refused = client_entry
        .refusal(opts.measure)
        .or_else(|| server_entry.refusal(opts.measure));
    let outcome = if let Some(why) = refused {
        CellOutcome::Unsupported(why)
    } else if shared.is_none() {
        CellOutcome::Unsupported(apart_reason(client, server))
    } else {
        drivers::run_cell(&req, || {
            ticks += 1;
            bar.inc(1);
        })
    };
    // A cell that ended early still moves the bar by all its samples.
    bar.inc(u64::from(opts.runs).saturating_sub(ticks));
    outcome
}

/// The run ends: stored as finished, its tables printed, one line of counts.
fn summarize(opts: &RunOptions, impls: &[&ImplEntry], mut sink: Sink) -> Result<bool> {
    sink.bar.finish_and_clear();
    sink.store.finish_run(
        &sink.run_id,
        &tlsmatrix_registry::env::rfc3339(SystemTime::now()),
    )?;
    let names: Vec<String> = impls.iter().map(|e| e.name.clone()).collect();
    print!(
        "{}",
        summary::render(&sink.records, &sink.cell_lines, &names, opts.verbose)
    );
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    let count = |f: fn(&CellOutcome) -> bool| sink.cells.iter().filter(|c| f(&c.outcome)).count();
    let failed = count(|o| matches!(o, CellOutcome::Failed(_)));
    eprintln!(
        "run {} finished in {:.0} s: {} cells measured, {} unsupported, {failed} failed; records in {} and {}",
        sink.run_id,
        sink.started.elapsed().as_secs_f64(),
        count(|o| matches!(o, CellOutcome::Measured { .. })),
        count(|o| matches!(o, CellOutcome::Unsupported(_))),
        sink.results.path().display(),
        sink.store.path().display()
    );
    Ok(failed == 0)
}

/// `--pairs twins`: each named scenario with its classical twin, or why it cannot be one.
fn twin_pairs(scenarios: &[Scenario], measure: Measure) -> Result<Vec<(Scenario, Scenario)>> {
    if measure != Measure::Time {
        bail!(
            "--pairs twins pairs timed handshakes; it takes no --measure {}",
            measure.as_str()
        );
    }
    scenarios
        .iter()
        .map(|s| match s.classical_twin() {
            Some(twin) => Ok((*s, twin)),
            None => bail!("--pairs twins sets post-quantum handshakes beside their classical twins, and {s} is no post-quantum handshake; name ML-DSA or ML-KEM handshakes, e.g. 'handshake-tls13-mldsa44-*-full'"),
        })
        .collect()
}

fn apart_reason(client: &str, server: &str) -> String {
    format!(
        "{client} and {server} are in different drivers, so they cannot share an in-memory pair"
    )
}

struct PairedOptions<'a> {
    passes: u32,
    until_within: Option<f64>,
    min_passes: u32,
    weather: bool,
    /// Groups sampled at once, each in its own process on its own core.
    lanes: usize,
    /// The CPUs lanes are pinned to, at least `lanes` of them.
    cpus: &'a [usize],
    rounds: u32,
    certs: &'a Path,
    warmup_ms: u64,
    sample_ms: u64,
    silence_limit: Duration,
    env: &'a Env,
}

/// A grouped scenario's plan: its groups, and the pairs that run apart (see `groups::plan`).
struct ScenarioGroups<'a> {
    scenario: Scenario,
    groups: Vec<groups::Group<'a>>,
    apart: Vec<(&'a ImplEntry, &'a ImplEntry)>,
}

/// The grouped scenarios, in passes: each pass runs every group of every scenario once, in a
/// new process pinned to a core, `o.lanes` groups at a time (each on its own core, the cores
/// rotating from pass to pass); a scenario's cells are written after its last pass.
fn run_paired(
    plan: &[ScenarioGroups],
    o: &PairedOptions,
    baseline: &ImplEntry,
    sink: &mut Sink,
) -> Result<()> {
    if plan.is_empty() {
        return Ok(());
    }
    let mut got = Gathering {
        reference: (baseline.name.clone(), baseline.name.clone()),
        gathered: (0..plan.len()).map(|_| BTreeMap::new()).collect(),
        ended: (0..plan.len()).map(|_| BTreeMap::new()).collect(),
        block: 0,
    };
    let mut weather = if o.weather {
        sink.bar.set_message("probing the memory weather");
        match crate::weather::PassWeather::start(o.cpus[0]) {
            Ok(w) => Some(w),
            Err(why) => {
                sink.log(&format!("memory weather not probed: {why}"));
                None
            }
        }
    } else {
        None
    };
    // The groups that have settled (`settle`), per scenario, by index: no more passes.
    let mut settled: Vec<Vec<bool>> = plan.iter().map(|p| vec![false; p.groups.len()]).collect();
    for pass in 0..o.passes as usize {
        let blocks = pass_blocks(plan, &got.ended, &settled, &got.reference, pass);
        if blocks.is_empty() {
            break;
        }
        if let Some(w) = &mut weather {
            w.pass_starts(got.block);
        }
        let batches = pass_batches(&blocks, pass);
        let bar = sink.bar.clone();
        crate::lanes::in_order(
            batches.len(),
            o.lanes,
            |bi, lane| sample_batch(&blocks, &batches[bi], pass, lane, o, baseline, &bar),
            |bi, runs| -> Result<()> {
                for (&i, run) in batches[bi].iter().zip(runs) {
                    got.take(plan, &blocks[i], run, pass, o, sink);
                }
                Ok(())
            },
        )?;
        if let Some(w) = &mut weather {
            w.pass_ends();
        }
        if let Some(within) = o.until_within {
            settle_groups(plan, &got, &mut settled, pass as u32 + 1, within, o, sink);
        }
    }
    let by_block = weather.as_ref().map(|w| w.of_blocks(got.block));
    for (si, sg) in plan.iter().enumerate() {
        for &(c, s) in &sg.apart {
            let cell = Cell {
                scenario: sg.scenario,
                client: c.name.clone(),
                server: s.name.clone(),
                outcome: CellOutcome::Unsupported(apart_reason(&c.name, &s.name)),
            };
            sink.finish(cell, Vec::new())?;
        }
        finish_scenario(
            sg,
            &got.gathered[si],
            &mut got.ended[si],
            &got.reference,
            o.env,
            by_block.as_ref(),
            sink,
        )?;
    }
    Ok(())
}

/// After a pass, marks the groups whose factors' intervals are all within `within` (and that
/// have had `o.min_passes` passes) as settled, takes their remaining samples off the
/// progress bar, and says how many settled.
fn settle_groups(
    plan: &[ScenarioGroups],
    got: &Gathering,
    settled: &mut [Vec<bool>],
    passes_done: u32,
    within: f64,
    o: &PairedOptions,
    sink: &Sink,
) {
    if passes_done >= o.passes {
        return;
    }
    let mut newly = 0usize;
    // The open groups' widest half-widths (a group without pairs yet counts as unbounded).
    let mut open: Vec<f64> = Vec::new();
    for (si, sg) in plan.iter().enumerate() {
        for (gi, g) in sg.groups.iter().enumerate() {
            if settled[si][gi] {
                continue;
            }
            let reference = g.reference.as_ref().unwrap_or(&got.reference);
            // A cell that ended has no samples to judge and takes no more passes: only the
            // live cells count, and a group with none but the reference's is no longer sampled.
            let g = without_ended(g, &got.ended[si]);
            if g.cells.iter().all(|c| &c.label == reference) {
                continue;
            }
            let widest = crate::settle::widest_half_width(&g, &got.gathered[si], reference);
            if !crate::settle::settled(widest, passes_done, o.min_passes, within) {
                open.push(widest.unwrap_or(f64::INFINITY));
                continue;
            }
            settled[si][gi] = true;
            newly += 1;
            let left = (g.cells.len() + usize::from(g.companion)) as u64
                * u64::from(o.rounds * (o.passes - passes_done));
            if let Some(len) = sink.bar.length() {
                sink.bar.set_length(len.saturating_sub(left));
            }
        }
    }
    // From the first pass that may stop a group on, every pass says how far the open groups
    // are from the rule, so that a run whose groups never settle shows by how much.
    if passes_done >= o.min_passes {
        let line = format!(
            "after pass {passes_done}: {newly} group(s) settled within ±{:.1}%, {} still sampled{}",
            within * 100.0,
            open.len(),
            crate::settle::spread(&mut open)
        );
        if sink.interactive {
            sink.bar.println(line);
        } else {
            sink.log(&line);
        }
    }
}

/// One process's turn in a pass: the batch's groups sampled in turns, one core; a duet also
/// samples the baseline's own pair in the baseline's driver beside them.
fn sample_batch(
    blocks: &[PassBlock],
    batch: &[usize],
    pass: usize,
    lane: usize,
    o: &PairedOptions,
    baseline: &ImplEntry,
    bar: &ProgressBar,
) -> Vec<BlockRun> {
    let first = &blocks[batch[0]];
    bar.set_message(format!(
        "pass {}/{} {} ({} scenario(s) in one process)",
        pass + 1,
        o.passes,
        first.group.subject,
        batch.len()
    ));
    let req = groups::GroupRequest {
        certs: o.certs,
        rounds: o.rounds,
        warmup_ms: o.warmup_ms,
        sample_ms: o.sample_ms,
        silence_limit: o.silence_limit,
        core: Some(o.cpus[(pass + lane) % o.cpus.len()]),
        heap_shift: tlsmatrix_model::allocator::pass_heap_shift(pass, o.passes as usize),
    };
    let parts: Vec<&groups::Group> = batch.iter().map(|&i| &blocks[i].group).collect();
    if !first.duet {
        return groups::run_batch(&parts, &req, || bar.inc(1))
            .into_iter()
            .map(|mine| BlockRun {
                mine,
                companion: None,
            })
            .collect();
    }
    // Groups without the reference in their driver sample in turns with the baseline's own
    // pair in the baseline's driver, which becomes their reference for these blocks.
    let companions: Vec<groups::Group> = parts
        .iter()
        .map(|g| groups::own_pair(g.scenario, baseline))
        .collect();
    let theirs: Vec<&groups::Group> = companions.iter().collect();
    let [mine, theirs] = groups::run_duet([&parts, &theirs], &req, || bar.inc(1));
    mine.into_iter()
        .zip(theirs)
        .zip(&companions)
        .map(|((mine, theirs), companion)| BlockRun {
            mine,
            companion: Some(theirs.into_iter().next().map_or_else(
                || Err(Box::new(CellOutcome::Failed("no result".into()))),
                |run| checked_run(&companion.cells[0], run, o.rounds),
            )),
        })
        .collect()
}

/// What the passes have gathered, per scenario of the plan: each cell's blocks of samples,
/// and the cells that ended (failed or refused) with their outcome.
struct Gathering {
    reference: Label,
    gathered: Vec<BTreeMap<Label, groups::Gathered>>,
    ended: Vec<BTreeMap<Label, CellOutcome>>,
    /// Blocks taken so far, over all passes: the next block's number.
    block: u32,
}

impl Gathering {
    /// Takes one block's samples (and a duet's reference), or ends the cells it failed.
    fn take(
        &mut self,
        plan: &[ScenarioGroups],
        b: &PassBlock,
        run: BlockRun,
        pass: usize,
        o: &PairedOptions,
        sink: &mut Sink,
    ) {
        let (si, g) = (b.scenario, &b.group);
        let id = plan[si].scenario.to_string();
        let block = self.block;
        match run.companion {
            Some(Ok((versions, samples))) => {
                self.gathered[si]
                    .entry(self.reference.clone())
                    .or_default()
                    .add(block, versions, samples);
            }
            Some(Err(other)) => sink.log(&format!(
                "{id} pass {}: the baseline beside {} gave no reference ({other:?}); that block is unpaired",
                pass + 1,
                b.group.subject
            )),
            None => {}
        }
        if !sink.interactive {
            sink.log(&format!(
                "{id} pass {}/{}: {} sampled in turns{}",
                pass + 1,
                o.passes,
                g.cells
                    .iter()
                    .map(|c| format!("{} -> {}", c.label.0, c.label.1))
                    .collect::<Vec<_>>()
                    .join(", "),
                if b.duet {
                    format!(
                        ", with {} -> {} in its own driver",
                        self.reference.0, self.reference.1
                    )
                } else {
                    String::new()
                }
            ));
        }
        for (cell, run) in g.cells.iter().zip(run.mine) {
            if self.ended[si].contains_key(&cell.label) {
                continue; // the reference, ended in an earlier group of this pass
            }
            if matches!(run, groups::CellRun::NotStarted) {
                continue; // its process ended in an earlier scenario: no block this pass
            }
            match checked_run(cell, run, o.rounds) {
                Ok((versions, samples)) => self.gathered[si]
                    .entry(cell.label.clone())
                    .or_default()
                    .add(block, versions, samples),
                Err(outcome) => {
                    self.ended[si].insert(cell.label.clone(), *outcome);
                }
            }
        }
        self.block += 1;
    }
}

/// A client and a server impl, by name.
type Label = (String, String);

/// One group of one scenario, as a pass runs it.
struct PassBlock<'a> {
    scenario: usize,
    group: groups::Group<'a>,
    /// Sampled in turns with the baseline's own pair in the baseline's driver.
    duet: bool,
}

/// What one block gave: its own cells, and the companion reference of a duet (checked).
struct BlockRun {
    mine: Vec<groups::CellRun>,
    companion: Option<Result<MeasuredRun, Box<CellOutcome>>>,
}

/// The versions a cell's drivers reported, and its samples.
type MeasuredRun = ((String, String), Vec<groups::RoundSample>);

/// A pass's blocks in plan order, without the cells that ended in earlier passes, each
/// group's cells rotated by the pass. A driver sets its cells up in the order given, and the
/// last one set up received 2-3% faster than the others with the very same code (three
/// copies of the baseline in one process: 1.002 and 1.028 against the first, AES-GCM in 16
/// KiB records, over 12 processes; its buffers come last off the heap): the A/A copy, always
/// last, came out 1.015-1.023 in every run. Rotated, each cell is last in its share of the
/// passes, and the median and the interval over passes take that in.
fn pass_blocks<'a>(
    plan: &[ScenarioGroups<'a>],
    ended: &[BTreeMap<Label, CellOutcome>],
    settled: &[Vec<bool>],
    reference: &Label,
    pass: usize,
) -> Vec<PassBlock<'a>> {
    let mut blocks = Vec::new();
    for (si, sg) in plan.iter().enumerate() {
        for (gi, group) in sg.groups.iter().enumerate() {
            if settled[si][gi] {
                continue;
            }
            let mut g = without_ended(group, &ended[si]);
            if !g.cells.is_empty() {
                let n = g.cells.len();
                g.cells.rotate_left(pass % n);
            }
            let own = g.reference.clone();
            let reference = own.as_ref().unwrap_or(reference);
            g.has_reference = g.cells.iter().any(|c| &c.label == reference);
            // A group whose other cells all ended has nothing left to pair with.
            if g.cells.iter().all(|c| &c.label == reference) {
                continue;
            }
            let duet = g.companion && !ended[si].contains_key(reference);
            blocks.push(PassBlock {
                scenario: si,
                group: g,
                duet,
            });
        }
    }
    blocks
}

/// A group without the cells that ended (unsupported or failed) in earlier passes.
fn without_ended<'a>(
    group: &groups::Group<'a>,
    ended: &BTreeMap<Label, CellOutcome>,
) -> groups::Group<'a> {
    let mut g = group.clone();
    g.cells.retain(|c| !ended.contains_key(&c.label));
    g
}

/// A pass's blocks gathered into batches, one process each: the blocks of one subject in
/// one driver (and sampled alone or in duet alike), over every scenario. Starting a driver
/// costs tens of milliseconds (aws-lc seeds its random generator from CPU jitter, about 30
/// ms of CPU, in every process that draws from it), which one process per scenario paid
/// some 3,400 times a run. Each batch's scenarios rotate by the pass, so that no scenario is
/// always the one a fresh process starts with.
fn pass_batches(blocks: &[PassBlock], pass: usize) -> Vec<Vec<usize>> {
    let mut batches: Vec<Vec<usize>> = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let same = |other: &PassBlock| {
            other.group.subject == b.group.subject
                && other.group.driver == b.group.driver
                && other.duet == b.duet
        };
        match batches.iter_mut().find(|batch| same(&blocks[batch[0]])) {
            Some(batch) => batch.push(i),
            None => batches.push(vec![i]),
        }
    }
    for batch in &mut batches {
        let n = batch.len();
        batch.rotate_left(pass % n);
    }
    batches
}

/// A group's cell's run, checked: its versions and samples when it ran what the registry
/// promised and gave a sample every round, else how the cell ended.
fn checked_run(
    cell: &groups::GroupCell,
    run: groups::CellRun,
    rounds: u32,
) -> Result<MeasuredRun, Box<CellOutcome>> {
    let (versions, samples) = match run {
        groups::CellRun::Measured { versions, samples } => (versions, samples),
        groups::CellRun::Unsupported(r) => return Err(Box::new(CellOutcome::Unsupported(r))),
        groups::CellRun::Failed(r) => return Err(Box::new(CellOutcome::Failed(r))),
        groups::CellRun::NotStarted => {
            return Err(Box::new(CellOutcome::Failed(
                "its process ended before it began".into(),
            )))
        }
    };
    for (entry, reported) in [(cell.client, &versions.0), (cell.server, &versions.1)] {
        if *reported != entry.version {
            return Err(Box::new(CellOutcome::Failed(format!(
                "{} reported version '{reported}' while measuring, but its driver lists '{}'",
                entry.name, entry.version
            ))));
        }
    }
    if samples.len() != rounds as usize {
        return Err(Box::new(CellOutcome::Failed(format!(
            "driver produced {} samples where {rounds} rounds were asked for",
            samples.len()
        ))));
    }
    Ok((versions, samples))
}

/// Writes every cell of a scenario once its passes are done: records with blocks and ratios
/// to the reference and the weather of their blocks, or the reason it has none.
fn finish_scenario(
    plan: &ScenarioGroups,
    gathered: &BTreeMap<(String, String), groups::Gathered>,
    ended: &mut BTreeMap<(String, String), CellOutcome>,
    reference: &(String, String),
    env: &Env,
    weather: Option<&BTreeMap<u32, tlsmatrix_model::weather::Weather>>,
    sink: &mut Sink,
) -> Result<()> {
    let mut seen: Vec<&(String, String)> = Vec::new();
    for (group, cell) in plan
        .groups
        .iter()
        .flat_map(|g| g.cells.iter().map(move |c| (g, c)))
    {
        if seen.contains(&&cell.label) {
            continue;
        }
        seen.push(&cell.label);
        let scenario = cell.scenario.unwrap_or(plan.scenario);
        let id = scenario.to_string();
        // A twin group's cells pair with its own reference cell, which runs another scenario.
        let (reference, reference_scenario) = match &group.reference {
            Some(own) => (
                own,
                group
                    .cells
                    .iter()
                    .find(|c| &c.label == own)
                    .and_then(|c| c.scenario)
                    .map(|s| s.to_string()),
            ),
            None => (reference, None),
        };
        let reference_data = gathered.get(reference).map(|g| (reference, g));
        let (outcome, records) = match (ended.remove(&cell.label), gathered.get(&cell.label)) {
            (Some(o), _) => (o, Vec::new()),
            (None, Some(g)) => {
                let mut records = groups::records(
                    &sink.run_id,
                    &id,
                    &cell.label,
                    g,
                    reference_data,
                    reference_scenario.as_deref().filter(|r| *r != id),
                    env,
                );
                if let Some(w) = weather {
                    crate::weather::attach(&mut records, w);
                }
                let (client_version, server_version) = g.versions.clone().unwrap_or_default();
                (
                    CellOutcome::Measured {
                        client_version,
                        server_version,
                        samples: Vec::new(),
                        trace: None,
                    },
                    records,
                )
            }
            (None, None) => (CellOutcome::Failed("no samples".into()), Vec::new()),
        };
        sink.finish(
            Cell {
                scenario,
                client: cell.label.0.clone(),
                server: cell.label.1.clone(),
                outcome,
            },
            records,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(args: &[&str]) -> Result<Vec<String>> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        Ok(select_scenarios(&args)?
            .iter()
            .map(|s| s.to_string())
            .collect())
    }

    #[test]
    fn patterns_exact_ids_and_lists() {
        assert_eq!(ids(&[]).unwrap().len(), 24);
        let tls13 = ids(&["handshake-tls13-*"]).unwrap();
        assert!(tls13.iter().all(|s| s.starts_with("handshake-tls13-")));
        assert_eq!(
            ids(&["bulk-tls13-aes-128-gcm-16k,bulk-tls13-aes-128-gcm-16k"]).unwrap(),
            ["bulk-tls13-aes-128-gcm-16k"]
        );
    }

    #[test]
    fn shards_partition_the_scenarios_and_keep_each_whole() {
        let all = select_scenarios(&[]).unwrap();
        for n in 1..=5u32 {
            let mut seen: Vec<Scenario> = Vec::new();
            for k in 1..=n {
                let shard: Shard = format!("{k}/{n}").parse().unwrap();
                seen.extend(shard.select(&all));
            }
            seen.sort_by_key(|s| s.to_string());
            let mut want = all.clone();
            want.sort_by_key(|s| s.to_string());
            assert_eq!(seen, want, "{n} shards: every scenario once");
        }
        for bad in ["0/2", "3/2", "1", "a/b", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn profiles_run_in_lanes_pinned_and_every_core_windows_alone() {
        let sc = |id: &str| -> Scenario { id.parse().unwrap() };
        let hs = sc("handshake-tls13-ecdsa-p256-x25519-full");
        let bulk = sc("bulk-tls13-aes-128-gcm-16k");
        for s in [&hs, &bulk] {
            assert_eq!(single_lanes(Measure::Profile, s, 2, 2), (2, true), "{s}");
            assert_eq!(single_lanes(Measure::Profile, s, 1, 2), (1, false), "{s}");
            assert_eq!(
                single_lanes(Measure::Instructions, s, 1, 2),
                (2, false),
                "{s}"
            );
        }
        let all_cores = sc("throughput-tls13-ecdsa-p256-allcores");
        assert_eq!(single_lanes(Measure::Time, &all_cores, 2, 2), (1, false));
        let one_core = sc("throughput-tls13-ecdsa-p256-1core");
        assert_eq!(single_lanes(Measure::Time, &one_core, 2, 2), (2, true));
        let memory = sc("memory-tls13-ecdsa-p256-n100");
        assert_eq!(single_lanes(Measure::Time, &memory, 1, 2), (2, false));
    }

    #[test]
    fn bad_scenarios_explain_themselves() {
        let e = ids(&["handshake-tls13-ecdsa-p999-x25519-full"]).unwrap_err();
        assert!(e.to_string().contains("expected a signature"), "{e}");
        let e = ids(&["nothing-*"]).unwrap_err();
        assert!(e.to_string().contains("matches no scenario"), "{e}");
    }
}
