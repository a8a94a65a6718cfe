//! `tlsmatrix wire --check --quic`: each QUIC stack's connections timed over UDP on loopback
//! through the UDP delay proxy, against the network model's time to first byte for the same
//! library and scenario (the model `--measure quic` gives, from a connection traced in
//! memory), and a 1 MiB download at 50 ms against the least time slow start allows (the
//! case openssl#31134 reported five-fold slower).

use std::path::Path;

use anyhow::{bail, Context, Result};
use tlsmatrix_analysis::netmodel::{self, Conditions};
use tlsmatrix_history::proxy_check::{self, CheckRow, DownloadRow, ProxyCheck};
use tlsmatrix_model::netmodel::{slow_start_download_s, QUIC_INITIAL_WINDOW};
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::scenario::Scenario;
use tlsmatrix_model::stats;
use tlsmatrix_model::trace::Trace;
use tlsmatrix_registry::env;
use tlsmatrix_registry::registry::{self as drivers, CellOutcome, ImplEntry, Registry};
use tlsmatrix_report::network;
use tlsmatrix_report::text_table::Table;

use crate::wire::CheckOptions;

/// What the first-byte rows ask for: the model's 1,000-byte response.
const FIRST_BYTE_ANSWER: u64 = 1000;
/// The download timed against slow start, and its round trip.
pub const DOWNLOAD_BYTES: u64 = 1 << 20;
pub const DOWNLOAD_RTT_MS: f64 = 50.0;
/// Downloads timed per stack (after one that warms up).
const DOWNLOAD_RUNS: u32 = 3;

/// The scenarios timed where `--scenario` names none: the lead, and an ML-DSA-44 chain that
/// the amplification limit holds back a round trip.
pub const SCENARIOS: [&str; 2] = [
    "handshake-tls13-ecdsa-p256-x25519-full",
    "handshake-tls13-mldsa44-x25519-full",
];

