//! `tlsmatrix scan`: a third-party scanner (testssl.sh) against every stack's defaults peer,
//! and against the library's own command-line server where this machine has one of the same
//! release (`openssl s_server`, `gnutls-serv`), with the same certificate. Every finding that
//! differs between a peer and its library's server is listed; one nobody has explained
//! fails the scan, since then our peer is not what the library does by default.

mod explained;
mod resumption;
pub mod testssl;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Context, Result};
use tlsmatrix_harness::certs;
use tlsmatrix_history::outside_scan::{
    Difference, OutsideScan, Reference, Scan, ScannedPeer, SCHEMA,
};
use tlsmatrix_model::scenario::SigAlg;
use tlsmatrix_registry::registry::Registry;

use crate::peers::{self, Peer};
use crate::process::{start, wait_ready};
pub use testssl::Checks;

pub struct Options {
    /// The stacks to scan; empty: every stack with a defaults server.
    pub impls: Vec<String>,
    pub cert: SigAlg,
    pub checks: Checks,
    /// Servers scanned at once.
    pub jobs: usize,
    /// The most one server's scan may take.
    pub limit: Duration,
    pub out: PathBuf,
}

/// How long a server may take to start listening.
const START_LIMIT: Duration = Duration::from_secs(10);
/// Each connection's limit in our defaults peers: a scanner's half-open probes end there.
const CONNECTION_LIMIT_S: u64 = 10;

/// A stack's defaults peer and the library server it is compared with.
struct Target<'a> {
    peer: &'a Peer,
    reference: Option<&'a Peer>,
}

pub fn run(opts: &Options) -> Result<bool> {
    let tool = testssl::version().with_context(|| {
        format!(
            "{} is not installed (scripts/setup installs Debian's testssl.sh)",
            testssl::COMMAND
        )
    })?;
    let reg = Registry::discover()?;
    let all = peers::discover(&reg);
    let targets = targets(&all, &opts.impls, opts.cert)?;
    let dir = tlsmatrix_registry::beside(&opts.out, "outside-scan");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let certs_dir = dir.join("certs");
    certs::load_or_generate(&certs_dir, opts.cert).with_context(|| {
        format!(
            "cannot prepare test certificates in {}",
            certs_dir.display()
        )
    })?;
    let servers: Vec<&Peer> = targets
        .iter()
        .flat_map(|t| std::iter::once(t.peer).chain(t.reference))
        .collect();
    eprintln!(
        "scan: {tool} ({}) against {} defaults peers and {} library servers, {} cert, {} at a time, {} s limit each -> {}",
        opts.checks.options().join(" "),
        targets.len(),
        servers.len() - targets.len(),
        opts.cert,
        opts.jobs,
        opts.limit.as_secs(),
        opts.out.display()
    );
    let started = Instant::now();
    let scanner = Scanner {
        opts,
        dir: &dir,
        certs: &certs_dir,
    };
    let mut scans = scanner.scan_all(&servers, "first");
    // A timing-sensitive check can fail once on a loaded machine: a pair with a difference
    // nobody has explained is scanned again, both sides, and the second pair counts.
    let mut again: Vec<&Peer> = Vec::new();
    for t in &targets {
        if let Some(r) = t.reference {
            let d = differences(&t.peer.name, &scans[&t.peer.name], &scans[&r.name]);
            if d.iter().any(|d| d.why.is_empty()) {
                again.extend([t.peer, r]);
            }
        }
    }
    if !again.is_empty() {
        scans.extend(scanner.scan_all(&again, "again"));
    }
    let peers: Vec<ScannedPeer> = targets.iter().map(|t| scanned(t, &mut scans)).collect();
    let file = OutsideScan {
        schema: SCHEMA.into(),
        timestamp: tlsmatrix_registry::env::rfc3339(SystemTime::now()),
        tool,
        checks: opts
            .checks
            .options()
            .iter()
            .map(|s| s.to_string())
            .collect(),
        cert: opts.cert.to_string(),
        peers,
    };
    tlsmatrix_history::outside_scan::write(&opts.out, &file)?;
    print!(
        "{}",
        tlsmatrix_report::text_table::Table::from_doc(&tlsmatrix_report::outside_scan::table(
            &file
        ))
        .render()
    );
    let failed: Vec<&ScannedPeer> = file.peers.iter().filter(|p| !p.passed()).collect();
    eprintln!(
        "scan finished in {:.0} s: {} of {} defaults peers scanned and as their library's server where there is one; findings in {} (raw: {})",
        started.elapsed().as_secs_f64(),
        file.peers.len() - failed.len(),
        file.peers.len(),
        opts.out.display(),
        dir.display()
    );
    for p in failed {
        eprintln!("FAILED {}: {}", p.imp, why_failed(p));
    }
    Ok(file.peers.iter().all(ScannedPeer::passed))
}

