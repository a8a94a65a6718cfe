//! Every pair of the libraries in this build, in memory: handshakes negotiate what each
//! scenario names, data crosses intact both ways, and a configuration that would negotiate
//! something else is caught by the check rather than measured.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use tlsmatrix_harness::certs::{self, CertSet};
use tlsmatrix_harness::endpoint::{EndpointConfig, TlsLibrary};
use tlsmatrix_harness::pair::{self, Checksum, PairError};
use tlsmatrix_impls::libraries;
use tlsmatrix_measure::workload::{self, Budget};
use tlsmatrix_model::impls::{self, Limit};
use tlsmatrix_model::scenario::{ConnParams, Group, Scenario, SigAlg};
use tlsmatrix_model::side::Side;

fn cert_dir() -> PathBuf {
    std::env::temp_dir().join(format!("tlsmatrix-impls-test-{}", std::process::id()))
}

/// Certificate sets generated so far, by key type.
type CertCache = std::sync::Mutex<Vec<(SigAlg, Arc<CertSet>)>>;

fn certs(sig: SigAlg) -> Arc<CertSet> {
    static CACHE: OnceLock<CertCache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut c = cache.lock().unwrap();
    if let Some((_, s)) = c.iter().find(|(s, _)| *s == sig) {
        return s.clone();
    }
    let s = Arc::new(certs::load_or_generate(&cert_dir(), sig).unwrap());
    c.push((sig, s.clone()));
    s
}

fn config(scenario: &Scenario) -> EndpointConfig {
    EndpointConfig::for_scenario(scenario, certs(scenario.params().sig))
}

/// Whether the pair can run `cfg`; a refusal must come from a library whose row declares a
/// limit covering the cell (`model::impls::Limit`).
fn runnable(c: &dyn TlsLibrary, s: &dyn TlsLibrary, cfg: &EndpointConfig, p: &ConnParams) -> bool {
    if cfg.protocol_limits().is_err() {
        return false; // no version allows it, whatever the library
    }
    let mut ok = true;
    for lib in [c, s] {
        if let Err(why) = lib.supports(cfg) {
            assert!(
                impls::may_refuse(lib.name(), p),
                "{} -> {}: {} refused a cell its row declares no limit for: {why}",
                c.name(),
                s.name(),
                lib.name()
            );
            ok = false;
        }
    }
    ok
}

fn has_limit(name: &str, limit: Limit) -> bool {
    impls::row(name).is_some_and(|r| r.limits.contains(&limit))
}

fn pairs() -> Vec<(Box<dyn TlsLibrary>, Box<dyn TlsLibrary>)> {
    let mut out = Vec::new();
    for c in libraries() {
        for s in libraries() {
            out.push((tlsmatrix_impls::library(c.name()).unwrap(), s));
        }
    }
    out
}

/// The default features build every impl whose row puts it in the main driver, each
/// reporting the library version its row holds it to.
#[test]
fn this_build_has_every_impl_of_the_main_driver() {
    let names: Vec<_> = libraries().iter().map(|l| l.name()).collect();
    let rows: Vec<_> = tlsmatrix_model::impls::IMPLS
        .iter()
        .filter(|r| r.driver == "tlsmatrix-driver")
        .map(|r| r.name)
        .collect();
    assert_eq!(names, rows);
    for l in libraries() {
        assert!(
            tlsmatrix_model::impls::version_matches(l.name(), &l.version()),
            "{}: {}",
            l.name(),
            l.version()
        );
    }
}

