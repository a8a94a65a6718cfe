//! The delay-proxy check's results file (`results/proxy-check.json`): real connections timed
//! over loopback through the delay proxy, beside what the network model predicts for them.
//! Each check replaces the file whole (written beside it, then renamed), so a reader never
//! sees half of one.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "tlsmatrix.proxy-check/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProxyCheck {
    pub schema: String,
    /// RFC 3339, UTC.
    pub timestamp: String,
    pub rows: Vec<CheckRow>,
    /// QUIC downloads through the UDP delay proxy (`wire --check --quic`); none over TCP.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub downloads: Vec<DownloadRow>,
}

/// One stack's download of `bytes` over a new QUIC connection through the UDP delay proxy,
/// beside the least time slow start allows for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DownloadRow {
    pub scenario: String,
    pub client: String,
    pub rtt_ms: f64,
    pub bytes: u64,
    /// From the client's first packet to the answer's last byte: median and 95% interval.
    pub measured_ms: f64,
    pub measured_low_ms: f64,
    pub measured_high_ms: f64,
    /// `tlsmatrix_model::netmodel::slow_start_download_s` for the same bytes and RTT.
    pub ideal_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckRow {
    pub scenario: String,
    pub client: String,
    pub server: String,
    pub rtt_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_mbps: Option<f64>,
    /// Time to first byte over the proxy: median and 95% interval, milliseconds.
    pub measured_ms: f64,
    pub measured_low_ms: f64,
    pub measured_high_ms: f64,
    /// The model's figure for the same path (no TCP handshake: the proxy cannot delay it).
    pub model_ms: f64,
}

impl CheckRow {
    /// How far the measurement is from the model, as a fraction of the model.
    pub fn deviation(&self) -> f64 {
        self.measured_ms / self.model_ms - 1.0
    }
}

pub fn write(path: &Path, check: &ProxyCheck) -> Result<()> {
    crate::whole_file::replace(path, check)
}

/// The check in `path`; `Ok(None)` when there is none.
pub fn read(path: &Path) -> Result<Option<ProxyCheck>> {
    crate::whole_file::read(path, "a proxy check", SCHEMA)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_round_trips_through_its_file() {
        let dir =
            std::env::temp_dir().join(format!("tlsmatrix-proxy-check-{}", std::process::id()));
        let path = dir.join("proxy-check.json");
        assert_eq!(read(&path).unwrap(), None);
        let check = ProxyCheck {
            schema: SCHEMA.into(),
            timestamp: "2026-11-24T00:00:00Z".into(),
            rows: vec![CheckRow {
                scenario: "handshake-tls13-ecdsa-p256-x25519-full".into(),
                client: "a".into(),
                server: "a".into(),
                rtt_ms: 30.0,
                bandwidth_mbps: None,
                measured_ms: 61.5,
                measured_low_ms: 61.3,
                measured_high_ms: 62.3,
                model_ms: 60.4,
            }],
            downloads: Vec::new(),
        };
        write(&path, &check).unwrap();
        assert_eq!(read(&path).unwrap(), Some(check.clone()));
        assert!((check.rows[0].deviation() - 0.0182).abs() < 1e-3);
        std::fs::write(&path, "{}").unwrap();
        assert!(read(&path).is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
