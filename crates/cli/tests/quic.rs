//! `tlsmatrix run --measure quic` through the real drivers: every QUIC stack built (quinn on
//! both rustls providers, OpenSSL's own on 3.5, 3.6 and 4.0, quiche on BoringSSL, ngtcp2 on
//! GnuTLS) completes the lead, a hybrid post-quantum and an ML-DSA handshake, and every one
//! that resumes inside QUIC the lead resumed by ticket, each cell checked by its driver and its
//! figures positive and finite, the versions the ones `tlsmatrix list` names; an impl without
//! a QUIC stack, or a stack that does not resume, is unsupported with its own reason.

mod common;

use common::{exclusive, json_lines, result_records, scratch, stderr, tlsmatrix};
use tlsmatrix_model::metric::Source;
use tlsmatrix_model::record::{Metric, Record};

const STACKS: [&str; 7] = [
    "rustls-aws-lc",
    "rustls-ring",
    "openssl-3.5",
    "openssl-3.6",
    "openssl-4.0",
    "boringssl",
    "gnutls",
];
/// Go's peer, whose QUIC is quic-go on crypto/tls (interop only: the Go driver takes no QUIC
/// measure).
const GO: &str = "go-crypto-tls";
const SCENARIOS: [&str; 3] = [
    "handshake-tls13-ecdsa-p256-x25519-full",
    "handshake-tls13-ecdsa-p256-x25519mlkem768-full",
    "handshake-tls13-mldsa44-x25519-full",
];
/// The lead handshake resumed by ticket inside QUIC.
const RESUMED: &str = "handshake-tls13-ecdsa-p256-x25519-ticket";
/// The stacks that do not resume inside QUIC, with the words of their reason.
const NO_RESUMPTION: [(&str, &str); 3] = [
    ("openssl-3.5", "own QUIC does not resume"),
    ("openssl-3.6", "own QUIC does not resume"),
    ("openssl-4.0", "own QUIC does not resume"),
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
        &format!("{},{RESUMED}", SCENARIOS.join(",")),
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
        for scenario in SCENARIOS.into_iter().chain([RESUMED]) {
            // rustls on ring and GnuTLS 3.7 have neither ML-KEM nor ML-DSA.
            if matches!(imp, "rustls-ring" | "gnutls") && SCENARIOS[1..].contains(&scenario) {
                continue;
            }
            if scenario == RESUMED && NO_RESUMPTION.iter().any(|(i, _)| *i == imp) {
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
    let unsupported = [
        ("openssl-3.0", SCENARIOS[0], "has no QUIC server"),
        ("nss", SCENARIOS[0], "no QUIC stack on nss"),
    ];
    let no_resumption = NO_RESUMPTION.map(|(imp, why)| (imp, RESUMED, why));
    for (imp, scenario, why) in unsupported.into_iter().chain(no_resumption) {
        let cell = cells
            .iter()
            .find(|c| {
                c["client"] == imp && c["scenario"] == scenario && c["outcome"] == "unsupported"
            })
            .unwrap_or_else(|| panic!("{imp} {scenario}: no unsupported cell"));
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

/// Every QUIC stack against every other over UDP on loopback, across the driver processes
/// (no binary links two libssl builds): each case of the QUIC family passes, or is
/// unsupported with the library's own reason.
#[test]
fn every_quic_client_completes_each_quic_case_with_every_quic_server() {
    let out = scratch("quic-interop").join("interop.jsonl");
    let r = tlsmatrix(&[
        "interop",
        "--case",
        "quic-*",
        "--peer",
        &format!("{},{GO},nss", STACKS.join(",")),
        "--timeout",
        "10",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let lines = json_lines(&out);
    // Six cases, nine peers each way.
    assert_eq!(lines.len(), 6 * 9 * 9);
    let mut passed = 0;
    for l in &lines {
        let (case, c, s) = (
            l["case"].as_str().unwrap(),
            l["client"].as_str().unwrap(),
            l["server"].as_str().unwrap(),
        );
        let why = l["reason"].as_str().unwrap();
        let post_quantum = matches!(case, "quic-x25519mlkem768" | "quic-mldsa44");
        // nss has no QUIC stack here; rustls on ring and GnuTLS 3.7 no post-quantum TLS, Go's
        // crypto/tls (under quic-go) no ML-DSA; BoringSSL lets no application pick
        // ChaCha20-Poly1305 over AES-GCM, and a crypto/tls server picks its suite itself.
        // OpenSSL's own QUIC does not resume.
        let lacks = |p: &str, server: bool| {
            p == "nss"
                || (post_quantum && matches!(p, "rustls-ring" | "gnutls"))
                || (case == "quic-mldsa44" && p == GO)
                || (case == "quic-chacha20" && (p == "boringssl" || (server && p == GO)))
                || (case == "quic-resumption" && p.starts_with("openssl-"))
        };
        if lacks(c, false) || lacks(s, true) {
            assert_eq!(l["outcome"], "unsupported", "{l}");
            assert!(
                why.contains("no QUIC stack")
                    || why.contains("has no")
                    || why.contains("lets no application choose")
                    || why.contains("cannot pin")
                    || why.contains("does not resume"),
                "{l}"
            );
        } else {
            assert_eq!(l["outcome"], "pass", "{l}");
            assert!(why.starts_with("QUIC v1 TLS 1.3 "), "{l}");
            if case == "quic-resumption" {
                // The second connection's line says it resumed.
                assert!(
                    why.contains("; then QUIC v1 ") && why.contains(" resumed"),
                    "{l}"
                );
            }
            // The client read the whole answer: 1 MiB on the transfer, 1 KiB elsewhere.
            let asked = if case == "quic-transfer" {
                1 << 20
            } else {
                1024
            };
            assert!(why.contains(&format!("read /{asked} whole")), "{l}");
            passed += 1;
        }
    }
    // Every pair of the eight on the handshake and the transfer; on ChaCha20 the seven
    // clients that offer it with the six servers that can pin it; the six with a hybrid
    // group on theirs, the five with ML-DSA on theirs, the five that resume inside QUIC on
    // theirs.
    assert_eq!(passed, 2 * 8 * 8 + 7 * 6 + 6 * 6 + 5 * 5 + 5 * 5);
}

/// Checks every stack's record of every figure of a measure's `source`, each of which must
/// be there; returns how many figures the source has.
fn each_figure(
    records: &[Record],
    source: Source,
    mut check: impl FnMut(&str, Metric, &Record),
) -> usize {
    let metrics: Vec<Metric> = tlsmatrix_model::metric::METRICS
        .iter()
        .filter(|row| row.source == source)
        .map(|row| row.metric)
        .collect();
    for imp in STACKS {
        for &m in &metrics {
            let rec = records
                .iter()
                .find(|r| r.client == imp && r.metric == m)
                .unwrap_or_else(|| panic!("{imp}: no {m}"));
            check(imp, m, rec);
        }
    }
    metrics.len()
}

/// Runs `tlsmatrix run --measure <measure>` on every QUIC stack built, one scenario, in a
/// scratch folder of its own; the run must succeed, and its records are returned.
fn measured_on_every_stack(measure: &str, scenario: &str, runs: &str) -> Vec<Record> {
    let out = scratch(measure).join(format!("{measure}.jsonl"));
    let r = tlsmatrix(&[
        "run",
        "--measure",
        measure,
        "--impl",
        &STACKS.join(","),
        "--scenario",
        scenario,
        "--runs",
        runs,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    result_records(&out)
}

/// What `tlsmatrix run --measure <measure>` says when rustls-aws-lc is asked for a scenario
/// the measure does not take.
fn refusal_of(measure: &str, scenario: &str) -> String {
    let refused = tlsmatrix(&[
        "run",
        "--measure",
        measure,
        "--impl",
        "rustls-aws-lc",
        "--scenario",
        scenario,
        "--out",
        scratch(&format!("{measure}-refused"))
            .join("r.jsonl")
            .to_str()
            .unwrap(),
    ]);
    stderr(&refused)
}

/// A started `tlsmatrix peer` and the lines it prints, read as they come.
struct QuicPeer {
    child: common::Running,
    lines: std::sync::mpsc::Receiver<String>,
}

impl QuicPeer {
    fn start(role: &str, imp: &str, extra: &[&str]) -> QuicPeer {
        let certs = scratch(&format!("quic-bad-certs-{imp}-{role}"));
        let mut child = std::process::Command::new(common::bin())
            .args(["peer", role, "--impl", imp, "--case", "quic-handshake"])
            .args(["--timeout", &BAD_INPUT_LIMIT_S.to_string()])
            .arg("--certs")
            .arg(&certs)
            .args(extra)
            .env("TLSMATRIX_DRIVER_DIR", common::release_dir())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        for pipe in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for l in
                    std::io::BufRead::lines(std::io::BufReader::new(pipe)).map_while(Result::ok)
                {
                    let _ = tx.send(l);
                }
            });
        }
        QuicPeer {
            child: common::Running(child),
            lines,
        }
    }

    /// The address a server printed.
    fn listening(&self) -> String {
        loop {
            let l = self
                .lines
                .recv_timeout(std::time::Duration::from_secs(30))
                .expect("the server never said where it listens");
            if let Some(rest) = l.strip_prefix("listening ") {
                return rest.trim().to_string();
            }
        }
    }

    /// Waits for the exit, which must come within the limit (plus start-up) and be a failure
    /// whose last line is an `error:` sentence.
    fn fails_with_a_sentence(self, started: std::time::Instant, what: &str) {
        let (ok, last) = self.finish(started, what);
        assert!(!ok, "{what}: it passed");
        let why = last
            .strip_prefix("error: ")
            .unwrap_or_else(|| panic!("{what}: no error sentence, last line {last:?}"));
        assert!(!why.is_empty(), "{what}");
    }

    /// Waits for the exit, which must come within the limit (plus start-up), and returns
    /// the status and the sentence it ended with.
    fn finish(mut self, started: std::time::Instant, what: &str) -> (bool, String) {
        let bound = std::time::Duration::from_secs(BAD_INPUT_LIMIT_S + 3);
        let status = loop {
            if let Some(s) = self.child.0.try_wait().unwrap() {
                break s;
            }
            assert!(started.elapsed() < bound, "{what}: still running");
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        // The readers end at the pipes' end, which follows the exit; wait for their last
        // lines rather than taking what has come so far.
        let mut lines = Vec::new();
        while let Ok(l) = self.lines.recv_timeout(std::time::Duration::from_secs(5)) {
            lines.push(l);
        }
        (status.success(), lines.last().cloned().unwrap_or_default())
    }
}

const BAD_INPUT_LIMIT_S: u64 = 2;

/// Runs `check` for each QUIC stack (quic-go through Go's peer too), each in its own thread, all at once: each waits on its
/// peer's limit more than it computes.
fn on_every_stack_at_once(check: impl Fn(&'static str) + Send + Sync + 'static) {
    let check = std::sync::Arc::new(check);
    let threads: Vec<_> = STACKS
        .iter()
        .chain(&[GO])
        .map(|&imp| {
            let check = check.clone();
            std::thread::spawn(move || check(imp))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// A client's real first datagram, from rustls's QUIC client, to cut and bend.
fn a_real_initial() -> Vec<u8> {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = socket.local_addr().unwrap().to_string();
    let _client = QuicPeer::start("client", "rustls-aws-lc", &["--connect", &addr]);
    socket
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let mut buf = [0u8; 65_536];
    let n = socket.recv(&mut buf).unwrap();
    buf[..n].to_vec()
}

/// What a server of each QUIC stack makes of a client that sends garbage, a truncated
/// Initial, an unknown version or nothing: a failure with one sentence within the case's
/// limit, having answered nothing but a version negotiation; the process ends.
#[test]
fn every_quic_server_fails_a_bad_client_with_a_sentence_in_bounded_time() {
    let initial = a_real_initial();
    assert!(
        initial.len() >= 1200 && initial[0] & 0xf0 == 0xc0,
        "{initial:?}"
    );
    let mut unknown_version = initial.clone();
    unknown_version[1..5].copy_from_slice(&0x1a2a_3a4au32.to_be_bytes());
    let cases: Vec<(&str, Option<Vec<u8>>)> = vec![
        ("garbage", Some(vec![0x5a; 1200])),
        ("a truncated Initial", Some(initial[..300].to_vec())),
        ("an unknown version", Some(unknown_version)),
        ("nothing", None),
    ];
    on_every_stack_at_once(move |imp| {
        for (what, datagram) in &cases {
            let what = format!("{imp} server, {what}");
            let started = std::time::Instant::now();
            let server = QuicPeer::start("server", imp, &["--listen", "127.0.0.1:0"]);
            let addr = server.listening();
            let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            socket.connect(&addr).unwrap();
            if let Some(d) = datagram {
                socket.send(d).unwrap();
            }
            socket
                .set_read_timeout(Some(std::time::Duration::from_millis(500)))
                .unwrap();
            let mut buf = [0u8; 65_536];
            while let Ok(n) = socket.recv(&mut buf) {
                // A version negotiation: a long header of version 0.
                assert!(
                    n >= 7 && buf[0] & 0x80 != 0 && buf[1..5] == [0; 4],
                    "{what}: only a version negotiation may answer, got {:?}",
                    &buf[..n.min(16)]
                );
            }
            server.fails_with_a_sentence(started, &what);
        }
    });
}

/// What a client of each QUIC stack makes of a server that answers garbage, a version
/// negotiation offering nothing it speaks, or nothing at all.
#[test]
fn every_quic_client_fails_a_bad_server_with_a_sentence_in_bounded_time() {
    on_every_stack_at_once(move |imp| {
        for what in ["garbage", "a version negotiation", "nothing"] {
            let what = format!("{imp} client, {what}");
            let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let addr = socket.local_addr().unwrap().to_string();
            let started = std::time::Instant::now();
            let client = QuicPeer::start("client", imp, &["--connect", &addr]);
            socket
                .set_read_timeout(Some(std::time::Duration::from_secs(30)))
                .unwrap();
            let mut buf = [0u8; 65_536];
            let (n, from) = socket.recv_from(&mut buf).unwrap();
            assert!(n >= 1200, "{what}: a first datagram of {n} bytes");
            let answer = if what.ends_with("garbage") {
                vec![0xa5; 1200]
            } else if what.ends_with("a version negotiation") {
                // Long header, version 0, the client's connection IDs swapped, and
                // one version the client does not speak.
                let dcid_len = buf[5] as usize;
                let dcid = &buf[6..6 + dcid_len];
                let scid_len = buf[6 + dcid_len] as usize;
                let scid = &buf[7 + dcid_len..7 + dcid_len + scid_len];
                let mut vn = vec![0x80, 0, 0, 0, 0, scid_len as u8];
                vn.extend_from_slice(scid);
                vn.push(dcid_len as u8);
                vn.extend_from_slice(dcid);
                vn.extend_from_slice(&0x1a2a_3a4au32.to_be_bytes());
                vn
            } else {
                Vec::new()
            };
            if !answer.is_empty() {
                socket.send_to(&answer, from).unwrap();
            }
            client.fails_with_a_sentence(started, &what);
        }
    });
}

/// `tlsmatrix peer server --quic --connections 2` serves the QUIC handshake case on UDP to one
/// client after another on the same port, answering each one's hq-interop request (the
/// second a transfer of 1 MiB), which QUIC clients of other stacks complete; `--quic` with a
/// TCP case is refused.
#[test]
fn peer_server_quic_serves_quic_clients_one_after_another() {
    let certs = scratch("quic-peer-flag");
    let certs = certs.to_str().unwrap();
    let (_server, addr) = common::serve(
        std::process::Command::new(common::bin())
            .args([
                "peer",
                "server",
                "--impl",
                "gnutls",
                "--quic",
                "--connections",
                "2",
                "--certs",
                certs,
            ])
            .env("TLSMATRIX_DRIVER_DIR", common::release_dir()),
        "listening ",
    );
    for (imp, case, asked) in [
        ("rustls-aws-lc", "quic-handshake", 1024),
        ("rustls-ring", "quic-transfer", 1 << 20),
    ] {
        let r = tlsmatrix(&[
            "peer",
            "client",
            "--impl",
            imp,
            "--quic",
            "--case",
            case,
            "--connect",
            &addr,
            "--certs",
            certs,
        ]);
        assert!(r.status.success(), "{imp}: {}", stderr(&r));
        let out = String::from_utf8_lossy(&r.stdout);
        assert!(out.contains("QUIC v1 TLS 1.3"), "{out}");
        // The server answered the client's hq-interop request whole.
        assert!(out.contains(&format!("read /{asked} whole")), "{out}");
    }
    let refused = tlsmatrix(&[
        "peer", "server", "--impl", "gnutls", "--quic", "--case", "sni", "--certs", certs,
    ]);
    assert!(!refused.status.success());
    assert!(
        format!(
            "{}{}",
            String::from_utf8_lossy(&refused.stdout),
            stderr(&refused)
        )
        .contains("--quic takes a QUIC case"),
        "{}",
        stderr(&refused)
    );
}

/// A library's defaults and other answers are TCP's alone: asked of a QUIC case, they are
/// refused with a sentence, not run over TCP instead.
#[test]
fn a_quic_peer_refuses_the_options_of_tcp_servers() {
    let certs = scratch("quic-peer-options");
    for extra in [["--respond", "http"], ["--defaults", "ecdsa-p256"]] {
        let r = tlsmatrix(&[
            "peer",
            "server",
            "--impl",
            "rustls-ring",
            "--case",
            "quic-handshake",
            "--certs",
            certs.to_str().unwrap(),
            extra[0],
            extra[1],
        ]);
        assert!(!r.status.success(), "{extra:?}");
        let text = format!("{}{}", String::from_utf8_lossy(&r.stdout), stderr(&r));
        assert!(
            text.contains("a QUIC case (quic-handshake) answers hq-interop"),
            "{text}"
        );
        assert!(!text.contains("listening"), "{extra:?}: {text}");
    }
}

/// `tlsmatrix run --measure quic-bulk` through the real drivers: every QUIC stack built
/// carries 1 MiB and 16 MiB each way beside its own library's TLS bulk over TCP, every figure
/// positive and finite, the stream bytes per datagram within a QUIC datagram's size; a TLS
/// 1.2 bulk scenario and an impl without a QUIC stack are unsupported with their reasons.
#[test]
fn every_quic_stack_carries_bulk_data_with_sane_figures() {
    let _alone = exclusive();
    let out = scratch("quic-bulk").join("quic-bulk.jsonl");
    let r = tlsmatrix(&[
        "run",
        "--measure",
        "quic-bulk",
        "--impl",
        &format!("{},nss", STACKS.join(",")),
        "--scenario",
        "bulk-tls13-aes-128-gcm-16k,bulk-tls12-aes-128-gcm-16k",
        "--runs",
        "2",
        "--warmup-ms",
        "10",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    let figures = each_figure(&records, Source::QuicBulk, |imp, m, rec| {
        assert!(
            rec.median.is_finite() && rec.median > 0.0,
            "{imp} {m}: {}",
            rec.median
        );
        assert_eq!(rec.scenario, "bulk-tls13-aes-128-gcm-16k", "{imp} {m}");
    });
    assert_eq!(figures, 13);
    for imp in STACKS {
        let per_datagram = records
            .iter()
            .find(|r| r.client == imp && r.metric == Metric::ClientQuicSend16mDatagramBytes)
            .unwrap();
        assert!(
            (500.0..1500.0).contains(&per_datagram.median),
            "{imp}: {}",
            per_datagram.median
        );
    }
    let cells = json_lines(&out);
    for (imp, scenario, why) in [
        ("rustls-ring", "bulk-tls12-aes-128-gcm-16k", "TLS 1.3 only"),
        ("nss", "bulk-tls13-aes-128-gcm-16k", "no QUIC stack on nss"),
    ] {
        let cell = cells
            .iter()
            .find(|c| c["client"] == imp && c["scenario"] == scenario)
            .unwrap_or_else(|| panic!("{imp} {scenario}: no cell"));
        assert_eq!(cell["outcome"], "unsupported", "{cell}");
        assert!(cell["reason"].as_str().unwrap().contains(why), "{cell}");
    }
}

/// `tlsmatrix wire --check --quic` through the real drivers and the UDP delay proxy: each
/// stack's time to first byte lands near the model's at 20 ms (the proxy adds the
/// round trips, the model the same), its 1 MiB download at 50 ms takes at least most of what
/// slow start allows, and an impl without a QUIC stack is left out with its reason.
#[test]
fn the_quic_delay_proxy_check_agrees_with_the_model() {
    let _alone = exclusive();
    let out = scratch("quic-proxy-check").join("quic-proxy-check.json");
    let r = tlsmatrix(&[
        "wire",
        "--check",
        "--quic",
        "--impl",
        "gnutls,openssl-3.6,nss",
        "--scenario",
        "handshake-tls13-ecdsa-p256-x25519-full",
        "--rtt",
        "20",
        "--runs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = format!("{}{}", String::from_utf8_lossy(&r.stdout), stderr(&r));
    assert!(r.status.success(), "{text}");
    assert!(text.contains("nss: unsupported"), "{text}");
    let check: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let rows = check["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{check}");
    for row in rows {
        let (measured, model) = (
            row["measured_ms"].as_f64().unwrap(),
            row["model_ms"].as_f64().unwrap(),
        );
        // Two round trips of 20 ms at the least, and the model close: the report judges
        // 10% on a quiet machine; a test shares its cores with others.
        assert!(measured > 40.0 && model > 40.0, "{row}");
        assert!((measured / model - 1.0).abs() <= 0.20, "{row}");
    }
    let downloads = check["downloads"].as_array().unwrap();
    assert_eq!(downloads.len(), 2, "{check}");
    for d in downloads {
        let (measured, ideal) = (
            d["measured_ms"].as_f64().unwrap(),
            d["ideal_ms"].as_f64().unwrap(),
        );
        assert_eq!(d["bytes"], 1 << 20, "{d}");
        assert!(ideal > 0.0 && measured > 0.8 * ideal, "{d}");
    }
}

/// `tlsmatrix run --measure quic-memory` through the real drivers: every QUIC stack built
/// keeps 100 live connections beside its own library's TCP connections, every figure positive
/// and finite, and no more than a few MiB a connection; a handshake scenario is refused.
#[test]
fn every_quic_stack_keeps_live_connections_with_sane_heap_figures() {
    let _alone = exclusive();
    let records = measured_on_every_stack("quic-memory", "memory-tls13-ecdsa-p256-n100", "1");
    let figures = each_figure(&records, Source::QuicMemory, |imp, m, rec| {
        assert!(
            rec.median.is_finite() && rec.median > 0.0 && rec.median < 8.0 * 1024.0 * 1024.0,
            "{imp} {m}: {} bytes a connection",
            rec.median
        );
    });
    assert_eq!(figures, 6);
    let refused = refusal_of("quic-memory", "handshake-tls13-ecdsa-p256-x25519-full");
    assert!(
        refused.contains("QUIC memory is measured on memory scenarios"),
        "{refused}"
    );
}

/// `tlsmatrix run --measure quic-instructions` through the real drivers under callgrind:
/// every QUIC stack built counts each side of its QUIC handshake and of its own library's TCP
/// handshake, each total the sum of its classes; QUIC executes more than TCP on each side and
/// more of it in crypto (packet protection and its keys); a bulk scenario is refused.
#[test]
fn every_quic_stack_counts_its_handshake_beside_tcp_by_class() {
    use tlsmatrix_model::class::Carrier;
    use tlsmatrix_model::side::Side;
    let _alone = exclusive();
    let records = measured_on_every_stack("quic-instructions", SCENARIOS[0], "1");
    let figures = each_figure(&records, Source::QuicInstructions, |imp, m, rec| {
        assert!(
            rec.median.is_finite() && rec.median >= 0.0 && rec.median < 1e9,
            "{imp} {m}: {}",
            rec.median
        );
    });
    assert_eq!(figures, 4 + 4 * tlsmatrix_model::class::SPLIT_CLASSES);
    let of = |imp: &str, m: Metric| {
        records
            .iter()
            .find(|r| r.client == imp && r.metric == m)
            .unwrap()
            .median
    };
    for imp in STACKS {
        for side in [Side::Client, Side::Server] {
            let [quic, tcp] = Carrier::BOTH.map(|carrier| {
                let (whole, parts) = Metric::carried_split_of(side, carrier);
                let total = of(imp, whole);
                let sum: f64 = parts.iter().map(|&p| of(imp, p)).sum();
                assert!(
                    total > 1e5 && (sum - total).abs() <= 1.0,
                    "{imp} {side} {carrier:?}: {total} against its classes' {sum}"
                );
                (total, of(imp, parts[0]))
            });
            assert!(
                quic.0 > tcp.0 && quic.1 > tcp.1,
                "{imp} {side}: QUIC {quic:?} against TCP {tcp:?} (total, crypto)"
            );
        }
    }
    let refused = refusal_of("quic-instructions", "bulk-tls13-aes-128-gcm-16k");
    assert!(
        refused.contains("QUIC instructions are counted on handshake scenarios"),
        "{refused}"
    );
}
