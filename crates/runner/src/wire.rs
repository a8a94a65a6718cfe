//! `tlsmatrix wire`: a wire run's figures with the modelled time to first byte under the
//! conditions asked for, and `--check`: real connections through the delay proxy, timed
//! against the model.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tlsmatrix_analysis::netmodel::{self, Conditions};
use tlsmatrix_history::proxy_check::{self, CheckRow, ProxyCheck};
use tlsmatrix_history::{resolve, RunKind};
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::scenario::Scenario;
use tlsmatrix_model::stats;
use tlsmatrix_report::network;
use tlsmatrix_report::text_table::Table;

use tlsmatrix_registry::env;
use tlsmatrix_registry::registry::{self as drivers, CellOutcome, Registry};

pub struct ModelOptions {
    pub run: String,
    pub db: PathBuf,
    pub rtts_ms: Vec<f64>,
    pub bandwidth_mbps: Option<f64>,
    pub initcwnd: u32,
    pub tcp_handshake: bool,
}

impl ModelOptions {
    fn conditions(&self) -> Vec<Conditions> {
        self.rtts_ms
            .iter()
            .map(|ms| Conditions {
                rtt_s: ms / 1e3,
                bandwidth_bps: self.bandwidth_mbps.map(|m| m * 1e6),
                initcwnd: self.initcwnd,
                mss: netmodel::MSS,
                tcp_handshake: self.tcp_handshake,
            })
            .collect()
    }
}

/// Prints the wire figures of a run and the model's time to first byte.
pub fn model(o: &ModelOptions) -> Result<()> {
    let run = resolve(
        &o.run,
        &o.db,
        RunKind::Measured(tlsmatrix_model::measure::Measure::Wire),
    )?;
    let rows = network::wire_rows(&run);
    if rows.is_empty() {
        bail!(
            "run {} has no wire figures; `tlsmatrix run --measure wire` measures them",
            run.run_id
        );
    }
    let rows: Vec<_> = rows.iter().collect();
    let table = network::model_table(&rows, &o.conditions());
    println!("wire run {}: {}\n", run.run_id, table.caption);
    print!("{}", Table::from_doc(&table).render());
    Ok(())
}

pub struct CheckOptions {
    /// Over TCP: the one impl timed. With `quic`: impls, comma-separated (default: every
    /// impl; those without a QUIC stack say so and are left out).
    pub imp: Option<String>,
    /// QUIC through the UDP delay proxy: `crate::quic_check::check` takes these options.
    pub quic: bool,
    pub scenarios: Vec<String>,
    pub rtts_ms: Vec<f64>,
    pub bandwidth_mbps: Option<f64>,
    pub runs: u32,
    pub out: PathBuf,
    pub timeout: Duration,
}

impl CheckOptions {
    /// The scenarios `--scenario` names, or `defaults` where it names none.
    pub fn scenarios_or(&self, defaults: Vec<Scenario>) -> Result<Vec<Scenario>> {
        if self.scenarios.is_empty() {
            return Ok(defaults);
        }
        self.scenarios
            .iter()
            .map(|s| s.parse::<Scenario>().map_err(|e| anyhow::anyhow!(e)))
            .collect()
    }
}

