//! `tlsmatrix interop`: every client against every server over real sockets, one case at a
//! time, cells in parallel up to the number of cores, each under a hard time limit.

mod cell;
pub mod deviations;
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

use crate::doc;
use crate::drivers::Registry;
use crate::table::Table;
use cell::{Outcome, Verdict};
use peers::Peer;

pub const SCHEMA: &str = "tlsmatrix.interop/1";

/// Where `tlsmatrix interop` keeps its certificates on its defaults (beside
/// results/interop.jsonl), and so where `tlsmatrix peer` looks unless told.
pub const DEFAULT_CERTS: &str = "results/certs";

pub struct Options {
    pub peers: Vec<String>,
    pub cases: Vec<String>,
    pub quick: bool,
    pub jobs: usize,
    pub timeout: Duration,
    pub markdown: bool,
    /// Every case's matrix and every unsupported cell in the terminal, not only the summary.
    pub verbose: bool,
    /// This run's share of the planned cells (`--shard K/N`).
    pub shard: crate::run::Shard,
    /// A run id to use instead of a new one, so that shards record into one run.
    pub run_id: Option<String>,
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

struct Done {
    case: &'static Case,
    client: usize,
    server: usize,
    verdict: Verdict,
}

/// The terminal's short words for outcomes, so a matrix of six peers fits a line.
fn short(outcome: &str) -> &str {
    match outcome {
        "expected-failure" => "xfail",
        "known-deviation" => "known",
        "fail" => "FAIL",
        "unsupported" => "unsup",
        other => other,
    }
}

/// Peers in the order the cells first name them.
pub fn peers_of<'a>(cells: impl IntoIterator<Item = &'a CellLine>) -> Vec<&'a str> {
    let mut peers: Vec<&str> = Vec::new();
    for c in cells {
        for p in [c.client.as_str(), c.server.as_str()] {
            if !peers.contains(&p) {
                peers.push(p);
            }
        }
    }
    peers
}

/// Every case at once: per client and server, "passed of applicable cases" (a case failed
/// exactly as it requires counts as passed; unsupported cases are not applicable). Green when
/// all passed, orange when the rest are listed deviations of a third-party peer, red when
/// anything else failed; the hover names the cases that did not pass.
pub fn summary_matrix(cells: &[CellLine]) -> doc::Table {
    client_by_server(
        &peers_of(cells),
        "All cases: passed of applicable cases per client (rows) and server (columns); green all passed, orange the rest are listed known deviations of a third-party peer, red a failure. Hover a cell for the cases that did not pass.".into(),
        |client, server| {
                let pair: Vec<&CellLine> = cells
                    .iter()
                    .filter(|c| c.client == *client && c.server == *server)
                    .collect();
                let applicable: Vec<&&CellLine> =
                    pair.iter().filter(|c| c.outcome != "unsupported").collect();
                let passed = applicable
                    .iter()
                    .filter(|c| matches!(c.outcome.as_str(), "pass" | "expected-failure"))
                    .count();
                let not_passed: Vec<String> = applicable
                    .iter()
                    .filter(|c| !matches!(c.outcome.as_str(), "pass" | "expected-failure"))
                    .map(|c| format!("{}: {}", c.case, c.outcome))
                    .collect();
                let class = if applicable.is_empty() {
                    doc::Class::Unsupported
                } else if not_passed.is_empty() {
                    doc::Class::Good
                } else if applicable
                    .iter()
                    .all(|c| c.outcome != "fail")
                {
                    doc::Class::Deviation
                } else {
                    doc::Class::Failed
                };
                if pair.is_empty() {
                    return doc::Cell::plain("-");
                }
                let title = format!(
                    "{client} -> {server}: {passed} of {} applicable cases passed ({} unsupported){}",
                    applicable.len(),
                    pair.len() - applicable.len(),
                    if not_passed.is_empty() {
                        String::new()
                    } else {
                        format!("; not passed: {}", not_passed.join(", "))
                    }
                );
                doc::Cell::with(
                    format!("{passed}/{}", applicable.len()),
                    class,
                    Some(title),
                )
        },
    )
}

