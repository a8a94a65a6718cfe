//! `tlsmatrix peer server --defaults CERT`: a stack's own defaults for outside test tools.
//! Every stack negotiates with `openssl s_client` whatever it offers, and
//! openssl-3.0's defaults peer answers each offer as `openssl s_server` does with the same
//! certificate and the system's defaults.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::*;
use tlsmatrix_model::cert_files;
use tlsmatrix_model::impls;

/// What `openssl s_client -brief` reports about a handshake with `offer`.
fn negotiated(addr: &str, offer: &[&str]) -> String {
    let out = Command::new("openssl")
        .args(["s_client", "-connect", addr, "-brief"])
        .args(offer)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter(|l| {
            [
                "Protocol version",
                "Ciphersuite",
                "Peer Temp Key",
                "Signature type",
            ]
            .iter()
            .any(|k| l.starts_with(k))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Held by each test here: testssl.sh's timing-sensitive checks (see [`RACED`]) lose more
/// often when other handshakes load both cores.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// A defaults peer serving `connections` clients (0: until killed).
fn defaults_peer_for(imp: &str, certs: &Path, connections: usize) -> (Running, String) {
    serve(
        Command::new(bin())
            .args(["peer", "server", "--impl", imp, "--defaults", "ecdsa-p256"])
            .args(["--listen", "127.0.0.1:0", "--connections"])
            .arg(connections.to_string())
            .arg("--certs")
            .arg(certs)
            .env("TLSMATRIX_DRIVER_DIR", release_dir()),
        "listening ",
    )
}

fn defaults_peer(imp: &str, certs: &Path) -> (Running, String) {
    defaults_peer_for(imp, certs, 0)
}

const OFFERS: &[&[&str]] = &[
    &[],
    &["-groups", "P-256"],
    &["-groups", "P-384:X25519"],
    &["-tls1_2"],
    &["-tls1_2", "-cipher", "ECDHE-ECDSA-CHACHA20-POLY1305"],
    &["-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"],
];

/// Every stack, in whichever driver holds it (Go's crypto/tls through its own peer), serves
/// its defaults to whatever `openssl s_client` offers, and reports every connection as served:
/// it exits 0 after serving them all, which it does not when one failed its check.
#[test]
fn every_stack_negotiates_what_a_client_offers() {
    let _turn = one_at_a_time();
    let certs = scratch("defaults-peer").join("certs");
    let stacks: Vec<&str> = impls::IMPLS.iter().map(|r| r.name).collect();
    assert!(stacks.len() >= 12, "{stacks:?}");
    for imp in stacks {
        let (mut peer, addr) = defaults_peer_for(imp, &certs, OFFERS.len());
        for offer in OFFERS {
            let got = negotiated(&addr, offer);
            let tls12 = offer.contains(&"-tls1_2");
            let want = if tls12 { "TLSv1.2" } else { "TLSv1.3" };
            assert!(
                got.contains(&format!("Protocol version: {want}")),
                "{imp} with {offer:?}: {got}"
            );
            assert!(
                got.contains("Signature type: ECDSA"),
                "{imp} with {offer:?}: {got}"
            );
        }
        let status = wait_for_exit(&mut peer.0, std::time::Duration::from_secs(10));
        assert!(
            status.is_some_and(|s| s.success()),
            "{imp}: the peer did not report all {} connections served ({status:?})",
            OFFERS.len()
        );
    }
}

/// The child's exit status, or `None` if it is still running after `limit`.
fn wait_for_exit(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> Option<std::process::ExitStatus> {
    let end = std::time::Instant::now() + limit;
    while std::time::Instant::now() < end {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    None
}

#[test]
fn openssl_defaults_peer_answers_as_openssl_s_server() {
    let _turn = one_at_a_time();
    let certs = scratch("defaults-peer-openssl").join("certs");
    let (peer, addr) = defaults_peer("openssl-3.0", &certs);
    let dir = certs.join("ecdsa-p256");
    let (tool, tool_addr) = serve(
        Command::new("openssl")
            .args([
                "s_server",
                "-accept",
                "127.0.0.1:0",
                "-naccept",
                "100",
                "-cert",
            ])
            .arg(dir.join(cert_files::CHAIN))
            .arg("-key")
            .arg(dir.join(cert_files::KEY)),
        "ACCEPT ",
    );
    for offer in OFFERS {
        let ours = negotiated(&addr, offer);
        let theirs = negotiated(&tool_addr, offer);
        assert!(!ours.is_empty(), "{offer:?}: no handshake");
        assert_eq!(ours, theirs, "{offer:?}");
    }
    drop(peer);
    drop(tool);
}

/// testssl.sh (Debian's), through `tlsmatrix scan --short`, finds the same in openssl-3.0's
/// and GnuTLS's defaults peers as in `openssl s_server` and `gnutls-serv` with the same
/// certificate and the libraries' defaults (gnutls-serv told what tlsmatrix configures
/// differently from its tool: no version below TLS 1.2, no client certificate asked for,
/// echo rather than HTTP), and both servers of each pair resume by ticket and by session id.
#[test]
fn testssl_finds_in_our_defaults_peers_what_it_finds_in_the_libraries_own_servers() {
    let _turn = one_at_a_time();
    let d = scratch("testssl");
    let out = d.join("outside-scan.json");
    let o = tlsmatrix(
        &["scan", "--impl", "openssl-3.0,gnutls", "--short", "--out"]
            .iter()
            .copied()
            .chain([out.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(o.status.success(), "{}\n{file:#}", stderr(&o));
    assert_eq!(file["schema"], "tlsmatrix.outside-scan/1");
    assert!(file["tool"].as_str().unwrap().starts_with("testssl.sh 3."));
    let peers = file["peers"].as_array().unwrap();
    let names: Vec<&str> = peers.iter().map(|p| p["imp"].as_str().unwrap()).collect();
    assert_eq!(names, ["openssl-3.0", "gnutls"]);
    for (p, tool) in peers.iter().zip(["openssl s_server", "gnutls-serv"]) {
        let name = &p["imp"];
        let r = &p["reference"];
        assert_eq!(r["name"], tool, "{name}");
        for scan in [&p["scan"], &r["scan"]] {
            assert!(scan.get("failure").is_none(), "{name}: {scan:#}");
            assert!(
                scan["findings"].as_object().unwrap().len() > 50,
                "{name}: {scan:#}"
            );
            assert_eq!(scan["findings"]["TLS1_3"]["finding"], "offered with final");
            // The libraries' servers resume; otherwise equal answers would prove nothing.
            assert_eq!(scan["resumes_by_ticket"], true, "{name}");
            assert_eq!(scan["resumes_by_id"], true, "{name}");
        }
        assert_eq!(r["differences"], serde_json::json!([]), "{name}");
    }
    assert!(d.join("outside-scan/openssl-3.0-first.json").is_file());
}

/// A stack the scan cannot reach fails its cell with why, within the limit, the file is
/// still written whole and the command exits 1; a name that is no stack, or a certificate
/// that is none, is refused before anything starts.
#[test]
fn a_scan_that_cannot_run_says_why() {
    let d = scratch("scan-refusals");
    let out = d.join("outside-scan.json");
    let out_arg = out.to_str().unwrap();
    // A server that exits at once.
    let dead = d.join("dead");
    fake_driver(
        &dead,
        "rustls-ring",
        "rustls 0.0.0 (a fake)",
        "echo 'error: cannot bind' >&2; exit 1",
    );
    let o = tlsmatrix_with(&dead, &["scan", "--out", out_arg]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let failure = file["peers"][0]["scan"]["failure"].as_str().unwrap();
    assert!(
        failure.contains("did not start listening") && failure.contains("cannot bind"),
        "{failure}"
    );
    assert!(stderr(&o).contains("FAILED rustls-ring"), "{}", stderr(&o));
    // A server that listens and never answers: the scanner is stopped at the limit.
    let hung = d.join("hung");
    fake_driver(
        &hung,
        "rustls-ring",
        "rustls 0.0.0 (a hung fake)",
        "exec python3 -c \"import socket,time; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); print('listening 127.0.0.1:%d' % s.getsockname()[1], flush=True); time.sleep(120)\"",
    );
    let started = std::time::Instant::now();
    let o = tlsmatrix_with(&hung, &["scan", "--limit", "10", "--out", out_arg]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(40),
        "{:?}",
        started.elapsed()
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let failure = file["peers"][0]["scan"]["failure"].as_str().unwrap();
    assert!(failure.contains("still scanning after 10 s"), "{failure}");

    let o = tlsmatrix(&[
        "scan",
        "--impl",
        "no-such-stack",
        "--out",
        &format!("{out_arg}.2"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no defaults peer 'no-such-stack'"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("outside-scan.json.2").exists());
    let o = tlsmatrix(&["scan", "--cert", "dsa-1024"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("'dsa-1024' is not a signature"),
        "{}",
        stderr(&o)
    );
}