/// Times real connections through the delay proxy for each scenario and RTT, compares them
/// with the model, and writes the check file; false when a row is off by more than 10%.
pub fn check(o: &CheckOptions) -> Result<bool> {
    if o.quic {
        bail!("a QUIC check is `quic_check::check`'s");
    }
    let reg = Registry::discover()?;
    let entry = match &o.imp {
        Some(name) => reg.get(name)?,
        None => reg.impls.first().context("no impl found")?,
    };
    let scenarios = o.scenarios_or(Scenario::wire_check_suite())?;
    let certs = tlsmatrix_registry::beside(&o.out, "certs");
    let planned = (scenarios.len() * o.rtts_ms.len()) as u64 * u64::from(o.runs);
    let bar = crate::progress::bar(planned, "connections");
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for s in &scenarios {
        for &rtt in &o.rtts_ms {
            bar.set_message(format!("{s} at {rtt} ms"));
            match one_check(o, entry, s, rtt, &certs, &bar) {
                Ok(Some(row)) => rows.push(row),
                Ok(None) => bar.println(format!("{s}: unsupported by {}", entry.name)),
                Err(e) => failures.push(format!("{s} at {rtt} ms: {e:#}")),
            }
        }
    }
    bar.finish_and_clear();
    let check = ProxyCheck {
        schema: proxy_check::SCHEMA.into(),
        timestamp: env::rfc3339(std::time::SystemTime::now()),
        rows,
        downloads: Vec::new(),
    };
    proxy_check::write(&o.out, &check)?;
    print!(
        "{}",
        Table::from_doc(&network::check_table(&check)).render()
    );
    let off: Vec<&CheckRow> = check
        .rows
        .iter()
        .filter(|r| r.deviation().abs() > 0.10)
        .collect();
    for r in &off {
        println!(
            "note: {} at {} ms is {:+.1}% off the model ({:.2} ms measured, {:.2} modelled): the real socket path's own cost",
            r.scenario,
            r.rtt_ms,
            r.deviation() * 100.0,
            r.measured_ms,
            r.model_ms
        );
    }
    for f in &failures {
        println!("FAILED: {f}");
    }
    println!("written to {}", o.out.display());
    Ok(failures.is_empty())
}

/// The driver's `ttfb` for `entry` with itself on `scenario`: `runs` connections at
/// `rtt_ms`, the certificates in `certs`.
pub(crate) fn ttfb_command(
    entry: &drivers::ImplEntry,
    scenario: &Scenario,
    rtt_ms: f64,
    runs: u32,
    certs: &Path,
) -> std::process::Command {
    let mut cmd = entry.driver().command();
    cmd.args(["ttfb", "--scenario", &scenario.to_string()])
        .args(["--client", &entry.name, "--server", &entry.name, "--certs"])
        .arg(certs)
        .args(["--rtt-ms", &rtt_ms.to_string()])
        .args(["--runs", &runs.to_string()]);
    cmd
}

fn one_check(
    o: &CheckOptions,
    entry: &drivers::ImplEntry,
    scenario: &Scenario,
    rtt_ms: f64,
    certs: &Path,
    bar: &indicatif::ProgressBar,
) -> Result<Option<CheckRow>> {
    let mut cmd = ttfb_command(entry, scenario, rtt_ms, o.runs, certs);
    if let Some(b) = o.bandwidth_mbps {
        cmd.args(["--bandwidth-mbps", &b.to_string()]);
    }
    let (samples, trace) = match drivers::run_command(cmd, o.timeout, || bar.inc(1)) {
        CellOutcome::Measured { samples, trace, .. } => (samples, trace),
        CellOutcome::Unsupported(_) => return Ok(None),
        CellOutcome::Failed(msg) => bail!(msg),
    };
    let samples: Vec<f64> = samples
        .into_iter()
        .flatten()
        .filter(|(m, v)| *m == Metric::TtfbNs && v.is_finite() && *v > 0.0)
        .map(|(_, v)| v / 1e6)
        .collect();
    let trace = trace.context("the driver sent no trace")?;
    let s = stats::summarize(&samples).context("the driver timed no connection")?;
    let cond = Conditions {
        bandwidth_bps: o.bandwidth_mbps.map(|m| m * 1e6),
        tcp_handshake: false,
        ..Conditions::at_rtt(rtt_ms / 1e3)
    };
    Ok(Some(CheckRow {
        scenario: scenario.to_string(),
        client: entry.name.clone(),
        server: entry.name.clone(),
        rtt_ms,
        bandwidth_mbps: o.bandwidth_mbps,
        measured_ms: s.median,
        measured_low_ms: s.ci_low,
        measured_high_ms: s.ci_high,
        model_ms: netmodel::time_to_first_byte(&trace, &cond).ttfb_s * 1e3,
    }))
}

/// A round-trip time in milliseconds.
pub fn parse_rtt(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=10_000.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "'{s}' is not a round-trip time in milliseconds (0 to 10000)"
        )),
    }
}

/// A bandwidth in Mbit/s, above zero.
pub fn parse_bandwidth(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a bandwidth in Mbit/s (above 0)")),
    }
}
