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

fn stop(server: Running) {
    drop(server);
}

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
    stop(peer);
    stop(tool);
}

/// testssl.sh's findings (`id` to `finding`) for a server, from a short subset of its checks:
/// protocols, server preferences, forward secrecy, every cipher per protocol, and the
/// server's defaults (certificate, tickets, extensions).
fn testssl(addr: &str, json: &Path) -> std::collections::BTreeMap<String, String> {
    let _ = std::fs::remove_file(json);
    let out = Command::new("testssl")
        .args(["--quiet", "--color", "0", "--warnings", "batch"])
        .args(["-p", "-P", "-f", "-E", "-S", "--jsonfile"])
        .arg(json)
        .arg(addr)
        .stdin(Stdio::null())
        .output()
        .expect("testssl.sh is installed by scripts/setup");
    let text = std::fs::read_to_string(json).unwrap_or_else(|e| {
        panic!(
            "testssl.sh wrote no findings ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let rows: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    rows.iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["finding"].as_str().unwrap_or("").to_string(),
            )
        })
        // The scan's duration, and checks testssl.sh could not finish on either side (it
        // says "check failed because of connect problem"), say nothing about the server.
        .filter(|(id, f)| id != "scanTime" && !f.contains("connect problem"))
        .collect()
}

/// The resumption checks testssl.sh decides by a race: its `s_client` quits as soon as its
/// stdin ends, and a TLS 1.3 server sends its ticket after the handshake, so the ticket
/// reaches the client only sometimes (19 of 30 connections to `openssl s_server` here kept
/// no session). These two are checked by [`resumes`] instead, which waits for the ticket.
const RACED: [&str; 2] = ["sessionresumption_ticket", "sessionresumption_ID"];

/// Whether a server resumes a TLS 1.3 session, by ticket or (with `-no_ticket`, testssl.sh's
/// "ID" check) by the server's own cache: one `openssl s_client` keeps the session, its
/// stdin held open long enough for the ticket to arrive, and a second offers it back.
fn resumes(addr: &str, by_id: bool, dir: &Path) -> bool {
    let session = dir.join(format!("session-{}-{by_id}.pem", addr.replace(':', "-")));
    let _ = std::fs::remove_file(&session);
    let client = |keep: &str, file: &Path| {
        let mut c = Command::new("openssl");
        c.args(["s_client", "-connect", addr, "-tls1_3", keep])
            .arg(file);
        if by_id {
            c.arg("-no_ticket");
        }
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        c.spawn().expect("openssl is installed")
    };
    let mut first = client("-sess_out", &session);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::fs::metadata(&session).map_or(true, |m| m.len() == 0)
        && std::time::Instant::now() < until
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(first.stdin.take());
    let _ = first.wait();
    if std::fs::metadata(&session).map_or(true, |m| m.len() == 0) {
        return false;
    }
    let mut second = client("-sess_in", &session);
    drop(second.stdin.take());
    let out = second.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.starts_with("Reused"))
}

/// The findings that differ between our peer and the library's own CLI server.
fn differences(
    ours: &std::collections::BTreeMap<String, String>,
    theirs: &std::collections::BTreeMap<String, String>,
) -> Vec<String> {
    ours.keys()
        .chain(theirs.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|id| ours.get(*id) != theirs.get(*id))
        .filter(|id| !RACED.contains(&id.as_str()))
        .map(|id| format!("{id}: ours {:?}, theirs {:?}", ours.get(id), theirs.get(id)))
        .collect()
}

/// Scans our peer and the tool's server, and once more when they differ (a timing-sensitive
/// check can fail once on a loaded machine); the differences of the last pair of scans, and
/// of the two servers' resumption.
fn compare_twice(ours: &str, theirs: &str, d: &Path, name: &str) -> Vec<String> {
    let mut diff = Vec::new();
    for attempt in 0..2 {
        let a = testssl(ours, &d.join(format!("{name}-peer-{attempt}.json")));
        let b = testssl(theirs, &d.join(format!("{name}-tool-{attempt}.json")));
        assert!(a.len() > 50 && b.len() > 50, "{name}: {a:?} {b:?}");
        diff = differences(&a, &b);
        for by_id in [false, true] {
            let (x, y) = (resumes(ours, by_id, d), resumes(theirs, by_id, d));
            if x != y {
                diff.push(format!("resumption (by id: {by_id}): ours {x}, theirs {y}"));
            }
        }
        if diff.is_empty() {
            break;
        }
        eprintln!("{name}, scan {}: {diff:?}", attempt + 1);
    }
    diff
}

/// testssl.sh (Debian's) finds the same in openssl-3.0's and GnuTLS's defaults peers as in
/// `openssl s_server` and `gnutls-serv` with the same certificate and the libraries'
/// defaults. gnutls-serv is told what tlsmatrix configures differently from its tool: no
/// version below TLS 1.2, no client certificate asked for, and echo rather than HTTP.
#[test]
fn testssl_finds_in_our_defaults_peers_what_it_finds_in_the_libraries_own_servers() {
    let _turn = one_at_a_time();
    let d = scratch("testssl");
    let certs = d.join("certs");
    let dir = certs.join("ecdsa-p256");
    let (peer, addr) = defaults_peer("openssl-3.0", &certs);
    let (tool, tool_addr) = serve(
        Command::new("openssl")
            .args(["s_server", "-accept", "127.0.0.1:0", "-cert"])
            .arg(dir.join(cert_files::CHAIN))
            .arg("-key")
            .arg(dir.join(cert_files::KEY)),
        "ACCEPT ",
    );
    let diff = compare_twice(&addr, &tool_addr, &d, "openssl");
    // s_server resumes; otherwise equal resumption answers would prove nothing.
    assert!(resumes(&tool_addr, false, &d) && resumes(&tool_addr, true, &d));
    stop(peer);
    stop(tool);
    assert_eq!(diff, Vec::<String>::new(), "openssl-3.0");

    let (peer, addr) = defaults_peer("gnutls", &certs);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let tool = Command::new("gnutls-serv")
        .args(["-p", &port.to_string(), "--echo", "--disable-client-cert"])
        .arg("--priority=NORMAL:-VERS-TLS1.0:-VERS-TLS1.1")
        .arg(format!(
            "--x509certfile={}",
            dir.join(cert_files::CHAIN).display()
        ))
        .arg(format!(
            "--x509keyfile={}",
            dir.join(cert_files::KEY).display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(Running)
        .unwrap();
    let tool_addr = format!("127.0.0.1:{port}");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(&tool_addr).is_err() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let diff = compare_twice(&addr, &tool_addr, &d, "gnutls");
    stop(peer);
    stop(tool);
    assert_eq!(diff, Vec::<String>::new(), "gnutls");
}
