//! `tlsmatrix conformance`: wires the conformance crate to the driver registry, the results
//! file, the history database and the terminal.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, SystemTime};
use tlsmatrix_model::impls;

use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use tlsmatrix_conformance::{self as conf, runner, Outcome, Target};
use tlsmatrix_history::conformance::{ConformanceRow, MEASURE};
use tlsmatrix_history::Store;
use tlsmatrix_report::text_table::Table;

use tlsmatrix_history::results_file::ResultsFile;
use tlsmatrix_registry::registry::{self as drivers, ImplEntry, Registry};

pub struct Options {
    pub impls: Vec<String>,
    pub tests: Vec<String>,
    pub quick: bool,
    pub shard: crate::run::Shard,
    pub jobs: usize,
    pub limit: Duration,
    pub idle_timeout: Duration,
    pub strict: bool,
    pub run_id: Option<String>,
    pub out: PathBuf,
    pub db: PathBuf,
    pub command_line: String,
    /// Build (or find) the runner and stop, testing nothing.
    pub build_runner_only: bool,
}

#[derive(Serialize)]
struct Line<'a> {
    schema: &'a str,
    run_id: &'a str,
    #[serde(rename = "impl")]
    imp: &'a str,
    impl_version: &'a str,
    runner: &'a str,
    test: &'a str,
    family: &'a str,
    outcome: Outcome,
    reason: &'a str,
}

/// The boring-sys version the BoringSSL driver was built from, so the runner matches the
/// BoringSSL it was written against: "BoringSSL (boring 5.4.0, boring-sys 5.4.0)".
fn boring_sys_version(reg: &Registry) -> Option<String> {
    let v = &reg.get("boringssl").ok()?.version;
    let (_, rest) = v.split_once("boring-sys ")?;
    Some(rest.trim_end_matches(')').to_string())
}

/// Whether the impl's driver has a BoGo shim: it answers the runner's first question.
fn has_shim(entry: &ImplEntry) -> Result<(), String> {
    if let Some(impls::ImplRow {
        conformance: impls::Conformance::NoShim(why),
        ..
    }) = impls::row(&entry.name)
    {
        return Err((*why).to_string());
    }
    let out = Command::new(&entry.driver().path)
        .args([
            "bogo-shim",
            "--impl",
            &entry.name,
            "--",
            "-is-handshaker-supported",
        ])
        .output()
        .map_err(|e| format!("cannot start its driver: {e}"))?;
    if out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "No" {
        Ok(())
    } else {
        Err(format!(
            "its driver ({}) has no BoGo shim",
            entry.driver().path.display()
        ))
    }
}

/// The front shim for an impl whose driver reads the shared flag table (every Rust driver;
/// the Go driver's shim has its own), which `make build` puts beside the drivers.
fn front_shim(entry: &ImplEntry) -> Result<Option<PathBuf>> {
    if impls::row(&entry.name).is_some_and(|r| r.family == "go") {
        return Ok(None);
    }
    let front = drivers::driver_dir()?.join("tlsmatrix-bogo-shim");
    if !front.is_file() {
        bail!(
            "{} is missing: BoGo starts it for {}'s tests (`make build` builds it)",
            front.display(),
            entry.name
        );
    }
    Ok(Some(front))
}

