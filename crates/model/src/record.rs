//! The result record: one JSON object per line, schema-versioned. A record is one
//! (scenario, client, server, metric) with its raw samples and their statistics.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Bumped whenever a field changes meaning; readers refuse other versions.
pub const SCHEMA: &str = "tlsmatrix.result/1";

pub use crate::metric::Metric;

/// Where and with what a run was made.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Env {
    pub cpu_model: String,
    pub cores: usize,
    pub kernel: String,
    /// Tool name to version, e.g. `rustc` to `rustc 1.95.0 (...)`.
    pub compilers: BTreeMap<String, String>,
    pub git_revision: String,
    /// RFC 3339, UTC.
    pub timestamp: String,
    pub command: String,
}

impl Env {
    /// Timed groups the run sampled at once (`tlsmatrix run --lanes`, read from its command
    /// line; 1 when not given).
    pub fn lanes(&self) -> usize {
        self.option("--lanes")
            .and_then(|n| n.parse().ok())
            .unwrap_or(1)
    }

    /// The value the run's command line gave an option (`--name VALUE` or `--name=VALUE`),
    /// if it gave one.
    pub fn option(&self, name: &str) -> Option<&str> {
        let mut words = self.command.split_whitespace();
        while let Some(w) = words.next() {
            let value = match w.strip_prefix(name) {
                Some("") => words.next(),
                Some(v) => v.strip_prefix('='),
                None => None,
            };
            if value.is_some() {
                return value;
            }
        }
        None
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub schema: String,
    pub run_id: String,
    pub scenario: String,
    pub client: String,
    pub server: String,
    pub client_version: String,
    pub server_version: String,
    pub metric: Metric,
    pub unit: String,
    pub samples: Vec<f64>,
    pub median: f64,
    pub min: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub env: Env,
    /// The block (one driver process: a stretch of the run on one core) of each sample, when
    /// the samples were taken in several; the interval is then a two-level bootstrap over
    /// blocks and samples (`stats::summarize_blocked`). Empty when taken in one block.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<u32>,
    /// Paired with the reference pair: each sample over the reference's sample of the same
    /// round, when the two were sampled in turns in one process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<Paired>,
    /// The connection's flights, on a `path_cpu_ns` record (the median trace: each flight's
    /// CPU the median over the traced connections).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::trace::Trace>,
    /// The memory weather (`memprobe`) around each block of the samples, one entry per block,
    /// when the run probed it between its passes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weather: Vec<BlockWeather>,
}

/// The memory weather of one block: the mean of the probes before and after its pass.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BlockWeather {
    pub block: u32,
    #[serde(flatten)]
    pub weather: crate::weather::Weather,
}

/// A record's samples paired with the reference pair's (the baseline with itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Paired {
    pub reference_client: String,
    pub reference_server: String,
    /// The reference's scenario, when not the record's own: a post-quantum handshake paired
    /// with its classical twin on the same stack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_scenario: Option<String>,
    /// This record's sample over the reference's in the same round, in recorded units (so a
    /// time ratio under 1 is faster), one per sample that had a partner.
    pub ratios: Vec<f64>,
    /// The block of each ratio, as `Record::blocks`.
    pub blocks: Vec<u32>,
}

impl Paired {
    /// The median ratio with its two-level bootstrap interval; significance against 1 only.
    pub fn factor(&self) -> Option<crate::stats::Factor> {
        crate::stats::paired_factor(&self.ratios, &self.blocks)
    }
}

/// The label of the baseline's second copy in a run's A/A comparison: the same impl measured
/// against itself under two names, which says how far apart two identical figures land.
pub fn aa_label(imp: &str) -> String {
    format!("{imp}{AA_SUFFIX}")
}

const AA_SUFFIX: &str = " (A/A)";

/// Whether a record's client is the A/A copy of the baseline.
pub fn is_aa(name: &str) -> bool {
    name.ends_with(AA_SUFFIX)
}

impl Record {
    /// One line of JSON, newline included, ready for a single append.
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).expect("a record always serializes");
        s.push('\n');
        s
    }
}

/// The schema of the other line a results file holds: a cell that produced no figures.
pub const CELL_SCHEMA: &str = "tlsmatrix.cell/1";

/// A cell that was not measured, and why: the report lists these so a missing figure is
/// never silent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellRecord {
    pub schema: String,
    pub run_id: String,
    pub scenario: String,
    pub client: String,
    pub server: String,
    pub outcome: CellStatus,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CellStatus {
    Unsupported,
    Failed,
}

impl CellStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CellStatus::Unsupported => "unsupported",
            CellStatus::Failed => "failed",
        }
    }
}

impl CellRecord {
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).expect("a cell record always serializes");
        s.push('\n');
        s
    }
}

