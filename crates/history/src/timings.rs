//! The main job's timings file (`results/timings.tsv`), written by `scripts/stage` and
//! `scripts/step` while `make report` runs: a few `# key value` lines (when it started, the
//! commit, the CPU), then one `stage<TAB>seconds<TAB>outcome` line per build step and stage.
//! The report shows it, so the job's times on a machine are written by the tools, never by hand.

use std::path::Path;

use anyhow::{bail, Context, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct Timings {
    /// `started`, `commit`, `cpu`, as the file's header gives them.
    pub about: Vec<(String, String)>,
    pub stages: Vec<Stage>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// `build NAME` for a build step, else the stage's name.
    pub name: String,
    pub seconds: f64,
    /// `built`, `up to date` or `done` for a build step; `exit N` for a stage.
    pub outcome: String,
}

impl Stage {
    pub fn is_build(&self) -> bool {
        self.name.starts_with("build ")
    }
}

impl Timings {
    pub fn total_seconds(&self) -> f64 {
        self.stages.iter().map(|s| s.seconds).sum()
    }
}

pub fn parse(text: &str) -> Result<Timings> {
    let mut t = Timings {
        about: Vec::new(),
        stages: Vec::new(),
    };
    for (n, line) in text.lines().enumerate() {
        if let Some(header) = line.strip_prefix("# ") {
            if let Some((k, v)) = header.split_once(' ') {
                if !header.starts_with("tlsmatrix timings") {
                    t.about.push((k.to_string(), v.to_string()));
                }
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let [name, seconds, outcome] = fields[..] else {
            bail!(
                "line {}: not stage<TAB>seconds<TAB>outcome: {line:?}",
                n + 1
            );
        };
        let seconds: f64 = seconds
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0)
            .with_context(|| format!("line {}: {seconds:?} is not a time", n + 1))?;
        t.stages.push(Stage {
            name: name.to_string(),
            seconds,
            outcome: outcome.to_string(),
        });
    }
    Ok(t)
}

/// The timings in `path`; `Ok(None)` when there are none.
pub fn read(path: &Path) -> Result<Option<Timings>> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text)
            .map(Some)
            .with_context(|| format!("{}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timings_file_reads_its_header_and_stages() {
        let t = parse(
            "# tlsmatrix timings: stage<TAB>seconds<TAB>outcome\n# started 2026-11-26T18:00:00Z\n# commit abc1234\n\
             build rust-workspace\t431.2\tbuilt\ntimed-suite\t293.0\texit 0\n",
        )
        .unwrap();
        assert_eq!(t.about[1], ("commit".into(), "abc1234".into()));
        assert_eq!(t.stages.len(), 2);
        assert!(t.stages[0].is_build() && !t.stages[1].is_build());
        assert_eq!(t.total_seconds(), 724.2);
        let e = parse("timed-suite\tsoon\texit 0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1"), "{e}");
        assert!(parse("just words\n").is_err());
    }
}
