//! Where a handshake's time goes. `--measure floor`: each handshake against its library's own
//! crypto for the operations each side must perform, and the driver's per-operation table
//! checked against `openssl speed`; and what one server context shared by several threads
//! costs (`--measure contention`, `tlsmatrix-driver contention`).

mod common;

use std::process::Command;

use common::*;
use tlsmatrix_model::class::Class;
use tlsmatrix_model::record::{Metric, Record};
use tlsmatrix_model::side::Side;

fn find<'a>(records: &'a [Record], scenario: &str, imp: &str, m: Metric) -> Option<&'a Record> {
    records
        .iter()
        .find(|r| r.scenario == scenario && r.client == imp && r.server == imp && r.metric == m)
}

/// Every floor is positive, no floor is above its handshake beyond the run's noise, the three
/// parts add up to the floor in every sample, a resumption has no signature part.
#[test]
fn floors_sit_below_their_handshakes_and_add_up() {
    let _alone = exclusive();
    let imps = [
        "rustls-aws-lc",
        "rustls-ring",
        "openssl-3.0",
        "s2n-tls",
        "go-crypto-tls",
        "gnutls",
        "nss",
    ];
    let full = "handshake-tls13-ecdsa-p256-x25519-full";
    let resumed = "handshake-tls13-ecdsa-p256-x25519-ticket";
    let records = floor_run("crypto-floor", &imps, &[full, resumed], SHORT);
    // Go's driver times the list the runner hands it (--floor-ops), as the others may.
    floors_hold(&records, &imps, &[full, resumed], 1.0);
    for imp in imps {
        let signatures = find(&records, resumed, imp, Metric::ClientFloorSigNs);
        assert!(signatures.is_none(), "{imp}: a resumption verifies nothing");
    }
}

/// Samples of a floor run: how many, and each one's ms.
struct Sampling {
    runs: u32,
    sample_ms: u32,
}

/// Four samples of 40 ms: enough where the floor is well below the handshake.
const SHORT: Sampling = Sampling {
    runs: 4,
    sample_ms: 40,
};

