//! The outside-scan section: what testssl.sh found in each stack's defaults peer (protocols,
//! suites, groups, resumption, weaknesses), and whether it found the same in the library's
//! own command-line server. The terminal's table (`tlsmatrix scan`) is the same table.

use tlsmatrix_history::outside_scan::{OutsideScan, Scan, ScannedPeer};

use crate::doc::{Block, Cell, Class, Section, Table};

/// The scanner's ratings that count as a weakness.
const WEAK: [&str; 4] = ["LOW", "MEDIUM", "HIGH", "CRITICAL"];

/// Protocol finding ids, newest first, with the name shown.
const PROTOCOLS: [(&str, &str); 6] = [
    ("TLS1_3", "1.3"),
    ("TLS1_2", "1.2"),
    ("TLS1_1", "1.1"),
    ("TLS1", "1.0"),
    ("SSLv3", "SSLv3"),
    ("SSLv2", "SSLv2"),
];

/// Findings about the test certificate and the loopback address, the same for every stack:
/// a private CA, no revocation URL, a name that is not the address scanned, no CAA record
/// for an IP address, a validity of centuries.
fn about_the_test_certificate(id: &str) -> bool {
    id.starts_with("cert_") || id == "DNS_CAArecord"
}

fn protocols(s: &Scan) -> String {
    let offered: Vec<&str> = PROTOCOLS
        .iter()
        .filter(|(id, _)| s.finding(id).is_some_and(|f| f.starts_with("offered")))
        .map(|(_, name)| *name)
        .collect();
    offered.join(", ")
}

/// The suites offered for a protocol ("tls1_3"), by their OpenSSL names.
fn suites(s: &Scan, protocol: &str) -> Vec<String> {
    let prefix = format!("cipher-{protocol}_");
    s.findings
        .iter()
        .filter(|(id, _)| id.starts_with(&prefix))
        // "TLS 1.3   x1302   TLS_AES_256_GCM_SHA384   ECDH 253   AESGCM   256   ...".
        .filter_map(|(_, f)| f.finding.split_whitespace().nth(3).map(str::to_string))
        .collect()
}

/// The key-exchange groups offered, short (P-256 for prime256v1, the finite-field groups
/// counted), with the scanner's own names as the hover.
fn groups(s: &Scan) -> Cell {
    let all: Vec<&str> = [s.finding("PFS_ECDHE_curves"), s.finding("DH_groups")]
        .into_iter()
        .flatten()
        .flat_map(str::split_whitespace)
        .collect();
    let mut short: Vec<String> = all
        .iter()
        .filter(|g| !g.starts_with("ffdhe"))
        .map(|g| match *g {
            "prime256v1" => "P-256".to_string(),
            "secp384r1" => "P-384".to_string(),
            "secp521r1" => "P-521".to_string(),
            g => g.replace("brainpoolP", "BP-").replace("r1", ""),
        })
        .collect();
    let ffdhe = all.iter().filter(|g| g.starts_with("ffdhe")).count();
    if ffdhe > 0 {
        short.push(format!("{ffdhe} FFDHE"));
    }
    Cell::with(short.join(" "), Class::Plain, Some(all.join(" ")))
}

/// The weaknesses the scanner rated LOW or worse, but those about the test certificate.
fn weaknesses(s: &Scan) -> Vec<String> {
    s.findings
        .iter()
        .filter(|(id, f)| WEAK.contains(&f.severity.as_str()) && !about_the_test_certificate(id))
        .map(|(id, f)| format!("{id} ({}): {}", f.severity, f.finding))
        .collect()
}

fn list_cell(items: Vec<String>) -> Cell {
    let title = (!items.is_empty()).then(|| items.join("\n"));
    Cell::with(items.len().to_string(), Class::Plain, title)
}

