//! A run's environment as the report and `show` print it, and how long each step of the
//! `make report` that made it took.

use tlsmatrix_history::timings::duration;
use tlsmatrix_history::RunData;

use crate::doc::{Cell, Table};

/// The environment of a run, as `key: value` lines.
pub fn environment(run: &RunData) -> Vec<(String, String)> {
    let e = &run.env;
    let mut out = vec![
        (
            "run".to_string(),
            format!("{} ({})", run.run_id, run.status),
        ),
        ("started".into(), e.timestamp.clone()),
        ("command".into(), e.command.clone()),
        ("git revision".into(), e.git_revision.clone()),
        ("cpu".into(), format!("{} ({} cores)", e.cpu_model, e.cores)),
        ("kernel".into(), e.kernel.clone()),
    ];
    for (tool, v) in &e.compilers {
        out.push((tool.clone(), v.clone()));
    }
    for (name, v) in run.versions() {
        out.push((name, v));
    }
    out
}

/// How long `make report` took on this machine, step by step, as `scripts/stage` and
/// `scripts/step` wrote it (results/timings.tsv): when each began after the job did, what ran
/// beside it, and the job's length (the report itself is the last step, so it is not in the
/// file).
pub(crate) fn timings_table(t: &tlsmatrix_history::timings::Timings) -> Table {
    let about: Vec<String> = t.about.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let build: f64 = t
        .stages
        .iter()
        .filter(|s| s.is_build())
        .map(|s| s.seconds)
        .sum();
    let first = t
        .epoch
        .or_else(|| t.stages.iter().filter_map(|s| s.start).reduce(f64::min));
    let besides: Vec<Vec<&str>> = (0..t.stages.len())
        .map(|i| t.beside(i).iter().map(|b| b.name.as_str()).collect())
        .collect();
    let mut rows: Vec<Vec<Cell>> = t
        .stages
        .iter()
        .zip(&besides)
        .map(|(s, beside)| {
            let began = match (s.start, first) {
                (Some(a), Some(f)) => clock(a - f),
                _ => "-".to_string(),
            };
            vec![
                Cell::plain(s.name.clone()),
                Cell::plain(began),
                Cell::plain(duration(s.seconds)),
                Cell::plain(cpu_of(s.cpu_seconds, s.seconds)),
                Cell::plain(s.outcome.clone()),
                Cell::plain(if beside.is_empty() {
                    "-".to_string()
                } else {
                    beside.join(", ")
                }),
            ]
        })
        .collect();
    let overlapped = besides.iter().filter(|b| !b.is_empty()).count();
    let wall = t.wall_seconds();
    let whole = match wall {
        Some(wall) if overlapped > 0 => format!(
            "{} from the first step's start to the last one's end; the steps' times add up to {}, since {overlapped} of them ran beside others (the last column)",
            duration(wall),
            duration(t.total_seconds())
        ),
        Some(wall) => format!(
            "{}: the steps ran one after another, none beside another",
            duration(wall)
        ),
        None => format!(
            "{}, the steps' times added up (this file gives no start times, so what ran beside what is not known)",
            duration(t.total_seconds())
        ),
    };
    // Steps this machine's job did not take, each with how to get it: the report is not
    // whole without them, and says so where its times are.
    rows.extend(t.left_out.iter().map(|(name, how)| {
        vec![
            Cell::plain(name.clone()),
            Cell::plain("-"),
            Cell::plain("-"),
            Cell::plain("-"),
            Cell::plain(format!("left out: {how}")),
            Cell::plain("-"),
        ]
    }));
    let whole_seconds = wall.unwrap_or(t.total_seconds());
    rows.push(vec![
        Cell::plain("all steps until the report"),
        Cell::plain(""),
        Cell::plain(duration(whole_seconds)),
        Cell::plain(cpu_of(t.cpu_seconds(), whole_seconds)),
        Cell::plain(format!("of which builds {}", duration(build))),
        Cell::plain(""),
    ]);
    Table {
        caption: format!(
            "How long `make report` took here, each step as the tools timed it ({}): {whole}. CPU is the user and system time of the step's processes, and in brackets how many cores that kept busy on average over its time.{}",
            about.join("; "),
            match t.left_out.len() {
                0 => String::new(),
                n => format!(" {n} step(s) left out on this run, each with how to get it."),
            }
        ),
        header: vec![
            "step".into(),
            "began".into(),
            "took".into(),
            "CPU (cores busy)".into(),
            "outcome".into(),
            "ran beside".into(),
        ],
        rows,
        label_cols: 1,
    }
}

/// A step's CPU time and how many cores that kept busy on average over its wall time: "7 min
/// 12 s (1.8)"; "-" where the file does not give it.
fn cpu_of(cpu: Option<f64>, wall: f64) -> String {
    match cpu {
        Some(cpu) if wall > 0.0 => format!("{} ({:.1})", duration(cpu), cpu / wall),
        Some(cpu) => duration(cpu),
        None => "-".to_string(),
    }
}

/// "12:05" minutes and seconds after the job began; "1:02:05" past an hour.
fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}
