//! `tlsmatrix interop`: every client against every server over real sockets, one case at a
//! time, cells in parallel up to the number of cores, each under a hard time limit.

mod cell;
pub mod peers;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use tlsmatrix_core::certs;
use tlsmatrix_core::glob;
use tlsmatrix_core::interop::{Case, CASES};

use crate::drivers::Registry;
use crate::table::Table;
use cell::{Outcome, Verdict};
use peers::Peer;

pub const SCHEMA: &str = "tlsmatrix.interop/1";

pub struct Options {
    pub peers: Vec<String>,
    pub cases: Vec<String>,
    pub quick: bool,
    pub jobs: usize,
    pub timeout: Duration,
    pub markdown: bool,
    pub out: PathBuf,
    pub command_line: String,
}

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

#[derive(Serialize)]
struct Line<'a> {
    schema: &'a str,
    run_id: &'a str,
    case: &'a str,
    client: &'a str,
    server: &'a str,
    client_version: &'a str,
    server_version: &'a str,
    outcome: Outcome,
    reason: &'a str,
    seconds: f64,
    command: &'a str,
}

fn select_cases(args: &[String], quick: bool) -> Result<Vec<&'static Case>> {
    let mut out: Vec<&'static Case> = Vec::new();
    let patterns: Vec<&str> = args
        .iter()
        .flat_map(|a| a.split(','))
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .collect();
    for c in CASES {
        let wanted = if patterns.is_empty() {
            !quick || c.quick
        } else {
            patterns.iter().any(|p| glob::matches(p, c.id))
        };
        if wanted {
            out.push(c);
        }
    }
    for p in &patterns {
        if !CASES.iter().any(|c| glob::matches(p, c.id)) {
            let ids: Vec<&str> = CASES.iter().map(|c| c.id).collect();
            bail!("--case '{p}' names no case; cases: {}", ids.join(", "));
        }
    }
    Ok(out)
}

fn select_peers(all: Vec<Peer>, args: &[String]) -> Result<Vec<Peer>> {
    let names: Vec<&str> = args
        .iter()
        .flat_map(|a| a.split(','))
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .collect();
    if names.is_empty() {
        return Ok(all);
    }
    names
        .iter()
        .map(|n| {
            all.iter().find(|p| p.name == *n).cloned().with_context(|| {
                let known: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
                format!("unknown peer '{n}'; available: {}", known.join(", "))
            })
        })
        .collect()
}

fn short(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        Outcome::ExpectedFailure => "xfail",
        Outcome::Fail => "FAIL",
        Outcome::Unsupported => "unsup",
    }
}

struct Done {
    case: &'static Case,
    client: usize,
    server: usize,
    verdict: Verdict,
}

/// Per case a client-by-server matrix, then every cell that failed or was unsupported, with why.
fn render(done: &[Done], peers: &[Peer], markdown: bool) -> String {
    let mut out = String::new();
    let mut cases: Vec<&Case> = Vec::new();
    for d in done {
        if !cases.iter().any(|c| c.id == d.case.id) {
            cases.push(d.case);
        }
    }
    for case in cases {
        let mut header = vec!["client \\ server"];
        header.extend(peers.iter().map(|p| p.name.as_str()));
        let mut t = Table::new(&header, 1);
        for (ci, cp) in peers.iter().enumerate() {
            let mut row = vec![cp.name.clone()];
            for si in 0..peers.len() {
                row.push(
                    done.iter()
                        .find(|d| d.case.id == case.id && d.client == ci && d.server == si)
                        .map_or("-".into(), |d| short(d.verdict.outcome).to_string()),
                );
            }
            t.row(row);
        }
        if markdown {
            out.push_str(&format!("\n### {}\n\n{}\n\n", case.id, case.about));
            let rendered = t.render();
            let mut lines = rendered.lines();
            if let Some(h) = lines.next() {
                let cells: Vec<&str> = h.split("  ").filter(|c| !c.trim().is_empty()).collect();
                out.push_str(&format!(
                    "| {} |\n|{}|\n",
                    cells
                        .iter()
                        .map(|c| c.trim())
                        .collect::<Vec<_>>()
                        .join(" | "),
                    vec!["---"; cells.len()].join("|")
                ));
            }
            for l in lines {
                let cells: Vec<&str> = l.split_whitespace().collect();
                out.push_str(&format!("| {} |\n", cells.join(" | ")));
            }
        } else {
            out.push_str(&format!("\n{}: {}\n", case.id, case.about));
            out.push_str(&t.render());
        }
    }
    let notes: Vec<&Done> = done
        .iter()
        .filter(|d| matches!(d.verdict.outcome, Outcome::Fail | Outcome::Unsupported))
        .collect();
    if !notes.is_empty() {
        out.push_str(if markdown {
            "\n### Not passing\n\n"
        } else {
            "\nnot passing:\n"
        });
        for d in notes {
            out.push_str(&format!(
                "{}{} {} -> {}: {}: {}\n",
                if markdown { "- " } else { "  " },
                d.case.id,
                peers[d.client].name,
                peers[d.server].name,
                d.verdict.outcome.as_str(),
                d.verdict.reason
            ));
        }
    }
    out
}

