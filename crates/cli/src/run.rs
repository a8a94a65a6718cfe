//! `tlsmatrix run`: plan the cells (scenario x client x server), run each in its driver,
//! turn samples into records, append them, and print the summary.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressStyle};
use tlsmatrix_core::glob;
use tlsmatrix_core::protocol::Measure;
use tlsmatrix_core::record::{CellRecord, CellStatus, Env, Metric, Record, CELL_SCHEMA};
use tlsmatrix_core::scenario::Scenario;

use crate::drivers::{self, CellOutcome, CellRequest, ImplEntry, Registry};
use crate::results_file::ResultsFile;
use crate::store::Store;
use crate::summary;

pub struct RunOptions {
    pub impls: Vec<String>,
    pub scenarios: Vec<String>,
    pub runs: u32,
    pub out: PathBuf,
    pub warmup_ms: u64,
    pub sample_ms: u64,
    pub cell_timeout: Duration,
    pub command_line: String,
    pub db: PathBuf,
    pub measure: Measure,
    /// Only each impl with itself and against the baseline (`--pairs baseline`).
    pub baseline_pairs_only: bool,
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
fn select_impls<'r>(reg: &'r Registry, args: &[String]) -> Result<Vec<&'r ImplEntry>> {
    let mut out: Vec<&ImplEntry> = Vec::new();
    if args.is_empty() {
        out.extend(&reg.impls);
    }
    for name in args.iter().flat_map(|a| a.split(',')).map(str::trim) {
        if name.is_empty() {
            continue;
        }
        let entry = reg.get(name)?;
        if out.iter().all(|e| e.name != entry.name) {
            out.push(entry);
        }
    }
    for entry in &out {
        if !drivers::version_matches_name(&entry.name, &entry.version) {
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
        crate::env::compact(now),
        std::process::id() & 0xffff
    )
}

