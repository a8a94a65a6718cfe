//! Each stack through the `tlsmatrix` binary: every impl completes every axis value it claims, each driver runs the library it was built with, and the stacks that run by default measure beside the baseline and refuse what they lack in their own words.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

use tlsmatrix_model::impls;
use tlsmatrix_model::record::SCHEMA;

/// Every built impl, against itself, completes one scenario for each axis value (the driver
/// checks the negotiated version, suite, group, signature, resumption and the certificates
/// each side received of every handshake, and counts ClientHellos for the retry); the only
/// cells it may decline are those its row's limits cover (`model::impls::Limit`), and it must
/// still complete most of them.
#[test]
fn every_impl_completes_a_scenario_for_every_axis_value_it_claims() {
    let scenarios = [
        "handshake-tls12-ecdsa-p256-x25519-full",
        "handshake-tls13-ecdsa-p384-x25519-full",
        "handshake-tls13-rsa-2048-x25519-full",
        "handshake-tls13-rsa-3072-x25519-full",
        "handshake-tls13-ed25519-x25519-full",
        "handshake-tls13-ecdsa-p256-p256-full",
        "handshake-tls13-ecdsa-p256-p384-full",
        "handshake-tls13-ecdsa-p256-x25519mlkem768-full",
        "handshake-tls12-ecdsa-p256-x25519-session-id",
        "handshake-tls12-ecdsa-p256-x25519-ticket",
        "handshake-tls13-ecdsa-p256-x25519-ticket",
        "handshake-tls12-rsa-2048-p256-full-mtls",
        "handshake-tls13-ecdsa-p256-x25519-full-mtls",
        "handshake-tls12-ecdsa-p256-x25519-full-chain2",
        "handshake-tls13-ecdsa-p256-x25519-full-chain3",
        "handshake-tls13-rsa-2048-x25519-full-chain4",
        "handshake-tls13-ecdsa-p256-x25519-full-hrr",
        "handshake-tls13-ecdsa-p256-p256-full-hrr",
        // Post-quantum: every ML-DSA level (full, resumed, mTLS with a chain) and every
        // ML-KEM group beside X25519MLKEM768 above.
        "handshake-tls13-mldsa44-x25519-full",
        "handshake-tls13-mldsa65-x25519-ticket",
        "handshake-tls13-mldsa87-x25519-full-mtls-chain3",
        "handshake-tls13-ecdsa-p256-secp256r1mlkem768-full",
        "handshake-tls13-ecdsa-p256-secp384r1mlkem1024-full",
        "handshake-tls13-ecdsa-p256-mlkem512-full",
        "handshake-tls13-ecdsa-p256-mlkem768-full",
        "handshake-tls13-ecdsa-p256-mlkem1024-full",
        "bulk-tls13-aes-256-gcm-16k",
        "bulk-tls13-chacha20-poly1305-16k",
        "bulk-tls12-aes-128-gcm-1k",
        "bulk-tls12-chacha20-poly1305-1m",
        "memory-tls13-ecdsa-p256-n100",
        "throughput-tls13-ecdsa-p256-allcores",
    ];
    let post_quantum = |id: &str| {
        let p = id
            .parse::<tlsmatrix_model::scenario::Scenario>()
            .unwrap()
            .params();
        p.sig.is_mldsa() || p.group.is_post_quantum()
    };
    let classical = scenarios.iter().filter(|id| !post_quantum(id)).count();
    // The stacks (not variants) that completed every ML-DSA scenario.
    let mut mldsa_stacks: Vec<String> = Vec::new();
    let d = scratch("axes");
    for (imp, _) in built_impls() {
        let out = d.join(format!("{imp}.jsonl"));
        let r = tlsmatrix(&[
            "run",
            // Nobody reads these figures against the weather: its probe (a GiB on a host
            // whose cache reads 260 MiB) cost each impl's run two of its seven seconds.
            "--no-weather",
            "--impl",
            &imp,
            "--scenario",
            &scenarios.join(","),
            "--runs",
            "2",
            "--warmup-ms",
            "5",
            "--sample-ms",
            "20",
            // Two groups at once: a fifth off each impl's run.
            "--lanes",
            "2",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(r.status.success(), "{imp}: {}", stderr(&r));
        let lines = json_lines(&out);
        assert!(
            lines.iter().all(|l| l.get("weather").is_none()),
            "{imp}: --no-weather, yet a record carries weather"
        );
        let mut completed = 0;
        let mut mldsa = 0;
        for id in scenarios {
            let of: Vec<&serde_json::Value> =
                lines.iter().filter(|l| l["scenario"] == id).collect();
            let records = of.iter().filter(|l| l["schema"] == SCHEMA).count();
            let declined = of.iter().find(|l| l["schema"] != SCHEMA);
            match declined {
                None => {
                    assert!(records >= 2, "{imp} {id}: {of:?}");
                    completed += usize::from(!post_quantum(id));
                    mldsa += usize::from(id.contains("-mldsa"));
                }
                Some(cell) => {
                    // Declined: its row must declare a limit covering the cell (a compiler
                    // or allocator variant's row is its plain build's), and say why.
                    let why = cell["reason"].as_str().unwrap_or_default();
                    let params = id
                        .parse::<tlsmatrix_model::scenario::Scenario>()
                        .unwrap()
                        .params();
                    assert!(
                        impls::may_refuse(&imp, &params),
                        "{imp} declined {id}: {cell}"
                    );
                    assert!(!why.is_empty(), "{imp} declined {id} without a reason");
                }
            }
        }
        eprintln!(
            "{imp}: {completed} of {classical} classical scenarios completed, {mldsa} of 3 ML-DSA"
        );
        assert!(
            completed * 2 >= classical,
            "{imp} completed only {completed} of {classical} classical scenarios"
        );
        let stack = tlsmatrix_model::variant::base(&imp).to_string();
        if mldsa == 3 && !mldsa_stacks.contains(&stack) {
            mldsa_stacks.push(stack);
        }
    }
    // rustls on aws-lc-rs, s2n-tls, AWS-LC, BoringSSL and OpenSSL 3.5, 3.6 and 4.0 sign and
    // verify every ML-DSA level.
    assert!(
        mldsa_stacks.len() >= 7,
        "only {mldsa_stacks:?} completed every ML-DSA handshake"
    );
}

/// The Go driver reads scenario ids with a reader of its own (go/internal/scenario); fed
/// every id of the catalogue, it prints each back as Rust does, and refuses what Rust
/// refuses with the same words.
#[test]
fn the_go_driver_reads_every_scenario_id_as_rust_does() {
    use std::io::Write;
    use tlsmatrix_model::scenario::Scenario;
    let driver = bin().parent().unwrap().join("tlsmatrix-driver-go");
    let mut ids: Vec<String> = Scenario::catalogue()
        .iter()
        .map(|s| s.to_string())
        .collect();
    let bad = [
        "handshake-tls14-ecdsa-p256-x25519-full",
        "bulk-tls13-aes-128-gcm-16k-extra",
        "handshake-tls13-ecdsa-p256-x25519",
    ];
    ids.extend(bad.iter().map(|s| s.to_string()));
    let mut child = Command::new(&driver)
        .arg("parse")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e} (`make build` builds it)", driver.display()));
    let input = ids.join("\n") + "\n";
    let mut stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), ids.len());
    for (id, line) in ids.iter().zip(&lines) {
        match id.parse::<Scenario>() {
            Ok(s) => assert_eq!(line, &s.to_string()),
            Err(e) => assert_eq!(line, &format!("error: {e}")),
        }
    }
}

