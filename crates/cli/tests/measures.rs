//! Every `--measure` but time, end to end with the real drivers: instruction counts, wire bytes and the delay proxy, allocator variants, OS counters and ceilings, profiles.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

use tlsmatrix_model::record::{Metric, Record};
use tlsmatrix_model::side::Side;

/// Three samples of instruction counts of `imp` with itself, in `handshake` and in TLS 1.3
/// AES-128-GCM bulk: the run succeeds and gives each side's figure, in order, every sample
/// within `spread(metric)` (a fraction) of its median.
fn counted(d: &Path, imp: &str, handshake: &str, spread: impl Fn(Metric) -> f64) -> Vec<Record> {
    let out = d.join("r.jsonl");
    let scenarios = format!("{handshake},bulk-tls13-aes-128-gcm-16k");
    let r = tlsmatrix(&[
        "run",
        "--measure",
        "instructions",
        "--impl",
        imp,
        "--scenario",
        &scenarios,
        "--runs",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let (split, records): (Vec<Record>, Vec<Record>) = result_records(&out)
        .into_iter()
        .partition(|r| r.metric.is_split());
    check_split(&split, &records, imp);
    let metrics: Vec<Metric> = records.iter().map(|r| r.metric).collect();
    assert_eq!(
        metrics,
        [
            Metric::ClientInstructions,
            Metric::ServerInstructions,
            Metric::SendInstrPerMib,
            Metric::RecvInstrPerMib
        ]
    );
    for rec in &records {
        assert_eq!((rec.client.as_str(), rec.server.as_str()), (imp, imp));
        assert_eq!(rec.samples.len(), 3);
        for v in &rec.samples {
            assert!(
                (v / rec.median - 1.0).abs() < spread(rec.metric),
                "{}: {:?}",
                rec.metric,
                rec.samples
            );
        }
    }
    records
}

/// A Rust driver splits each handshake side's count by what the code does: in every sample
/// the parts add up to the side's total, and the side's lock calls are a count. Every driver
/// counts each side's atomic read-modify-writes; the Go driver reads totals only, so those
/// are all it says beside them.
fn check_split(split: &[Record], totals: &[Record], imp: &str) {
    for side in [Side::Client, Side::Server] {
        let atomics = split
            .iter()
            .find(|r| r.metric == Metric::atomics_of(side))
            .unwrap_or_else(|| panic!("{imp} {side}: no atomics"));
        // Every stack takes some (a reference count, a once-guard) and none a million.
        assert!(
            atomics.samples.iter().all(|v| *v >= 1.0 && *v < 1e6),
            "{imp} {side}: {:?}",
            atomics.samples
        );
    }
    if imp == "go-crypto-tls" {
        let others: Vec<&Record> = split
            .iter()
            .filter(|r| !matches!(r.metric, Metric::ClientAtomics | Metric::ServerAtomics))
            .collect();
        assert!(others.is_empty(), "{others:?}");
        return;
    }
    for side in [Side::Client, Side::Server] {
        let (all, parts, locks) = Metric::split_of(side);
        let total = totals.iter().find(|r| r.metric == all).unwrap();
        let parts: Vec<&Record> = split.iter().filter(|r| parts.contains(&r.metric)).collect();
        assert_eq!(
            parts.len(),
            tlsmatrix_model::class::SPLIT_CLASSES,
            "{imp}: {all}'s parts"
        );
        for (i, v) in total.samples.iter().enumerate() {
            let sum: f64 = parts.iter().map(|p| p.samples[i]).sum();
            assert!(
                (sum - v).abs() <= 1e-9 * v,
                "{imp} {all}: parts {sum}, total {v}"
            );
        }
        let locks = split.iter().find(|r| r.metric == locks).unwrap();
        assert!(locks.samples.iter().all(|v| v.is_finite() && *v >= 0.0));
    }
}

/// Instruction counts under callgrind: deterministic enough to gate CI on. OpenSSL's RSA
/// server refreshes its blinding every 32 signatures, which a sample must average over.
#[test]
fn instruction_counts_repeat_from_sample_to_sample() {
    // Callgrind keeps a core busy for half a minute; beside it a ceiling's open samples ran
    // at 0.58 of their rate where its bulk samples did not (a receive share of 1.74, twice).
    let _alone = exclusive();
    let d = scratch("instr");
    // Every sample within 0.1% of the median, but the RSA server's: its sample of 32
    // handshakes makes one fresh blinding value, whose random draw and modular inverse are
    // data-dependent work (CI saw one sample 0.15% below the median; 0.3% still catches a
    // sample that counted one handshake more or less, 3%). The client is held to 0.3% too:
    // a fresh `make test` on 2026-12-07 saw its three samples 0.19% apart, once in seven
    // runs, its cause not yet found; the bulk figures stay at 0.1%.
    let records = counted(
        &d,
        "openssl-3.0",
        "handshake-tls13-rsa-2048-x25519-full",
        |m| {
            if matches!(m, Metric::ServerInstructions | Metric::ClientInstructions) {
                0.003
            } else {
                0.001
            }
        },
    );
    for rec in &records {
        // A TLS 1.3 RSA handshake side is millions of instructions; AES-GCM a few per byte.
        assert!(
            (1e5..1e9).contains(&rec.median),
            "{}: {}",
            rec.metric,
            rec.median
        );
    }
    // The run is in the database beside the results, marked as an instruction run.
    let db = d.join("tlsmatrix.db");
    let h = tlsmatrix(&["history", "--db", db.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&h.stdout);
    assert!(
        text.contains("complete") && text.contains("instructions"),
        "{text}"
    );
}

/// The Go driver counts its instructions too (Go assembly client requests, no cgo), close to
/// as steadily as the Rust drivers: its garbage collector starts cycles at points that vary
/// a little from sample to sample, so a sample stays within 2% of the median, not 0.1%.
#[test]
fn go_instruction_counts_are_steady_and_sane() {
    let _alone = exclusive();
    let d = scratch("instr-go");
    let records = counted(
        &d,
        "go-crypto-tls",
        "handshake-tls13-ecdsa-p256-x25519-full",
        |_| 0.02,
    );
    for rec in &records {
        assert!(
            rec.client_version.starts_with("Go go1."),
            "{}",
            rec.client_version
        );
        // A TLS 1.3 ECDSA handshake side is millions of instructions (rustls-aws-lc's
        // client 2.3 million, crypto/tls's 3.4); AES-GCM in 16 KiB records about 2.7 a byte.
        let sane = match rec.metric {
            Metric::ClientInstructions | Metric::ServerInstructions => 5e5..2e7,
            _ => 1e6..2e7,
        };
        assert!(sane.contains(&rec.median), "{}: {}", rec.metric, rec.median);
    }
}

/// A wire run stores each cell's figures and its trace; `wire` models them (an extra round
/// trip appears with a window too small for the server's flight); `wire --check` times real
/// connections through the delay proxy, whose median's interval reaches within 10% of the
/// model at a 20 ms RTT.
#[test]
fn wire_figures_are_stored_modelled_and_checked_over_a_socket() {
    let dir = scratch("wire");
    let (out, db) = (dir.join("wire.jsonl"), dir.join("db.sqlite"));
    let chain4 = "handshake-tls13-rsa-3072-x25519-full-chain4";
    let r = tlsmatrix(&[
        "run",
        "--measure",
        "wire",
        "--impl",
        "rustls-aws-lc,openssl-3.0,go-crypto-tls",
        "--scenario",
        &format!("handshake-tls13-ecdsa-p256-x25519-full,{chain4}"),
        "--runs",
        "3",
        "--warmup-ms",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    let traced: Vec<&Record> = records.iter().filter(|r| r.trace.is_some()).collect();
    // go-crypto-tls shares no driver with the others, so it is traced with itself only.
    assert_eq!(
        traced.len(),
        2 * 5,
        "a trace per cell: 2 scenarios x 5 pairs"
    );
    assert!(traced
        .iter()
        .all(|r| r.metric == Metric::PathCpuNs && r.samples.len() == 3));
    let ready = records
        .iter()
        .filter(|r| r.metric == Metric::ClientReadyRtts)
        .map(|r| r.median);
    assert!(ready.clone().count() == 10 && ready.into_iter().all(|v| v == 1.0));

    let model = |extra: &[&str]| {
        let mut args = vec!["wire", "--db", db.to_str().unwrap(), "--rtt", "30"];
        args.extend_from_slice(extra);
        let r = tlsmatrix(&args);
        assert!(r.status.success(), "{}", stderr(&r));
        String::from_utf8_lossy(&r.stdout).into_owned()
    };
    let normal = model(&[]);
    assert!(
        normal.contains("first byte @ 30 ms") && !normal.contains("(+1 RTT)"),
        "{normal}"
    );
    // The chain's server flight (about 5 KB) overflows 2 segments, the ECDSA one does not.
    let small = model(&["--initcwnd", "2"]);
    let stalled: Vec<&str> = small.lines().filter(|l| l.contains("(+1 RTT)")).collect();
    assert_eq!(stalled.len(), 5, "{small}");
    assert!(stalled.iter().all(|l| l.starts_with(chain4)), "{small}");

    let check = dir.join("proxy-check.json");
    let _alone = exclusive();
    // Tests running beside this one on two cores can only slow the proxy's threads, never
    // speed them: a check too slow is taken again (up to three times), one too fast fails at
    // once. The model must agree within 10% with the interval of the median (a fresh `make
    // test` once measured 45.1 ms, interval 42.8-50.6, against 40.3 modelled; another, with
    // the ceiling loops beside it, 49.7, interval 46.5-56.2).
    let mut rows = Vec::new();
    for _ in 0..3 {
        let r = tlsmatrix(&[
            "wire",
            "--check",
            "--impl",
            "rustls-aws-lc",
            "--rtt",
            "20",
            "--runs",
            "6",
            "--scenario",
            "handshake-tls13-ecdsa-p256-x25519-full",
            "--out",
            check.to_str().unwrap(),
        ]);
        assert!(r.status.success(), "{}", stderr(&r));
        let written = tlsmatrix_history::proxy_check::read(&check)
            .unwrap()
            .unwrap();
        let row = written.rows[0].clone();
        // Two round trips of 20 ms: the delay alone sets the floor.
        assert!(row.measured_ms >= 40.0 && row.model_ms >= 40.0, "{row:?}");
        assert!(row.measured_ms >= row.model_ms * 0.95, "{row:?}");
        let agrees = row.measured_low_ms <= row.model_ms * 1.10;
        rows.push(row);
        if agrees {
            return;
        }
    }
    panic!("the model never agreed with the measurement: {rows:?}");
}

/// An allocator variant moves every allocation of its process: a block from each library's
/// own C allocation call, and one from Rust's allocator, is found in that allocator's own
/// bookkeeping and in no other's. A misspelt allocator stops the driver before it runs.
#[test]
fn an_allocator_variant_routes_rust_and_c_allocations_through_that_allocator() {
    let driver = bin().parent().unwrap().join("tlsmatrix-driver");
    for a in ["glibc", "jemalloc", "mimalloc"] {
        let out = Command::new(&driver)
            .arg("allocations")
            .env("TLSMATRIX_ALLOCATOR", a)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let calls: Vec<&str> = lines.iter().map(|l| l["impl"].as_str().unwrap()).collect();
        // OpenSSL (the system's shared libssl) and aws-lc (static) both ask.
        for needed in ["rust", "openssl-3.0", "rustls-aws-lc", "s2n-tls"] {
            assert!(calls.contains(&needed), "{a}: {calls:?}");
        }
        for l in &lines {
            assert_eq!(l["owners"], serde_json::json!([a]), "{a}: {l}");
        }
    }
    let bad = Command::new(&driver)
        .arg("info")
        .env("TLSMATRIX_ALLOCATOR", "tcmalloc")
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("'tcmalloc' is not an allocator"),
        "{}",
        stderr(&bad)
    );
    // A variant name in a process on another allocator is refused, not measured.
    let d = scratch("allocator-mismatch");
    let wrong = Command::new(&driver)
        .args(["run", "--scenario", "bulk-tls13-aes-128-gcm-16k"])
        .args([
            "--client",
            "rustls-ring+jemalloc",
            "--server",
            "rustls-ring+jemalloc",
        ])
        .arg("--certs")
        .arg(d.join("certs"))
        .env("TLSMATRIX_ALLOCATOR", "mimalloc")
        .output()
        .unwrap();
    assert!(!wrong.status.success());
    assert!(
        String::from_utf8_lossy(&wrong.stdout).contains("allocates with mimalloc"),
        "{}",
        String::from_utf8_lossy(&wrong.stdout)
    );
}

/// `--measure counters`: per-side page faults and context switches, present for every side,
/// never negative, stored like any figure; `--measure ceiling`: each library's own AEAD on
/// the bulk records, positive and above what its TLS stack reaches (no stack can out-run
/// its own cipher by more than the noise).
#[test]
fn counters_and_ceilings_are_measured_and_sane() {
    let _alone = exclusive();
    let d = scratch("counters");
    counters_hold(&d);
    ceilings_hold(&d);
}

/// Every side's OS counters of a bulk and a handshake cell, finite and never negative.
fn counters_hold(d: &std::path::Path) {
    let out = d.join("counters.jsonl");
    let r = tlsmatrix(&[
        "run",
        "--measure",
        "counters",
        "--impl",
        "rustls-ring,openssl-3.0+jemalloc",
        "--scenario",
        "bulk-tls13-aes-128-gcm-16k,handshake-tls13-ecdsa-p256-x25519-full",
        "--runs",
        "2",
        "--pairs",
        "self",
        // Two cells at once, each pinned to its own core; every cell still lands whole.
        "--lanes",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    for imp in ["rustls-ring", "openssl-3.0+jemalloc"] {
        for m in [
            Metric::SendPageFaultsPerMib,
            Metric::RecvPageFaultsPerMib,
            Metric::SendContextSwitchesPerMib,
            Metric::RecvContextSwitchesPerMib,
            Metric::ClientPageFaults,
            Metric::ServerPageFaults,
            Metric::ClientContextSwitches,
            Metric::ServerContextSwitches,
            Metric::SendColdBlocksPerMib,
            Metric::RecvColdBlocksPerMib,
        ] {
            let rec = records
                .iter()
                .find(|x| x.client == imp && x.metric == m)
                .unwrap_or_else(|| panic!("{imp} has no {m}"));
            assert!(
                rec.samples.iter().all(|v| v.is_finite() && *v >= 0.0),
                "{imp} {m}: {:?}",
                rec.samples
            );
        }
    }
}

/// Each library's own AEAD: positive, one library with itself, and no stack above it beyond
/// the noise; the run imported stays a ceiling run.
fn ceilings_hold(d: &std::path::Path) {
    let out = d.join("ceiling.jsonl");
    let r = tlsmatrix(&[
        "run",
        "--measure",
        "ceiling",
        "--impl",
        "rustls-aws-lc,rustls-ring,openssl-3.0,s2n-tls",
        "--scenario",
        "bulk-tls13-aes-256-gcm-16k,bulk-tls13-aes-128-gcm-16k",
        // Five turns: with three, one noisy 20 ms turn on a shared machine once put a
        // stack's median share at 1.31 of its own AEAD (openssl-3.0's receive).
        "--runs",
        "5",
        "--sample-ms",
        "20",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    for imp in ["rustls-aws-lc", "rustls-ring", "openssl-3.0", "s2n-tls"] {
        for scenario in ["bulk-tls13-aes-256-gcm-16k", "bulk-tls13-aes-128-gcm-16k"] {
            for m in [
                Metric::SealMbPerS,
                Metric::OpenMbPerS,
                Metric::CopyMbPerS,
                Metric::AliasedCopyMbPerS,
            ] {
                let rec = records
                    .iter()
                    .find(|x| {
                        x.client == imp
                            && x.server == imp
                            && x.scenario == scenario
                            && x.metric == m
                    })
                    .unwrap_or_else(|| panic!("{imp} {scenario}: no {m}"));
                // Between 100 MB/s and 1 TB/s: an AEAD that did nothing, or one timed
                // around nothing, lands outside.
                assert!(
                    rec.median > 100.0 && rec.median < 1e6,
                    "{imp} {scenario} {m}: {}",
                    rec.median
                );
            }
        }
    }
    assert!(
        records.iter().all(|x| x.client == x.server),
        "a ceiling is one library with itself"
    );
    // The stack's rates over its own AEAD's, taken in turns: a stack may not out-run its
    // cipher by more than the noise, and spends some of its time on it. A share outside is
    // measured again, alone: once (2.04, s2n-tls's receive) a shared machine's slow spell
    // outlasted all five turns of one cell, and a real fault repeats where that does not.
    let sane = |r: &Record| r.median > 0.05 && r.median < 1.3;
    for m in [Metric::SendShareOfSeal, Metric::RecvShareOfOpen] {
        for r in records.iter().filter(|x| x.metric == m && !sane(x)) {
            let again = d.join(format!("ceiling-again-{}.jsonl", r.client));
            let o = tlsmatrix(&[
                "run",
                "--measure",
                "ceiling",
                "--impl",
                &r.client,
                "--scenario",
                &r.scenario,
                "--runs",
                "5",
                "--sample-ms",
                "20",
                "--out",
                again.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
            let rerun = result_records(&again);
            let share = rerun
                .iter()
                .find(|x| x.metric == m)
                .expect("the share again");
            assert!(
                sane(share),
                "{} {} {m}: {}, then {}",
                r.client,
                r.scenario,
                r.median,
                share.median
            );
        }
        assert_eq!(records.iter().filter(|x| x.metric == m).count(), 8);
    }
    // Imported (as shards are merged), the run is still a ceiling run, not a timed one a
    // report could take for its main run.
    let db = d.join("imported.db");
    let db = db.to_str().unwrap();
    let r = tlsmatrix(&["import", out.to_str().unwrap(), "--db", db]);
    assert!(r.status.success(), "{}", stderr(&r));
    let h = tlsmatrix(&["history", "--db", db]);
    let text = String::from_utf8_lossy(&h.stdout);
    assert!(
        text.contains("ceiling") && !text.contains(" time "),
        "{text}"
    );
}

/// `--measure profile`: perf samples charged to each side's calls add up to the side's
/// whole time, put a bulk transfer's time mostly in its cipher, and tell a workload that
/// allocates per write (1 KiB writes: a record buffer each) from one that rarely does.
#[test]
fn profiles_split_each_sides_time_and_see_allocation_per_record() {
    let _alone = exclusive();
    let d = scratch("profile");
    let out = d.join("profile.jsonl");
    let (k1, k16) = ("bulk-tls13-aes-128-gcm-1k", "bulk-tls13-aes-128-gcm-16k");
    let r = tlsmatrix(&[
        "run",
        "--measure",
        "profile",
        "--impl",
        "rustls-ring,openssl-3.0",
        "--scenario",
        &format!("{k1},{k16}"),
        "--runs",
        "4",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    let share = |scenario: &str, m: Metric| {
        records
            .iter()
            .find(|x| x.client == "rustls-ring" && x.scenario == scenario && x.metric == m)
            .unwrap_or_else(|| panic!("{scenario}: no {m}"))
    };
    for scenario in [k1, k16] {
        for side in [Metric::SEND_PROFILE, Metric::RECV_PROFILE] {
            for k in 0..4 {
                let total: f64 = side.iter().map(|m| share(scenario, *m).samples[k]).sum();
                assert!((total - 1.0).abs() < 1e-9, "{scenario} {side:?}: {total}");
            }
            assert!(
                share(scenario, side[0]).median > 0.2,
                "{scenario}: {} in the cipher",
                share(scenario, side[0]).median
            );
        }
    }
    // rustls allocates a record buffer per write: per byte, 16 times as often in 1 KiB writes.
    // Few profile samples land there at 16 KiB (0.6-1.5% of them), so the share is noisy: four
    // quiet runs of two profiles each put 1 KiB at 2.4-8x; under the other tests' load, one
    // fell below 2x. Four profiles each and 1.5x still tell per-write from per-byte costs.
    let alloc = |s| share(s, Metric::SendAllocShare).median;
    assert!(
        alloc(k1) > 1.5 * alloc(k16),
        "{} vs {}",
        alloc(k1),
        alloc(k16)
    );
    // The system OpenSSL is measured, or unsupported because perf cannot name its functions
    // (Debian ships libcrypto without a symbol table); never failed.
    let db = d.join("tlsmatrix.db");
    let h = tlsmatrix(&["show", "latest", "--db", db.to_str().unwrap(), "-v"]);
    let text = String::from_utf8_lossy(&h.stdout);
    let openssl_measured = records.iter().any(|x| x.client == "openssl-3.0");
    assert!(
        openssl_measured || text.contains("could not name the functions"),
        "{text}"
    );
    assert!(!text.contains("FAILED"), "{text}");
}

/// A peer of ours that cannot play a case exits at once with an `unsupported:` line; the cell
/// ends then, without the grace a failing side gets for the other to tell its story.
#[test]
fn an_unsupported_side_ends_its_cell_at_once() {
    let d = scratch("interop-unsupported");
    let out = d.join("i.jsonl");
    // s2n-tls takes named policies only, and none offers the TLS 1.2 case's one suite.
    let r = tlsmatrix(&[
        "interop",
        "--peer",
        "s2n-tls,rustls-ring",
        "--case",
        "tls12",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 4);
    for l in lines.iter().filter(|l| l["client"] == "s2n-tls") {
        assert_eq!(l["outcome"], "unsupported", "{l}");
        // The grace is 1 s; the cell took 1.05 s with it and 0.05 s without.
        assert!(l["seconds"].as_f64().unwrap() < 0.5, "{l}");
    }
}
