//! `tlsmatrix interop` and `tlsmatrix peer` over TCP: shards, the quick matrix, broken peers bounded in time, and a peer run by hand.

mod common;

use std::process::Command;

use common::*;

/// The quick interop matrix over real sockets: every peer against itself must end as the case
/// requires; a peer that cannot play a role says why.
/// Interop shards: N shard plans together are the unsharded plan, no cell twice, and shards
/// written under one run id read back as one run.
#[test]
fn interop_shards_cover_the_plan_once_and_merge_into_one_run() {
    let d = scratch("interop-shards");
    let cells = |path: &std::path::Path| -> Vec<(String, String, String, String)> {
        let mut v: Vec<_> = std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .map(|l| {
                let f = |k: &str| l[k].as_str().unwrap().to_string();
                (f("case"), f("client"), f("server"), f("run_id"))
            })
            .collect();
        v.sort();
        v
    };
    let base = [
        "interop",
        "--peer",
        "rustls-aws-lc,openssl-3.0",
        "--case",
        "tls13*,version-mismatch",
    ];
    let whole = d.join("whole.jsonl");
    let r = tlsmatrix(&[&base[..], &["--out", whole.to_str().unwrap()]].concat());
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let sharded = d.join("sharded.jsonl");
    for k in ["1/3", "2/3", "3/3"] {
        let r = tlsmatrix(
            &[
                &base[..],
                &[
                    "--shard",
                    k,
                    "--run-id",
                    "interop-merged",
                    "--out",
                    sharded.to_str().unwrap(),
                ],
            ]
            .concat(),
        );
        assert_eq!(r.status.code(), Some(0), "shard {k}: {}", stderr(&r));
    }
    let strip = |v: Vec<(String, String, String, String)>| -> Vec<(String, String, String)> {
        v.into_iter().map(|(c, a, b, _)| (c, a, b)).collect()
    };
    let (w, s) = (cells(&whole), cells(&sharded));
    assert!(s.iter().all(|c| c.3 == "interop-merged"), "{s:?}");
    let s = strip(s);
    let mut dedup = s.clone();
    dedup.dedup();
    assert_eq!(dedup.len(), s.len(), "a cell ran in two shards: {s:?}");
    assert_eq!(strip(w), s, "the shards together are not the whole plan");
    let r = tlsmatrix(&[&base[..], &["--shard", "4/3"]].concat());
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("is not a shard"), "{}", stderr(&r));
}

