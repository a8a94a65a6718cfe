//! No process left behind: a long-running tlsmatrix command killed mid-way by SIGTERM,
//! SIGINT or SIGHUP takes every process it started with it (drivers and peers run in process
//! groups of their own, which a terminal's signals do not reach), and leaves no half-written
//! result line.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

fn start(args: &[&str]) -> std::process::Child {
    default_signals(&mut Command::new(bin()))
        .args(args)
        .env("TLSMATRIX_DRIVER_DIR", release_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Every line of a results file is a whole JSON object.
fn whole_lines(path: &std::path::Path) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    for line in text.lines() {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "a torn line in {}: {line}",
            path.display()
        );
    }
    assert!(text.is_empty() || text.ends_with('\n'), "{text}");
}

#[test]
fn a_killed_peer_server_takes_its_driver_with_it() {
    let d = scratch("signal-peer");
    let certs = d.join("certs");
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let mut cli = start(&[
            "peer",
            "server",
            "--impl",
            "rustls-aws-lc",
            "--case",
            "tls13",
            "--listen",
            "127.0.0.1:0",
            "--connections",
            "0",
            "--certs",
            certs.to_str().unwrap(),
        ]);
        let below = wait_for_children(&mut cli, Duration::from_secs(20));
        assert!(!below.is_empty(), "no driver started");
        signal_ends_the_tree(&mut cli, &below, signal);
    }
}

#[test]
fn a_run_killed_mid_way_leaves_no_driver_and_whole_lines() {
    let d = scratch("signal-run");
    let out = d.join("r.jsonl");
    let mut cli = start(&[
        "run",
        "--impl",
        "rustls-aws-lc,rustls-ring",
        "--scenario",
        "handshake-tls13-ecdsa-p256-x25519-full,bulk-tls13-aes-128-gcm-16k",
        "--runs",
        "60",
        "--out",
        out.to_str().unwrap(),
        "--db",
        d.join("r.db").to_str().unwrap(),
    ]);
    let below = wait_for_children(&mut cli, Duration::from_secs(30));
    assert!(!below.is_empty(), "no driver started");
    // Mid-way: some cells may be written, the rest not.
    std::thread::sleep(Duration::from_millis(700));
    let below: Vec<u32> = below.into_iter().chain(descendants(cli.id())).collect();
    signal_ends_the_tree(&mut cli, &below, libc::SIGTERM);
    whole_lines(&out);
}

#[test]
fn an_interop_run_killed_mid_way_leaves_no_peer() {
    let d = scratch("signal-interop");
    let out = d.join("i.jsonl");
    let mut cli = start(&[
        "interop",
        "--peer",
        "rustls-aws-lc,openssl-3.0,openssl-tool",
        "--out",
        out.to_str().unwrap(),
    ]);
    let below = wait_for_children(&mut cli, Duration::from_secs(30));
    assert!(!below.is_empty(), "no peer started");
    std::thread::sleep(Duration::from_millis(300));
    let below: Vec<u32> = below.into_iter().chain(descendants(cli.id())).collect();
    signal_ends_the_tree(&mut cli, &below, libc::SIGTERM);
    whole_lines(&out);
}

#[test]
fn a_conformance_run_killed_mid_way_leaves_no_runner_or_shim() {
    let d = scratch("signal-conformance");
    let mut cli = default_signals(&mut Command::new(bin()))
        .args(["conformance", "--impl", "rustls-aws-lc"])
        .args(["--out", d.join("c.jsonl").to_str().unwrap()])
        .args(["--db", d.join("c.db").to_str().unwrap()])
        .env("TLSMATRIX_DRIVER_DIR", release_dir())
        .env("TLSMATRIX_BOGO_DIR", release_dir().join("../bogo"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Until the runner has started shims (or, on a fresh tree, while it is being built).
    let until = std::time::Instant::now() + Duration::from_secs(120);
    let mut below = wait_for_children(&mut cli, Duration::from_secs(60));
    while below.len() < 3 && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
        below = descendants(cli.id());
    }
    assert!(!below.is_empty(), "no runner started");
    signal_ends_the_tree(&mut cli, &below, libc::SIGTERM);
    whole_lines(&d.join("c.jsonl"));
}

#[test]
fn a_scan_killed_mid_way_leaves_no_peer_or_scanner_and_no_file() {
    let d = scratch("signal-scan");
    let out = d.join("outside-scan.json");
    let mut cli = start(&[
        "scan",
        "--impl",
        "rustls-aws-lc",
        "--out",
        out.to_str().unwrap(),
    ]);
    let below = wait_for_children(&mut cli, Duration::from_secs(30));
    assert!(!below.is_empty(), "no peer started");
    // Until the scanner has started its own clients below the peer and itself.
    let until = std::time::Instant::now() + Duration::from_secs(30);
    let mut below = descendants(cli.id());
    while below.len() < 4 && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
        below = descendants(cli.id());
    }
    assert!(below.len() >= 4, "the scanner did not start: {below:?}");
    signal_ends_the_tree(&mut cli, &below, libc::SIGTERM);
    // The findings file is written whole at the end, or not at all.
    assert!(!out.exists());
}