/// A client-by-server table over `peers`, each cell made by `cell(client, server)`.
fn client_by_server(
    peers: &[&str],
    caption: String,
    cell: impl Fn(&str, &str) -> doc::Cell,
) -> doc::Table {
    let mut header = vec!["client \\ server".to_string()];
    header.extend(peers.iter().map(|p| p.to_string()));
    let rows = peers
        .iter()
        .map(|client| {
            let mut row = vec![doc::Cell::plain(*client)];
            row.extend(peers.iter().map(|server| cell(client, server)));
            row
        })
        .collect();
    doc::Table {
        caption,
        header,
        rows,
        label_cols: 1,
    }
}

/// Per case a client-by-server matrix, peers and cases in the order the cells name them; the
/// cell shows `text(outcome)`, its class the outcome, its hover the reason. The terminal and
/// the report both draw these.
pub fn matrix_tables(cells: &[CellLine], text: fn(&str) -> &str) -> Vec<doc::Table> {
    let mut cases: Vec<&str> = Vec::new();
    for c in cells {
        if !cases.contains(&c.case.as_str()) {
            cases.push(&c.case);
        }
    }
    cases
        .into_iter()
        .map(|case| {
            // The peers that took part in this case: its family's.
            let peers = peers_of(cells.iter().filter(|c| c.case == case));
            let about = CASES.iter().find(|c| c.id == case).map_or("", |c| c.about);
            client_by_server(
                &peers,
                format!("interop case {case}: {about}"),
                |client, server| match cells
                    .iter()
                    .find(|c| c.case == case && c.client == client && c.server == server)
                {
                    Some(c) => {
                        let class = match c.outcome.as_str() {
                            "pass" => doc::Class::Good,
                            "expected-failure" => doc::Class::Expected,
                            "known-deviation" => doc::Class::Deviation,
                            "unsupported" => doc::Class::Unsupported,
                            _ => doc::Class::Failed,
                        };
                        doc::Cell::with(text(&c.outcome), class, Some(c.reason.clone()))
                    }
                    None => doc::Cell::plain("-"),
                },
            )
        })
        .collect()
}

