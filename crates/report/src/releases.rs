//! OpenSSL release by release: the same handshakes on every OpenSSL release line a run has
//! (1.1.1, 3.0, 3.6, 4.0, ...), each as a factor against the release before it, and the
//! finding set beside the figure others publish for the 3.0 regression.
//!
//! The releases run in different drivers (one libssl each), so no two of them were sampled
//! side by side; each was paired with the run's baseline. A release's factor against another
//! is the quotient of their factors against that baseline ([`Factor::over`]), which keeps
//! both pairings and widens the interval for the two separate sets of rounds.

use tlsmatrix_model::record::{Metric, Record};
use tlsmatrix_model::stats::Factor;

use crate::doc::{Block, Cell, Class, Section, Table};
use crate::figures::{factor_text, figure, own_factor, summary};

/// The handshakes compared, each side apart.
const SCENARIOS: &[&str] = &[
    "handshake-tls13-ecdsa-p256-x25519-full",
    "handshake-tls13-rsa-2048-x25519-full",
    "handshake-tls12-ecdsa-p256-x25519-full",
    "handshake-tls13-ecdsa-p256-x25519-ticket",
];

/// What others measured: a FreeBSD openssl-bench run of TLS 1.3 server handshakes.
const PUBLISHED: &str = "a published FreeBSD openssl-bench run measured TLS 1.3 server handshakes at 1,774/s on 1.1.1w and 1,334/s on 3.0.16 (0.75x, -25%)";

/// An OpenSSL release line's impl name as numbers: `openssl-3.6` -> [3, 6]. Variants
/// (`openssl-3.6+clang`) and other stacks are not release lines.
fn release_of(imp: &str) -> Option<Vec<u32>> {
    let line = imp.strip_prefix("openssl-")?;
    line.split('.').map(|n| n.parse().ok()).collect()
}

/// The run's OpenSSL release lines, oldest first.
fn releases(impls: &[String]) -> Vec<&str> {
    let mut found: Vec<(Vec<u32>, &str)> = impls
        .iter()
        .filter_map(|i| release_of(i).map(|v| (v, i.as_str())))
        .collect();
    found.sort();
    found.into_iter().map(|(_, i)| i).collect()
}

fn side_name(m: Metric) -> &'static str {
    if m == Metric::ClientCpuNs {
        "client"
    } else {
        "server"
    }
}

