//! The result record: one JSON object per line, schema-versioned. A record is one
//! (scenario, client, server, metric) with its raw samples and their statistics.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Bumped whenever a field changes meaning; readers refuse other versions.
pub const SCHEMA: &str = "tlsmatrix.result/1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    ClientCpuNs,
    ServerCpuNs,
    HandshakesPerS,
    SendMbPerS,
    RecvMbPerS,
    /// Go benchmark figures (the libp2p transport's `make bench-go`).
    NsPerOp,
    BytesPerOp,
    AllocsPerOp,
    /// Instructions executed per handshake by each side, counted by callgrind.
    ClientInstructions,
    ServerInstructions,
    /// Instructions per MiB of application data, sending and receiving.
    SendInstrPerMib,
    RecvInstrPerMib,
    /// Heap each side keeps per connection after the handshake, and after 1 KiB each way.
    ClientHeapBytes,
    ServerHeapBytes,
    ClientHeapBytesAfterIo,
    ServerHeapBytesAfterIo,
    /// Full handshakes per second of wall time, all threads together, both sides in-process.
    ThroughputPerS,
    /// What the server side alone would sustain: per thread, handshakes over the time its
    /// server calls took, summed over the threads.
    ServerCapacityPerS,
    /// Wire figures of a handshake (`--measure wire`): bytes each side sent until both had
    /// finished, flights each way, the client's first flight, the largest flight, and round
    /// trips until each side may send application data.
    ClientWireBytes,
    ServerWireBytes,
    ClientFlights,
    ServerFlights,
    ClientHelloBytes,
    LargestFlightBytes,
    ClientReadyRtts,
    ServerReadyRtts,
    /// CPU both sides spend on the path to the first response byte; its record carries the
    /// connection's flights (`Record::trace`), from which the network model works.
    PathCpuNs,
    /// OS counters (`--measure counters`): page faults and context switches during each
    /// side's calls, per handshake; in bulk scenarios per MiB sent or received.
    ClientPageFaults,
    ServerPageFaults,
    ClientContextSwitches,
    ServerContextSwitches,
    SendPageFaultsPerMib,
    RecvPageFaultsPerMib,
    SendContextSwitchesPerMib,
    RecvContextSwitchesPerMib,
    /// Large blocks (4 KiB and up) per MiB that the allocator gave a side other than one it
    /// had just freed, so likely not in cache (`heap::large_blocks`).
    SendColdBlocksPerMib,
    RecvColdBlocksPerMib,
    /// The library's own AEAD sealing and opening one bulk scenario's records, through its
    /// crypto API without TLS (`--measure ceiling`): the most its bulk figure could reach.
    SealMbPerS,
    OpenMbPerS,
    /// memcpy of one such record in the same process, to a destination half a page from the
    /// source and to one 5 bytes past it modulo 4 KiB (how rustls copies into a page-aligned
    /// block): the machine's copy rate, and what 4 KiB aliasing costs it.
    CopyMbPerS,
    AliasedCopyMbPerS,
    /// The stack's send (receive) rate over its own AEAD's seal (open) rate, sample by
    /// sample, the two taken in turns in one process.
    SendShareOfSeal,
    RecvShareOfOpen,
    /// Where each side's time goes (`--measure profile`): the share of its perf samples in
    /// the cipher, copies, the allocator, the kernel, and everything else (`tlsmatrix_measure::profile`).
    SendCipherShare,
    SendCopyShare,
    SendAllocShare,
    SendKernelShare,
    SendOtherShare,
    RecvCipherShare,
    RecvCopyShare,
    RecvAllocShare,
    RecvKernelShare,
    RecvOtherShare,
    /// Time from connect to the response's first bytes over real TCP through the delay proxy
    /// (`tlsmatrix wire --check`).
    TtfbNs,
}

