//! The outside scan's results file (`results/outside-scan.json`): what a third-party TLS
//! scanner (testssl.sh) found in each stack's defaults peer, and in the library's own
//! command-line server where this machine has one, with every finding that differs between
//! the two. Each scan replaces the file whole.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "tlsmatrix.outside-scan/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutsideScan {
    pub schema: String,
    /// RFC 3339, UTC.
    pub timestamp: String,
    /// The scanner and its version, e.g. "testssl.sh 3.0.8".
    pub tool: String,
    /// The scanner's options: which of its checks ran.
    pub checks: Vec<String>,
    /// The kind of certificate every server was given, e.g. "ecdsa-p256".
    pub cert: String,
    pub peers: Vec<ScannedPeer>,
}

/// One stack's defaults peer, scanned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScannedPeer {
    pub imp: String,
    pub version: String,
    pub scan: Scan,
    /// The library's own command-line server, scanned the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Reference>,
    /// Why there is no reference, when there is none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub no_reference: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// The tool, e.g. "openssl s_server".
    pub name: String,
    pub version: String,
    pub scan: Scan,
    /// The findings that differ between the peer and the reference.
    pub differences: Vec<Difference>,
}

/// What one server showed the scanner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scan {
    /// Empty when the scan ran; otherwise why it did not (the server did not start, the
    /// scanner timed out or wrote nothing).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub failure: String,
    pub seconds: f64,
    /// The scanner's findings by its id, e.g. "TLS1_3" -> offered.
    pub findings: BTreeMap<String, Finding>,
    /// Checks the scanner could not decide ("check failed because of connect problem"),
    /// kept apart: they say nothing about the server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undecided: Vec<String>,
    /// Whether a TLS 1.3 session resumed by ticket, and by the server's own cache.
    pub resumes_by_ticket: bool,
    pub resumes_by_id: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The scanner's rating: OK, INFO, LOW, MEDIUM, HIGH, CRITICAL, WARN.
    pub severity: String,
    pub finding: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Why they differ, from the listed explanations; empty when nobody has explained it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
}

impl Scan {
    /// A scan that did not run, and why.
    pub fn failed(failure: String, seconds: f64) -> Scan {
        Scan {
            failure,
            seconds,
            findings: BTreeMap::new(),
            undecided: Vec::new(),
            resumes_by_ticket: false,
            resumes_by_id: false,
        }
    }

    pub fn ran(&self) -> bool {
        self.failure.is_empty()
    }

    /// A finding's text, if the scanner reported it.
    pub fn finding(&self, id: &str) -> Option<&str> {
        self.findings.get(id).map(|f| f.finding.as_str())
    }
}

impl ScannedPeer {
    /// Whether the scan ran and every difference from the reference is explained.
    pub fn passed(&self) -> bool {
        self.scan.ran()
            && self
                .reference
                .as_ref()
                .is_none_or(|r| r.scan.ran() && r.differences.iter().all(|d| !d.why.is_empty()))
    }
}

pub fn write(path: &Path, scan: &OutsideScan) -> Result<()> {
    crate::whole_file::replace(path, scan)
}

/// The scan in `path`; `Ok(None)` when there is none.
pub fn read(path: &Path) -> Result<Option<OutsideScan>> {
    crate::whole_file::read(path, "an outside scan", SCHEMA)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(findings: &[(&str, &str)]) -> Scan {
        Scan {
            failure: String::new(),
            seconds: 20.0,
            findings: findings
                .iter()
                .map(|(id, f)| {
                    (
                        id.to_string(),
                        Finding {
                            severity: "INFO".into(),
                            finding: f.to_string(),
                        },
                    )
                })
                .collect(),
            undecided: vec![],
            resumes_by_ticket: true,
            resumes_by_id: false,
        }
    }

    #[test]
    fn a_scan_round_trips_through_its_file_and_a_wrong_schema_is_refused() {
        let dir =
            std::env::temp_dir().join(format!("tlsmatrix-outside-scan-{}", std::process::id()));
        let path = dir.join("outside-scan.json");
        assert_eq!(read(&path).unwrap(), None);
        let mut file = OutsideScan {
            schema: SCHEMA.into(),
            timestamp: "2026-11-28T00:00:00Z".into(),
            tool: "testssl.sh 3.0.8".into(),
            checks: vec!["-p".into()],
            cert: "ecdsa-p256".into(),
            peers: vec![ScannedPeer {
                imp: "openssl-3.0".into(),
                version: "OpenSSL 3.0.19".into(),
                scan: scan(&[("TLS1_3", "offered with final")]),
                reference: Some(Reference {
                    name: "openssl s_server".into(),
                    version: "OpenSSL 3.0.19".into(),
                    scan: scan(&[("TLS1_3", "offered with final")]),
                    differences: vec![],
                }),
                no_reference: String::new(),
            }],
        };
        write(&path, &file).unwrap();
        assert_eq!(read(&path).unwrap().as_ref(), Some(&file));
        assert!(file.peers[0].passed());
        file.peers[0]
            .reference
            .as_mut()
            .unwrap()
            .differences
            .push(Difference {
                id: "TLS1_3".into(),
                peer: Some("offered".into()),
                reference: None,
                why: String::new(),
            });
        assert!(!file.peers[0].passed(), "an unexplained difference fails");
        file.schema = "tlsmatrix.outside-scan/0".into();
        write(&path, &file).unwrap();
        assert!(read(&path).unwrap_err().to_string().contains("schema"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
