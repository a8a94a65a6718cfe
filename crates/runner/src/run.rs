//! `tlsmatrix run`: plan the cells (scenario x client x server), run each in its driver,
//! turn samples into records, append them, and print the summary. The four jobs live in
//! their own modules: the plan (`plan`), the cells run apart (`single`), the groups sampled
//! in turns (`paired`) and where finished cells go (`sink`); this file holds the options, the
//! choice of scenarios and impls, and the run from start to summary.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};
pub use tlsmatrix_registry::shard::Shard;

use anyhow::{bail, Result};
use indicatif::ProgressBar;
use tlsmatrix_model::glob;
use tlsmatrix_model::impls;
use tlsmatrix_model::measure::{DefaultScenarios, Lanes, Measure, Tool};
use tlsmatrix_model::record::{CellRecord, CellStatus, Env, Metric, Record, CELL_SCHEMA};
use tlsmatrix_model::scenario::Scenario;

use crate::groups;
use tlsmatrix_history::results_file::ResultsFile;
use tlsmatrix_history::Store;
use tlsmatrix_registry::registry::{
    self as drivers, CellOutcome, CellRequest, ImplEntry, Registry,
};
use tlsmatrix_report::summary;

mod paired;
mod plan;
mod single;
mod sink;

use paired::{run_paired, PairedOptions};
use plan::{checked_impls, lane_cpus, plan, scenarios_of, twin_pairs, write_certs};
use single::{run_single, SingleSettings};
use sink::{records_for, start, Sink};

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

fn apart_reason(client: &str, server: &str) -> String {
    format!(
        "{client} and {server} are in different drivers, so they cannot share an in-memory pair"
    )
}

#[cfg(test)]
mod tests {
    use super::single::single_lanes;
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