/// The section, when the run has at least two OpenSSL release lines.
pub fn section(records: &[Record], impls: &[String]) -> Option<Section> {
    let lines = releases(impls);
    if lines.len() < 2 {
        return None;
    }
    let baseline = impls.first()?.as_str();
    let mut header = vec!["handshake".to_string(), "side".to_string()];
    header.extend(lines.iter().map(|l| format!("{l} hs/s (x the one before)")));
    header.push(format!("{} vs {}", lines[lines.len() - 1], lines[0]));
    let mut rows = Vec::new();
    let mut server_tls13 = Vec::new();
    for &scenario in SCENARIOS {
        for m in [Metric::ClientCpuNs, Metric::ServerCpuNs] {
            let figures: Vec<Option<(&Record, Factor)>> = lines
                .iter()
                .map(|l| own_factor(records, scenario, l, m, baseline))
                .collect();
            if figures.iter().all(Option::is_none) {
                continue;
            }
            let mut row = vec![Cell::plain(scenario), Cell::plain(side_name(m))];
            let mut before: Option<Factor> = None;
            for (i, f) in figures.iter().enumerate() {
                let Some((r, own)) = f else {
                    row.push(Cell::plain("-"));
                    before = None;
                    continue;
                };
                let rate = figure(summary(r).median);
                match before.map(|b| own.over(b)) {
                    Some(step) => {
                        if scenario == SCENARIOS[0] && m == Metric::ServerCpuNs {
                            server_tls13.push(format!("{} {}", lines[i], factor_text(&step)));
                        }
                        row.push(Cell::with(
                            format!("{rate} ({})", factor_text(&step)),
                            Class::of_factor(step.significant, step.ratio),
                            Some(format!("against {}", lines[i - 1])),
                        ));
                    }
                    None => row.push(Cell::plain(rate)),
                }
                before = Some(*own);
            }
            match (&figures[0], &figures[figures.len() - 1]) {
                (Some((_, first)), Some((_, last))) => {
                    let f = last.over(*first);
                    row.push(Cell::with(
                        factor_text(&f),
                        Class::of_factor(f.significant, f.ratio),
                        None,
                    ));
                }
                _ => row.push(Cell::plain("-")),
            }
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut blocks = Vec::new();
    if !server_tls13.is_empty() {
        blocks.push(Block::Para(format!(
            "TLS 1.3 server handshakes (ECDSA P-256, X25519), each release against the one before: {}; {PUBLISHED}.",
            server_tls13.join(", ")
        )));
    }
    if rows
        .iter()
        .any(|r| r[0].text.contains("rsa") && r[1].text == "server")
    {
        blocks.push(Block::Para("RSA server handshakes can go the other way: from 3.0 on, OpenSSL signs RSA-2048 with code for AVX-512 IFMA where the CPU has it, which 1.1.1 lacks (docs/findings.md shows the row with that path masked).".into()));
    }
    blocks.push(Block::Para(format!(
        "Each release ran in a driver of its own, paired round by round with {baseline}; a release's factor against another is the quotient of their factors against {baseline}, its interval widened for the two separate sets of rounds (u: one of them unpaired). Above 1 is faster. Each row pins its certificate, group and suite on both sides."
    )));
    blocks.push(Block::Table(Table {
        caption: "OpenSSL release by release".into(),
        header,
        rows,
        label_cols: 2,
    }));
    Some(Section {
        id: "openssl-releases".into(),
        title: "OpenSSL release by release".into(),
        blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::RecordFixture;

    #[test]
    fn release_lines_are_ordered_by_number_and_variants_left_out() {
        let impls: Vec<String> = [
            "rustls-aws-lc",
            "openssl-3.6",
            "openssl-3.0",
            "openssl-1.1.1",
            "openssl-3.6+clang",
            "openssl-4.0",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            releases(&impls),
            ["openssl-1.1.1", "openssl-3.0", "openssl-3.6", "openssl-4.0"]
        );
    }

    #[test]
    fn each_release_is_compared_with_the_one_before_through_the_baseline() {
        let base = "rustls-aws-lc";
        // Per-handshake server time; each release paired with the baseline, ratio = its time
        // over the baseline's: 1.1.1 at 2x the baseline's time, 3.0 at 3x, 3.6 at 2.4x.
        let rec = |imp: &str, ratio: f64| {
            RecordFixture::new(Metric::ServerCpuNs, 100_000.0 * ratio)
                .pair(imp, imp)
                .paired_with(base, &[ratio; 8])
                .build()
        };
        let records = vec![
            rec("openssl-1.1.1", 2.0),
            rec("openssl-3.0", 3.0),
            rec("openssl-3.6", 2.4),
        ];
        let impls: Vec<String> = [base, "openssl-1.1.1", "openssl-3.0", "openssl-3.6"]
            .map(String::from)
            .to_vec();
        let s = section(&records, &impls).expect("three releases");
        let Block::Table(t) = s.blocks.last().unwrap() else {
            panic!("no table")
        };
        let row = &t.rows[0];
        assert_eq!(row[1].text, "server");
        // 3.0 takes 1.5x 1.1.1's time: 0.67x; 3.6 takes 0.8x 3.0's: 1.25x; 3.6 vs 1.1.1 0.83x.
        assert!(row[3].text.contains("(0.67x"), "{}", row[3].text);
        assert!(row[4].text.contains("(1.25x"), "{}", row[4].text);
        assert!(row[5].text.starts_with("0.83x"), "{}", row[5].text);
        let Block::Para(finding) = &s.blocks[0] else {
            panic!("no finding")
        };
        assert!(finding.contains("openssl-3.0 0.67x") && finding.contains("-25%"));
    }
}