impl Metric {
    pub const ALL: &'static [Metric] = &[
        Metric::ClientCpuNs,
        Metric::ServerCpuNs,
        Metric::HandshakesPerS,
        Metric::SendMbPerS,
        Metric::RecvMbPerS,
        Metric::NsPerOp,
        Metric::BytesPerOp,
        Metric::AllocsPerOp,
        Metric::ClientInstructions,
        Metric::ServerInstructions,
        Metric::SendInstrPerMib,
        Metric::RecvInstrPerMib,
        Metric::ClientHeapBytes,
        Metric::ServerHeapBytes,
        Metric::ClientHeapBytesAfterIo,
        Metric::ServerHeapBytesAfterIo,
        Metric::ThroughputPerS,
        Metric::ServerCapacityPerS,
        Metric::ClientWireBytes,
        Metric::ServerWireBytes,
        Metric::ClientFlights,
        Metric::ServerFlights,
        Metric::ClientHelloBytes,
        Metric::LargestFlightBytes,
        Metric::ClientReadyRtts,
        Metric::ServerReadyRtts,
        Metric::PathCpuNs,
        Metric::TtfbNs,
        Metric::ClientPageFaults,
        Metric::ServerPageFaults,
        Metric::ClientContextSwitches,
        Metric::ServerContextSwitches,
        Metric::SendPageFaultsPerMib,
        Metric::RecvPageFaultsPerMib,
        Metric::SendContextSwitchesPerMib,
        Metric::RecvContextSwitchesPerMib,
        Metric::SendColdBlocksPerMib,
        Metric::RecvColdBlocksPerMib,
        Metric::SealMbPerS,
        Metric::OpenMbPerS,
        Metric::CopyMbPerS,
        Metric::AliasedCopyMbPerS,
        Metric::SendShareOfSeal,
        Metric::RecvShareOfOpen,
        Metric::SendCipherShare,
        Metric::SendCopyShare,
        Metric::SendAllocShare,
        Metric::SendKernelShare,
        Metric::SendOtherShare,
        Metric::RecvCipherShare,
        Metric::RecvCopyShare,
        Metric::RecvAllocShare,
        Metric::RecvKernelShare,
        Metric::RecvOtherShare,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Metric::ClientCpuNs => "client_cpu_ns",
            Metric::ServerCpuNs => "server_cpu_ns",
            Metric::HandshakesPerS => "handshakes_per_s",
            Metric::SendMbPerS => "send_mb_per_s",
            Metric::RecvMbPerS => "recv_mb_per_s",
            Metric::NsPerOp => "ns_per_op",
            Metric::BytesPerOp => "bytes_per_op",
            Metric::AllocsPerOp => "allocs_per_op",
            Metric::ClientInstructions => "client_instructions",
            Metric::ServerInstructions => "server_instructions",
            Metric::SendInstrPerMib => "send_instructions_per_mib",
            Metric::RecvInstrPerMib => "recv_instructions_per_mib",
            Metric::ClientHeapBytes => "client_heap_bytes",
            Metric::ServerHeapBytes => "server_heap_bytes",
            Metric::ClientHeapBytesAfterIo => "client_heap_bytes_after_io",
            Metric::ServerHeapBytesAfterIo => "server_heap_bytes_after_io",
            Metric::ThroughputPerS => "throughput_handshakes_per_s",
            Metric::ServerCapacityPerS => "server_capacity_handshakes_per_s",
            Metric::ClientWireBytes => "client_wire_bytes",
            Metric::ServerWireBytes => "server_wire_bytes",
            Metric::ClientFlights => "client_flights",
            Metric::ServerFlights => "server_flights",
            Metric::ClientHelloBytes => "client_hello_bytes",
            Metric::LargestFlightBytes => "largest_flight_bytes",
            Metric::ClientReadyRtts => "client_ready_rtts",
            Metric::ServerReadyRtts => "server_ready_rtts",
            Metric::PathCpuNs => "path_cpu_ns",
            Metric::TtfbNs => "ttfb_ns",
            Metric::ClientPageFaults => "client_page_faults",
            Metric::ServerPageFaults => "server_page_faults",
            Metric::ClientContextSwitches => "client_context_switches",
            Metric::ServerContextSwitches => "server_context_switches",
            Metric::SendPageFaultsPerMib => "send_page_faults_per_mib",
            Metric::RecvPageFaultsPerMib => "recv_page_faults_per_mib",
            Metric::SendContextSwitchesPerMib => "send_context_switches_per_mib",
            Metric::RecvContextSwitchesPerMib => "recv_context_switches_per_mib",
            Metric::SendColdBlocksPerMib => "send_cold_blocks_per_mib",
            Metric::RecvColdBlocksPerMib => "recv_cold_blocks_per_mib",
            Metric::SealMbPerS => "seal_mb_per_s",
            Metric::OpenMbPerS => "open_mb_per_s",
            Metric::CopyMbPerS => "copy_mb_per_s",
            Metric::AliasedCopyMbPerS => "aliased_copy_mb_per_s",
            Metric::SendShareOfSeal => "send_share_of_seal",
            Metric::RecvShareOfOpen => "recv_share_of_open",
            Metric::SendCipherShare => "send_cipher_share",
            Metric::SendCopyShare => "send_copy_share",
            Metric::SendAllocShare => "send_alloc_share",
            Metric::SendKernelShare => "send_kernel_share",
            Metric::SendOtherShare => "send_other_share",
            Metric::RecvCipherShare => "recv_cipher_share",
            Metric::RecvCopyShare => "recv_copy_share",
            Metric::RecvAllocShare => "recv_alloc_share",
            Metric::RecvKernelShare => "recv_kernel_share",
            Metric::RecvOtherShare => "recv_other_share",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Metric::ClientCpuNs | Metric::ServerCpuNs | Metric::PathCpuNs | Metric::TtfbNs => "ns",
            Metric::ClientWireBytes
            | Metric::ServerWireBytes
            | Metric::ClientHelloBytes
            | Metric::LargestFlightBytes => "B",
            Metric::ClientFlights | Metric::ServerFlights => "flights",
            Metric::ClientReadyRtts | Metric::ServerReadyRtts => "RTT",
            Metric::HandshakesPerS => "1/s",
            Metric::SendMbPerS
            | Metric::RecvMbPerS
            | Metric::SealMbPerS
            | Metric::OpenMbPerS
            | Metric::CopyMbPerS
            | Metric::AliasedCopyMbPerS => "MB/s",
            Metric::SendShareOfSeal | Metric::RecvShareOfOpen => "fraction",
            Metric::SendCipherShare
            | Metric::SendCopyShare
            | Metric::SendAllocShare
            | Metric::SendKernelShare
            | Metric::SendOtherShare
            | Metric::RecvCipherShare
            | Metric::RecvCopyShare
            | Metric::RecvAllocShare
            | Metric::RecvKernelShare
            | Metric::RecvOtherShare => "fraction",
            Metric::ClientPageFaults | Metric::ServerPageFaults => "faults",
            Metric::ClientContextSwitches | Metric::ServerContextSwitches => "switches",
            Metric::SendPageFaultsPerMib | Metric::RecvPageFaultsPerMib => "faults/MiB",
            Metric::SendContextSwitchesPerMib | Metric::RecvContextSwitchesPerMib => "switches/MiB",
            Metric::SendColdBlocksPerMib | Metric::RecvColdBlocksPerMib => "blocks/MiB",
            Metric::NsPerOp => "ns",
            Metric::BytesPerOp => "B",
            Metric::AllocsPerOp => "allocs",
            Metric::ClientInstructions | Metric::ServerInstructions => "instructions",
            Metric::SendInstrPerMib | Metric::RecvInstrPerMib => "instructions/MiB",
            Metric::ClientHeapBytes
            | Metric::ServerHeapBytes
            | Metric::ClientHeapBytesAfterIo
            | Metric::ServerHeapBytesAfterIo => "B",
            Metric::ThroughputPerS | Metric::ServerCapacityPerS => "1/s",
        }
    }

    /// Counted rather than timed: repeated runs agree closely, so small changes matter.
    pub fn is_count(self) -> bool {
        matches!(
            self,
            Metric::ClientInstructions
                | Metric::ServerInstructions
                | Metric::SendInstrPerMib
                | Metric::RecvInstrPerMib
        )
    }

    /// An OS counter per handshake or MiB, or a share of a side's profile, which is often
    /// zero; every other figure is positive.
    pub fn may_be_zero(self) -> bool {
        self.is_profile_share()
            || matches!(
                self,
                Metric::ClientPageFaults
                    | Metric::ServerPageFaults
                    | Metric::ClientContextSwitches
                    | Metric::ServerContextSwitches
                    | Metric::SendPageFaultsPerMib
                    | Metric::RecvPageFaultsPerMib
                    | Metric::SendContextSwitchesPerMib
                    | Metric::RecvContextSwitchesPerMib
                    | Metric::SendColdBlocksPerMib
                    | Metric::RecvColdBlocksPerMib
            )
    }

    /// Read from the bytes on the wire: the same every handshake (up to a signature's length).
    pub fn is_wire(self) -> bool {
        matches!(
            self,
            Metric::ClientWireBytes
                | Metric::ServerWireBytes
                | Metric::ClientFlights
                | Metric::ServerFlights
                | Metric::ClientHelloBytes
                | Metric::LargestFlightBytes
                | Metric::ClientReadyRtts
                | Metric::ServerReadyRtts
        )
    }

    /// A figure that depends on the code and the work alone, not on how fast the machine
    /// is: instruction counts and heap bytes. Only these compare across CPU models.
    pub fn machine_independent(self) -> bool {
        self.is_count()
            || self.is_wire()
            || matches!(
                self,
                Metric::ClientHeapBytes
                    | Metric::ServerHeapBytes
                    | Metric::ClientHeapBytesAfterIo
                    | Metric::ServerHeapBytesAfterIo
                    | Metric::BytesPerOp
                    | Metric::AllocsPerOp
            )
    }

    /// Each side's profile shares (`--measure profile`), in `profile::Category::REPORTED`'s
    /// order: cipher, copies, malloc, kernel, elsewhere.
    pub const SEND_PROFILE: [Metric; 5] = [
        Metric::SendCipherShare,
        Metric::SendCopyShare,
        Metric::SendAllocShare,
        Metric::SendKernelShare,
        Metric::SendOtherShare,
    ];
    pub const RECV_PROFILE: [Metric; 5] = [
        Metric::RecvCipherShare,
        Metric::RecvCopyShare,
        Metric::RecvAllocShare,
        Metric::RecvKernelShare,
        Metric::RecvOtherShare,
    ];

    /// A share of a side's perf samples (`--measure profile`).
    pub fn is_profile_share(self) -> bool {
        Metric::SEND_PROFILE.contains(&self) || Metric::RECV_PROFILE.contains(&self)
    }

    pub fn higher_is_better(self) -> bool {
        matches!(
            self,
            Metric::HandshakesPerS
                | Metric::SendMbPerS
                | Metric::RecvMbPerS
                | Metric::SealMbPerS
                | Metric::OpenMbPerS
                | Metric::CopyMbPerS
                | Metric::AliasedCopyMbPerS
                | Metric::SendShareOfSeal
                | Metric::RecvShareOfOpen
                | Metric::SendCipherShare
                | Metric::RecvCipherShare
                | Metric::ThroughputPerS
                | Metric::ServerCapacityPerS
        )
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Metric {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Metric::ALL
            .iter()
            .copied()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| format!("unknown metric '{s}'"))
    }
}

impl Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Metric {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

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
        let mut words = self.command.split_whitespace();
        while let Some(w) = words.next() {
            let value = match w.strip_prefix("--lanes") {
                Some("") => words.next(),
                Some(v) => v.strip_prefix('='),
                None => None,
            };
            if let Some(n) = value.and_then(|v| v.parse().ok()) {
                return n;
            }
        }
        1
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
    fn metric_names_round_trip_and_directions_are_right() {
        for &m in Metric::ALL {
            assert_eq!(m.as_str().parse::<Metric>().unwrap(), m);
        }
        assert!(!Metric::ClientCpuNs.higher_is_better());
        assert!(Metric::SendMbPerS.higher_is_better());
    }

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