/// The summary matrix, then (Markdown, or text with `verbose`) each case's matrix; then every
/// cell that did not pass with why, unsupported cells only counted unless `verbose`.
fn render(cells: &[CellLine], markdown: bool, verbose: bool) -> String {
    let mut out = String::new();
    let full = markdown || verbose;
    let tables = std::iter::once(summary_matrix(cells)).chain(
        full.then(|| matrix_tables(cells, short))
            .into_iter()
            .flatten(),
    );
    for t in tables {
        if markdown {
            out.push('\n');
            out.push_str(&crate::report::markdown_table(&t));
        } else {
            out.push_str(&format!(
                "\n{}\n{}",
                t.caption,
                Table::from_doc(&t).render()
            ));
        }
    }
    let listed = |c: &&CellLine| match c.outcome.as_str() {
        "fail" | "known-deviation" => true,
        "unsupported" => full,
        _ => false,
    };
    let notes: Vec<&CellLine> = cells.iter().filter(listed).collect();
    if !notes.is_empty() {
        out.push_str(if markdown {
            "\n### Not passing\n\n"
        } else {
            "\nnot passing:\n"
        });
        for c in notes {
            out.push_str(&format!(
                "{}{} {} -> {}: {}: {}\n",
                if markdown { "- " } else { "  " },
                c.case,
                c.client,
                c.server,
                c.outcome,
                c.reason
            ));
        }
    }
    if !full {
        let unsupported = cells.iter().filter(|c| c.outcome == "unsupported").count();
        if unsupported > 0 {
            out.push_str(&format!(
                "\n{unsupported} cells unsupported (--verbose lists each with its reason, and each case's matrix)\n"
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
    let run_id = opts.run_id.clone().unwrap_or_else(|| {
        format!(
            "interop-{}-{:04x}",
            crate::env::compact(SystemTime::now()),
            std::process::id() & 0xffff
        )
    });
    // Each case pairs the peers of its family: TLS peers, or libp2p peers.
    let mut plan: Vec<(&'static Case, usize, usize)> = Vec::new();
    for &c in &cases {
        let family: Vec<usize> = (0..peers.len())
            .filter(|&i| peers[i].family() == c.family)
            .collect();
        for &ci in &family {
            for &si in &family {
                plan.push((c, ci, si));
            }
        }
    }
    if plan.is_empty() {
        bail!("no peer on this machine takes part in the chosen cases");
    }
    let plan = opts.shard.select(&plan);
    if plan.is_empty() {
        bail!(
            "shard {}/{} of these cases has no cell; use fewer shards",
            opts.shard.index,
            opts.shard.count
        );
    }
    eprintln!(
        "interop {run_id}: {} cases, {} peers, {} cells, {} at a time, {} s limit each -> {}",
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
        for mut d in rx {
            let (c, s) = (&peers[d.client], &peers[d.server]);
            if d.verdict.outcome == Outcome::Fail {
                if let Some(k) = deviations::explain(d.case.id, &c.name, &s.name, &d.verdict.reason)
                {
                    d.verdict.outcome = Outcome::KnownDeviation;
                    d.verdict.reason = format!(
                        "known deviation of {}: {}; {}. Seen: {}",
                        k.peer, k.what, k.why, d.verdict.reason
                    );
                }
            }
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
    let lines: Vec<CellLine> = done
        .iter()
        .map(|d| CellLine {
            run_id: run_id.clone(),
            case: d.case.id.to_string(),
            client: peers[d.client].name.clone(),
            server: peers[d.server].name.clone(),
            client_version: peers[d.client].version.clone(),
            server_version: peers[d.server].version.clone(),
            outcome: d.verdict.outcome.as_str().to_string(),
            reason: d.verdict.reason.clone(),
        })
        .collect();
    print!("{}", render(&lines, opts.markdown, opts.verbose));
    let count = |o: Outcome| done.iter().filter(|d| d.verdict.outcome == o).count();
    eprintln!(
        "interop {run_id} finished in {:.0} s: {} pass, {} expected-failure, {} known deviations, {} fail, {} unsupported; records in {}",
        started.elapsed().as_secs_f64(),
        count(Outcome::Pass),
        count(Outcome::ExpectedFailure),
        count(Outcome::KnownDeviation),
        count(Outcome::Fail),
        count(Outcome::Unsupported),
        results.path().display()
    );
    // New failures are named last, where a user looks when the exit status is 1.
    for l in lines.iter().filter(|l| l.outcome == "fail") {
        eprintln!(
            "FAILED {} {} -> {}: {}",
            l.case, l.client, l.server, l.reason
        );
    }
    Ok(count(Outcome::Fail) == 0)
}

/// `tlsmatrix peer`: one side of a case, run by the driver that holds the impl.
/// Without `--certs` it uses `DEFAULT_CERTS`, as `tlsmatrix interop` does on its defaults, so
/// a peer started by hand meets interop's peers with the same certificates.
pub fn peer(role: &str, imp: &str, rest: &[String]) -> Result<bool> {
    let reg = Registry::discover()?;
    let entry = reg.get(imp)?;
    let mut args = rest.to_vec();
    if !rest
        .iter()
        .any(|a| a == "--certs" || a.starts_with("--certs="))
    {
        let all: Vec<&Case> = CASES.iter().collect();
        prepare_certs(&all, Path::new(DEFAULT_CERTS))?;
        args.extend(["--certs".to_string(), DEFAULT_CERTS.to_string()]);
    }
    let status = std::process::Command::new(entry.driver())
        .args(["peer", role, "--impl", imp])
        .args(&args)
        .status()
        .with_context(|| format!("cannot start {}", entry.driver().display()))?;
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