include!("../../../build-support/lock_file.rs");

/// The BoringSSL driver names the `boring` crates its own lock file built it from (BoringSSL
/// itself has no release numbers).
#[test]
fn the_boringssl_driver_names_the_crates_it_was_built_from() {
    let lock =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../libssl-drivers/boringssl/Cargo.lock");
    let lock = std::fs::read_to_string(lock).unwrap();
    let locked = |krate: &str| locked_version(&lock, krate).expect("locked");
    let (_, version) = built_impls()
        .into_iter()
        .find(|(n, _)| n == "boringssl")
        .expect("`make build` builds the boringssl driver");
    assert_eq!(
        version,
        format!(
            "BoringSSL (boring {}, boring-sys {})",
            locked("boring"),
            locked("boring-sys")
        )
    );
}

/// A driver built against a vendored OpenSSL release runs exactly that release: the version
/// the library reports at run time is the one `crates/openssl-build` built.
#[test]
fn vendored_openssl_drivers_run_the_release_they_were_built_with() {
    let target = bin().parent().unwrap().parent().unwrap().to_path_buf();
    let impls = built_impls();
    for release in ["1.1.1", "3.6", "4.0"] {
        let stamp = target
            .join("openssl")
            .join(release)
            .join("tlsmatrix-openssl-release");
        let Ok(built) = std::fs::read_to_string(&stamp) else {
            panic!(
                "{} is missing: `make build` builds OpenSSL {release}",
                stamp.display()
            );
        };
        // "300.6.1+3.6.3" -> "3.6.3", "111.28.2+1.1.1w" -> "1.1.1w".
        let exact = built.trim().rsplit('+').next().unwrap().to_string();
        let (_, version) = impls
            .iter()
            .find(|(n, _)| *n == format!("openssl-{release}"))
            .unwrap_or_else(|| panic!("no openssl-{release} impl: {impls:?}"));
        assert!(
            version.starts_with(&format!("OpenSSL {exact} ")),
            "openssl-{release} runs {version}, built {exact}"
        );
    }
}