pub fn run(o: Options) -> Result<bool> {
    let reg = Registry::discover()?;
    // The runner and the shims' scripts: beside the drivers' folder unless told.
    let work = match std::env::var_os("TLSMATRIX_BOGO_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => drivers::driver_dir()?.join("../bogo"),
    };
    let sources = runner::find_sources(boring_sys_version(&reg).as_deref())?;
    let runner_name = format!("BoGo (boring-sys {})", sources.version);
    eprintln!("{runner_name}: building the runner if not cached ...");
    let runner = runner::build(&sources, &work)?;
    if o.build_runner_only {
        println!("{runner_name}: {}", runner.display());
        return Ok(true);
    }
    let targets = shim_targets(&reg, &o)?;

    let mut tests = o.tests.clone();
    if o.quick && tests.is_empty() {
        tests = conf::quick::TESTS.iter().map(|t| t.to_string()).collect();
    }
    let opts = conf::Options {
        tests,
        shard: (o.shard.index, o.shard.count),
        jobs: o.jobs,
        limit: o.limit,
        idle_timeout: o.idle_timeout,
        work,
    };
    let run_id = o.run_id.clone().unwrap_or_else(|| {
        format!(
            "conformance-{}-{:04x}",
            tlsmatrix_registry::env::compact(SystemTime::now()),
            std::process::id() & 0xffff
        )
    });
    let mut file = ResultsFile::open(&o.out)?;
    let mut store = Store::open(&o.db)?;
    store.begin_run(
        &run_id,
        MEASURE,
        &tlsmatrix_registry::env::capture(o.command_line.clone()),
    )?;

    let not_run = conf::not_run_tests(&runner, &opts)?;
    let bar = progress(targets.len());
    let mut table = Table::new(
        &[
            "impl",
            "tests",
            "passed",
            "failed",
            "unimplemented",
            "deviations",
            "seconds",
        ],
        1,
    );
    let mut any_failed = false;
    let mut stale = StaleDeviations::default();
    let mut broken = Vec::new();
    let mut per_impl: Option<u64> = None;
    for (k, t) in targets.iter().enumerate() {
        bar.set_message(t.name.clone());
        let done_before = bar.position();
        let result = conf::run_impl(&runner, t, &opts, &not_run, || bar.inc(1));
        // The tests not run count as done at once.
        bar.inc(not_run.len() as u64);
        let run = match result {
            Ok(r) => r,
            Err(e) => {
                bar.suspend(|| eprintln!("error: {e:#}"));
                broken.push(t.name.clone());
                continue;
            }
        };
        // Every impl runs the same tests: after the first, the bar knows its length.
        let n = run.results.len() as u64;
        if per_impl.is_none() && n > 0 {
            per_impl = Some(n);
            bar.set_length(done_before + n * (targets.len() - k) as u64);
            bar.set_style(bar_style());
        }
        store_results(
            t,
            &run.results,
            &run_id,
            &runner_name,
            &mut file,
            &mut store,
        )?;
        let tally = conf::tally(&run.results);
        any_failed |= tally[&Outcome::Failed] > 0;
        table.row(vec![
            t.name.clone(),
            run.results.len().to_string(),
            tally[&Outcome::Passed].to_string(),
            tally[&Outcome::Failed].to_string(),
            tally[&Outcome::Unimplemented].to_string(),
            tally[&Outcome::Deviation].to_string(),
            format!("{:.0}", run.seconds),
        ]);
        bar.suspend(|| {
            for r in run.results.iter().filter(|r| r.outcome == Outcome::Failed) {
                let first = r.reason.lines().next().unwrap_or("");
                eprintln!("FAILED {} {}: {first}", t.name, r.test);
            }
        });
        if o.tests.is_empty() && !o.quick && o.shard.count == 1 {
            stale.add(&t.name, &run.stale)?;
        }
    }
    bar.finish_and_clear();
    for (pattern, impls) in stale.unmatched() {
        eprintln!(
            "note: deviation {pattern} matched no failing test of any impl that lists it ({}): remove it?",
            impls.join(", ")
        );
    }
    store.finish_run(
        &run_id,
        &tlsmatrix_registry::env::rfc3339(SystemTime::now()),
    )?;
    print!("{}", table.render());
    println!(
        "run {run_id}: {runner_name}; results in {} and {}",
        o.out.display(),
        o.db.display()
    );
    if !broken.is_empty() {
        bail!("the run of {} did not finish", broken.join(", "));
    }
    Ok(!(o.strict && any_failed))
}

