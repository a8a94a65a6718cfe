//! The results file: JSON lines, appended one whole cell at a time. A run that is killed
//! leaves only whole lines; a torn last line from an earlier crash is cut off before appending.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tlsmatrix_model::record::{CellRecord, Record};

pub struct ResultsFile {
    file: File,
    path: PathBuf,
}

impl ResultsFile {
    /// Opens (creating folders as needed) for appending, before anything is measured, so an
    /// unwritable path fails at once rather than after a long run.
    pub fn open(path: &Path) -> Result<ResultsFile> {
        let fail = |e: std::io::Error| {
            anyhow::anyhow!(
                "cannot write results to {}: {e}; choose another --out",
                path.display()
            )
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(fail)?;
        repair_torn_tail(&mut file, path)?;
        Ok(ResultsFile {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Appends a cell's records, or the line saying why it has none, in one write, and syncs
    /// them to disk.
    pub fn append(&mut self, records: &[Record], not_measured: Option<&CellRecord>) -> Result<()> {
        let mut text: String = records.iter().map(Record::to_line).collect();
        if let Some(c) = not_measured {
            text.push_str(&c.to_line());
        }
        self.append_text(&text)
    }

    /// Appends whole lines of text in one write and syncs them.
    pub fn append_text(&mut self, text: &str) -> Result<()> {
        self.file
            .write_all(text.as_bytes())
            .and_then(|_| self.file.sync_data())
            .with_context(|| format!("cannot append results to {}", self.path.display()))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn repair_torn_tail(file: &mut File, path: &Path) -> Result<()> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    let mut last = [0u8];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    if last[0] == b'\n' {
        return Ok(());
    }
    let mut text = Vec::new();
    file.seek(SeekFrom::Start(0))?;
    file.read_to_end(&mut text)?;
    let keep = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    file.set_len(keep as u64)
        .with_context(|| format!("cannot repair {}", path.display()))?;
    eprintln!(
        "warning: {} ended in an incomplete line ({} bytes, from an interrupted write); removed it",
        path.display(),
        len - keep as u64
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_last_line_is_cut_and_whole_lines_kept() {
        let dir = std::env::temp_dir().join(format!("tlsmatrix-rf-{}", std::process::id()));
        let path = dir.join("sub/r.jsonl");
        let _ = std::fs::remove_dir_all(&dir);
        drop(ResultsFile::open(&path).unwrap());
        std::fs::write(&path, "{\"a\":1}\n{\"b\":").unwrap();
        drop(ResultsFile::open(&path).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"a\":1}\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unwritable_path_is_one_clear_error() {
        let err = ResultsFile::open(Path::new("/proc/tlsmatrix/r.jsonl"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.starts_with("cannot write results to /proc/tlsmatrix/r.jsonl"),
            "{err}"
        );
        assert!(err.ends_with("choose another --out"), "{err}");
    }
}