/// `tlsmatrix run --measure floor` of `imps` on `scenarios` with `sampling`, in a scratch
/// folder named `name`; its records.
fn floor_run(name: &str, imps: &[&str], scenarios: &[&str], sampling: Sampling) -> Vec<Record> {
    let out = scratch(name).join("floor.jsonl");
    let r = tlsmatrix(&[
        "run",
        "--measure",
        "floor",
        "--impl",
        &imps.join(","),
        "--scenario",
        &scenarios.join(","),
        "--runs",
        &sampling.runs.to_string(),
        "--warmup-ms",
        "50",
        "--sample-ms",
        &sampling.sample_ms.to_string(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    result_records(&out)
}

/// What every floor must be, in `records`: positive, its parts adding up sample by sample,
/// and not above `ceiling` times its handshake beyond the run's noise (the interval's low end
/// at most `ceiling`).
fn floors_hold(records: &[Record], imps: &[&str], scenarios: &[&str], ceiling: f64) {
    for &imp in imps {
        for &scenario in scenarios {
            for side in [Side::Client, Side::Server] {
                let (total, parts) = Metric::floor_of(side);
                let get = |m: Metric| find(records, scenario, imp, m).map(|r| r.median);
                let floor = get(total).unwrap_or_else(|| panic!("{imp} {scenario}: no floor"));
                assert!(floor.is_finite() && floor > 1e3, "{imp} {side}: {floor} ns");
                // Sample by sample (medians of parts need not add up to the total's).
                let totals = &find(records, scenario, imp, total).unwrap().samples;
                for (i, t) in totals.iter().enumerate() {
                    let sum: f64 = parts
                        .iter()
                        .filter_map(|&m| find(records, scenario, imp, m))
                        .map(|r| r.samples[i])
                        .sum();
                    assert!(
                        (sum - t).abs() <= 1e-6 * t,
                        "{imp} {scenario} {side} sample {i}: parts {sum} against {t}"
                    );
                }
                let share = find(records, scenario, imp, Metric::floor_share_of(side)).unwrap();
                assert!(
                    share.ci_low <= ceiling && share.median > 0.2,
                    "{imp} {scenario} {side}: the floor is {:.2} of the handshake [{:.2}-{:.2}], \
                     samples {:.2?}",
                    share.median,
                    share.ci_low,
                    share.ci_high,
                    share.samples
                );
            }
        }
    }
}

/// The libssl drivers' libraries have floors too: BoringSSL, AWS-LC and OpenSSL 3.5 for a
/// hybrid group (OpenSSL's as one provider KEM, the others' from their halves) and ML-DSA;
/// wolfSSL and Mbed TLS through their glue.
#[test]
fn floors_of_the_libssl_drivers_sit_below_their_handshakes() {
    let _alone = exclusive();
    let classical = "handshake-tls13-ecdsa-p256-x25519-full";
    let hybrid = "handshake-tls13-mldsa65-x25519mlkem768-full";
    let imps = ["boringssl", "aws-lc", "openssl-3.5", "wolfssl", "mbedtls"];
    let sampling = Sampling {
        runs: 8,
        sample_ms: 80,
    };
    let records = floor_run("crypto-floor-libssl", &imps, &[classical, hybrid], sampling);
    floors_hold(&records, &imps[..4], &[classical], 1.0);
    // Mbed TLS's handshake is almost all crypto (X25519 alone takes 1 ms an operation): its
    // floor was 0.96 to 0.99 of each side's time in three runs here with eight 80 ms samples
    // (the others' 0.54 to 0.80), and four 40 ms samples put it either side of 1 (0.79 to
    // 1.04 in three runs here, 1.40 [1.11-1.54] once on CI). Against 1.0 the check reads the
    // machine's weather, not the floor; 1.25 still catches an operation counted twice.
    floors_hold(&records, &["mbedtls"], &[classical], 1.25);
    floors_hold(&records, &imps[..3], &[hybrid], 1.0);
}

/// Operations per second from `openssl speed`'s table line that starts with `label`, in
/// the column `col` (0: sign/op, 1: verify).
fn speed_per_s(text: &str, label: &str, col: usize) -> f64 {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no '{label}' in {text}"));
    let rates: Vec<f64> = line
        .split_whitespace()
        .filter(|w| !w.ends_with('s') && w.contains('.'))
        .filter_map(|w| w.parse().ok())
        .collect();
    rates[col]
}

/// The driver's µs for one operation of one side.
fn floor_us(text: &str, side: &str, op: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(side) && l.contains(op))
        .and_then(|l| l.split_whitespace().rev().nth(1)?.parse().ok())
        .unwrap_or_else(|| panic!("no {side} '{op}' in {text}"))
}

/// The system OpenSSL's floor operations agree with its own `openssl speed` within 25% where
/// speed times the same operation: ECDSA P-256 signing and verifying, P-256 ECDH and RSA-2048
/// signing. (X25519 is not compared: speed times the derivation with the peer's key read once,
/// the floor reads the peer's share each time, as a handshake must.)
#[test]
fn openssl_floor_operations_agree_with_openssl_speed() {
    let _alone = exclusive();
    let certs = scratch("floor-speed").join("certs");
    let driver = |scenario: &str| {
        let o = Command::new(release_dir().join("tlsmatrix-driver"))
            .args(["floor", "--impl", "openssl-3.0", "--scenario", scenario])
            .args(["--certs", certs.to_str().unwrap(), "--ms", "600"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    // (what, floor µs, openssl speed µs) of each operation, one look.
    let look = || -> Vec<(&'static str, f64, f64)> {
        let speed = Command::new("openssl")
            .args(["speed", "-seconds", "1", "ecdsap256", "ecdhp256", "rsa2048"])
            .output()
            .unwrap();
        let speed = String::from_utf8(speed.stdout).unwrap();
        let ecdsa = driver("handshake-tls13-ecdsa-p256-p256-full");
        let rsa = driver("handshake-tls13-rsa-2048-x25519-full");
        [
            (
                "ECDSA P-256 sign",
                floor_us(&ecdsa, "server", "ecdsa-p256 sign"),
                speed_per_s(&speed, "256 bits ecdsa", 0),
            ),
            (
                "ECDSA P-256 verify",
                floor_us(&ecdsa, "client", "ecdsa-p256 verify"),
                speed_per_s(&speed, "256 bits ecdsa", 1),
            ),
            (
                "P-256 ECDH",
                floor_us(&ecdsa, "client", "p256 client secret"),
                speed_per_s(&speed, "256 bits ecdh", 0),
            ),
            (
                "RSA-2048 sign",
                floor_us(&rsa, "server", "rsa-2048 sign"),
                speed_per_s(&speed, "rsa 2048 bits", 0),
            ),
        ]
        .map(|(what, floor, per_s)| (what, floor, 1e6 / per_s))
        .to_vec()
    };
    // Timings on a shared machine, taken one after the other: each figure is the fastest of
    // up to five looks (the least disturbed), and the two must agree within 25%. This is a
    // sanity check that the floor times the operation the library's own tool times (a wrong
    // operation or a lost factor is off by 2x or more), not a comparison: the two are not
    // taken in turns, and on a quiet 2-core AMD EPYC VM single looks of ECDSA verify went from
    // -14% to +12% of speed's, the signature sat at +22% over several looks, and the fastest
    // of three once put verify at -20% and P-256 ECDH at -18% (a make test here).
    let mut best = look();
    let disagree = |best: &[(&str, f64, f64)]| -> Vec<String> {
        best.iter()
            .filter_map(|(what, floor, speed_us)| {
                let off = floor / speed_us - 1.0;
                (off.abs() > 0.25).then(|| {
                    format!(
                        "{what}: floor {floor:.2} µs, speed {speed_us:.2} µs ({:+.0}%)",
                        100.0 * off
                    )
                })
            })
            .collect()
    };
    for _ in 0..4 {
        if disagree(&best).is_empty() {
            break;
        }
        for (b, n) in best.iter_mut().zip(look()) {
            b.1 = b.1.min(n.1);
            b.2 = b.2.min(n.2);
        }
    }
    let off = disagree(&best);
    assert!(off.is_empty(), "the fastest of five looks: {off:?}");
}

/// `tlsmatrix-driver contention`: a shared server context on one and two threads gives a
/// positive rate per thread count and a count of blocking waits, for each adapter family of
/// the main driver.
#[test]
fn a_shared_context_is_measured_on_several_threads() {
    let _alone = exclusive();
    let certs = scratch("contention").join("certs");
    let run = |imp: &str| {
        Command::new(release_dir().join("tlsmatrix-driver"))
            .args(["contention", "--impl", imp])
            .args(["--scenario", "handshake-tls13-ecdsa-p256-x25519-full"])
            .args([
                "--certs",
                certs.to_str().unwrap(),
                "--threads",
                "1,2",
                "--ms",
                "200",
            ])
            .output()
            .unwrap()
    };
    for imp in ["rustls-aws-lc", "openssl-3.0", "gnutls", "nss"] {
        let o = run(imp);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8(o.stdout).unwrap();
        let rows: Vec<Vec<f64>> = text
            .lines()
            .filter_map(|l| l.split_whitespace().map(|w| w.parse().ok()).collect())
            .collect();
        assert_eq!(rows.len(), 2, "{text}");
        for (row, threads) in rows.iter().zip([1.0, 2.0]) {
            let [n, rate, per_thread, scaling, waits, preempted] = row[..] else {
                panic!("{text}")
            };
            assert_eq!(n, threads);
            assert!(
                rate > 100.0 && (per_thread * n - rate).abs() < 0.01 * rate,
                "{text}"
            );
            assert!(scaling > 0.2 && scaling < 1.5, "{text}");
            assert!((0.0..5.0).contains(&waits) && preempted >= 0.0, "{text}");
        }
    }
}

/// `--measure contention`: each impl with itself, alone on the machine; rates positive,
/// scaling a fraction, waits counted (zero allowed); a driver that measures no shared context
/// (Go's) says why.
#[test]
fn contention_runs_record_rates_scaling_and_waits() {
    let _alone = exclusive();
    let d = scratch("contention-run");
    let out = d.join("contention.jsonl");
    let r = tlsmatrix(&[
        "run",
        "--measure",
        "contention",
        "--impl",
        "rustls-aws-lc,openssl-3.0,gnutls,go-crypto-tls",
        "--runs",
        "2",
        "--sample-ms",
        "100",
        "--warmup-ms",
        "30",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    for imp in ["rustls-aws-lc", "openssl-3.0", "gnutls"] {
        let get = |m: Metric| {
            records
                .iter()
                .find(|x| x.client == imp && x.server == imp && x.metric == m)
                .unwrap_or_else(|| panic!("{imp}: no {m}"))
                .median
        };
        assert!(get(Metric::Contention1PerS) > 100.0);
        for m in [Metric::Contention2Scaling, Metric::Contention8Scaling] {
            assert!((0.2..1.5).contains(&get(m)), "{imp} {m}: {}", get(m));
        }
        for m in [Metric::Contention2Waits, Metric::Contention8Waits] {
            assert!((0.0..5.0).contains(&get(m)), "{imp} {m}: {}", get(m));
        }
    }
    let cells = json_lines(&out);
    let go = cells
        .iter()
        .find(|l| l["client"] == "go-crypto-tls" && l["outcome"] == "unsupported")
        .unwrap_or_else(|| panic!("go-crypto-tls says why not: {cells:?}"));
    assert!(
        go["reason"].as_str().unwrap().contains("shared context"),
        "{go}"
    );
}

/// `--measure profile` on a handshake: each side's perf samples, classed as the instruction
/// split classes functions, are shares that sum to one in every sample; rustls on aws-lc
/// spends most of a full ECDSA handshake in its cryptography on both sides and names nearly
/// all its code; the system OpenSSL (a stripped libcrypto) is measured too, its unnamed code
/// a part of its own, never refused or failed.
#[test]
fn a_handshake_profile_splits_each_sides_time_into_parts_that_sum_to_one() {
    let _alone = exclusive();
    let out = scratch("handshake-profile").join("profile.jsonl");
    let scenario = "handshake-tls13-ecdsa-p256-x25519-full";
    let r = tlsmatrix(&[
        "run",
        "--measure",
        "profile",
        "--impl",
        "rustls-aws-lc,openssl-3.0",
        "--scenario",
        scenario,
        "--runs",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    for imp in ["rustls-aws-lc", "openssl-3.0"] {
        for side in [Side::Client, Side::Server] {
            let parts: Vec<&Record> = Metric::time_split_of(side)
                .into_iter()
                .map(|m| {
                    find(&records, scenario, imp, m)
                        .unwrap_or_else(|| panic!("{imp} {side}: no {m}"))
                })
                .collect();
            for k in 0..3 {
                let sum: f64 = parts.iter().map(|r| r.samples[k]).sum();
                assert!((sum - 1.0).abs() < 1e-9, "{imp} {side} sample {k}: {sum}");
                assert!(parts.iter().all(|r| (0.0..=1.0).contains(&r.samples[k])));
            }
            if imp == "rustls-aws-lc" {
                let crypto = parts[0].median;
                let unnamed = parts[5].median;
                assert!(crypto > 0.5, "{imp} {side}: {crypto} in its cryptography");
                assert!(unnamed < 0.05, "{imp} {side}: {unnamed} unnamed");
            }
            // The floor's own operations, split by the same classes in the same samples.
            let floor: Vec<&Record> = Metric::floor_split_of(side)
                .into_iter()
                .map(|m| {
                    find(&records, scenario, imp, m)
                        .unwrap_or_else(|| panic!("{imp} {side}: no {m}"))
                })
                .collect();
            for k in 0..3 {
                let sum: f64 = floor.iter().map(|r| r.samples[k]).sum();
                assert!(
                    (sum - 1.0).abs() < 1e-9,
                    "{imp} {side} floor sample {k}: {sum}"
                );
            }
            if imp == "rustls-aws-lc" {
                // A floor is cryptography through the library's API: mostly crypto, and
                // rustls's provider has no provider layer.
                let crypto = floor[Class::Crypto.time_index()].median;
                let layer = floor[Class::Provider.time_index()].median;
                assert!(crypto > 0.6, "{imp} {side}: floor {crypto} in cryptography");
                assert_eq!(
                    layer, 0.0,
                    "{imp} {side}: floor {layer} in a provider layer"
                );
            }
        }
    }
}

/// Each stripped system library (OpenSSL 3.0, wolfSSL) and its rebuild with symbols (`make
/// companions`, which `make test` runs for both), counted in one run: each side's total within
/// 2% (the same code), and the rebuild names what the system's leaves unnamed; OpenSSL's names
/// its provider layer and the locks the layer takes, wolfSSL has no such layer.
#[test]
fn each_stripped_library_and_its_build_with_symbols_run_the_same_code() {
    let _alone = exclusive();
    let out = scratch("companion").join("companion.jsonl");
    let scenario = "handshake-tls13-ecdsa-p256-x25519-full";
    let r = tlsmatrix(&[
        "run",
        "--measure",
        "instructions",
        "--impl",
        "openssl-3.0,openssl-3.0+symbols,wolfssl,wolfssl+symbols",
        "--pairs",
        "self",
        "--scenario",
        scenario,
        "--runs",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    let get = |imp: &str, m: Metric| {
        find(&records, scenario, imp, m)
            .unwrap_or_else(|| panic!("{imp}: no {m}"))
            .median
    };
    for system in ["openssl-3.0", "wolfssl"] {
        let companion = format!("{system}+symbols");
        let version = &records
            .iter()
            .find(|r| r.client == companion)
            .unwrap()
            .client_version;
        assert!(version.contains("rebuilt with symbols"), "{version}");
        for side in [Side::Client, Side::Server] {
            let (total, _, locks) = Metric::split_of(side);
            let unnamed = Class::Unnamed.row().instructions.unwrap()[side.index()];
            let layer = Class::Provider.row().instructions.unwrap()[side.index()];
            let (plain, named) = (get(system, total), get(&companion, total));
            assert!(
                (named / plain - 1.0).abs() < 0.02,
                "{system} {side}: {named} instructions with symbols, {plain} without"
            );
            assert!(get(system, unnamed) > 0.3 * plain, "{system} {side}: named");
            assert!(
                get(&companion, unnamed) < 0.01 * named,
                "{companion} {side}"
            );
            if system == "wolfssl" {
                assert_eq!(get(&companion, layer), 0.0, "{companion} {side}: a layer");
                continue;
            }
            assert!(
                get(&companion, layer) > 0.05 * named,
                "{companion} {side}: layer"
            );
            let (layer_locks, _) = Metric::provider_locks_of(side);
            let (taken, for_layer) = (get(&companion, locks), get(&companion, layer_locks));
            assert!(
                for_layer > 0.0 && for_layer <= taken + 1e-9,
                "{side}: {for_layer} of {taken} lock calls for the layer"
            );
        }
    }
}

/// A driver asked for a build with symbols refuses with a sentence unless the runner
/// started it on the companion's folder and the loader took the library from there.
#[test]
fn a_build_with_symbols_runs_only_where_it_was_loaded() {
    let certs = scratch("companion-refusal");
    let driver = release_dir().join("tlsmatrix-driver");
    let run = |env: &[(&str, String)]| {
        let mut cmd = Command::new(&driver);
        cmd.args([
            "run",
            "--scenario",
            "handshake-tls13-ecdsa-p256-x25519-full",
        ])
        .args([
            "--client",
            "openssl-3.0+symbols",
            "--server",
            "openssl-3.0+symbols",
        ])
        .arg("--certs")
        .arg(&certs)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("TLSMATRIX_COMPANION_LIB");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let o = cmd.output().unwrap();
        assert!(!o.status.success());
        // The driver's error message, on its protocol's stdout.
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let said = run(&[]);
    assert!(said.contains("TLSMATRIX_COMPANION_LIB"), "{said}");
    // The folder named but the loader never told: the system's library is refused.
    let folder = release_dir().join("companions/openssl-3.0");
    let said = run(&[("TLSMATRIX_COMPANION_LIB", folder.display().to_string())]);
    assert!(
        said.contains("not from the companion folder") && said.contains("/usr/lib"),
        "{said}"
    );
}
