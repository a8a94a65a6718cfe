//! testssl.sh (Debian's `testssl`) against one server: its findings by id, bounded in time.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use tlsmatrix_history::outside_scan::{Finding, Scan};

use crate::process::start;

/// The scanner's command on Debian.
pub const COMMAND: &str = "testssl";

/// Which checks a scan runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checks {
    /// Protocols, the standard cipher categories (NULL, anonymous, export, low, 3DES, CBC),
    /// server preferences, forward secrecy and groups, every cipher per protocol, the
    /// server's defaults (certificate, tickets, extensions), and the known vulnerabilities
    /// (Heartbleed, CCS injection, ROBOT, renegotiation, ...): about 30 s a server here.
    Full,
    /// All of those but the vulnerabilities: about 21 s.
    Short,
}

impl Checks {
    pub fn options(self) -> &'static [&'static str] {
        match self {
            Checks::Full => &["-p", "-s", "-P", "-f", "-E", "-S", "-U"],
            Checks::Short => &["-p", "-s", "-P", "-f", "-E", "-S"],
        }
    }
}

/// Fewer findings than this and the scan did not really run (the server went away early).
const FEWEST_FINDINGS: usize = 40;

/// Findings about the scan or the scanning machine, not about the server.
const NOT_ABOUT_THE_SERVER: [&str; 2] = ["scanTime", "engine_problem"];

/// The scanner's version line, e.g. "testssl.sh 3.0.8"; `None` when it is not installed.
pub fn version() -> Option<String> {
    let out = Command::new(COMMAND).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().map(strip_ansi).find_map(|l| {
        let v = l.strip_prefix("testssl")?.split_whitespace().next()?;
        v.starts_with(|c: char| c.is_ascii_digit())
            .then(|| format!("testssl.sh {v}"))
    })
}

/// Scans `addr`, writing the scanner's JSON to `json`, within `limit`.
pub fn scan(addr: &str, checks: Checks, json: &Path, limit: Duration) -> Scan {
    let started = Instant::now();
    let failed = |failure: String| Scan::failed(failure, started.elapsed().as_secs_f64());
    // testssl.sh appends to a JSON file that exists, which would leave it unreadable.
    let _ = std::fs::remove_file(json);
    let mut cmd = Command::new(COMMAND);
    cmd.args(["--quiet", "--color", "0", "--warnings", "batch"])
        .args(checks.options())
        .arg("--jsonfile")
        .arg(json)
        .arg(addr);
    let mut run = match start(cmd, false) {
        Ok(r) => r,
        Err(e) => return failed(format!("cannot start {COMMAND}: {e}")),
    };
    if run.wait_until(started + limit).is_none() {
        run.kill();
        return failed(format!(
            "{COMMAND} was still scanning after {} s",
            limit.as_secs()
        ));
    }
    let text = match std::fs::read_to_string(json) {
        Ok(t) => t,
        Err(e) => {
            return failed(format!(
                "{COMMAND} wrote no findings ({e}): {}",
                last_line(&run.text())
            ))
        }
    };
    let (findings, undecided) = match parse(&text) {
        Ok(f) => f,
        Err(e) => return failed(format!("{COMMAND}'s findings are unreadable: {e}")),
    };
    if let Some(fatal) = findings.values().find(|f| f.severity == "FATAL") {
        return failed(format!("{COMMAND} gave up: {}", fatal.finding));
    }
    if findings.len() < FEWEST_FINDINGS {
        return failed(format!(
            "{COMMAND} reported only {} findings (a full scan has {FEWEST_FINDINGS} or more)",
            findings.len()
        ));
    }
    Scan {
        failure: String::new(),
        seconds: started.elapsed().as_secs_f64(),
        findings,
        undecided,
        resumes_by_ticket: false,
        resumes_by_id: false,
    }
}

/// The scanner's flat JSON: `[{"id", "severity", "finding", ...}]`. The findings by id, and
/// apart the ids it could not decide.
fn parse(text: &str) -> Result<(BTreeMap<String, Finding>, Vec<String>), String> {
    let rows: Vec<serde_json::Value> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut findings = BTreeMap::new();
    let mut undecided = Vec::new();
    for r in &rows {
        let id = r["id"].as_str().ok_or("a finding has no id")?;
        let finding = r["finding"].as_str().unwrap_or_default();
        if NOT_ABOUT_THE_SERVER.contains(&id) {
            continue;
        }
        if finding.contains("connect problem") {
            undecided.push(id.to_string());
            continue;
        }
        findings.insert(
            id.to_string(),
            Finding {
                severity: r["severity"].as_str().unwrap_or_default().to_string(),
                finding: finding.to_string(),
            },
        );
    }
    Ok((findings, undecided))
}

fn last_line(text: &str) -> String {
    strip_ansi(text.lines().rfind(|l| !l.trim().is_empty()).unwrap_or(""))
}

/// Text without terminal colour codes (testssl.sh colours its banner even with --color 0).
fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_read_by_id_and_the_undecided_and_the_scans_own_are_kept_apart() {
        let text = r#"[
          {"id": "engine_problem", "severity": "WARN", "finding": "No engine"},
          {"id": "TLS1_3", "severity": "OK", "finding": "offered with final"},
          {"id": "sessionresumption_ticket", "severity": "WARN", "finding": "check failed because of connect problem"},
          {"id": "scanTime", "severity": "INFO", "finding": "26"}
        ]"#;
        let (f, undecided) = parse(text).unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(f["TLS1_3"].severity, "OK");
        assert_eq!(undecided, ["sessionresumption_ticket"]);
        assert!(parse("[{\"severity\": \"OK\"}]").is_err());
        assert!(parse("[{").is_err());
    }

    #[test]
    fn colour_codes_are_stripped() {
        assert_eq!(
            strip_ansi("\u{1b}[1m testssl 3.0.8\u{1b}[m"),
            "testssl 3.0.8"
        );
    }
}