/// wolfSSL is in the default plan, checked like every other stack; the one cell its client
/// cannot run with the baseline is refused by the pair rule its row declares.
#[test]
fn wolfssl_runs_by_default_and_refuses_only_a_rustls_servers_long_ticket_nonces() {
    let d = scratch("wolfssl-default");
    let out = d.join("default.jsonl");
    let r = tlsmatrix(&[
        "run", "--no-weather", "--scenario",
        "handshake-tls13-ecdsa-p256-x25519-full,handshake-tls13-ecdsa-p256-x25519-ticket,bulk-tls13-aes-128-gcm-16k",
        "--runs", "2", "--warmup-ms", "5", "--sample-ms", "5",
        "--out", out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let lines = json_lines(&out);
    let record = |scenario: &str, client: &str, server: &str| {
        lines.iter().find(|l| {
            l["schema"] == SCHEMA
                && l["scenario"] == scenario
                && l["client"] == client
                && l["server"] == server
        })
    };
    // In the default plan, measured both ways with the baseline, at the version it reports.
    for (client, server) in [("wolfssl", "rustls-aws-lc"), ("rustls-aws-lc", "wolfssl")] {
        let rec = record("handshake-tls13-ecdsa-p256-x25519-full", client, server)
            .unwrap_or_else(|| panic!("no {client} -> {server} record: {lines:?}"));
        let version = if client == "wolfssl" {
            &rec["client_version"]
        } else {
            &rec["server_version"]
        };
        assert!(version.as_str().unwrap().starts_with("wolfSSL 5."), "{rec}");
        assert!(rec["median"].as_f64().unwrap() > 0.0, "{rec}");
    }
    // Tickets: wolfSSL resumes with itself and serves rustls's client; its client refuses a
    // rustls server's 32-byte nonces, an unsupported cell with that reason, never a failure.
    let ticket = "handshake-tls13-ecdsa-p256-x25519-ticket";
    assert!(record(ticket, "wolfssl", "wolfssl").is_some(), "{lines:?}");
    assert!(
        record(ticket, "rustls-aws-lc", "wolfssl").is_some(),
        "{lines:?}"
    );
    let cell = lines
        .iter()
        .find(|l| {
            l["scenario"] == ticket && l["client"] == "wolfssl" && l["server"] == "rustls-aws-lc"
        })
        .unwrap_or_else(|| panic!("no wolfssl -> rustls ticket line: {lines:?}"));
    assert_eq!(cell["outcome"], "unsupported", "{cell}");
    assert!(
        cell["reason"].as_str().unwrap().contains("32-byte nonces"),
        "{cell}"
    );
}

/// Mbed TLS is in the default plan. It reports no group, signature scheme or resumption, so
/// its records rest on the server's clear first flight (harness::witness): every cell here
/// passes the negotiated-parameter check against rustls, which reports its own view, in
/// both versions and both resumption kinds; and what it cannot do is unsupported with the
/// library's reason.
#[test]
fn mbedtls_runs_by_default_checked_by_the_wire_and_refuses_what_it_lacks() {
    runs_with_the_baseline_and_refuses(
        "mbedtls",
        "Mbed TLS 3.6.",
        &[
            "handshake-tls13-ecdsa-p256-x25519-full",
            "handshake-tls13-rsa-2048-p256-full",
            "handshake-tls13-ecdsa-p384-p384-ticket",
            "handshake-tls12-ecdsa-p256-p384-full",
            "handshake-tls12-ecdsa-p256-x25519-session-id",
            "handshake-tls12-ecdsa-p256-x25519-ticket",
            "handshake-tls13-ecdsa-p256-x25519-full-hrr",
            "bulk-tls13-aes-128-gcm-16k",
        ],
        &[
            ("handshake-tls12-rsa-2048-x25519-full", "PKCS#1 v1.5 only"),
            ("handshake-tls13-ed25519-x25519-full", "no EdDSA"),
            (
                "handshake-tls13-ecdsa-p256-x25519mlkem768-full",
                "no ML-KEM",
            ),
        ],
    );
}

/// NSS is in the default plan, in the main driver: with itself and with rustls in both
/// versions, both resumption kinds, mutual TLS, a long chain and a retry, every cell passes
/// the negotiated-parameter check (NSS reports each parameter itself); what it lacks is
/// unsupported with the library's reason.
#[test]
fn nss_runs_by_default_and_refuses_what_it_lacks() {
    runs_with_the_baseline_and_refuses(
        "nss",
        "NSS 3.",
        &[
            "handshake-tls13-ecdsa-p256-x25519-full",
            "handshake-tls12-rsa-2048-x25519-full",
            "handshake-tls13-ecdsa-p384-p384-ticket",
            "handshake-tls12-ecdsa-p256-x25519-session-id",
            "handshake-tls12-ecdsa-p256-x25519-ticket",
            "handshake-tls13-ecdsa-p256-x25519-full-mtls",
            "handshake-tls13-rsa-2048-x25519-full-chain4",
            "handshake-tls13-ecdsa-p256-x25519-full-hrr",
            "bulk-tls13-chacha20-poly1305-16k",
        ],
        &[
            ("handshake-tls13-ed25519-x25519-full", "no Ed25519"),
            (
                "handshake-tls13-ecdsa-p256-x25519mlkem768-full",
                "no ML-KEM",
            ),
        ],
    );
}

/// Runs `measured` and `refused` for `imp` beside the baseline (rustls-aws-lc): every
/// measured cell with `imp` on either side or both has a record with `imp`'s version and a
/// positive median, and each refused scenario is unsupported with the given reason.
fn runs_with_the_baseline_and_refuses(
    imp: &str,
    version_prefix: &str,
    measured: &[&str],
    refused: &[(&str, &str)],
) {
    let d = scratch(&format!("{imp}-default"));
    let out = d.join("default.jsonl");
    let scenarios: Vec<&str> = measured
        .iter()
        .copied()
        .chain(refused.iter().map(|r| r.0))
        .collect();
    let r = tlsmatrix(&[
        "run",
        "--no-weather",
        "--impl",
        &format!("rustls-aws-lc,{imp}"),
        "--scenario",
        &scenarios.join(","),
        "--runs",
        "2",
        "--passes",
        "1",
        "--warmup-ms",
        "5",
        "--sample-ms",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let lines = json_lines(&out);
    let record = |scenario: &str, client: &str, server: &str| {
        lines.iter().find(|l| {
            l["schema"] == SCHEMA
                && l["scenario"] == scenario
                && l["client"] == client
                && l["server"] == server
        })
    };
    for scenario in measured {
        for (client, server) in [(imp, "rustls-aws-lc"), ("rustls-aws-lc", imp), (imp, imp)] {
            let rec = record(scenario, client, server)
                .unwrap_or_else(|| panic!("no {scenario} {client} -> {server} record: {lines:?}"));
            let version = if client == imp {
                &rec["client_version"]
            } else {
                &rec["server_version"]
            };
            assert!(
                version.as_str().unwrap().starts_with(version_prefix),
                "{rec}"
            );
            assert!(rec["median"].as_f64().unwrap() > 0.0, "{rec}");
        }
    }
    for (scenario, why) in refused {
        let cell = lines
            .iter()
            .find(|l| l["scenario"] == *scenario && l["client"] == imp)
            .unwrap_or_else(|| panic!("no {imp} line for {scenario}: {lines:?}"));
        assert_eq!(cell["outcome"], "unsupported", "{cell}");
        assert!(cell["reason"].as_str().unwrap().contains(why), "{cell}");
    }
}
