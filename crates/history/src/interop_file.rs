//! The interop results file (`results/interop.jsonl`): one line per cell, runs appended.

use std::path::Path;

use anyhow::{bail, Context, Result};

/// The schema of every line of the interop results file.
pub const SCHEMA: &str = "tlsmatrix.interop/1";

/// A cell as read back from an interop results file.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct CellLine {
    pub run_id: String,
    pub case: String,
    pub client: String,
    pub server: String,
    pub client_version: String,
    pub server_version: String,
    pub outcome: String,
    pub reason: String,
}

/// The newest interop run in a results file; `Ok(None)` when there is no file.
pub fn read_latest(path: &Path) -> Result<Option<Vec<CellLine>>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut cells: Vec<CellLine> = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: serde_json::Value = serde_json::from_str(line).with_context(|| {
            format!(
                "{} line {} is not a complete JSON record",
                path.display(),
                i + 1
            )
        })?;
        if v["schema"] != SCHEMA {
            bail!(
                "{} line {} has schema {}, not {SCHEMA}",
                path.display(),
                i + 1,
                v["schema"]
            );
        }
        let cell: CellLine = serde_json::from_value(v).with_context(|| {
            format!(
                "{} line {} is not a valid interop cell",
                path.display(),
                i + 1
            )
        })?;
        if cells.last().is_some_and(|c| c.run_id != cell.run_id) {
            cells.clear();
        }
        cells.push(cell);
    }
    Ok((!cells.is_empty()).then_some(cells))
}