fn progress_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30.cyan/blue} {pos}/{len} samples, ETA {eta}  {msg}",
        )
        .expect("the template is valid")
        .progress_chars("=> "),
    );
    bar
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
            if !v.is_finite() || v <= 0.0 {
                return Err(format!("driver produced an impossible {m} of {v}"));
            }
            by_metric.entry(m).or_default().push(v);
        }
    }
    Ok(by_metric
        .into_iter()
        .filter_map(|(metric, samples)| {
            Record::from_samples(
                run_id,
                &cell.scenario.to_string(),
                (&cell.client, client_version),
                (&cell.server, server_version),
                metric,
                samples,
                env.clone(),
            )
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

/// Runs every cell; returns whether all of them were measured or unsupported.
pub fn run(opts: RunOptions) -> Result<bool> {
    let scenarios = select_scenarios(&opts.scenarios)?;
    let reg = Registry::discover()?;
    let impls = select_impls(&reg, &opts.impls)?;
    if opts.measure == Measure::Instructions {
        drivers::check_valgrind()?;
    }
    let mut results = ResultsFile::open(&opts.out)?;
    let mut store = Store::open(&opts.db)?;
    let certs_dir = opts
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join("certs");

    let now = SystemTime::now();
    let run_id = run_id(now);
    let env = crate::env::capture(opts.command_line.clone());
    store.begin_run(&run_id, opts.measure.as_str(), &env)?;
    let scratch = Scratch::new(&run_id)?;
    let mut plan: Vec<(Scenario, &ImplEntry, &ImplEntry)> = Vec::new();
    let baseline = impls[0].name.as_str();
    let wanted = |c: &ImplEntry, v: &ImplEntry| {
        !opts.baseline_pairs_only || c.name == v.name || c.name == baseline || v.name == baseline
    };
    for s in &scenarios {
        for &c in &impls {
            for &v in &impls {
                if wanted(c, v) {
                    plan.push((*s, c, v));
                }
            }
        }
    }

    let interactive = std::io::stderr().is_terminal();
    let bar = progress_bar(plan.len() as u64 * u64::from(opts.runs));
    if !interactive {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    eprintln!(
        "run {run_id}: {} scenarios x {} pairs, {} samples each -> {}",
        scenarios.len(),
        plan.len() / scenarios.len().max(1),
        opts.runs,
        results.path().display()
    );

    let started = Instant::now();
    let mut cells = Vec::with_capacity(plan.len());
    let mut all_records: Vec<Record> = Vec::new();
    let mut cell_lines: Vec<CellRecord> = Vec::new();
    for (i, &(scenario, client_entry, server_entry)) in plan.iter().enumerate() {
        let (client, server) = (&client_entry.name, &server_entry.name);
        let id = scenario.to_string();
        bar.set_message(format!("{id} {client} -> {server}"));
        let before = bar.position();
        let shared = drivers::shared_driver(client_entry, server_entry);
        let req = CellRequest {
            driver: shared.unwrap_or(client_entry.driver()),
            scenario: &id,
            client,
            server,
            certs: &certs_dir,
            runs: opts.runs,
            warmup_ms: opts.warmup_ms,
            sample_ms: opts.sample_ms,
            silence_limit: opts.cell_timeout,
            measure: opts.measure,
            scratch: &scratch.0,
        };
        // Cross-library pairs must live in one driver to run in memory.
        let outcome = if shared.is_none() {
            CellOutcome::Unsupported(format!(
                "{client} and {server} are in different drivers, so they cannot share an in-memory pair"
            ))
        } else {
            drivers::run_cell(&req, || bar.inc(1))
        };
        bar.set_position(before + u64::from(opts.runs));
        let mut cell = Cell {
            scenario,
            client: client.clone(),
            server: server.clone(),
            outcome,
        };
        let records = records_for(
            &cell,
            [client_entry, server_entry],
            opts.runs,
            &run_id,
            &env,
        )
        .unwrap_or_else(|why| {
            cell.outcome = CellOutcome::Failed(why);
            Vec::new()
        });
        let line = not_measured(&cell, &run_id);
        results.append(&records, line.as_ref())?;
        store.add_cell(&records, line.as_ref())?;
        all_records.extend(records);
        cell_lines.extend(line);
        let status = match &cell.outcome {
            CellOutcome::Measured { .. } => "ok".to_string(),
            CellOutcome::Unsupported(r) => format!("unsupported: {r}"),
            CellOutcome::Failed(r) => format!("FAILED: {r}"),
        };
        if interactive {
            if !matches!(cell.outcome, CellOutcome::Measured { .. }) {
                bar.println(format!("{id} {client} -> {server}: {status}"));
            }
        } else {
            // No bar without a terminal, so each line carries the estimate instead.
            let done = i + 1;
            let left = started.elapsed().as_secs_f64() / done as f64 * (plan.len() - done) as f64;
            eprintln!(
                "[{done}/{}, ~{} left] {id} {client} -> {server}: {status}",
                plan.len(),
                eta(left)
            );
        }
        cells.push(cell);
    }
    bar.finish_and_clear();
    store.finish_run(&run_id, &crate::env::rfc3339(SystemTime::now()))?;

    let names: Vec<String> = impls.iter().map(|e| e.name.clone()).collect();
    print!("{}", summary::render(&all_records, &cell_lines, &names));
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    let failed = cells
        .iter()
        .filter(|c| matches!(c.outcome, CellOutcome::Failed(_)))
        .count();
    eprintln!(
        "run {run_id} finished in {:.0} s: {} cells measured, {} unsupported, {failed} failed; records in {} and {}",
        started.elapsed().as_secs_f64(),
        cells.iter().filter(|c| matches!(c.outcome, CellOutcome::Measured { .. })).count(),
        cells.iter().filter(|c| matches!(c.outcome, CellOutcome::Unsupported(_))).count(),
        results.path().display(),
        store.path().display()
    );
    Ok(failed == 0)
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
        assert_eq!(ids(&[]).unwrap().len(), 16);
        let tls13 = ids(&["handshake-tls13-*"]).unwrap();
        assert!(tls13.iter().all(|s| s.starts_with("handshake-tls13-")));
        assert_eq!(
            ids(&["bulk-tls13-aes-128-gcm-16k,bulk-tls13-aes-128-gcm-16k"]).unwrap(),
            ["bulk-tls13-aes-128-gcm-16k"]
        );
    }

    #[test]
    fn bad_scenarios_explain_themselves() {
        let e = ids(&["handshake-tls13-ecdsa-p999-x25519-full"]).unwrap_err();
        assert!(e.to_string().contains("expected a signature"), "{e}");
        let e = ids(&["nothing-*"]).unwrap_err();
        assert!(e.to_string().contains("matches no scenario"), "{e}");
    }
}