/// The impls to test, each with a BoGo shim; one without says so and is left out.
fn shim_targets(reg: &Registry, o: &Options) -> Result<Vec<Target>> {
    let entries = crate::run::select_impls(reg, &o.impls)?;
    let mut targets = Vec::new();
    for e in entries {
        if e.name.contains('+') {
            bail!(
                "{}: a variant runs its plain build's TLS code; test the plain build",
                e.name
            );
        }
        match has_shim(e) {
            Ok(()) => targets.push(Target {
                name: e.name.clone(),
                version: e.version.clone(),
                driver: e.driver().path.clone(),
                front: front_shim(e)?,
            }),
            Err(why) => eprintln!("unsupported: {}: {why}", e.name),
        }
    }
    if targets.is_empty() {
        bail!("no impl to test has a BoGo shim");
    }
    Ok(targets)
}

/// One impl's test results, appended to the results file and stored, a line each.
fn store_results(
    t: &Target,
    results: &[conf::TestResult],
    run_id: &str,
    runner_name: &str,
    file: &mut ResultsFile,
    store: &mut Store,
) -> Result<()> {
    let rows: Vec<ConformanceRow> = results
        .iter()
        .map(|r| ConformanceRow {
            imp: t.name.clone(),
            impl_version: t.version.clone(),
            runner: runner_name.to_string(),
            test: r.test.clone(),
            family: r.family.clone(),
            outcome: r.outcome.as_str().to_string(),
            reason: r.reason.clone(),
        })
        .collect();
    let mut text = String::new();
    for r in results {
        let line = Line {
            schema: conf::SCHEMA,
            run_id,
            imp: &t.name,
            impl_version: &t.version,
            runner: runner_name,
            test: &r.test,
            family: &r.family,
            outcome: r.outcome,
            reason: &r.reason,
        };
        text.push_str(&serde_json::to_string(&line)?);
        text.push('\n');
    }
    file.append_text(&text)?;
    store.add_conformance(run_id, &rows)
}

/// Listed deviations that matched no failing test. A file serves several impls (openssl.json
/// all three OpenSSL releases), so a pattern only one release needs is stale for the others;
/// it is worth a note only when no impl of the run that lists it needed it.
#[derive(Default)]
struct StaleDeviations {
    /// Pattern -> (impls whose run left it unmatched, impls that list it).
    seen: BTreeMap<String, (Vec<String>, Vec<String>)>,
}

impl StaleDeviations {
    fn add(&mut self, imp: &str, stale: &[String]) -> Result<()> {
        for p in conf::config::Expectations::for_impl(imp)?.deviation_patterns() {
            let e = self.seen.entry(p.to_string()).or_default();
            e.1.push(imp.to_string());
            if stale.iter().any(|s| s == p) {
                e.0.push(imp.to_string());
            }
        }
        Ok(())
    }

    fn unmatched(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.seen
            .iter()
            .filter(|(_, (stale, listing))| stale.len() == listing.len())
            .map(|(p, (stale, _))| (p.as_str(), stale.as_slice()))
    }
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("{msg:>14} [{bar:30}] {pos}/{len} tests, ETA {eta}")
        .expect("valid template")
        .progress_chars("=> ")
}

/// A spinner until the first impl's test count is known, then a bar with ETA.
fn progress(impls: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template(&format!("{{msg:>14}} {{pos}} tests of {impls} impls"))
            .expect("valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

#[cfg(test)]
mod tests {
    use super::StaleDeviations;

    #[test]
    fn a_deviation_is_stale_only_when_no_impl_listing_it_needed_it() {
        // openssl.json serves every OpenSSL release: one release needing a pattern keeps it.
        let jdk = "Server-JDK11-*".to_string();
        let mut s = StaleDeviations::default();
        s.add("openssl-3.0", std::slice::from_ref(&jdk)).unwrap();
        s.add("openssl-3.6", &[]).unwrap();
        assert!(s.unmatched().all(|(p, _)| p != jdk));
        let mut s = StaleDeviations::default();
        s.add("openssl-3.0", std::slice::from_ref(&jdk)).unwrap();
        s.add("openssl-3.6", std::slice::from_ref(&jdk)).unwrap();
        let found: Vec<_> = s.unmatched().filter(|(p, _)| *p == jdk).collect();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, ["openssl-3.0", "openssl-3.6"]);
    }
}
