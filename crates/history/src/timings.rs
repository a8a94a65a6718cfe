//! The main job's timings file (`results/timings.tsv`), written by `scripts/stage` and
//! `scripts/step` while `make report` runs: a few `# key value` lines (when it started, the
//! commit, the CPU, the start in seconds since the epoch), then one
//! `stage<TAB>seconds<TAB>outcome<TAB>start<TAB>cpu` line per build step and stage (`start` in
//! seconds since the epoch, `cpu` the CPU seconds, user and system, of its processes; files
//! from before them have three or four fields). Stages that run at
//! once overlap in time, and the report says which ran beside which. A step the job left out
//! on this machine is a `# left-out NAME<TAB>HOW` line (how to get it). The report shows it, so
//! the job's times on a machine are written by the tools, never by hand.

use std::path::Path;

use anyhow::{bail, Context, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct Timings {
    /// `started`, `commit`, `cpu`, as the file's header gives them.
    pub about: Vec<(String, String)>,
    /// When the job began, in seconds since the epoch (the header's `epoch`).
    pub epoch: Option<f64>,
    pub stages: Vec<Stage>,
    /// The steps this job left out, each with how to get it (`# left-out` lines).
    pub left_out: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// `build NAME` for a build step, else the stage's name.
    pub name: String,
    pub seconds: f64,
    /// `built`, `up to date` or `done` for a build step; `exit N` for a stage.
    pub outcome: String,
    /// When it began, in seconds since the epoch.
    pub start: Option<f64>,
    /// The CPU seconds (user and system) its processes took: beside `seconds`, how much of
    /// the machine's cores it kept busy.
    pub cpu_seconds: Option<f64>,
}

impl Stage {
    pub fn is_build(&self) -> bool {
        self.name.starts_with("build ")
    }
}

impl Stage {
    /// Its span in seconds since the epoch, when its start is known.
    pub fn span(&self) -> Option<(f64, f64)> {
        self.start.map(|a| (a, a + self.seconds))
    }
}

/// Two stages whose spans share less than this many seconds are not said to have run beside
/// each other (one's last line and the next one's first share a moment).
const BESIDE_MIN_SECONDS: f64 = 1.0;

impl Timings {
    /// The steps' times added up: the job's length when none ran beside another.
    pub fn total_seconds(&self) -> f64 {
        self.stages.iter().map(|s| s.seconds).sum()
    }

    /// The steps' CPU seconds added up, when every step that ran gives them (a reused stage
    /// took none).
    pub fn cpu_seconds(&self) -> Option<f64> {
        self.stages
            .iter()
            .map(|s| s.cpu_seconds.or((s.seconds < 0.5).then_some(0.0)))
            .sum()
    }

    /// From the first step's start to the last one's end, when every step's start is known.
    pub fn wall_seconds(&self) -> Option<f64> {
        let spans: Option<Vec<(f64, f64)>> = self.stages.iter().map(Stage::span).collect();
        let spans = spans.filter(|s| !s.is_empty())?;
        let first = spans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
        let last = spans.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
        Some(last - first)
    }

    /// The other steps that ran at least a second of their time beside step `i`.
    pub fn beside(&self, i: usize) -> Vec<&Stage> {
        let Some((a0, a1)) = self.stages[i].span() else {
            return Vec::new();
        };
        self.stages
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .filter_map(|(_, s)| {
                let (b0, b1) = s.span()?;
                (a1.min(b1) - a0.max(b0) >= BESIDE_MIN_SECONDS).then_some(s)
            })
            .collect()
    }
}

/// "4 min 53 s", or "12.3 s" under a minute.
pub fn duration(seconds: f64) -> String {
    if seconds >= 60.0 {
        let s = seconds.round() as u64;
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{seconds:.1} s")
    }
}

pub fn parse(text: &str) -> Result<Timings> {
    let mut t = Timings {
        about: Vec::new(),
        epoch: None,
        stages: Vec::new(),
        left_out: Vec::new(),
    };
    for (n, line) in text.lines().enumerate() {
        if let Some(header) = line.strip_prefix("# ") {
            match header.split_once(' ') {
                Some(("left-out", v)) => {
                    let (name, how) = v.split_once('\t').with_context(|| {
                        format!("line {}: not # left-out NAME<TAB>HOW: {line:?}", n + 1)
                    })?;
                    t.left_out.push((name.to_string(), how.to_string()));
                }
                Some(("epoch", v)) => {
                    t.epoch = v.trim().parse().ok().filter(|e: &f64| e.is_finite())
                }
                Some((k, v)) if !header.starts_with("tlsmatrix timings") => {
                    t.about.push((k.to_string(), v.to_string()))
                }
                _ => {}
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let (name, seconds, outcome, start, cpu) = match fields[..] {
            [name, seconds, outcome] => (name, seconds, outcome, None, None),
            [name, seconds, outcome, start] => (name, seconds, outcome, Some(start), None),
            [name, seconds, outcome, start, cpu] => {
                (name, seconds, outcome, Some(start), Some(cpu))
            }
            _ => bail!(
                "line {}: not stage<TAB>seconds<TAB>outcome[<TAB>start[<TAB>cpu]]: {line:?}",
                n + 1
            ),
        };
        let number = |s: Option<&str>, what: &str, least: f64| -> Result<Option<f64>> {
            s.map(|s| {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= least)
                    .with_context(|| format!("line {}: {s:?} is not {what}", n + 1))
            })
            .transpose()
        };
        let start = number(start, "a start time", f64::MIN_POSITIVE)?;
        let cpu_seconds = number(cpu, "a CPU time", 0.0)?;
        let seconds: f64 = seconds
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0)
            .with_context(|| format!("line {}: {seconds:?} is not a time", n + 1))?;
        t.stages.push(Stage {
            name: name.to_string(),
            seconds,
            outcome: outcome.to_string(),
            start,
            cpu_seconds,
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
        assert_eq!(t.wall_seconds(), None, "no starts: no wall time");
        assert_eq!(t.stages[0].cpu_seconds, None, "three fields: no CPU time");
    }

    #[test]
    fn a_fifth_field_is_the_stages_cpu_seconds() {
        let t = parse("build a\t100.0\tbuilt\t1000.0\t187.5\n").unwrap();
        assert_eq!(t.stages[0].cpu_seconds, Some(187.5));
        assert_eq!(t.stages[0].start, Some(1000.0));
        for bad in ["-1", "lots", "NaN"] {
            let e = parse(&format!("b\t1.0\texit 0\t1000.0\t{bad}\n")).unwrap_err();
            assert!(e.to_string().contains("CPU time"), "{bad}: {e}");
        }
        assert!(
            parse("b\t1.0\texit 0\t0\t1.0\n").is_err(),
            "a start at the epoch's 0"
        );
    }

    #[test]
    fn stages_that_overlap_ran_beside_each_other() {
        // a 0-100 s; b 100-160 (after a); c 110-300 beside b and d; d 150-200.
        let t = parse(
            "# epoch 1000.0\nbuild a\t100.0\tbuilt\t1000.0\nb\t60.0\texit 0\t1100.0\n\
             c\t190.0\texit 0\t1110.0\nd\t50.0\texit 1\t1150.0\n",
        )
        .unwrap();
        assert_eq!(t.epoch, Some(1000.0));
        assert!(t.about.is_empty(), "the epoch is not an about line");
        let names =
            |i: usize| -> Vec<&str> { t.beside(i).iter().map(|s| s.name.as_str()).collect() };
        assert!(names(0).is_empty(), "a ends as b begins");
        assert_eq!(names(1), ["c", "d"]);
        assert_eq!(names(2), ["b", "d"]);
        assert_eq!(names(3), ["b", "c"]);
        assert_eq!(t.wall_seconds(), Some(300.0));
        assert_eq!(t.total_seconds(), 400.0);
        let e = parse("b\t60.0\texit 0\tlater\n").unwrap_err().to_string();
        assert!(e.contains("start time"), "{e}");
    }

    #[test]
    fn a_step_left_out_says_how_to_get_it() {
        let t = parse(
            "# epoch 1000.0\n# left-out compiler axis\tmake build-compilers, then make report\n\
             build a\t100.0\tbuilt\t1000.0\n",
        )
        .unwrap();
        assert_eq!(
            t.left_out,
            [(
                "compiler axis".to_string(),
                "make build-compilers, then make report".to_string()
            )]
        );
        assert!(t.about.is_empty(), "a step left out is not an about line");
        assert_eq!(t.stages.len(), 1);
        let e = parse("# left-out no tab\n").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
    }
}