/// How the peer compares with its library's server.
fn reference_cell(p: &ScannedPeer) -> Cell {
    let Some(r) = &p.reference else {
        return Cell::with("none here", Class::Unsupported, None);
    };
    if !r.scan.ran() {
        return Cell::with(
            format!("{} FAILED", r.name),
            Class::Failed,
            Some(r.scan.failure.clone()),
        );
    }
    let unexplained = r.differences.iter().filter(|d| d.why.is_empty()).count();
    let listed: Vec<String> = r
        .differences
        .iter()
        .map(|d| {
            format!(
                "{}: ours {}, {}'s {}{}",
                d.id,
                d.peer.as_deref().unwrap_or("(none)"),
                r.name,
                d.reference.as_deref().unwrap_or("(none)"),
                if d.why.is_empty() {
                    " (unexplained)".to_string()
                } else {
                    format!(" ({})", d.why)
                }
            )
        })
        .collect();
    match (r.differences.len(), unexplained) {
        (0, _) => Cell::with(
            format!("as {}", r.name),
            Class::Good,
            Some(format!(
                "all {} findings and both resumption checks agree with {} ({})",
                r.scan.findings.len(),
                r.name,
                r.version
            )),
        ),
        (n, 0) => Cell::with(
            format!("{n} explained differences"),
            Class::Deviation,
            Some(listed.join("\n")),
        ),
        (_, u) => Cell::with(
            format!("{u} unexplained differences"),
            Class::Failed,
            Some(listed.join("\n")),
        ),
    }
}