/// The stacks chosen (every peer with a defaults server but the libraries' tools, or the
/// ones named), each with its library's server when a tool of the same release is here.
fn targets<'a>(all: &'a [Peer], names: &[String], cert: SigAlg) -> Result<Vec<Target<'a>>> {
    let tmp = Path::new("");
    let stacks: Vec<&Peer> = all
        .iter()
        .filter(|p| p.library_server().is_none())
        .filter(|p| p.defaults_server(cert, tmp, 1).is_ok())
        .collect();
    let chosen = crate::select_peers(&stacks, names, "no defaults peer")?;
    if chosen.is_empty() {
        bail!("no stack on this machine has a defaults peer");
    }
    Ok(chosen
        .into_iter()
        .map(|peer| Target {
            peer,
            reference: all
                .iter()
                .find(|t| t.library_server().is_some() && t.version.starts_with(&peer.version)),
        })
        .collect())
}

struct Scanner<'a> {
    opts: &'a Options,
    dir: &'a Path,
    certs: &'a Path,
}

impl Scanner<'_> {
    /// Every server scanned, `jobs` at a time, under a progress bar; keyed by peer name.
    fn scan_all(&self, servers: &[&Peer], round: &str) -> BTreeMap<String, Scan> {
        let bar = crate::progress_bar(servers.len(), "servers");
        let next = AtomicUsize::new(0);
        let done = Mutex::new(BTreeMap::new());
        std::thread::scope(|s| {
            for _ in 0..self.opts.jobs.max(1) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(peer) = servers.get(i) else { break };
                    let scan = self.scan_one(peer, round);
                    let msg = format!(
                        "{}: {}",
                        peer.name,
                        if scan.ran() { "scanned" } else { "FAILED" }
                    );
                    let mut done = done.lock().unwrap();
                    done.insert(peer.name.clone(), scan);
                    if bar.is_hidden() {
                        eprintln!("[{}/{}] {msg}", done.len(), servers.len());
                    }
                    bar.set_message(msg);
                    bar.inc(1);
                });
            }
        });
        bar.finish_and_clear();
        done.into_inner().unwrap()
    }

    /// One server: started on its defaults, scanned, its resumption checked, then killed.
    fn scan_one(&self, peer: &Peer, round: &str) -> Scan {
        let started = Instant::now();
        let failed = |failure: String| Scan::failed(failure, started.elapsed().as_secs_f64());
        let plan = match peer.defaults_server(self.opts.cert, self.certs, CONNECTION_LIMIT_S) {
            Ok(p) => p,
            Err(why) => return failed(why),
        };
        // stdin stays open while it serves: `openssl s_server` stops at the end of its input.
        let mut srv = match start(plan.cmd, true) {
            Ok(s) => s,
            Err(e) => return failed(format!("cannot start the server: {e}")),
        };
        let addr = match wait_ready(&mut srv, &plan.ready, Instant::now() + START_LIMIT) {
            Ok(a) => a.split_whitespace().next().unwrap_or_default().to_string(),
            Err(_) => {
                let text = srv.text();
                srv.kill();
                return failed(format!(
                    "the server did not start listening within {} s: {}",
                    START_LIMIT.as_secs(),
                    text.lines().last().unwrap_or("no output")
                ));
            }
        };
        let json = self.dir.join(format!("{}-{round}.json", peer.name));
        let mut scan = testssl::scan(&addr, self.opts.checks, &json, self.opts.limit);
        if scan.ran() {
            for id in resumption::RACED {
                scan.findings.remove(id);
            }
            scan.undecided
                .retain(|id| !resumption::RACED.contains(&id.as_str()));
            scan.resumes_by_ticket = resumption::resumes(&addr, false, self.dir);
            scan.resumes_by_id = resumption::resumes(&addr, true, self.dir);
        }
        // A server that died under the scan made the scanner's later checks meaningless.
        if let Ok(Some(status)) = srv.child.try_wait() {
            let text = srv.text();
            return failed(format!(
                "the server exited ({status}) during the scan: {}",
                text.lines().last().unwrap_or("no output")
            ));
        }
        srv.kill();
        scan.seconds = started.elapsed().as_secs_f64();
        scan
    }
}

