//! Handshake bytes as OpenSSL's own record trace counts them: `tlsmatrix run --measure wire`
//! for openssl-3.0 with itself against `openssl s_client -msg` talking to `openssl s_server`
//! with the same certificate, suite, group and signature scheme, no tickets (a TLS 1.3
//! ticket, sent after the handshake, arrives before s_client closes only sometimes) and no
//! session cache. Both directions agree within 1%, in TLS 1.3 (where the client's request leaves
//! together with its Finished and must not be counted) and in TLS 1.2.

mod common;

use std::process::{Command, Stdio};

use common::*;
use tlsmatrix_model::cert_files;
use tlsmatrix_model::record::Metric;

/// Bytes of every record each way (client to server, server to client) in `s_client -msg`
/// output, alerts and application data left out: the handshake's records, ChangeCipherSpec
/// included.
fn record_bytes(msg: &str) -> (u64, u64) {
    let lines: Vec<&str> = msg.lines().collect();
    let is_header =
        |l: &str| (l.starts_with(">>>") || l.starts_with("<<<")) && l.contains("RecordHeader");
    let mut sent = [0u64; 2];
    let mut i = 0;
    while i < lines.len() {
        if !is_header(lines[i]) {
            i += 1;
            continue;
        }
        let dir = usize::from(lines[i].starts_with("<<<"));
        let hex: Vec<u64> = lines[i + 1]
            .split_whitespace()
            .filter_map(|b| u64::from_str_radix(b, 16).ok())
            .collect();
        let len = 5 + hex[3] * 256 + hex[4];
        // What the record carries: the first content line before the next header, past an
        // encrypted record's InnerContent line.
        let content = lines[i + 2..]
            .iter()
            .take_while(|l| !is_header(l))
            .filter(|l| l.starts_with(">>>") || l.starts_with("<<<"))
            .map(|l| l.split_whitespace().nth(3).unwrap_or(""))
            .find(|c| *c != "InnerContent")
            .unwrap_or("");
        if content != "Alert" && content != "ApplicationData" {
            sent[dir] += len;
        }
        i += 2;
    }
    (sent[0], sent[1])
}

fn openssl_trace(certs: &std::path::Path, server: &[&str], client: &[&str]) -> (u64, u64) {
    let dir = certs.join("ecdsa-p256");
    let (server, addr) = serve(
        Command::new("openssl")
            .args(["s_server", "-accept", "127.0.0.1:0", "-naccept", "1"])
            .args(["-no_ticket", "-no_cache", "-cert"])
            .arg(dir.join(cert_files::CHAIN))
            .arg("-key")
            .arg(dir.join(cert_files::KEY))
            .args(server),
        "ACCEPT ",
    );
    let c = Command::new("openssl")
        .args(["s_client", "-connect", &addr, "-msg", "-no_ticket"])
        .args([
            "-servername",
            "localhost",
            "-sigalgs",
            "ecdsa_secp256r1_sha256",
        ])
        .args(client)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    drop(server);
    record_bytes(&String::from_utf8_lossy(&c.stdout))
}

#[test]
fn handshake_bytes_agree_with_openssls_own_record_trace() {
    let d = scratch("wire-trace");
    for (scenario, server, client) in [
        (
            "handshake-tls13-ecdsa-p256-x25519-full",
            &["-tls1_3", "-groups", "X25519", "-num_tickets", "0"][..],
            &[
                "-tls1_3",
                "-groups",
                "X25519",
                "-ciphersuites",
                "TLS_AES_128_GCM_SHA256",
            ][..],
        ),
        (
            "handshake-tls12-ecdsa-p256-x25519-full",
            &["-tls1_2", "-groups", "X25519:P-256"][..],
            &[
                "-tls1_2",
                "-groups",
                "X25519:P-256",
                "-cipher",
                "ECDHE-ECDSA-AES128-GCM-SHA256",
            ][..],
        ),
    ] {
        let out = d.join(format!("{scenario}.jsonl"));
        let r = tlsmatrix(&[
            "run",
            "--measure",
            "wire",
            "--impl",
            "openssl-3.0",
            "--scenario",
            scenario,
            "--runs",
            "3",
            "--warmup-ms",
            "20",
            "--out",
            out.to_str().unwrap(),
            "--db",
            d.join("w.db").to_str().unwrap(),
        ]);
        assert!(r.status.success(), "{}", stderr(&r));
        let records = result_records(&out);
        let ours = |m: Metric| {
            records
                .iter()
                .find(|x| x.metric == m)
                .unwrap_or_else(|| panic!("no {m}"))
                .median
        };
        let (client, server) = openssl_trace(&d.join("certs"), server, client);
        for (what, ours, theirs) in [
            ("client", ours(Metric::ClientWireBytes), client as f64),
            ("server", ours(Metric::ServerWireBytes), server as f64),
        ] {
            assert!(theirs > 100.0, "{scenario}: no trace");
            assert!(
                (ours / theirs - 1.0).abs() <= 0.01,
                "{scenario} {what}: tlsmatrix {ours} bytes, OpenSSL's trace {theirs}"
            );
        }
    }
}
