//! `tlsmatrix peer server --defaults CERT`: a stack's own defaults for outside test tools.
//! Every stack of the main driver negotiates with `openssl s_client` whatever it offers, and
//! openssl-3.0's defaults peer answers each offer as `openssl s_server` does with the same
//! certificate and the system's defaults.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::*;
use tlsmatrix_model::cert_files;
use tlsmatrix_model::impls;

/// A server started by `args`, and the address it printed on a `prefix` line.
fn serve(cmd: &mut Command, prefix: &str) -> (Child, String) {
    // A stdin that stays open: `openssl s_server` closes its connections at stdin's end.
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("the server ended before listening")
            .unwrap();
        if let Some(rest) = line.strip_prefix(prefix) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    // Keep draining its output so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
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

fn defaults_peer(imp: &str, certs: &Path) -> (Child, String) {
    serve(
        Command::new(bin())
            .args(["peer", "server", "--impl", imp, "--defaults", "ecdsa-p256"])
            .args(["--listen", "127.0.0.1:0", "--connections", "0", "--certs"])
            .arg(certs)
            .env("TLSMATRIX_DRIVER_DIR", release_dir()),
        "listening ",
    )
}

const OFFERS: &[&[&str]] = &[
    &[],
    &["-groups", "P-256"],
    &["-groups", "P-384:X25519"],
    &["-tls1_2"],
    &["-tls1_2", "-cipher", "ECDHE-ECDSA-CHACHA20-POLY1305"],
    &["-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"],
];

#[test]
fn every_stack_of_the_main_driver_negotiates_what_a_client_offers() {
    let certs = scratch("defaults-peer").join("certs");
    let stacks: Vec<&str> = impls::IMPLS
        .iter()
        .filter(|r| r.driver == "tlsmatrix-driver")
        .map(|r| r.name)
        .collect();
    assert!(stacks.len() >= 5, "{stacks:?}");
    for imp in stacks {
        let (peer, addr) = defaults_peer(imp, &certs);
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
        stop(peer);
    }
}

#[test]
fn openssl_defaults_peer_answers_as_openssl_s_server() {
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