#[test]
fn every_pair_completes_every_handshake_scenario_with_the_named_parameters() {
    let scenarios: Vec<Scenario> = Scenario::catalogue()
        .into_iter()
        .filter(|s| matches!(s, Scenario::Handshake(_)))
        .collect();
    let mut failures = Vec::new();
    let mut post_quantum = 0;
    let mut resumed = 0;
    // Each impl with itself: the ML-DSA keys and ML-KEM groups it completed.
    let mut pq_self: Vec<(&'static str, String)> = Vec::new();
    for (c, s) in pairs() {
        for scenario in &scenarios {
            let cfg = config(scenario);
            let pq = scenario.params().group.is_post_quantum() || scenario.params().sig.is_mldsa();
            if !runnable(c.as_ref(), s.as_ref(), &cfg, &scenario.params()) {
                continue;
            }
            let (cf, sf) = (
                c.factory(Side::Client, &cfg).unwrap(),
                s.factory(Side::Server, &cfg).unwrap(),
            );
            // A resumption scenario resumes twice after its priming handshake: the second
            // time proves that a resumed connection leaves a session to resume too. The
            // check inside `handshake` fails any connection that did not resume.
            let params = scenario.params();
            let rounds = if params.resumption.is_resumed() { 2 } else { 1 };
            let result = pair::prime(cf.as_ref(), sf.as_ref(), &params).and_then(|()| {
                (0..rounds).try_for_each(|_| {
                    let p = pair::handshake(cf.as_ref(), sf.as_ref(), &params)?;
                    assert!(p.client_ns > 0 && p.server_ns > 0);
                    Ok(())
                })
            });
            match result {
                Ok(()) => {
                    post_quantum += usize::from(pq);
                    if pq && c.name() == s.name() {
                        for part in [params.sig.to_string(), params.group.to_string()] {
                            if !pq_self.contains(&(c.name(), part.clone())) {
                                pq_self.push((c.name(), part));
                            }
                        }
                    }
                    resumed += usize::from(params.resumption.is_resumed());
                }
                Err(e) => failures.push(format!("{scenario} {} -> {}: {e}", c.name(), s.name())),
            }
        }
    }
    // rustls-aws-lc with itself, TLS 1.3, for each signature.
    assert!(post_quantum >= 5, "{post_quantum} post-quantum handshakes");
    // Each library that has ML-DSA and ML-KEM in this build completes every one it has.
    let want: &[(&str, &[&str])] = &[
        (
            "rustls-aws-lc",
            &[
                "mldsa44",
                "mldsa65",
                "mldsa87",
                "x25519mlkem768",
                "secp256r1mlkem768",
                "mlkem768",
                "mlkem1024",
            ],
        ),
        ("s2n-tls", &["mldsa44", "mldsa65", "mldsa87"]),
    ];
    for (name, parts) in want {
        if libraries().iter().any(|l| l.name() == *name) {
            for part in *parts {
                assert!(
                    pq_self.contains(&(*name, part.to_string())),
                    "{name} with itself completed no {part} handshake: {pq_self:?}"
                );
            }
        }
    }
    assert!(resumed > 0);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn transfer_checked(pair: &mut pair::Pair, from: Side, write_size: usize) {
    let payload: Vec<u8> = (0..write_size).map(|i| (i * 31 % 251) as u8).collect();
    let total = write_size * 3 + write_size / 2;
    let mut expected = Checksum::default();
    let mut left = total;
    while left > 0 {
        let n = left.min(write_size);
        expected.update(&payload[..n]);
        left -= n;
    }
    let mut got = Checksum::default();
    let mut sink = vec![0u8; 4096];
    let mut bytes = 0;
    pair.transfer(from, total, write_size, &payload, &mut sink, |b| {
        got.update(b);
        bytes += b.len();
    })
    .unwrap();
    assert_eq!(bytes, total);
    assert_eq!(got, expected, "{from} -> peer corrupted data");
}

#[test]
fn every_pair_moves_data_intact_in_both_directions_for_every_bulk_scenario() {
    let mut limited_moved = 0;
    for (c, s) in pairs() {
        for scenario in Scenario::catalogue() {
            let Scenario::Bulk(b) = scenario else {
                continue;
            };
            let cfg = config(&scenario);
            if !runnable(c.as_ref(), s.as_ref(), &cfg, &scenario.params()) {
                continue;
            }
            limited_moved += usize::from(
                has_limit(c.name(), Limit::NamedPolicies)
                    || has_limit(s.name(), Limit::NamedPolicies),
            );
            let (cf, sf) = (
                c.factory(Side::Client, &cfg).unwrap(),
                s.factory(Side::Server, &cfg).unwrap(),
            );
            let mut p = pair::handshake(cf.as_ref(), sf.as_ref(), &scenario.params())
                .unwrap_or_else(|e| panic!("{scenario} {} -> {}: {e}", c.name(), s.name()));
            transfer_checked(&mut p, Side::Client, b.size.bytes());
            transfer_checked(&mut p, Side::Server, b.size.bytes());
        }
    }
    // A library of named policies still moves data in the scenarios some policy fits.
    let policy_libs = libraries()
        .iter()
        .any(|l| has_limit(l.name(), Limit::NamedPolicies));
    assert!(
        !policy_libs || limited_moved > 0,
        "no bulk scenario ran with a policy library"
    );
}

/// The client offers p256 and x25519 with p256 first; the server only accepts x25519. The
/// handshake succeeds on x25519, and the check must refuse it as a p256 measurement.
#[test]
fn a_group_the_scenario_did_not_name_fails_the_check() {
    let scenario: Scenario = "handshake-tls13-ecdsa-p256-p256-full".parse().unwrap();
    // A server of named policies always accepts more groups than one, p256 among them.
    for (c, s) in pairs()
        .into_iter()
        .filter(|(_, s)| !has_limit(s.name(), Limit::NamedPolicies))
    {
        let mut client_cfg = config(&scenario);
        client_cfg.groups = vec![Group::P256, Group::X25519];
        let mut server_cfg = config(&scenario);
        server_cfg.groups = vec![Group::X25519];
        let cf = c.factory(Side::Client, &client_cfg).unwrap();
        let sf = s.factory(Side::Server, &server_cfg).unwrap();
        match pair::handshake(cf.as_ref(), sf.as_ref(), &scenario.params()) {
            Err(PairError::Check(e)) => assert!(
                e.to_string()
                    .contains("negotiated group x25519, but the scenario asks for p256"),
                "{} -> {}: {e}",
                c.name(),
                s.name()
            ),
            Err(e) => panic!(
                "{} -> {}: expected a check failure, got {e}",
                c.name(),
                s.name()
            ),
            Ok(_) => panic!("{} -> {}: x25519 passed as p256", c.name(), s.name()),
        }
    }
}

/// With no group in common the handshake itself fails, and the error names the side and step.
#[test]
fn no_common_group_fails_with_side_and_step() {
    let scenario: Scenario = "handshake-tls13-ecdsa-p256-p256-full".parse().unwrap();
    // Named policies always offer more groups than one, so such a client retries onto x25519.
    for (c, s) in pairs().into_iter().filter(|(c, s)| {
        !has_limit(c.name(), Limit::NamedPolicies) && !has_limit(s.name(), Limit::NamedPolicies)
    }) {
        let client_cfg = config(&scenario);
        let mut server_cfg = config(&scenario);
        server_cfg.groups = vec![Group::X25519];
        let cf = c.factory(Side::Client, &client_cfg).unwrap();
        let sf = s.factory(Side::Server, &server_cfg).unwrap();
        let err = pair::handshake(cf.as_ref(), sf.as_ref(), &scenario.params())
            .err()
            .unwrap_or_else(|| panic!("{} -> {} agreed on no group", c.name(), s.name()));
        assert!(
            matches!(err, PairError::Step { .. }),
            "{} -> {}: {err}",
            c.name(),
            s.name()
        );
        assert!(
            err.to_string().contains("failed at handshake step"),
            "{err}"
        );
    }
}

#[test]
fn workloads_produce_positive_finite_samples() {
    let budget = Budget {
        runs: 3,
        warmup: std::time::Duration::from_millis(5),
        sample_target: std::time::Duration::from_millis(5),
        bulk_bytes: 1 << 20,
    };
    for id in [
        "handshake-tls13-ecdsa-p256-x25519-full",
        "bulk-tls12-aes-128-gcm-16k",
        "bulk-tls13-aes-128-gcm-16k",
    ] {
        let scenario: Scenario = id.parse().unwrap();
        let cfg = config(&scenario);
        for (c, s) in pairs() {
            if !runnable(c.as_ref(), s.as_ref(), &cfg, &scenario.params()) {
                continue;
            }
            let cf = c.factory(Side::Client, &cfg).unwrap();
            let sf = s.factory(Side::Server, &cfg).unwrap();
            let mut samples = Vec::new();
            let res = match scenario {
                Scenario::Handshake(_) => workload::handshakes(
                    cf.as_ref(),
                    sf.as_ref(),
                    &scenario.params(),
                    &budget,
                    |s| samples.push(s),
                ),
                Scenario::Bulk(b) => workload::bulk(
                    cf.as_ref(),
                    sf.as_ref(),
                    &scenario.params(),
                    b.size.bytes(),
                    &budget,
                    |s| samples.push(s),
                ),
                Scenario::Memory(_) | Scenario::Throughput(_) => unreachable!("not in this list"),
            };
            res.unwrap();
            assert_eq!(samples.len(), 3);
            for (metric, v) in samples.iter().flatten() {
                assert!(v.is_finite() && *v > 0.0, "{id} {metric} = {v}");
            }
        }
    }
}

/// Heap per side in-process: with allocation counting built in (a workspace build enables it
/// through the driver) rustls's connections cost a positive amount under 1 MiB a side;
/// without it, the workload refuses instead of reporting nothing as zero.
#[test]
fn memory_counts_each_side_or_refuses_without_counting() {
    let scenario: Scenario = "memory-tls13-ecdsa-p256-n100".parse().unwrap();
    let cfg = config(&scenario);
    let lib = tlsmatrix_impls::library("rustls-aws-lc").unwrap();
    let (cf, sf) = (
        lib.factory(Side::Client, &cfg).unwrap(),
        lib.factory(Side::Server, &cfg).unwrap(),
    );
    let mut samples = Vec::new();
    let r = workload::memory(cf.as_ref(), sf.as_ref(), &scenario.params(), 100, 1, |s| {
        samples.push(s)
    });
    if !tlsmatrix_measure::heap::AVAILABLE {
        assert!(r.unwrap_err().to_string().contains("heap-accounting"));
        return;
    }
    r.unwrap();
    for (metric, v) in samples.iter().flatten() {
        assert!(*v > 1000.0 && *v < 1024.0 * 1024.0, "{metric} = {v}");
    }
}

#[test]
fn openssl_reports_the_version_of_the_libssl_it_runs() {
    let lib = tlsmatrix_impls::library("openssl-3.0").unwrap();
    let v = lib.version();
    assert!(v.starts_with("OpenSSL 3.0."), "{v}");
    // The `openssl` tool links the same system libssl; its "Library:" part is what libssl
    // reports at run time.
    let out = std::process::Command::new("openssl")
        .arg("version")
        .output();
    if let Ok(out) = out {
        let text = String::from_utf8_lossy(&out.stdout);
        let library = text
            .split("(Library: ")
            .nth(1)
            .map(|s| s.trim_end().trim_end_matches(')'))
            .unwrap_or(text.trim());
        assert_eq!(v, library);
    }
}

include!("../../../build-support/lock_file.rs");

#[test]
fn rust_crate_versions_are_the_locked_ones() {
    let lock = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock"),
    )
    .unwrap();
    let locked = |krate: &str| locked_version(&lock, krate).expect("locked");
    let aws_lc = format!(
        "aws-lc-rs {} (aws-lc-sys {})",
        locked("aws-lc-rs"),
        locked_dependency_version(&lock, "aws-lc-rs", "aws-lc-sys").expect("locked")
    );
    for (name, want) in [
        (
            "rustls-aws-lc",
            format!("rustls {} with {aws_lc}", locked("rustls")),
        ),
        (
            "rustls-ring",
            format!("rustls {} with ring {}", locked("rustls"), locked("ring")),
        ),
    ] {
        assert_eq!(tlsmatrix_impls::library(name).unwrap().version(), want);
    }
    // s2n-tls also names the compiler s2n-tls-sys chose for libs2n.
    let s2n = tlsmatrix_impls::library("s2n-tls").unwrap().version();
    let (head, tail) = s2n.split_once(" (libs2n by ").expect("names its compiler");
    assert_eq!(head, format!("s2n-tls {}", locked("s2n-tls")));
    assert!(tail.ends_with(&format!(") with {aws_lc}")), "{s2n}");
}
