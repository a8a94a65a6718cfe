//! The messages a driver process prints to the orchestrator, one JSON object per line on
//! stdout. The orchestrator never trusts a driver's word on what ran: it checks the versions
//! here against what the driver listed, and the metrics against the scenario's kind.

use serde::{Deserialize, Serialize};

use crate::metric::Metric;

pub use crate::measure::Measure;

/// What `tlsmatrix-driver info` prints: the impls this build contains.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriverInfo {
    pub impls: Vec<ImplInfo>,
    /// The C allocators the driver can route every allocation to (`TLSMATRIX_ALLOCATOR`),
    /// glibc's first; none for a driver whose libraries do not allocate through malloc.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allocators: Vec<AllocatorInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocatorInfo {
    /// `glibc`, `jemalloc` or `mimalloc`.
    pub name: String,
    /// The allocator and its release, e.g. "jemalloc 5.3.1".
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplInfo {
    pub name: String,
    pub version: String,
    /// Measures this impl cannot be taken with, and why (`--measure` values), so that the
    /// orchestrator does not start the driver for them at all (e.g. under valgrind or perf,
    /// where a driver that would refuse still costs the tool's start-up).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refuses: Vec<Refusal>,
    /// The QUIC stack this build drives on the library, with its exact version (e.g.
    /// "quinn-proto 0.11.19"); none where it drives none (`refuses` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub measure: String,
    pub reason: String,
}

/// One line of `tlsmatrix-driver run` or `group` output. In `group` output every line but
/// `Done` names the cell it is about (its place in the `--cell` list), and samples their round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DriverMessage {
    /// First line (per cell): the versions actually running on each side.
    Hello {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cell: Option<usize>,
        client_version: String,
        server_version: String,
    },
    Sample {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cell: Option<usize>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        round: Option<u32>,
        values: Vec<(Metric, f64)>,
    },
    /// The pair cannot run this scenario; nothing was measured.
    Unsupported {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cell: Option<usize>,
        reason: String,
    },
    /// The median traced connection of a `--measure wire` cell, after its samples.
    Trace {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cell: Option<usize>,
        trace: crate::trace::Trace,
    },
    /// The scenario failed; `message` is one sentence for the user.
    Error {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cell: Option<usize>,
        message: String,
    },
    /// `group --stepped`: the driver has finished step `step` (0: set-up and warm-up; then
    /// one per round) and waits for the next line on its stdin; after the last round, that
    /// line lets it say `done` and end. Two drivers stepped in turns on one core sample side
    /// by side although they are two processes (duet sampling).
    Stepped { step: u32 },
    /// Last line of a successful run.
    Done,
}

impl DriverMessage {
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).expect("a message always serializes");
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let msgs = [
            DriverMessage::Hello {
                cell: None,
                client_version: "a".into(),
                server_version: "b".into(),
            },
            DriverMessage::Sample {
                cell: Some(2),
                round: Some(7),
                values: vec![(Metric::ClientCpuNs, 12.5)],
            },
            DriverMessage::Unsupported {
                cell: Some(1),
                reason: "x".into(),
            },
            DriverMessage::Error {
                cell: None,
                message: "y".into(),
            },
            DriverMessage::Stepped { step: 3 },
            DriverMessage::Done,
        ];
        // A single-cell run's lines carry no cell field, as before groups existed.
        let plain = DriverMessage::Error {
            cell: None,
            message: "y".into(),
        };
        assert!(!plain.to_line().contains("cell"));
        for m in msgs {
            let line = m.to_line();
            let back: DriverMessage = serde_json::from_str(line.trim_end()).unwrap();
            assert_eq!(back, m);
        }
    }
}
