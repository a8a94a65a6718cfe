//! `tlsmatrix run --measure quic` through the real drivers: every QUIC stack built (quinn on
//! both rustls providers, OpenSSL's own on 3.5, 3.6 and 4.0, quiche on BoringSSL, ngtcp2 on
//! GnuTLS) completes
//! the lead, a hybrid
//! post-quantum and an ML-DSA handshake, each cell checked by its driver and its figures
//! positive and finite, the versions the ones `tlsmatrix list` names; an impl without a QUIC
//! stack is unsupported with its own reason.

mod common;

use common::{exclusive, json_lines, result_records, scratch, stderr, tlsmatrix};
use tlsmatrix_model::record::Metric;

const STACKS: [&str; 7] = [
    "rustls-aws-lc",
    "rustls-ring",
    "openssl-3.5",
    "openssl-3.6",
    "openssl-4.0",
    "boringssl",
    "gnutls",
];
const SCENARIOS: [&str; 3] = [
    "handshake-tls13-ecdsa-p256-x25519-full",
    "handshake-tls13-ecdsa-p256-x25519mlkem768-full",
    "handshake-tls13-mldsa44-x25519-full",
];

#[test]
fn every_quic_stack_completes_its_handshakes_with_sane_figures() {
    let _alone = exclusive();
    let out = scratch("quic-stacks").join("quic.jsonl");
    let r = tlsmatrix(&[
        "run",
        "--measure",
        "quic",
        "--impl",
        &format!("{},openssl-3.0,nss", STACKS.join(",")),
        "--scenario",
        &SCENARIOS.join(","),
        "--runs",
        "2",
        "--warmup-ms",
        "20",
        "--sample-ms",
        "20",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    let listed = tlsmatrix(&["list", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let version_of = |imp: &str| {
        listed["impls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == imp)
            .map(|i| i["version"].as_str().unwrap().to_string())
            .unwrap()
    };
    for imp in STACKS {
        for scenario in SCENARIOS {
            // rustls on ring and GnuTLS 3.7 have neither ML-KEM nor ML-DSA.
            if matches!(imp, "rustls-ring" | "gnutls") && scenario != SCENARIOS[0] {
                continue;
            }
            for m in [
                Metric::ClientQuicNs,
                Metric::ServerQuicNs,
                Metric::ClientCpuNs,
                Metric::ClientQuicOverTcp,
                Metric::ServerQuicOverTcp,
                Metric::ServerQuicBytes,
            ] {
                let rec = records
                    .iter()
                    .find(|r| r.client == imp && r.scenario == scenario && r.metric == m)
                    .unwrap_or_else(|| panic!("{imp} {scenario}: no {m}"));
                assert!(
                    rec.median.is_finite() && rec.median > 0.0,
                    "{imp} {scenario} {m}: {}",
                    rec.median
                );
                assert_eq!(rec.client_version, version_of(imp), "{imp}");
            }
            let first = records
                .iter()
                .find(|r| {
                    r.client == imp
                        && r.scenario == scenario
                        && r.metric == Metric::ClientQuicFirstDatagram
                })
                .unwrap();
            assert!(first.median >= 1200.0, "{imp}: {}", first.median);
        }
    }
    let cells = json_lines(&out);
    for (imp, why) in [
        ("openssl-3.0", "has no QUIC server"),
        ("nss", "no QUIC stack on nss"),
    ] {
        let cell = cells
            .iter()
            .find(|c| c["client"] == imp && c["outcome"] == "unsupported")
            .unwrap_or_else(|| panic!("{imp}: no unsupported cell"));
        assert!(cell["reason"].as_str().unwrap().contains(why), "{cell}");
    }
}

#[test]
fn list_names_each_quic_stack_with_its_version() {
    let r = tlsmatrix(&["list"]);
    let text = String::from_utf8_lossy(&r.stdout);
    let section = text
        .split("QUIC stacks")
        .nth(1)
        .expect("a QUIC section in `tlsmatrix list`");
    assert!(section.contains("quinn-proto 0.11."), "{section}");
    assert!(section.contains("quiche 0.30."), "{section}");
    assert!(section.contains("ngtcp2 0.12."), "{section}");
    for release in ["3.5", "3.6", "4.0"] {
        assert!(
            section.contains(&format!("OpenSSL's own QUIC on OpenSSL {release}.")),
            "{section}"
        );
    }
}
