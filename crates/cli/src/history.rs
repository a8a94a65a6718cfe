//! `tlsmatrix history`, `show` and `import`: the runs the database holds; `estimate`: how long
//! the rest of the main job takes, from a reference run's timings.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use tlsmatrix_history::job_estimate::JobEstimate;
use tlsmatrix_history::{read_jsonl, resolve, timings, RunKind, Store};
use tlsmatrix_model::protocol::Measure;
use tlsmatrix_report::environment::environment;
use tlsmatrix_report::summary;
use tlsmatrix_report::text_table::Table;

pub fn history(db: &Path) -> Result<()> {
    let store = Store::open_existing(db)?;
    let runs = store.runs()?;
    if runs.is_empty() {
        println!("{} holds no runs yet", db.display());
        return Ok(());
    }
    let mut t = Table::new(
        &[
            "run",
            "started",
            "status",
            "measure",
            "records",
            "not measured",
            "git",
            "command",
        ],
        8,
    );
    for r in runs {
        t.row(vec![
            r.run_id,
            r.started,
            if r.finished.is_some() {
                "complete"
            } else {
                "incomplete"
            }
            .into(),
            r.measure,
            r.records.to_string(),
            r.not_measured.to_string(),
            r.git_revision.chars().take(10).collect(),
            r.command,
        ]);
    }
    print!("{}", t.render());
    Ok(())
}

pub fn show(spec: &str, db: &Path, verbose: bool) -> Result<()> {
    let run = resolve(spec, db, RunKind::Any)?;
    for (k, v) in environment(&run) {
        println!("{k:>14}: {v}");
    }
    print!(
        "{}",
        summary::render(&run.records, &run.cells, &run.impls(), verbose)
    );
    Ok(())
}

/// Stores every run of each file; a run already present is skipped.
pub fn import(files: &[PathBuf], db: &Path) -> Result<()> {
    let mut store = Store::open(db)?;
    for f in files {
        for run in read_jsonl(f)? {
            let measure = Measure::of_run(run.records.iter().map(|r| r.metric));
            let added = store.import(&run, measure.as_str())?;
            eprintln!(
                "{}: run {} {} ({} records)",
                f.display(),
                run.run_id,
                if added == 0 {
                    "already in the database".to_string()
                } else {
                    format!("imported, {added} new records and cells")
                },
                run.records.len()
            );
        }
    }
    Ok(())
}

/// `tlsmatrix estimate`: the rest of this run's main job, from the reference run's timings.
pub fn estimate(reference: &Path, now: Option<&Path>) -> Result<()> {
    let now = match now {
        Some(p) => p.to_path_buf(),
        None => std::env::var_os("TLSMATRIX_TIMINGS")
            .map_or_else(|| PathBuf::from("results/timings.tsv"), PathBuf::from),
    };
    let reference_timings = timings::read(reference)?
        .with_context(|| format!("no reference timings at {}", reference.display()))?;
    let now_timings = timings::read(&now)?
        .with_context(|| format!("no timings of this run at {}", now.display()))?;
    let e = JobEstimate::new(&reference_timings, &now_timings)
        .with_context(|| format!("{}", reference.display()))?;
    print!("{}", e.render());
    Ok(())
}