impl Record {
    /// A record of `samples` with their statistics; `None` when there are none. `client` and
    /// `server` are (impl name, version it reported).
    pub fn from_samples(
        run_id: &str,
        scenario: &str,
        client: (&str, &str),
        server: (&str, &str),
        metric: Metric,
        samples: Vec<f64>,
        env: Env,
    ) -> Option<Record> {
        Record::from_blocks(
            run_id,
            scenario,
            client,
            server,
            metric,
            samples,
            Vec::new(),
            env,
        )
    }

    /// As [`Record::from_samples`], for samples taken in blocks (one per sample).
    #[allow(clippy::too_many_arguments)]
    pub fn from_blocks(
        run_id: &str,
        scenario: &str,
        client: (&str, &str),
        server: (&str, &str),
        metric: Metric,
        samples: Vec<f64>,
        blocks: Vec<u32>,
        env: Env,
    ) -> Option<Record> {
        let s = crate::stats::summarize_blocked(&samples, &blocks)?;
        Some(Record {
            schema: SCHEMA.into(),
            run_id: run_id.into(),
            scenario: scenario.into(),
            client: client.0.into(),
            server: server.0.into(),
            client_version: client.1.into(),
            server_version: server.1.into(),
            metric,
            unit: metric.unit().into(),
            samples,
            median: s.median,
            min: s.min,
            ci_low: s.ci_low,
            ci_high: s.ci_high,
            env,
            blocks,
            paired: None,
            trace: None,
            weather: Vec::new(),
        })
    }

    /// The statistics as stored.
    pub fn summary(&self) -> crate::stats::Summary {
        crate::stats::Summary {
            median: self.median,
            min: self.min,
            ci_low: self.ci_low,
            ci_high: self.ci_high,
        }
    }

    /// What identifies a figure across runs.
    pub fn key(&self) -> (String, String, String, Metric) {
        (
            self.scenario.clone(),
            self.client.clone(),
            self.server.clone(),
            self.metric,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_are_read_from_the_command_line() {
        let env = |c: &str| Env {
            command: c.into(),
            ..Env::default()
        };
        assert_eq!(env("tlsmatrix run --runs 60").lanes(), 1);
        assert_eq!(env("tlsmatrix run --lanes 2 --runs 60").lanes(), 2);
        assert_eq!(env("tlsmatrix run --lanes=2").lanes(), 2);
        assert_eq!(env("tlsmatrix run --lanes").lanes(), 1);
        assert_eq!(env("tlsmatrix run --lanesx 3").lanes(), 1);
    }

    #[test]
    fn a_record_written_by_the_go_benchmarks_reads() {
        // As go/cmd/pairedbench writes it (the reference pair: no ratios).
        let line = r#"{"schema":"tlsmatrix.result/1","run_id":"go-bench-20261123T120000Z","scenario":"libp2p-handshake-tls13-ecdsa-p256-x25519","client":"go-openssl","server":"go-openssl","client_version":"OpenSSL 3.0.19 27 Jan 2026","server_version":"OpenSSL 3.0.19 27 Jan 2026","metric":"ns_per_op","unit":"ns","samples":[3000000,3200000],"median":3100000,"min":3000000,"ci_low":3000000,"ci_high":3200000,"env":{"cpu_model":"AMD EPYC","cores":2,"kernel":"6.1","compilers":{"go":"go1.26.8"},"git_revision":"abc","timestamp":"2026-11-23T12:00:00Z","command":"make bench-go"}}"#;
        let r: Record = serde_json::from_str(line).unwrap();
        assert_eq!(r.metric, Metric::NsPerOp);
        assert_eq!(r.unit, r.metric.unit());
        assert!(!r.metric.higher_is_better());
    }

    #[test]
    fn a_record_is_one_line_and_reads_back() {
        let r = Record {
            schema: SCHEMA.into(),
            run_id: "r1".into(),
            scenario: "bulk-tls13-aes-128-gcm-16k".into(),
            client: "a".into(),
            server: "b".into(),
            client_version: "1".into(),
            server_version: "2".into(),
            metric: Metric::SendMbPerS,
            unit: "MB/s".into(),
            samples: vec![1.0, 2.0],
            median: 1.5,
            min: 1.0,
            ci_low: 1.0,
            ci_high: 2.0,
            env: Env::default(),
            blocks: vec![0, 1],
            paired: Some(Paired {
                reference_client: "a".into(),
                reference_server: "a".into(),
                reference_scenario: None,
                ratios: vec![1.1, 0.9],
                blocks: vec![0, 1],
            }),
            trace: None,
            weather: vec![BlockWeather {
                block: 1,
                weather: crate::weather::Weather {
                    cache_ns: 14.5,
                    memory_ns: 160.0,
                },
            }],
        };
        let line = r.to_line();
        assert_eq!(line.matches('\n').count(), 1);
        assert!(line.contains("\"metric\":\"send_mb_per_s\""));
        let back: Record = serde_json::from_str(line.trim_end()).unwrap();
        assert_eq!(back, r);
    }
}