#[test]
fn quick_interop_matrix_every_same_impl_cell_passes() {
    let d = scratch("interop");
    let out = d.join("i.jsonl");
    let started = std::time::Instant::now();
    let r = tlsmatrix(&["interop", "--quick", "--out", out.to_str().unwrap()]);
    let secs = started.elapsed().as_secs();
    assert!(secs < 120, "the quick matrix took {secs} s");
    let lines = json_lines(&out);
    assert!(lines.len() >= 5 * 9, "{} cells", lines.len());
    for l in &lines {
        assert_eq!(l["schema"], "tlsmatrix.interop/1");
        let outcome = l["outcome"].as_str().unwrap();
        let must_fail = [
            "version-mismatch",
            "no-close-notify",
            "libp2p-wrong-peer-id",
        ];
        let expected = if must_fail.contains(&l["case"].as_str().unwrap()) {
            "expected-failure"
        } else {
            "pass"
        };
        // A cell of an impl with itself passes (or fails as the case demands), unless its
        // failure is a listed known deviation (crates/interop/src/deviations.rs), reported
        // as a finding with what and why.
        if l["client"] == l["server"] && outcome == "known-deviation" {
            let why = l["reason"].as_str().unwrap();
            assert!(why.starts_with("known deviation of "), "{l}");
            let listed = tlsmatrix_interop::deviations::KNOWN
                .iter()
                .any(|d| d.case == l["case"] && (d.peer == l["client"] || d.peer == l["server"]));
            assert!(listed, "{l}");
        } else if l["client"] == l["server"] && outcome != "unsupported" {
            assert_eq!(outcome, expected, "{l}");
        }
        if outcome == "unsupported" {
            assert!(!l["reason"].as_str().unwrap().is_empty(), "{l}");
        }
    }
    // Our own peers interoperate in every direction, and the Go libp2p transport (both
    // backends) with rust-libp2p's libp2p-tls.
    let libp2p: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["case"].as_str().unwrap().starts_with("libp2p"))
        .collect();
    assert_eq!(libp2p.len(), 2 * 9, "both libp2p cases, 3 x 3 peers");
    for l in &libp2p {
        assert!(
            ["pass", "expected-failure"].contains(&l["outcome"].as_str().unwrap()),
            "{l}"
        );
    }
    let ours: Vec<String> = built_impls().into_iter().map(|(n, _)| n).collect();
    let is_ours = |p: &serde_json::Value| ours.iter().any(|n| n == p.as_str().unwrap());
    let mut resumed = 0;
    for l in lines
        .iter()
        .filter(|l| is_ours(&l["client"]) && is_ours(&l["server"]))
    {
        assert_ne!(l["outcome"], "fail", "{l}");
        // A resumption case passes only when its second connection says it resumed (s2n-tls
        // declines session ids: it has no server cache of its own).
        if l["case"].as_str().unwrap().starts_with("resume-") && l["outcome"] == "pass" {
            assert!(l["reason"].as_str().unwrap().contains(" resumed;"), "{l}");
            resumed += 1;
        }
    }
    assert!(resumed > 0, "no resumption cell passed");
    // Known deviations alone leave the exit status 0; the quick matrix has nothing else.
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.contains("client \\ server"), "{text}");
    assert!(lines.iter().any(|l| l["outcome"] == "known-deviation"));
    let fails: Vec<_> = lines.iter().filter(|l| l["outcome"] == "fail").collect();
    assert!(fails.is_empty(), "{fails:?}");
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
}

