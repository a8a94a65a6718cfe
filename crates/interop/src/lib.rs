//! `tlsmatrix interop`: every client against every server over real sockets, one case at a
//! time, cells in parallel up to the number of cores, each under a hard time limit.

mod cell;
pub mod deviations;
mod listening;
mod offers;
pub mod outside_scan;
pub mod peers;
mod process;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use tlsmatrix_harness::certs;
use tlsmatrix_model::glob;
use tlsmatrix_model::interop::{Case, CASES};

use tlsmatrix_history::interop_file::{CellLine, SCHEMA};
use tlsmatrix_report::text_table::Table;

use cell::{Outcome, Verdict};
use peers::Peer;
use tlsmatrix_registry::registry::Registry;

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
    pub shard: tlsmatrix_registry::shard::Shard,
    /// A run id to use instead of a new one, so that shards record into one run.
    pub run_id: Option<String>,
    pub out: PathBuf,
    pub command_line: String,
    /// Also read each client's ClientHello on its library's defaults (`offers.json` beside
    /// `out`); a full run does so anyway.
    pub offers: bool,
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
    let patterns = listed(args);
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

/// The names in options given as repeated, comma-separated lists.
fn listed(args: &[String]) -> Vec<&str> {
    args.iter()
        .flat_map(|a| a.split(','))
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .collect()
}

/// The peers `args` name, in their order, or all of them when none is named; a name that is
/// none of them is an error starting with `unknown` ("unknown peer") and listing the rest.
fn select_peers<'a>(all: &[&'a Peer], args: &[String], unknown: &str) -> Result<Vec<&'a Peer>> {
    let names = listed(args);
    if names.is_empty() {
        return Ok(all.to_vec());
    }
    names
        .iter()
        .map(|n| {
            all.iter().copied().find(|p| p.name == *n).with_context(|| {
                let known: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
                format!("{unknown} '{n}'; available: {}", known.join(", "))
            })
        })
        .collect()
}

/// A progress bar over `len` of `unit`, drawn only on a terminal (a log gets a line per
/// item from the caller instead).
fn progress_bar(len: usize, unit: &str) -> ProgressBar {
    let bar = ProgressBar::new(len as u64).with_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} [{{elapsed_precise}}] {{bar:30.cyan/blue}} {{pos}}/{{len}} {unit}, ETA {{eta}}  {{msg}}"
        ))
        .expect("the template is valid"),
    );
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar
}

struct Done {
    case: &'static Case,
    client: usize,
    server: usize,
    verdict: Verdict,
}

/// Generates every certificate the cases use before cells start in parallel.
fn prepare_certs(cases: &[&Case], dir: &Path) -> Result<()> {
    for c in cases {
        for sig in [c.client.sig, c.server.sig] {
            prepare_cert(dir, sig)?;
        }
    }
    Ok(())
}

fn prepare_cert(dir: &Path, sig: tlsmatrix_model::scenario::SigAlg) -> Result<()> {
    certs::load_or_generate(dir, sig)
        .map(drop)
        .with_context(|| format!("cannot prepare test certificates in {}", dir.display()))
}

pub fn run(opts: Options) -> Result<bool> {
    let cases = select_cases(&opts.cases, opts.quick)?;
    let reg = Registry::discover()?;
    let found = peers::discover(&reg);
    let peers: Vec<Peer> = select_peers(
        &found.iter().collect::<Vec<_>>(),
        &opts.peers,
        "unknown peer",
    )?
    .into_iter()
    .cloned()
    .collect();
    let mut results = tlsmatrix_history::results_file::ResultsFile::open(&opts.out)?;
    let certs_dir = tlsmatrix_registry::beside(&opts.out, "certs");
    prepare_certs(&cases, &certs_dir)?;
    let run_id = opts.run_id.clone().unwrap_or_else(|| {
        format!(
            "interop-{}-{:04x}",
            tlsmatrix_registry::env::compact(SystemTime::now()),
            std::process::id() & 0xffff
        )
    });
    let plan = plan_cells(&cases, &peers, &opts.shard)?;
    eprintln!(
        "interop {run_id}: {} cases, {} peers, {} cells, {} at a time, {} s limit each -> {}",
        cases.len(),
        peers.len(),
        plan.len(),
        opts.jobs,
        opts.timeout.as_secs(),
        opts.out.display()
    );
    let bar = progress_bar(plan.len(), "cells");
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
            explain_known_deviation(&mut d, &c.name, &s.name);
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
    let lines = cell_lines(&done, &peers, &run_id);
    print!(
        "{}",
        tlsmatrix_report::interop::render(&lines, opts.markdown, opts.verbose)
    );
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
    if opts.offers || (opts.cases.is_empty() && !opts.quick && opts.shard.index == 1) {
        read_offers(&peers, &certs_dir, &run_id, &opts)?;
    }
    // New failures are named last, where a user looks when the exit status is 1.
    for l in lines.iter().filter(|l| l.outcome == "fail") {
        eprintln!(
            "FAILED {} {} -> {}: {}",
            l.case, l.client, l.server, l.reason
        );
    }
    Ok(count(Outcome::Fail) == 0)
}

