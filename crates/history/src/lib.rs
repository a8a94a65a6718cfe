//! Where tlsmatrix's results live: the SQLite history database of runs ([`Store`]), a run's
//! results file (written a whole cell at a time by [`results_file`], read by [`read_jsonl`]),
//! and the interop results file ([`interop_file`]). The cli
//! records into it; the report and `compare` read from it.

pub mod conformance;
pub mod interop_file;
pub mod job_estimate;
pub mod offers;
pub mod outside_scan;
pub mod proxy_check;
pub mod results_file;
mod run_data;
mod store;
pub mod timings;
mod whole_file;

use std::path::Path;

use anyhow::{Context, Result};

pub use run_data::{read_jsonl, RunData};
pub use store::{RunKind, RunRow, Store};

/// A run named on the command line: a `.jsonl` file (its last run) or a run id in the database.
/// `latest` names the newest run of `kind` in the database.
pub fn resolve(spec: &str, db: &Path, kind: RunKind) -> Result<RunData> {
    if spec.ends_with(".jsonl") || Path::new(spec).is_file() {
        let mut runs = read_jsonl(Path::new(spec))?;
        if runs.len() > 1 {
            eprintln!(
                "note: {spec} holds {} runs; using the last, {}",
                runs.len(),
                runs.last().map(|r| r.run_id.as_str()).unwrap_or("")
            );
        }
        return Ok(runs.pop().expect("read_jsonl returns at least one run"));
    }
    let store = Store::open_existing(db)?;
    let id = if spec == "latest" {
        store.latest_run(kind)?.with_context(|| {
            format!(
                "the database {} holds no {}run yet",
                db.display(),
                kind.describe()
            )
        })?
    } else {
        spec.to_string()
    };
    store.load(&id)
}