pub fn check(o: &CheckOptions) -> Result<bool> {
    if o.bandwidth_mbps.is_some() {
        bail!("--quic takes no --bandwidth: the UDP delay proxy adds latency only");
    }
    let reg = Registry::discover()?;
    let entries: Vec<&ImplEntry> = match &o.imp {
        Some(names) => names
            .split(',')
            .map(|n| reg.get(n.trim()))
            .collect::<Result<_>>()?,
        None => reg.defaults().collect(),
    };
    let defaults = SCENARIOS
        .iter()
        .map(|s| s.parse::<Scenario>())
        .collect::<Result<Vec<_>, _>>()?;
    let scenarios = o.scenarios_or(defaults)?;
    let certs = tlsmatrix_registry::beside(&o.out, "certs");
    let per_impl =
        (scenarios.len() * o.rtts_ms.len()) as u64 * u64::from(o.runs) + u64::from(DOWNLOAD_RUNS);
    let bar = crate::progress::bar(per_impl * entries.len() as u64, "connections");
    let (mut rows, mut downloads, mut failures) = (Vec::new(), Vec::new(), Vec::new());
    let per_scenario = o.rtts_ms.len() as u64 * u64::from(o.runs);
    'impls: for entry in entries {
        'scenarios: for (i, s) in scenarios.iter().enumerate() {
            for &rtt in &o.rtts_ms {
                bar.set_message(format!("{} {s} at {rtt} ms", entry.name));
                let timed = match time(o, entry, s, rtt, FIRST_BYTE_ANSWER, o.runs, &certs, &bar) {
                    Ok(Timed::Measured(t)) => t,
                    // An impl without the lead is left out whole (it has no QUIC stack); one
                    // without a later scenario's key or group, that scenario only.
                    Ok(Timed::Unsupported(why)) if i == 0 => {
                        bar.suspend(|| eprintln!("{}: unsupported: {why}", entry.name));
                        bar.inc(per_impl);
                        continue 'impls;
                    }
                    Ok(Timed::Unsupported(why)) => {
                        bar.suspend(|| eprintln!("{} {s}: unsupported: {why}", entry.name));
                        bar.inc(per_scenario);
                        continue 'scenarios;
                    }
                    Err(e) => {
                        failures.push(format!("{} {s} at {rtt} ms: {e:#}", entry.name));
                        continue;
                    }
                };
                let (ms, trace) = (timed.first_byte_ms, timed.trace);
                let s_ = stats::summarize(&ms).context("the driver timed no connection")?;
                let cond = Conditions {
                    tcp_handshake: false,
                    ..Conditions::at_rtt(rtt / 1e3)
                };
                rows.push(CheckRow {
                    scenario: s.to_string(),
                    client: entry.name.clone(),
                    server: entry.name.clone(),
                    rtt_ms: rtt,
                    bandwidth_mbps: None,
                    measured_ms: s_.median,
                    measured_low_ms: s_.ci_low,
                    measured_high_ms: s_.ci_high,
                    model_ms: netmodel::time_to_first_byte(&trace, &cond).ttfb_s * 1e3,
                });
            }
        }
        let lead = &scenarios[0];
        bar.set_message(format!(
            "{} downloads 1 MiB at {DOWNLOAD_RTT_MS} ms",
            entry.name
        ));
        let (bytes, rtt) = (DOWNLOAD_BYTES, DOWNLOAD_RTT_MS);
        match time(o, entry, lead, rtt, bytes, DOWNLOAD_RUNS, &certs, &bar) {
            Ok(Timed::Measured(t)) => {
                let s_ = stats::summarize(&t.last_byte_ms).context("no download was timed")?;
                downloads.push(DownloadRow {
                    scenario: lead.to_string(),
                    client: entry.name.clone(),
                    rtt_ms: rtt,
                    bytes,
                    measured_ms: s_.median,
                    measured_low_ms: s_.ci_low,
                    measured_high_ms: s_.ci_high,
                    ideal_ms: slow_start_download_s(bytes, rtt / 1e3, QUIC_INITIAL_WINDOW) * 1e3,
                });
            }
            Ok(Timed::Unsupported(why)) => {
                bar.suspend(|| eprintln!("{}: unsupported: {why}", entry.name))
            }
            Err(e) => failures.push(format!("{} download at {rtt} ms: {e:#}", entry.name)),
        }
    }
    bar.finish_and_clear();
    let check = ProxyCheck {
        schema: proxy_check::SCHEMA.into(),
        timestamp: env::rfc3339(std::time::SystemTime::now()),
        rows,
        downloads,
    };
    proxy_check::write(&o.out, &check)?;
    print!(
        "{}",
        Table::from_doc(&network::check_table_captioned(
            &check,
            "QUIC over loopback UDP through tlsmatrix's UDP delay proxy, against the model".into()
        ))
        .render()
    );
    for d in &check.downloads {
        println!(
            "{}: {} bytes at {} ms in {:.0} ms [{:.0}-{:.0}], {:.2}x the {:.0} ms slow start allows",
            d.client,
            d.bytes,
            d.rtt_ms,
            d.measured_ms,
            d.measured_low_ms,
            d.measured_high_ms,
            d.measured_ms / d.ideal_ms,
            d.ideal_ms
        );
    }
    for f in &failures {
        println!("FAILED: {f}");
    }
    println!("written to {}", o.out.display());
    Ok(failures.is_empty())
}

struct Times {
    first_byte_ms: Vec<f64>,
    last_byte_ms: Vec<f64>,
    trace: Trace,
}

enum Timed {
    Measured(Times),
    Unsupported(String),
}

/// `runs` connections of `entry` with itself downloading `bytes` at `rtt_ms`.
#[allow(clippy::too_many_arguments)]
fn time(
    o: &CheckOptions,
    entry: &ImplEntry,
    scenario: &Scenario,
    rtt_ms: f64,
    bytes: u64,
    runs: u32,
    certs: &Path,
    bar: &indicatif::ProgressBar,
) -> Result<Timed> {
    let mut cmd = crate::wire::ttfb_command(entry, scenario, rtt_ms, runs, certs);
    cmd.args(["--quic", "--bytes", &bytes.to_string()]);
    let (samples, trace) = match drivers::run_command(cmd, o.timeout, || bar.inc(1)) {
        CellOutcome::Measured { samples, trace, .. } => (samples, trace),
        CellOutcome::Unsupported(why) => return Ok(Timed::Unsupported(why)),
        CellOutcome::Failed(msg) => bail!(msg),
    };
    let of = |metric: Metric| -> Vec<f64> {
        samples
            .iter()
            .flatten()
            .filter(|(m, v)| *m == metric && v.is_finite() && *v > 0.0)
            .map(|(_, v)| v / 1e6)
            .collect()
    };
    Ok(Timed::Measured(Times {
        first_byte_ms: of(Metric::TtfbNs),
        last_byte_ms: of(Metric::QuicDownloadNs),
        trace: trace.context("the driver sent no trace")?,
    }))
}
