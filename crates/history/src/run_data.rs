//! One run's results, wherever they come from: the history database or a `.jsonl` file.
//! Reading a file is strict: a foreign schema or a torn line is an error that names the line,
//! never a silently shorter run.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use tlsmatrix_model::record::{CellRecord, Env, Record, CELL_SCHEMA, SCHEMA};

#[derive(Debug, Clone)]
pub struct RunData {
    pub run_id: String,
    pub env: Env,
    /// "complete", "incomplete" (killed before the end) or "file".
    pub status: String,
    pub records: Vec<Record>,
    /// Cells that produced no figures, with the reason.
    pub cells: Vec<CellRecord>,
}

impl RunData {
    /// The impls in the order the run met them, clients first.
    pub fn impls(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let names = self
            .records
            .iter()
            .flat_map(|r| [&r.client, &r.server])
            .chain(self.cells.iter().flat_map(|c| [&c.client, &c.server]));
        for n in names {
            if !out.contains(n) {
                out.push(n.clone());
            }
        }
        out
    }

    /// The scenarios of the run's records, in the order the run met them.
    pub fn scenarios(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for r in &self.records {
            if !out.contains(&r.scenario.as_str()) {
                out.push(&r.scenario);
            }
        }
        out
    }

    /// Impl name to the version string its records report.
    pub fn versions(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        for r in &self.records {
            m.insert(r.client.clone(), r.client_version.clone());
            m.insert(r.server.clone(), r.server_version.clone());
        }
        m
    }
}

/// Reads every run in a results file, in the order they appear.
pub fn read_jsonl(path: &Path) -> Result<Vec<RunData>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read results file {}", path.display()))?;
    if !text.is_empty() && !text.ends_with('\n') {
        bail!(
            "{} ends in an incomplete line (line {}): the file was cut off while being written",
            path.display(),
            text.lines().count()
        );
    }
    let mut runs: Vec<RunData> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{} line {}", path.display(), i + 1);
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(line)
            .with_context(|| format!("{} is not a complete JSON record", at()))?;
        let schema = value.get("schema").and_then(|s| s.as_str()).unwrap_or("");
        let run_id = value.get("run_id").and_then(|s| s.as_str()).unwrap_or("");
        let run = match runs.iter_mut().position(|r| r.run_id == run_id) {
            Some(i) => &mut runs[i],
            None => {
                runs.push(RunData {
                    run_id: run_id.to_string(),
                    env: Env::default(),
                    status: "file".into(),
                    records: Vec::new(),
                    cells: Vec::new(),
                });
                runs.last_mut().expect("just pushed")
            }
        };
        match schema {
            SCHEMA => {
                let r: Record = serde_json::from_value(value)
                    .with_context(|| format!("{} is not a valid {SCHEMA} record", at()))?;
                if run.records.is_empty() {
                    run.env = r.env.clone();
                }
                run.records.push(r);
            }
            CELL_SCHEMA => run.cells.push(
                serde_json::from_value(value)
                    .with_context(|| format!("{} is not a valid {CELL_SCHEMA} line", at()))?,
            ),
            "" => bail!("{} has no schema field; it is not a tlsmatrix result", at()),
            other => bail!(
                "{} has schema '{other}', which this tlsmatrix does not read (it reads {SCHEMA} and {CELL_SCHEMA})",
                at()
            ),
        }
    }
    if runs.is_empty() {
        bail!("{} holds no results", path.display());
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("tlsmatrix-rundata-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    const CELL: &str = r#"{"schema":"tlsmatrix.cell/1","run_id":"r1","scenario":"s","client":"a","server":"b","outcome":"unsupported","reason":"no"}"#;

    #[test]
    fn bad_files_name_the_line_and_the_problem() {
        let e = read_jsonl(&write("torn.jsonl", &format!("{CELL}\n{{\"schema\":"))).unwrap_err();
        assert!(e.to_string().contains("incomplete line (line 2)"), "{e:#}");
        let e = read_jsonl(&write(
            "foreign.jsonl",
            "{\"schema\":\"tlsmatrix.result/9\"}\n",
        ))
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("line 1 has schema 'tlsmatrix.result/9'"),
            "{e:#}"
        );
        let e = read_jsonl(&write("junk.jsonl", "not json\n")).unwrap_err();
        assert!(
            e.to_string().contains("not a complete JSON record"),
            "{e:#}"
        );
        let e = read_jsonl(&write("empty.jsonl", "")).unwrap_err();
        assert!(e.to_string().contains("holds no results"), "{e:#}");
    }

    #[test]
    fn cell_lines_are_read_with_their_run() {
        let runs = read_jsonl(&write("cells.jsonl", &format!("{CELL}\n"))).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].cells[0].reason, "no");
        assert_eq!(runs[0].impls(), ["a", "b"]);
    }
}