pub fn table(file: &OutsideScan) -> Table {
    let rows = file
        .peers
        .iter()
        .map(|p| {
            let s = &p.scan;
            if !s.ran() {
                let mut row = vec![
                    Cell::plain(&p.imp),
                    Cell::with("FAILED", Class::Failed, Some(s.failure.clone())),
                ];
                row.extend((0..6).map(|_| Cell::plain("–")));
                row.push(reference_cell(p));
                return row;
            }
            let resumption = [("ticket", s.resumes_by_ticket), ("id", s.resumes_by_id)]
                .iter()
                .filter(|(_, yes)| *yes)
                .map(|(how, _)| *how)
                .collect::<Vec<_>>()
                .join(", ");
            vec![
                Cell::plain(&p.imp),
                Cell::plain(protocols(s)),
                groups(s),
                Cell::plain(if resumption.is_empty() {
                    "none".into()
                } else {
                    resumption
                }),
                list_cell(suites(s, "tls1_3")),
                list_cell(suites(s, "tls1_2")),
                list_cell(weaknesses(s)),
                Cell::plain(format!("{:.0}", s.seconds)),
                reference_cell(p),
            ]
        })
        .collect();
    Table {
        caption: format!(
            "{} ({}) against each stack's defaults peer with the {} certificate: TLS versions, key-exchange groups (hover for the scanner's names), TLS 1.3 resumption, suites per version (hover for the list), findings rated LOW or worse (hover; the test certificate's own findings left out), the scan's seconds, and whether the library's own command-line server gave the same findings (\"none here\": this machine has no command-line server of that release; tlsmatrix builds or installs the library alone).",
            file.tool,
            file.checks.join(" "),
            file.cert
        ),
        header: [
            "impl",
            "versions",
            "groups",
            "resumes by",
            "TLS 1.3 suites",
            "TLS 1.2 suites",
            "weaknesses",
            "s",
            "vs library's own server",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        label_cols: 4,
    }
}

const ABOUT: &str = "A third-party scanner, Debian's testssl.sh, run against each stack's defaults peer (`tlsmatrix peer server --defaults CERT`: the library's own defaults, every version, suite, group and scheme it enables, with tickets and a session cache), as a user would run it against a server. Where this machine has the library's own command-line server of the same release (`openssl s_server` for the system OpenSSL, `gnutls-serv` for GnuTLS), it is scanned the same way with the same certificate and every finding is compared: a difference nobody has explained fails `tlsmatrix scan`. testssl.sh's two resumption checks race the TLS 1.3 ticket against its client's exit, so resumption is checked by tlsmatrix with `openssl s_client`, which waits for the ticket. testssl.sh 3.0.8 knows no post-quantum hybrid group, so X25519MLKEM768, which several stacks offer by default, is not among the groups it finds. BoGo (above) tests how a stack reacts to a misbehaving peer; this scan shows what a stack offers a well-behaved one.";

pub fn section(file: &OutsideScan) -> Section {
    let mut blocks = vec![Block::Para(ABOUT.into()), Block::Table(table(file))];
    let mut details: Vec<String> = Vec::new();
    for p in &file.peers {
        if let Some(r) = &p.reference {
            for d in &r.differences {
                details.push(format!(
                    "{} vs {}: {} (ours {}, theirs {}): {}",
                    p.imp,
                    r.name,
                    d.id,
                    d.peer.as_deref().unwrap_or("(none)"),
                    d.reference.as_deref().unwrap_or("(none)"),
                    if d.why.is_empty() {
                        "UNEXPLAINED"
                    } else {
                        &d.why
                    }
                ));
            }
        }
        for w in weaknesses(&p.scan) {
            details.push(format!("{}: {w}", p.imp));
        }
    }
    if !details.is_empty() {
        blocks.push(Block::Folded(
            format!(
                "Every difference from a library's own server and every weakness ({})",
                details.len()
            ),
            vec![Block::Bullets(details)],
        ));
    }
    Section {
        id: "outside-scan".into(),
        title: "Outside scan (testssl.sh)".into(),
        blocks,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use tlsmatrix_history::outside_scan::{Difference, Finding, Reference, SCHEMA};

    use super::*;

    fn scan(findings: &[(&str, &str, &str)]) -> Scan {
        Scan {
            failure: String::new(),
            seconds: 27.0,
            findings: findings
                .iter()
                .map(|(id, sev, f)| {
                    (
                        id.to_string(),
                        Finding {
                            severity: sev.to_string(),
                            finding: f.to_string(),
                        },
                    )
                })
                .collect::<BTreeMap<_, _>>(),
            undecided: vec![],
            resumes_by_ticket: true,
            resumes_by_id: false,
        }
    }

    #[test]
    fn a_row_shows_what_was_offered_and_how_it_compares() {
        let s = scan(&[
            ("TLS1_3", "OK", "offered with final"),
            ("TLS1_2", "OK", "offered"),
            ("TLS1_1", "INFO", "not offered"),
            (
                "cipher-tls1_3_x1302",
                "INFO",
                "TLS 1.3   x1302   TLS_AES_256_GCM_SHA384   ECDH 253   AESGCM   256   TLS_AES_256_GCM_SHA384",
            ),
            ("PFS_ECDHE_curves", "OK", "prime256v1 brainpoolP384r1 X25519"),
            ("DH_groups", "OK", "ffdhe2048 ffdhe3072"),
            ("cert_trust", "HIGH", "certificate does not match supplied URI"),
            ("LUCKY13", "LOW", "potentially vulnerable, uses TLS CBC ciphers"),
        ]);
        let mut file = OutsideScan {
            schema: SCHEMA.into(),
            timestamp: "2026-11-28T00:00:00Z".into(),
            tool: "testssl.sh 3.0.8".into(),
            checks: vec!["-p".into()],
            cert: "ecdsa-p256".into(),
            peers: vec![ScannedPeer {
                imp: "openssl-3.0".into(),
                version: "OpenSSL 3.0.19".into(),
                scan: s.clone(),
                reference: Some(Reference {
                    name: "openssl s_server".into(),
                    version: "OpenSSL 3.0.19".into(),
                    scan: s,
                    differences: vec![],
                }),
                no_reference: String::new(),
            }],
        };
        let t = table(&file);
        let row: Vec<&str> = t.rows[0].iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            row[..7],
            [
                "openssl-3.0",
                "1.3, 1.2",
                "P-256 BP-384 X25519 2 FFDHE",
                "ticket",
                "1",
                "0",
                "1"
            ]
        );
        assert_eq!(
            t.rows[0][2].title.as_deref(),
            Some("prime256v1 brainpoolP384r1 X25519 ffdhe2048 ffdhe3072")
        );
        assert_eq!(
            t.rows[0][4].title.as_deref(),
            Some("TLS_AES_256_GCM_SHA384")
        );
        assert_eq!(t.rows[0][8].class, Class::Good);
        file.peers[0]
            .reference
            .as_mut()
            .unwrap()
            .differences
            .push(Difference {
                id: "TLS1_2".into(),
                peer: Some("offered".into()),
                reference: None,
                why: String::new(),
            });
        let t = table(&file);
        assert_eq!(t.rows[0][8].text, "1 unexplained differences");
        assert_eq!(t.rows[0][8].class, Class::Failed);
        file.peers[0].reference = None;
        file.peers[0].scan.failure = "the server did not start".into();
        let t = table(&file);
        assert_eq!(t.rows[0][1].class, Class::Failed);
        assert_eq!(t.rows[0][8].text, "none here");
        assert_eq!(t.rows[0].len(), t.header.len());
    }
}
