//! The `tlsmatrix` binary end to end, with the real driver beside it: bad input, records and
//! their storage, listing and help, and a driver that hangs or runs the wrong library.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

use tlsmatrix_model::impls;
use tlsmatrix_model::record::{Metric, Record, SCHEMA};

#[test]
fn bad_input_ends_in_one_clear_sentence() {
    let d = scratch("bad");
    let out = d.join("r.jsonl");
    let o = out.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "--impl", "nossl", "--out", o],
            "unknown impl 'nossl'; available: rustls-aws-lc, rustls-ring, openssl-3.0",
        ),
        (
            &[
                "run",
                "--scenario",
                "handshake-tls13-ecdsa-p256-x448-full",
                "--out",
                o,
            ],
            "expected a group (x25519, p256, p384, x25519mlkem768, secp256r1mlkem768, secp384r1mlkem1024, mlkem512, mlkem768, mlkem1024) but found 'x448'",
        ),
        (
            &["run", "--scenario", "warp-*", "--out", o],
            "matches no scenario",
        ),
        (
            &["run", "--runs", "0", "--out", o],
            "invalid value '0' for '--runs <N>'",
        ),
        (
            &["run", "--lanes", "1024", "--out", o],
            "each lane samples on a core of its own",
        ),
        (
            &["run", "--out", "/proc/no/such/r.jsonl"],
            "cannot write results to /proc/no/such/r.jsonl",
        ),
        (
            &["run", "--plan", "nope", "--out", o],
            "no plan named 'nope'; plans: rustls-report",
        ),
        (
            &[
                "run",
                "--plan",
                "rustls-report",
                "--impl",
                "rustls-aws-lc",
                "--out",
                o,
            ],
            "cannot be used with",
        ),
    ];
    for (args, wants) in cases {
        let r = tlsmatrix(args);
        assert_clean_failure(&r, wants, &out);
        assert_eq!(r.status.code(), Some(2), "{args:?}");
        let lines: Vec<_> = stderr(&r)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(String::from)
            .collect();
        assert!(lines.len() <= 3, "{args:?}: {lines:?}");
    }
}

/// `tlsmatrix estimate` on the reference the repository ships (which must stay a new machine's
/// whole run) and this run's timings so far, after the first look and again once the stacks
/// are built; a missing file is one clear sentence.
#[test]
fn the_estimate_after_a_first_look_reads_the_shipped_reference() {
    let d = scratch("estimate");
    let now = d.join("timings.tsv");
    let reference = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scripts/reference-timings.tsv"
    );
    let estimate = |timings: &Path| {
        let r = tlsmatrix(&[
            "estimate",
            "--reference",
            reference,
            "--timings",
            timings.to_str().unwrap(),
        ]);
        let text = String::from_utf8_lossy(&r.stdout).to_string();
        (r, text)
    };
    let looked = "# epoch 5000.0\nbuild rust-workspace\t300.0\tbuilt\t5000.0\nfirst-look\t11.0\texit 0\t5300.0\n";
    std::fs::write(&now, looked).unwrap();
    let (r, text) = estimate(&now);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(text.starts_with("the rest, estimated: about "), "{text}");
    assert!(
        text.contains("scaled by this machine's workspace build (5 min 00 s against "),
        "{text}"
    );
    // Once the stacks are built, the rest is the counted and timed stages, scaled by the builds.
    std::fs::write(
        &now,
        format!("{looked}build driver-boringssl\t900.0\tbuilt\t5311.0\n"),
    )
    .unwrap();
    let (r, text) = estimate(&now);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(
        text.starts_with("the rest, estimated: about ")
            && text.contains(" min (counted stages ")
            && text.contains(
                "scaled by this machine's builds of the other stacks (15 min 00 s against "
            ),
        "{text}"
    );
    let (r, _) = estimate(&d.join("none.tsv"));
    assert_eq!(r.status.code(), Some(2));
    assert!(
        stderr(&r).contains("no timings of this run at"),
        "{}",
        stderr(&r)
    );
}

