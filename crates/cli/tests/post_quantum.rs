//! Post-quantum handshakes paired with their classical twins (`tlsmatrix run --pairs twins`):
//! each stack's post-quantum cell carries per-round ratios to the same stack's classical
//! cell, a stack without the algorithm says why not, the wire figures of an ML-DSA chain
//! grow with its certificates, and the report's section shows both.

mod common;

use common::*;
use tlsmatrix_model::record::{CellStatus, Metric};

const MLDSA: &str = "handshake-tls13-mldsa44-x25519-full";
const HYBRID: &str = "handshake-tls13-ecdsa-p256-x25519mlkem768-full";
const CLASSICAL: &str = "handshake-tls13-ecdsa-p256-x25519-full";

#[test]
fn twins_pair_each_post_quantum_handshake_with_its_classical_twin_on_the_same_stack() {
    let d = scratch("twins");
    let out = d.join("pq.jsonl");
    let r = tlsmatrix(&[
        "run",
        "--no-weather",
        "--pairs",
        "twins",
        "--impl",
        "rustls-aws-lc,openssl-3.0",
        "--scenario",
        &format!("{MLDSA},{HYBRID}"),
        "--runs",
        "4",
        "--passes",
        "2",
        "--warmup-ms",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    for pq in [MLDSA, HYBRID] {
        for m in [Metric::ClientCpuNs, Metric::ServerCpuNs] {
            let rec = records
                .iter()
                .find(|r| r.scenario == pq && r.client == "rustls-aws-lc" && r.metric == m)
                .unwrap_or_else(|| panic!("no {pq} {m:?} record"));
            let p = rec.paired.as_ref().expect("paired with the twin");
            assert_eq!(p.reference_scenario.as_deref(), Some(CLASSICAL));
            assert!(p.reference_client.starts_with("rustls-aws-lc (twin of "));
            assert_eq!(p.ratios.len(), 4, "a ratio per round");
            let f = p.factor().unwrap();
            assert!(
                f.ratio.is_finite() && f.ratio > 0.1 && f.ratio < 20.0,
                "{f:?}"
            );
            // The twin cell's own records are there too, under the twin's scenario.
            assert!(records
                .iter()
                .any(|t| t.scenario == CLASSICAL && t.client == p.reference_client));
        }
    }
    // OpenSSL 3.0 has neither: its post-quantum cells say so in the library's words.
    let cells: Vec<serde_json::Value> = json_lines(&out)
        .into_iter()
        .filter(|l| l["outcome"].is_string())
        .collect();
    for pq in [MLDSA, HYBRID] {
        let cell = cells
            .iter()
            .find(|c| c["scenario"] == pq && c["client"] == "openssl-3.0")
            .unwrap_or_else(|| panic!("openssl-3.0 {pq}: {cells:?}"));
        assert_eq!(cell["outcome"], CellStatus::Unsupported.as_str());
        assert!(
            cell["reason"].as_str().unwrap().contains("OpenSSL 3.0"),
            "{cell}"
        );
    }
    // The report of a run with these handshakes sets both tables in its section.
    let main = d.join("main.jsonl");
    let r = tlsmatrix(&[
        "run",
        "--no-weather",
        "--impl",
        "rustls-aws-lc,openssl-3.0",
        "--scenario",
        &format!("{MLDSA},{CLASSICAL}"),
        "--runs",
        "2",
        "--passes",
        "1",
        "--warmup-ms",
        "5",
        "--out",
        main.to_str().unwrap(),
        "--db",
        d.join("pq.db").to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    // The twin run into the same database, after the main run.
    let r = tlsmatrix(&[
        "import",
        out.to_str().unwrap(),
        "--db",
        d.join("pq.db").to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let rep = d.join("report");
    let r = tlsmatrix(&[
        "report",
        "--db",
        d.join("pq.db").to_str().unwrap(),
        "--out",
        rep.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
    let section = md
        .split("## Post-quantum")
        .nth(1)
        .expect("a Post-quantum section");
    assert!(section.contains("| rustls-aws-lc | **yes** |"), "{section}");
    assert!(
        section.contains("`tlsmatrix run --pairs twins`"),
        "{section}"
    );
    assert!(
        section.contains("| stack | side | ML-DSA-44 vs ECDSA P-256 |"),
        "{section}"
    );
}

#[test]
fn twins_refuse_a_handshake_without_a_post_quantum_part() {
    let d = scratch("twins-bad");
    let r = tlsmatrix(&[
        "run",
        "--no-weather",
        "--pairs",
        "twins",
        "--impl",
        "rustls-aws-lc",
        "--scenario",
        CLASSICAL,
        "--out",
        d.join("r.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("is no post-quantum handshake"),
        "{}",
        stderr(&r)
    );
}

/// An ML-DSA chain's bytes: the server's flight grows with each certificate by about an
/// ML-DSA-87 public key and signature (2,592 + 4,627 bytes), and a chain of three overflows
/// TCP's initial window, which the model charges a round trip.
#[test]
fn an_mldsa_chains_wire_bytes_follow_its_certificates() {
    let d = scratch("pq-wire");
    let out = d.join("w.jsonl");
    let one = "handshake-tls13-mldsa87-x25519-full";
    let three = "handshake-tls13-mldsa87-x25519-full-chain3";
    let r = tlsmatrix(&[
        "run",
        "--no-weather",
        "--measure",
        "wire",
        "--impl",
        "rustls-aws-lc",
        "--scenario",
        &format!("{one},{three}"),
        "--runs",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    let server_bytes = |id: &str| {
        records
            .iter()
            .find(|r| r.scenario == id && r.metric == Metric::ServerWireBytes)
            .unwrap_or_else(|| panic!("{id}: no server bytes"))
            .median
    };
    let (b1, b3) = (server_bytes(one), server_bytes(three));
    // Leaf alone: key, leaf signature and CertificateVerify, three ML-DSA-87 objects.
    assert!(b1 > 2592.0 + 2.0 * 4627.0, "{b1}");
    let per_certificate = (b3 - b1) / 2.0;
    assert!(
        (per_certificate - (2592.0 + 4627.0)).abs() < 600.0,
        "each intermediate adds {per_certificate} bytes"
    );
}

/// Over TCP, every post-quantum case passes between every two stacks that both take it:
/// rustls on aws-lc-rs, s2n-tls, BoringSSL, OpenSSL 3.5 and Go's crypto/tls, each as client
/// and as server; a stack without the group or key says so instead.
#[test]
fn post_quantum_interop_passes_between_every_two_stacks_that_have_it() {
    let d = scratch("pq-interop");
    let out = d.join("interop.jsonl");
    let r = tlsmatrix(&[
        "interop",
        "--peer",
        "rustls-aws-lc,s2n-tls,boringssl,openssl-3.5,go-crypto-tls,openssl-3.0",
        "--case",
        "group-*mlkem*,sig-mldsa*",
        "--offers",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let cells = json_lines(&out);
    let outcome = |case: &str, c: &str, s: &str| {
        cells
            .iter()
            .find(|l| l["case"] == case && l["client"] == c && l["server"] == s)
            .unwrap_or_else(|| panic!("no cell {case} {c} -> {s}"))["outcome"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(cells.iter().all(|l| l["outcome"] != "fail"), "{cells:?}");
    for (c, s) in [
        ("rustls-aws-lc", "openssl-3.5"),
        ("openssl-3.5", "boringssl"),
        ("boringssl", "s2n-tls"),
        ("s2n-tls", "rustls-aws-lc"),
    ] {
        assert_eq!(outcome("sig-mldsa44", c, s), "pass", "{c} -> {s}");
        assert_eq!(outcome("sig-mldsa65", c, s), "pass", "{c} -> {s}");
        assert_eq!(outcome("sig-mldsa87", c, s), "pass", "{c} -> {s}");
    }
    for (c, s) in [
        ("go-crypto-tls", "openssl-3.5"),
        ("rustls-aws-lc", "go-crypto-tls"),
    ] {
        assert_eq!(
            outcome("group-secp256r1mlkem768", c, s),
            "pass",
            "{c} -> {s}"
        );
    }
    assert_eq!(
        outcome("group-mlkem768", "openssl-3.5", "rustls-aws-lc"),
        "pass"
    );
    // The P-384 hybrid between Go and OpenSSL, and pure ML-KEM-1024;
    // ML-KEM-512 is OpenSSL's, not rustls's.
    for (case, c, s) in [
        ("group-secp384r1mlkem1024", "go-crypto-tls", "openssl-3.5"),
        ("group-secp384r1mlkem1024", "openssl-3.5", "go-crypto-tls"),
        ("group-mlkem1024", "openssl-3.5", "rustls-aws-lc"),
        ("group-mlkem512", "openssl-3.5", "openssl-3.5"),
    ] {
        assert_eq!(outcome(case, c, s), "pass", "{case} {c} -> {s}");
    }
    assert_eq!(
        outcome("group-mlkem512", "rustls-aws-lc", "openssl-3.5"),
        "unsupported"
    );
    assert_eq!(
        outcome("sig-mldsa44", "openssl-3.0", "openssl-3.5"),
        "unsupported"
    );
    // What each client offers on its defaults, read off its ClientHello: OpenSSL 3.5 sends
    // an X25519MLKEM768 share and offers ML-DSA; 3.0 has neither; Go offers all three
    // hybrids and no ML-DSA.
    let offers = tlsmatrix_history::offers::read(&d.join("offers.json"))
        .unwrap()
        .expect("interop --offers writes offers.json beside --out");
    let of = |c: &str| {
        offers
            .clients
            .iter()
            .find(|o| o.client == c)
            .and_then(|o| o.offer.clone())
            .unwrap_or_else(|| panic!("no offer read from {c}: {offers:?}"))
    };
    assert_eq!(offers.clients.len(), 6, "{offers:?}");
    let (o35, o30, go) = (of("openssl-3.5"), of("openssl-3.0"), of("go-crypto-tls"));
    assert!(o35.key_shares.contains(&0x11ec), "{o35:?}");
    assert!(o35.schemes.contains(&0x0904), "{o35:?}");
    assert!(o30.key_shares.iter().all(|&g| g < 0x0200), "{o30:?}");
    assert!(
        o30.schemes.iter().all(|&s| !(0x0904..=0x0906).contains(&s)),
        "{o30:?}"
    );
    assert!(
        [0x11eb, 0x11ec, 0x11ed]
            .iter()
            .all(|g| go.groups.contains(g)),
        "{go:?}"
    );
    assert!(o35.bytes > 1000 && o30.bytes < 1000, "{o35:?} {o30:?}");
    assert_eq!(
        outcome("sig-mldsa44", "go-crypto-tls", "openssl-3.5"),
        "unsupported"
    );
}