/// Generates every certificate the cases use before cells start in parallel.
fn prepare_certs(cases: &[&Case], dir: &Path) -> Result<()> {
    for c in cases {
        for sig in [c.client.sig, c.server.sig] {
            certs::load_or_generate(dir, sig).with_context(|| {
                format!("cannot prepare test certificates in {}", dir.display())
            })?;
        }
    }
    Ok(())
}

pub fn run(opts: Options) -> Result<bool> {
    let cases = select_cases(&opts.cases, opts.quick)?;
    let reg = Registry::discover()?;
    let peers = select_peers(peers::discover(&reg), &opts.peers)?;
    let mut results = crate::results_file::ResultsFile::open(&opts.out)?;
    let certs_dir = crate::beside(&opts.out, "certs");
    prepare_certs(&cases, &certs_dir)?;
    let run_id = format!(
        "interop-{}-{:04x}",
        crate::env::compact(SystemTime::now()),
        std::process::id() & 0xffff
    );
    let mut plan: Vec<(&'static Case, usize, usize)> = Vec::new();
    for &c in &cases {
        for ci in 0..peers.len() {
            for si in 0..peers.len() {
                plan.push((c, ci, si));
            }
        }
    }
    eprintln!(
        "interop {run_id}: {} cases x {} peers^2 = {} cells, {} at a time, {} s limit each -> {}",
        cases.len(),
        peers.len(),
        plan.len(),
        opts.jobs,
        opts.timeout.as_secs(),
        opts.out.display()
    );
    let bar = ProgressBar::new(plan.len() as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30.cyan/blue} {pos}/{len} cells, ETA {eta}  {msg}",
        )
        .expect("the template is valid"),
    );
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<Done>();
    let mut done: Vec<Done> = Vec::new();
    std::thread::scope(|s| -> Result<()> {
        for _ in 0..opts.jobs.max(1) {
            let tx = tx.clone();
            let (plan, peers, next, certs_dir) = (&plan, &peers, &next, &certs_dir);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(case, ci, si)) = plan.get(i) else {
                    break;
                };
                let verdict = cell::run(case, &peers[ci], &peers[si], certs_dir, opts.timeout);
                if tx
                    .send(Done {
                        case,
                        client: ci,
                        server: si,
                        verdict,
                    })
                    .is_err()
                {
                    break;
                }
            });
        }
        drop(tx);
        for d in rx {
            let (c, s) = (&peers[d.client], &peers[d.server]);
            let line = Line {
                schema: SCHEMA,
                run_id: &run_id,
                case: d.case.id,
                client: &c.name,
                server: &s.name,
                client_version: &c.version,
                server_version: &s.version,
                outcome: d.verdict.outcome,
                reason: &d.verdict.reason,
                seconds: d.verdict.seconds,
                command: &opts.command_line,
            };
            let mut text = serde_json::to_string(&line)?;
            text.push('\n');
            results.append_text(&text)?;
            bar.inc(1);
            let msg = format!(
                "{} {} -> {}: {}",
                d.case.id,
                c.name,
                s.name,
                d.verdict.outcome.as_str()
            );
            if bar.is_hidden() {
                eprintln!("[{}/{}] {msg}", done.len() + 1, plan.len());
            } else {
                bar.set_message(msg);
            }
            done.push(d);
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    // Cells finish in any order; the report reads in plan order.
    done.sort_by_key(|d| {
        (
            CASES.iter().position(|c| c.id == d.case.id),
            d.client,
            d.server,
        )
    });
    print!("{}", render(&done, &peers, opts.markdown));
    let count = |o: Outcome| done.iter().filter(|d| d.verdict.outcome == o).count();
    eprintln!(
        "interop {run_id} finished in {:.0} s: {} pass, {} expected-failure, {} fail, {} unsupported; records in {}",
        started.elapsed().as_secs_f64(),
        count(Outcome::Pass),
        count(Outcome::ExpectedFailure),
        count(Outcome::Fail),
        count(Outcome::Unsupported),
        results.path().display()
    );
    Ok(count(Outcome::Fail) == 0)
}

/// `tlsmatrix peer`: one side of a case, run by the driver that holds the impl.
pub fn peer(role: &str, imp: &str, rest: &[String]) -> Result<bool> {
    let reg = Registry::discover()?;
    let entry = reg.get(imp)?;
    let status = std::process::Command::new(&entry.driver)
        .args(["peer", role, "--impl", imp])
        .args(rest)
        .status()
        .with_context(|| format!("cannot start {}", entry.driver.display()))?;
    Ok(status.success())
}

pub fn list_cases() {
    let mut t = Table::new(&["case", "quick", "what"], 3);
    for c in CASES {
        t.row(vec![
            c.id.into(),
            if c.quick { "yes" } else { "" }.into(),
            c.about.into(),
        ]);
    }
    print!("{}", t.render());
}
