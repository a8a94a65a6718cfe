//! `tlsmatrix report`: a run as `index.html` (self-contained), `report.md` and `results.csv`.
//! The folder is written under a temporary name beside the target and renamed into place
//! only when every file is complete, so a reader never sees half a report.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tlsmatrix_history::{
    interop_file, offers, outside_scan, proxy_check, resolve, timings, RunData, RunKind, Store,
};

use tlsmatrix_model::measure::{Measure, MEASURES};

use crate::area::{area, Area};
use crate::{analysis, csv, html, md};

/// The delay-proxy check's file, beside the interop results file.
pub const PROXY_CHECK_FILE: &str = "proxy-check.json";
/// `tlsmatrix wire --check --quic`'s file, beside the interop file.
pub const QUIC_PROXY_CHECK_FILE: &str = "quic-proxy-check.json";
/// The outside scan's file (`tlsmatrix scan`), beside the interop results file.
pub const OUTSIDE_SCAN_FILE: &str = "outside-scan.json";
/// What each client offers on its defaults (`tlsmatrix interop`), beside the interop results
/// file.
pub const OFFERS_FILE: &str = "offers.json";
/// The main job's stage times (`make report`), beside the interop results file.
pub const TIMINGS_FILE: &str = "timings.tsv";

/// How many runs the history charts go back.
const HISTORY_RUNS: usize = 20;

pub fn write(spec: &str, out: &Path, db: &Path, interop: &Path) -> Result<()> {
    let run = resolve(spec, db, RunKind::Matrix)?;
    let (history, extra) = if db.is_file() {
        let store = Store::open_existing(db)?;
        let mut history: Vec<RunData> = Vec::new();
        for row in store.runs()?.iter().rev() {
            if history.len() == HISTORY_RUNS {
                break;
            }
            if row.measure != "time" {
                continue;
            }
            let r = store.load(&row.run_id)?;
            if analysis_is_matrix(&r) {
                history.push(r);
            }
        }
        history.reverse();
        let companion = |kind| -> Result<Option<RunData>> {
            match store.latest_run(kind)? {
                Some(id) if id != run.run_id => Ok(Some(store.load(&id)?)),
                _ => Ok(None),
            }
        };
        let mut measured = std::collections::BTreeMap::new();
        for row in MEASURES.iter().filter(|r| r.companion) {
            if let Some(data) = companion(RunKind::Measured(row.measure))? {
                measured.insert(row.measure, data);
            }
        }
        let mut symbols = std::collections::BTreeMap::new();
        for m in [Measure::Instructions, Measure::Profile] {
            if let Some(data) = companion(RunKind::Symbols(m))? {
                symbols.insert(m, data);
            }
        }
        let extra = analysis::Companions {
            measured,
            symbols,
            areas: [RunKind::Memory, RunKind::Throughput]
                .into_iter()
                .map(companion)
                .filter_map(Result::transpose)
                .collect::<Result<_>>()?,
            libp2p: companion(RunKind::Libp2p)?,
            interop: None,
            proxy_check: None,
            quic_proxy_check: None,
            offers: None,
            outside_scan: None,
            timings: None,
            allocators: companion(RunKind::Allocators)?,
            twins: companion(RunKind::Twins)?,
            published: tlsmatrix_model::plan::PLANS
                .iter()
                .filter_map(|p| store.latest_plan_run(p.name).transpose())
                .map(|id| id.and_then(|id| store.load(&id)))
                .collect::<Result<_>>()?,
            conformance: match store.latest_conformance_run()? {
                Some(id) => {
                    let rows = store.conformance(&id)?;
                    Some((id, rows))
                }
                None => None,
            },
        };
        (history, extra)
    } else {
        (Vec::new(), analysis::Companions::default())
    };
    let mut extra = extra;
    extra.interop = interop_file::read_latest(interop)?;
    extra.proxy_check = proxy_check::read(&interop.with_file_name(PROXY_CHECK_FILE))?;
    extra.quic_proxy_check = proxy_check::read(&interop.with_file_name(QUIC_PROXY_CHECK_FILE))?;
    extra.offers = offers::read(&interop.with_file_name(OFFERS_FILE))?;
    extra.outside_scan = outside_scan::read(&interop.with_file_name(OUTSIDE_SCAN_FILE))?;
    extra.timings = timings::read(&interop.with_file_name(TIMINGS_FILE))?;
    let doc = analysis::build(&run, &history, &extra);
    let impls = run.impls();
    let files = [
        ("index.html", html::render(&doc, &impls)),
        ("report.md", md::render(&doc)),
        ("results.csv", csv::render(&run.records)),
    ];
    publish(out, &files)?;
    eprintln!(
        "report of run {} written to {}/ (index.html, report.md, results.csv)",
        run.run_id,
        out.display()
    );
    Ok(())
}

fn analysis_is_matrix(r: &RunData) -> bool {
    // An allocator run (impl+jemalloc) is compared within itself, not over history; so is a
    // twin run (`--pairs twins`, its classical cells labelled as twins).
    let variants = r
        .records
        .iter()
        .any(|x| x.client.contains('+') || x.server.contains('+'));
    let twins = r.records.iter().any(|x| x.client.contains(" (twin of "));
    !variants
        && !twins
        && r.records.iter().any(|x| {
            !matches!(area(&x.scenario), Area::Memory | Area::Throughput)
                && !x.scenario.starts_with("libp2p-")
        })
}

fn sibling(out: &Path, tag: &str) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    out.with_file_name(format!(".{name}.{tag}-{}", std::process::id()))
}

/// Writes the files into a fresh folder, then swaps it in for `out`.
fn publish(out: &Path, files: &[(&str, String)]) -> Result<()> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let partial = sibling(out, "partial");
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir(&partial)
        .with_context(|| format!("cannot write the report beside {}", out.display()))?;
    let written = (|| -> Result<()> {
        for (name, text) in files {
            let path = partial.join(name);
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(e);
    }
    let old = sibling(out, "old");
    if out.exists() {
        std::fs::rename(out, &old)
            .with_context(|| format!("cannot move the previous {} aside", out.display()))?;
    }
    std::fs::rename(&partial, out)
        .with_context(|| format!("cannot move the report into {}", out.display()))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}