/// Peers that send garbage or never speak cost one cell each, within the limit, with the
/// right reason; the run goes on and leaves no process behind.
#[test]
fn broken_peers_fail_their_cells_in_time() {
    let d = scratch("broken");
    let real = bin().parent().unwrap().join("tlsmatrix-driver");
    std::os::unix::fs::symlink(&real, d.join("tlsmatrix-driver")).unwrap();
    let fake = d.join("tlsmatrix-driver-broken");
    executable(
        &fake,
        r#"#!/usr/bin/env python3
import json, socket, sys, time
a = sys.argv[1:]
if a[0] == "info":
    print(json.dumps({"impls": [{"name": "garbage", "version": "garbage 1"}, {"name": "silent", "version": "silent 1"}]}))
    sys.exit(0)
role, imp = a[1], a[a.index("--impl") + 1]
if role == "server":
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
    print("listening 127.0.0.1:%d" % s.getsockname()[1], flush=True)
    c, _ = s.accept()
else:
    host, port = a[a.index("--connect") + 1].rsplit(":", 1)
    c = socket.create_connection((host, int(port)))
if imp == "garbage":
    c.sendall(b"\x16\x03\x01\x00\x05garbage, not a TLS record" * 4)
time.sleep(60)
"#,
    );
    let out = d.join("i.jsonl");
    let started = std::time::Instant::now();
    let r = tlsmatrix_with(
        &d,
        &[
            "interop",
            "--peer",
            "rustls-aws-lc,garbage,silent",
            "--case",
            "tls13",
            "--timeout",
            "3",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let secs = started.elapsed().as_secs();
    // 9 cells, 2 at a time, none longer than 3 s (plus start-up).
    assert!(secs < 25, "took {secs} s");
    // Unknown failures: exit 1, each named at the end of the output.
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    let err = stderr(&r);
    for (c, s) in [("rustls-aws-lc", "garbage"), ("silent", "rustls-aws-lc")] {
        assert!(err.contains(&format!("FAILED tls13 {c} -> {s}: ")), "{err}");
    }
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 9);
    let cell = |c: &str, s: &str| {
        lines
            .iter()
            .find(|l| l["client"] == c && l["server"] == s)
            .unwrap()
            .clone()
    };
    assert_eq!(cell("rustls-aws-lc", "rustls-aws-lc")["outcome"], "pass");
    for (c, s) in [("rustls-aws-lc", "garbage"), ("garbage", "rustls-aws-lc")] {
        let l = cell(c, s);
        assert_eq!(l["outcome"], "fail", "{l}");
        let why = l["reason"].as_str().unwrap().to_lowercase();
        assert!(
            why.contains("corrupt") || why.contains("invalid") || why.contains("decode"),
            "{l}"
        );
        assert!(l["seconds"].as_f64().unwrap() < 3.5, "{l}");
    }
    for (c, s) in [("rustls-aws-lc", "silent"), ("silent", "rustls-aws-lc")] {
        let l = cell(c, s);
        assert_eq!(l["outcome"], "fail", "{l}");
        assert!(l["reason"].as_str().unwrap().contains("timed out"), "{l}");
        assert!(l["seconds"].as_f64().unwrap() < 4.0, "{l}");
    }
    // Every peer process was killed with its cell.
    let ps = Command::new("pgrep")
        .args(["-f", fake.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        ps.stdout.is_empty(),
        "left behind: {}",
        String::from_utf8_lossy(&ps.stdout)
    );
}

/// `tlsmatrix peer` started by hand: certificates default to results/certs (made there as
/// `tlsmatrix interop` makes them), and a server that first gets a port probe (connect, close)
/// says so and serves the real client that follows.
#[test]
fn a_peer_by_hand_uses_interops_certificates_and_survives_a_port_probe() {
    use std::io::{BufRead, BufReader};
    let d = scratch("peer-by-hand");
    let mut server = Command::new(bin())
        .args(["peer", "server", "--impl", "rustls-ring", "--case", "tls13"])
        .args(["--listen", "127.0.0.1:0", "--timeout", "20"])
        .env("TLSMATRIX_DRIVER_DIR", bin().parent().unwrap())
        .current_dir(&d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("{first}"))
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    assert!(d.join("results/certs").is_dir(), "no results/certs made");
    drop(std::net::TcpStream::connect(&addr).unwrap()); // the probe
    let client = Command::new(bin())
        .args(["peer", "client", "--impl", "rustls-ring", "--case", "tls13"])
        .args(["--connect", &addr, "--timeout", "20"])
        .env("TLSMATRIX_DRIVER_DIR", bin().parent().unwrap())
        .current_dir(&d)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&client.stdout);
    assert!(client.status.success(), "{out}{}", stderr(&client));
    assert!(out.contains("ok: "), "{out}");
    let status = server.wait().unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut server.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{rest:?} {err}");
    assert!(rest.iter().any(|l| l.starts_with("ok: ")), "{rest:?}");
    assert!(err.contains("port probe"), "{err}");
}

/// A server started with `--connections 3` serves three clients of different impls after a
/// port probe, a garbage client costing one failed connection, not the server; one started
/// with `--respond http` answers curl.
#[test]
fn a_peer_server_serves_many_connections_and_answers_http() {
    use std::io::{BufRead, BufReader, Write};
    let d = scratch("peer-many");
    let start = |extra: &[&str]| {
        let mut server = Command::new(bin())
            .args(["peer", "server", "--impl", "openssl-3.0", "--case", "tls13"])
            .args(["--listen", "127.0.0.1:0", "--timeout", "20"])
            .args(extra)
            .env("TLSMATRIX_DRIVER_DIR", bin().parent().unwrap())
            .current_dir(&d)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
        let first = lines.next().unwrap().unwrap();
        let addr = first.strip_prefix("listening ").unwrap().to_string();
        (server, lines, addr)
    };
    let (mut server, lines, addr) = start(&["--connections", "3"]);
    drop(std::net::TcpStream::connect(&addr).unwrap()); // a probe: no connection of the 3
    let mut garbage = std::net::TcpStream::connect(&addr).unwrap();
    garbage.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    drop(garbage);
    for imp in ["rustls-aws-lc", "openssl-3.0"] {
        let client = Command::new(bin())
            .args(["peer", "client", "--impl", imp, "--case", "tls13"])
            .args(["--connect", &addr, "--timeout", "20"])
            .env("TLSMATRIX_DRIVER_DIR", bin().parent().unwrap())
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(client.status.success(), "{imp}: {}", stderr(&client));
    }
    let status = server.wait().unwrap();
    let out: Vec<String> = lines.map_while(Result::ok).collect();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut server.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{out:?}");
    assert!(out[0].starts_with("connection 1: error: "), "{out:?}");
    assert!(out[1].starts_with("connection 2: ok: TLS 1.3"), "{out:?}");
    assert!(out[2].starts_with("connection 3: ok: TLS 1.3"), "{out:?}");
    assert!(
        out[3].starts_with("error: 1 of 3 connection(s) failed; the first: connection 1"),
        "{out:?}"
    );
    assert!(err.contains("port probe"), "{err}");

    let (mut server, lines, addr) = start(&["--respond", "http"]);
    let curl = Command::new("curl")
        .args(["-sk", "--max-time", "20", &format!("https://{addr}/")])
        .output()
        .expect("curl (scripts/setup installs it)");
    let body = String::from_utf8_lossy(&curl.stdout);
    assert!(
        curl.status.success(),
        "{}",
        String::from_utf8_lossy(&curl.stderr)
    );
    assert!(
        body.starts_with("tlsmatrix: TLS 1.3 TLS_AES_128_GCM_SHA256 x25519"),
        "{body}"
    );
    assert!(server.wait().unwrap().success());
    let out: Vec<String> = lines.map_while(Result::ok).collect();
    assert_eq!(
        out,
        [
            "connection 1: ok: answered GET / HTTP/1.1",
            "ok: served 1 connection(s)"
        ]
    );
}

/// A defaults client that exits, sends something other than a ClientHello, or connects and
/// says nothing costs at most the cell limit and leaves its reason in offers.json; the
/// others' offers are still read.
#[test]
fn a_defaults_client_that_misbehaves_gets_a_reason_not_an_offer() {
    let d = scratch("offers-misbehave");
    let client = |act: &str| {
        format!(
            "if [ \"$1 $2\" = 'peer client' ]; then exec python3 -c \"import socket,sys,time; a=sys.argv[sys.argv.index('--connect')+1].rsplit(':',1); s=socket.create_connection((a[0],int(a[1]))); {act}\" \"$@\"; fi; exit 1"
        )
    };
    for (name, act, wants) in [
        (
            "garbage",
            "s.sendall(b'GET / HTTP/1.0\\\\r\\\\n\\\\r\\\\n'); time.sleep(30)",
            "not a ClientHello",
        ),
        ("silent", "time.sleep(30)", "no whole ClientHello in time"),
        ("exits", "sys.exit(3)", "the client closed"),
    ] {
        let dir = d.join(name);
        fake_driver(&dir, "rustls-ring", "rustls 0.0.0 (a fake)", &client(act));
        let out = dir.join("interop.jsonl");
        let started = std::time::Instant::now();
        let o = tlsmatrix_with(
            &dir,
            &[
                "interop",
                "--peer",
                "rustls-ring",
                "--case",
                "tls13",
                "--offers",
                "--timeout",
                "2",
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert!(
            started.elapsed().as_secs() < 20,
            "{name}: {:?}",
            started.elapsed()
        );
        let offers = tlsmatrix_history::offers::read(&dir.join("offers.json"))
            .unwrap()
            .unwrap_or_else(|| panic!("{name}: no offers.json; {}", stderr(&o)));
        let c = &offers.clients[0];
        assert!(c.offer.is_none(), "{name}: {c:?}");
        assert!(c.reason.contains(wants), "{name}: {}", c.reason);
    }
}