/// The findings that differ between `imp`'s peer and its library's server, with the listed
/// explanation of each where there is one. A check one side could not decide is not
/// compared.
fn differences(imp: &str, peer: &Scan, reference: &Scan) -> Vec<Difference> {
    if !peer.ran() || !reference.ran() {
        return Vec::new();
    }
    let undecided: BTreeSet<&String> = peer.undecided.iter().chain(&reference.undecided).collect();
    let mut out: Vec<Difference> = peer
        .findings
        .keys()
        .chain(reference.findings.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|id| !undecided.contains(id))
        .filter(|id| peer.finding(id) != reference.finding(id))
        .map(|id| Difference {
            id: id.clone(),
            peer: peer.finding(id).map(str::to_string),
            reference: reference.finding(id).map(str::to_string),
            why: String::new(),
        })
        .collect();
    for (id, a, b) in [
        (
            "resumption by ticket",
            peer.resumes_by_ticket,
            reference.resumes_by_ticket,
        ),
        (
            "resumption by session id",
            peer.resumes_by_id,
            reference.resumes_by_id,
        ),
    ] {
        if a != b {
            out.push(Difference {
                id: id.into(),
                peer: Some(a.to_string()),
                reference: Some(b.to_string()),
                why: String::new(),
            });
        }
    }
    for d in &mut out {
        d.why = explained::why(imp, &d.id).unwrap_or_default().to_string();
    }
    out
}

fn scanned(t: &Target, scans: &mut BTreeMap<String, Scan>) -> ScannedPeer {
    let version = &t.peer.version;
    let scan = scans
        .remove(&t.peer.name)
        .expect("every target was scanned");
    let (reference, no_reference) = match t.reference {
        Some(r) => {
            let rscan = scans.remove(&r.name).expect("every reference was scanned");
            let differences = differences(&t.peer.name, &scan, &rscan);
            (
                Some(Reference {
                    name: r.library_server().unwrap_or_default().to_string(),
                    version: r.version.clone(),
                    scan: rscan,
                    differences,
                }),
                String::new(),
            )
        }
        None => (
            None,
            format!("this machine has no command-line server of {version}"),
        ),
    };
    ScannedPeer {
        imp: t.peer.name.clone(),
        version: version.clone(),
        scan,
        reference,
        no_reference,
    }
}

fn why_failed(p: &ScannedPeer) -> String {
    if !p.scan.ran() {
        return p.scan.failure.clone();
    }
    match &p.reference {
        Some(r) if !r.scan.ran() => format!("{} could not be scanned: {}", r.name, r.scan.failure),
        Some(r) => r
            .differences
            .iter()
            .filter(|d| d.why.is_empty())
            .map(|d| {
                format!(
                    "{}: ours {:?}, {}'s {:?}",
                    d.id, d.peer, r.name, d.reference
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
        None => String::new(),
    }
}