/// Every cell of the chosen cases, this shard's part: each case pairs the peers of its family
/// (TLS peers, libp2p peers, or the impls as QUIC peers), every client with every server.
fn plan_cells(
    cases: &[&'static Case],
    peers: &[Peer],
    shard: &tlsmatrix_registry::shard::Shard,
) -> Result<Vec<(&'static Case, usize, usize)>> {
    let mut plan: Vec<(&'static Case, usize, usize)> = Vec::new();
    for &c in cases {
        let family: Vec<usize> = (0..peers.len())
            .filter(|&i| peers[i].takes(c.family))
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
    let plan = shard.select(&plan);
    if plan.is_empty() {
        bail!(
            "shard {}/{} of these cases has no cell; use fewer shards",
            shard.index,
            shard.count
        );
    }
    Ok(plan)
}

/// A failed cell that a third-party peer's known deviation explains becomes that deviation,
/// with what was seen.
fn explain_known_deviation(d: &mut Done, client: &str, server: &str) {
    if d.verdict.outcome != Outcome::Fail {
        return;
    }
    if let Some(k) = deviations::explain(d.case.id, client, server, &d.verdict.reason) {
        d.verdict.outcome = Outcome::KnownDeviation;
        d.verdict.reason = format!(
            "known deviation of {}: {}; {}. Seen: {}",
            k.peer, k.what, k.why, d.verdict.reason
        );
    }
}

/// The finished cells as the report reads them.
fn cell_lines(done: &[Done], peers: &[Peer], run_id: &str) -> Vec<CellLine> {
    done.iter()
        .map(|d| CellLine {
            run_id: run_id.to_string(),
            case: d.case.id.to_string(),
            client: peers[d.client].name.clone(),
            server: peers[d.server].name.clone(),
            client_version: peers[d.client].version.clone(),
            server_version: peers[d.server].version.clone(),
            outcome: d.verdict.outcome.as_str().to_string(),
            reason: d.verdict.reason.clone(),
        })
        .collect()
}

/// Reads what each TLS client offers on its defaults, writes it beside the interop results
/// and prints it. Each client has the cells' limit to send its ClientHello.
fn read_offers(peers: &[Peer], certs_dir: &Path, run_id: &str, opts: &Options) -> Result<()> {
    prepare_cert(certs_dir, offers::CERT)?;
    let offers = offers::read_all(peers, certs_dir, run_id, opts.timeout);
    let path = opts.out.with_file_name(tlsmatrix_report::OFFERS_FILE);
    tlsmatrix_history::offers::write(&path, &offers)?;
    let table = Table::from_doc(&tlsmatrix_report::offers::table(&offers)).render();
    // Markdown shows a text table as it is only inside a fence.
    let fence = if opts.markdown { "```\n" } else { "" };
    print!("\n{fence}{table}{fence}");
    if let Some(s) = tlsmatrix_report::offers::sentence(&offers) {
        println!("{s}");
    }
    eprintln!(
        "offers of {} clients in {}",
        offers.clients.len(),
        path.display()
    );
    Ok(())
}

/// `tlsmatrix peer`: one side of a case, run by the driver that holds the impl.
/// Without `--certs` it uses `DEFAULT_CERTS`, as `tlsmatrix interop` does on its defaults, so
/// a peer started by hand meets interop's peers with the same certificates.
pub fn peer(role: &str, imp: &str, rest: &[String]) -> Result<bool> {
    let reg = Registry::discover()?;
    let entry = reg.get(imp)?;
    let mut args = rest.to_vec();
    let all: Vec<&Case> = CASES.iter().collect();
    let given = rest
        .iter()
        .enumerate()
        .find_map(|(i, a)| match a.strip_prefix("--certs=") {
            Some(dir) => Some(dir.to_string()),
            None if a == "--certs" => rest.get(i + 1).cloned(),
            None => None,
        });
    match given {
        // The drivers make what a folder lacks themselves; Go's peer only reads it.
        Some(dir) if imp == peers::go_crypto_tls::GO_CRYPTO_TLS => {
            prepare_certs(&all, Path::new(&dir))?
        }
        Some(_) => {}
        None => {
            prepare_certs(&all, Path::new(DEFAULT_CERTS))?;
            args.extend(["--certs".to_string(), DEFAULT_CERTS.to_string()]);
        }
    }
    let (mut cmd, what) = if imp == peers::go_crypto_tls::GO_CRYPTO_TLS {
        // Go's crypto/tls plays interop from its own peer binary, not the Go driver.
        let dir = tlsmatrix_registry::registry::driver_dir()?;
        let cmd =
            peers::go_crypto_tls::by_hand(&dir, role, &args).map_err(|e| anyhow::anyhow!(e))?;
        (cmd, "tlsmatrix-go-peer".to_string())
    } else {
        let mut cmd = entry.driver().command();
        cmd.args(["peer", role, "--impl", imp]).args(&args);
        (cmd, entry.driver().to_string())
    };
    let status = tlsmatrix_registry::child::ends_with_parent(&mut cmd)
        .status()
        .with_context(|| format!("cannot start {what}"))?;
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