#[test]
fn run_writes_whole_records_with_real_versions_and_a_summary() {
    let d = scratch("run");
    let out = d.join("r.jsonl");
    let r = tlsmatrix(&[
        "run",
        "--impl",
        "openssl-3.0,rustls-aws-lc",
        "--scenario",
        "handshake-tls13-ecdsa-p256-x25519-full,bulk-tls12-aes-128-gcm-16k",
        "--runs",
        "3",
        "--warmup-ms",
        "10",
        "--sample-ms",
        "10",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(
        stdout.contains("in brackets times better than openssl-3.0"),
        "{stdout}"
    );
    assert!(
        stdout.contains("client hs/s") && stdout.contains("recv MB/s"),
        "{stdout}"
    );

    let text = std::fs::read_to_string(&out).unwrap();
    let records: Vec<Record> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // (4 pairs + the baseline's A/A copy) x (3 handshake metrics + 2 bulk metrics)
    assert_eq!(records.len(), 5 * 5);
    assert!(stdout.contains("noise floor"), "{stdout}");
    assert!(stdout.contains("memory weather (ns a load"), "{stdout}");
    let openssl_version = String::from_utf8_lossy(
        &Command::new("openssl")
            .arg("version")
            .output()
            .unwrap()
            .stdout,
    )
    .to_string();
    for rec in &records {
        assert_eq!(rec.schema, SCHEMA);
        // Paired: 3 passes of one round; the reference pair runs in each of the two groups
        // (rustls-aws-lc's and the A/A one), every other cell has a ratio to it per round,
        // each from its own block (process).
        let reference = rec.client == "openssl-3.0" && rec.server == "openssl-3.0";
        assert_eq!(rec.samples.len(), if reference { 6 } else { 3 }, "{rec:?}");
        assert_eq!(rec.blocks.len(), rec.samples.len());
        // The memory weather of each block the samples came from, read between passes.
        let mut blocks = rec.blocks.clone();
        blocks.dedup();
        let weather_blocks: Vec<u32> = rec.weather.iter().map(|w| w.block).collect();
        assert_eq!(weather_blocks, blocks, "{rec:?}");
        for w in &rec.weather {
            let (c, m) = (w.weather.cache_ns, w.weather.memory_ns);
            assert!(
                c.is_finite() && c > 0.0 && m.is_finite() && m > 0.0,
                "{w:?}"
            );
        }
        match &rec.paired {
            None => assert!(reference, "{rec:?}"),
            Some(p) => {
                assert_eq!(
                    (p.reference_client.as_str(), p.reference_server.as_str()),
                    ("openssl-3.0", "openssl-3.0")
                );
                assert_eq!(p.ratios.len(), 3);
                let mut blocks = p.blocks.clone();
                blocks.dedup();
                assert_eq!(blocks.len(), 3, "one block per pass: {rec:?}");
                assert!(p.ratios.iter().all(|r| r.is_finite() && *r > 0.0));
            }
        }
        assert!(rec.samples.iter().all(|v| v.is_finite() && *v > 0.0));
        assert!(
            rec.ci_low <= rec.median && rec.median <= rec.ci_high,
            "{rec:?}"
        );
        assert!(rec.env.cores >= 1 && !rec.env.timestamp.is_empty());
        for (name, version) in [
            (&rec.client, &rec.client_version),
            (&rec.server, &rec.server_version),
        ] {
            if name.starts_with("openssl-3.0") {
                assert!(version.starts_with("OpenSSL 3.0."), "{version}");
                assert!(
                    openssl_version.contains(version.as_str()),
                    "{version} vs {openssl_version}"
                );
            } else {
                assert!(version.starts_with("rustls 0.23."), "{version}");
            }
        }
    }
    let metrics: std::collections::BTreeSet<Metric> = records.iter().map(|r| r.metric).collect();
    assert_eq!(metrics.len(), 5);

    // A second run appends; nothing is overwritten.
    let r2 = tlsmatrix(&[
        "run",
        "--impl",
        "rustls-ring",
        "--scenario",
        "handshake-tls12-rsa-2048-p256-full",
        "--runs",
        "2",
        "--warmup-ms",
        "10",
        "--sample-ms",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r2.status.success(), "{}", stderr(&r2));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap().lines().count(),
        25 + 2 * 3
    );
}

/// Heap per connection with 100 connections alive, every impl as client and server: each
/// side is charged a positive amount under 1 MiB, and a side's figure does not depend on
/// its peer (the meter charges each call to the side that made it).
#[test]
fn memory_per_session_is_positive_below_a_mebibyte_and_per_side() {
    let d = scratch("memory");
    let out = d.join("m.jsonl");
    // The main driver's impls: every pair of them shares a process.
    let r = tlsmatrix(&[
        "run",
        "--impl",
        "rustls-aws-lc,rustls-ring,openssl-3.0",
        "--pairs",
        "all",
        "--scenario",
        "memory-tls13-ecdsa-p256-n100",
        "--runs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    let impls = ["rustls-aws-lc", "rustls-ring", "openssl-3.0"];
    assert_eq!(records.len(), impls.len() * impls.len() * 4);
    for rec in &records {
        for &v in &rec.samples {
            assert!(v > 0.0 && v < 1024.0 * 1024.0, "{rec:?}");
        }
    }
    let figure = |c: &str, s: &str, m: Metric| {
        records
            .iter()
            .find(|r| r.client == c && r.server == s && r.metric == m)
            .map(|r| r.median)
            .unwrap()
    };
    for imp in impls {
        let as_client: Vec<f64> = impls
            .iter()
            .map(|s| figure(imp, s, Metric::ClientHeapBytes))
            .collect();
        let as_server: Vec<f64> = impls
            .iter()
            .map(|c| figure(c, imp, Metric::ServerHeapBytes))
            .collect();
        // Within 5% whoever the peer is (a peer's certificate or key share differs in size
        // only by a few bytes).
        for side in [&as_client, &as_server] {
            for v in side.iter() {
                assert!((v / side[0] - 1.0).abs() < 0.05, "{imp}: {side:?}");
            }
        }
    }
}

/// A reader that stops early (`tlsmatrix list | head -1`) ends the listing quietly: here
/// the pipe is closed before the listing (which first asks every driver its version) writes.
#[test]
fn a_closed_pipe_ends_a_listing_without_a_panic() {
    use std::process::Stdio;
    let mut child = Command::new(bin())
        .arg("list")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

/// `list --metrics` prints the metric table, every row, each with its meaning.
#[test]
fn list_metrics_prints_the_metric_table() {
    let r = tlsmatrix(&["list", "--metrics", "--json"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let v: Vec<serde_json::Value> = serde_json::from_slice(&r.stdout).unwrap();
    let names: Vec<&str> = v.iter().map(|m| m["name"].as_str().unwrap()).collect();
    let table: Vec<&str> = Metric::ALL.iter().map(|m| m.as_str()).collect();
    assert_eq!(names, table);
    assert!(v.iter().all(|m| !m["about"].as_str().unwrap().is_empty()));
    let text = tlsmatrix(&["list", "--metrics"]);
    assert_eq!(
        String::from_utf8_lossy(&text.stdout).lines().count(),
        table.len() + 1
    );
}

#[test]
fn list_names_every_impl_with_its_version() {
    let r = tlsmatrix(&["list", "--json"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let impls = v["impls"].as_array().unwrap();
    let names: Vec<&str> = impls.iter().map(|i| i["name"].as_str().unwrap()).collect();
    let on_glibc: Vec<&str> = names.iter().copied().filter(|n| !n.contains('+')).collect();
    // `make build` builds every impl of the table, and each is what its row says.
    let table: Vec<&str> = impls::IMPLS.iter().map(|r| r.name).collect();
    assert_eq!(on_glibc, table);
    for i in impls.iter() {
        let name = i["name"].as_str().unwrap();
        let row = impls::row(name).unwrap_or_else(|| panic!("{name} has no row"));
        let version = i["version"].as_str().unwrap();
        assert!(impls::version_matches(name, version), "{name}: {version}");
        let driver = std::path::Path::new(i["driver"].as_str().unwrap());
        let file = driver.file_name().unwrap().to_str().unwrap();
        if !name.contains('+') {
            assert_eq!(file, row.driver, "{name}");
        }
    }
    // What is not built says how to get it.
    for n in v["not_built"].as_array().unwrap() {
        assert!(!n["how"].as_str().unwrap().is_empty(), "{n}");
    }
    assert!(impls
        .iter()
        .all(|i| !i["version"].as_str().unwrap().is_empty()));
    assert_eq!(v["default_suite"].as_array().unwrap().len(), 24);
    // Every impl of a Rust driver on each allocator, named and versioned so; Go allocates
    // from its own heap and has none.
    for i in impls.iter().filter(|i| i["allocator"] == "glibc") {
        let name = i["name"].as_str().unwrap();
        for a in ["jemalloc", "mimalloc"] {
            let variant = impls.iter().find(|v| v["name"] == format!("{name}+{a}"));
            // A build with symbols explains its system library on glibc's malloc only: its
            // process offers no other allocator.
            if !impls::row(name).unwrap().wraps_malloc || name.ends_with("+symbols") {
                assert!(variant.is_none(), "{name}+{a}");
                continue;
            }
            let variant = variant.unwrap_or_else(|| panic!("{name}+{a} is not listed"));
            assert_eq!(variant["allocator"], a);
            let version = variant["version"].as_str().unwrap();
            assert!(
                version.starts_with(i["version"].as_str().unwrap())
                    && version.contains(&format!(" + {a} ")),
                "{version}"
            );
        }
    }
    let s2n = impls.iter().find(|v| v["name"] == "s2n-tls").unwrap();
    assert!(
        s2n["version"]
            .as_str()
            .unwrap()
            .contains("(libs2n by clang "),
        "{s2n}"
    );
    let text = tlsmatrix(&["list"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("OpenSSL 3.0."));
    assert!(text.contains("openssl-3.0+jemalloc") && text.contains("[tlsmatrix-driver+mimalloc]"));
}

#[test]
fn every_command_explains_every_option() {
    for cmd in [
        &["--help"][..],
        &["run", "--help"],
        &["list", "--help"],
        &["history", "--help"],
        &["show", "--help"],
        &["compare", "--help"],
        &["import", "--help"],
        &["report", "--help"],
        &["interop", "--help"],
        &["peer", "--help"],
        &["wire", "--help"],
        &["estimate", "--help"],
    ] {
        let r = tlsmatrix(cmd);
        assert!(r.status.success());
        let help = String::from_utf8_lossy(&r.stdout);
        for line in help.lines().filter(|l| l.trim_start().starts_with("--")) {
            let described = line.split_whitespace().count() > 2;
            assert!(
                described || help.contains(line.trim()),
                "{cmd:?}: undocumented option: {line}"
            );
        }
    }
    let run_help = String::from_utf8_lossy(&tlsmatrix(&["run", "--help"]).stdout).to_string();
    for opt in [
        "--impl",
        "--scenario",
        "--runs",
        "--out",
        "--warmup-ms",
        "--sample-ms",
        "--cell-timeout",
        "--measure",
        "--db",
    ] {
        assert!(run_help.contains(opt), "{opt} missing from run --help");
    }
}

/// A driver that hangs is killed after the silence limit and its cell fails; the run goes on.
#[test]
fn a_hung_driver_fails_its_cell_within_the_limit() {
    let d = scratch("hang");
    fake_driver(&d, "rustls-ring", "rustls 0.0.0 (a hung fake)", "sleep 30");
    let out = d.join("r.jsonl");
    let started = std::time::Instant::now();
    let r = tlsmatrix_with(
        &d,
        &[
            "run",
            // The memory probe (a GiB where sysfs reports a 260 MiB cache) is no part of what
            // this times, and beside the other tests it once pushed the run past 15 s.
            "--no-weather",
            "--impl",
            "rustls-ring",
            "--scenario",
            "handshake-tls13-ecdsa-p256-x25519-full",
            "--runs",
            "1",
            "--cell-timeout",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(
        started.elapsed().as_secs() < 15,
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("timed out: the driver said nothing for 2 s"),
        "{}",
        stderr(&r)
    );
    assert!(String::from_utf8_lossy(&r.stdout).contains("FAILED"));
    // No figures; a line per cell (the pair and its A/A copy, which share the hung
    // process) saying which cell failed and why.
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    for line in text.lines() {
        assert!(
            line.contains("\"schema\":\"tlsmatrix.cell/1\"") && line.contains("timed out"),
            "{text}"
        );
    }
}

/// A driver whose `openssl-3.0` runs another OpenSSL is refused before anything is measured,
/// whether the impl was named or came from the default (every built impl).
#[test]
fn an_impl_running_the_wrong_library_version_is_refused() {
    let d = scratch("wrongver");
    fake_driver(&d, "openssl-3.0", "OpenSSL 3.6.0 1 Oct 2025", "exit 1");
    let out = d.join("r.jsonl");
    let o = out.to_str().unwrap();
    for args in [
        &["run", "--out", o][..],
        &["run", "--impl", "openssl-3.0", "--out", o],
    ] {
        let r = tlsmatrix_with(&d, args);
        assert_clean_failure(
            &r,
            "impl 'openssl-3.0' runs OpenSSL 3.6.0 1 Oct 2025, not the library its name promises",
            &out,
        );
        assert_eq!(r.status.code(), Some(2), "{args:?}");
    }
}

/// A driver listing an impl the impl table has no row for: `run` refuses to measure it,
/// since nothing says which library it must run.
#[test]
fn an_impl_without_a_row_is_not_measured() {
    let d = scratch("norow");
    fake_driver(&d, "nossl", "nossl 1.0", "exit 1");
    let out = d.join("r.jsonl");
    let r = tlsmatrix_with(
        &d,
        &["run", "--impl", "nossl", "--out", out.to_str().unwrap()],
    );
    assert_clean_failure(&r, "impl 'nossl' has no row in the impl table", &out);
    assert_eq!(r.status.code(), Some(2));
}

/// A run lands in the database one cell at a time; `history`, `show` and `compare` read it.
#[test]
fn runs_are_stored_and_read_back() {
    let d = scratch("history");
    let out = d.join("r.jsonl");
    let db = d.join("h.db");
    let args = |runs: &'static str| {
        vec![
            "run".to_string(),
            "--impl".into(),
            "rustls-ring".into(),
            "--scenario".into(),
            "handshake-tls13-ed25519-x25519-full".into(),
            "--runs".into(),
            runs.into(),
            "--warmup-ms".into(),
            "10".into(),
            "--sample-ms".into(),
            "10".into(),
            "--out".into(),
            out.to_str().unwrap().into(),
            "--db".into(),
            db.to_str().unwrap().into(),
        ]
    };
    for runs in ["3", "4"] {
        let a = args(runs);
        let r = tlsmatrix(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(r.status.success(), "{}", stderr(&r));
    }
    let db_s = db.to_str().unwrap();
    let h = tlsmatrix(&["history", "--db", db_s]);
    let text = String::from_utf8_lossy(&h.stdout).to_string();
    let ids: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{text}");
    let s = tlsmatrix(&["show", ids[1], "--db", db_s]);
    let shown = String::from_utf8_lossy(&s.stdout);
    assert!(
        s.status.success() && shown.contains("server hs/s"),
        "{shown}"
    );
    assert!(shown.contains("rustls 0.23."), "{shown}");
    // The blocks' memory weather comes back from the database with the records.
    assert!(shown.contains("memory weather (ns a load"), "{shown}");
    // Two runs of the same thing: matched figure by figure. A generous threshold keeps
    // machine noise from failing the test; the gate itself is tested in tests/report.rs.
    let c = tlsmatrix(&[
        "compare",
        ids[0],
        ids[1],
        "--db",
        db_s,
        "--threshold",
        "60%",
    ]);
    let ct = String::from_utf8_lossy(&c.stdout);
    assert_eq!(c.status.code(), Some(0), "{ct}{}", stderr(&c));
    // The pair and its A/A copy, each with a client and a server figure.
    assert!(ct.contains("4 figures:"), "{ct}");
    // Each run's memory weather, to read a moved factor against.
    assert!(
        ct.contains("base memory weather") && ct.contains("candidate memory weather"),
        "{ct}"
    );
    // The same run from the database and from the file agree.
    let f = tlsmatrix(&["compare", ids[1], out.to_str().unwrap(), "--db", db_s]);
    let ft = String::from_utf8_lossy(&f.stdout);
    assert!(ft.contains("4 same, 0 worse"), "{ft}");
}

/// The compiler axis, which neither `make report` nor `make test` builds (about 6 minutes
/// of a new machine's two cores): `make test-compilers` builds it and runs this. OpenSSL 3.6
/// with the rustls adapters beside it (aws-lc-rs and ring) built by clang too, saying so in
/// the version, and really compiled by it: the system's clang leaves its name in the binary's
/// .comment section, which gcc's build of the same sources lacks (the Rust toolchain's own
/// "clang version" is in both; the main driver has it too, from libs2n, which s2n-tls-sys
/// builds with clang whenever it can). The counted stages' fingerprint leaves its driver out:
/// listed, it would change the keys a first run took.
#[test]
#[ignore = "needs the compiler axis built: make test-compilers"]
fn the_compiler_axis_is_built_by_clang() {
    let r = tlsmatrix(&["list", "--json"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let impls = v["impls"].as_array().unwrap();
    for name in [
        "rustls-ring+clang",
        "openssl-3.6+clang",
        "rustls-ring+clang+jemalloc",
    ] {
        let v = impls
            .iter()
            .find(|v| v["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not listed"));
        assert!(
            v["version"].as_str().unwrap().contains("(C by clang "),
            "{v}"
        );
    }
    let comment = |driver: &str| {
        let o = Command::new("readelf")
            .args(["-p", ".comment"])
            .arg(bin().parent().unwrap().join(driver))
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert!(comment("tlsmatrix-driver-openssl-3.6-clang").contains("Debian clang version"));
    assert!(!comment("tlsmatrix-driver-openssl-3.6").contains("Debian clang version"));
    let o = Command::new(repo_script("fingerprint")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains("-clang"), "{text}");
}
