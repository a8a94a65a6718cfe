//! Every QUIC stack of this build, in memory: each completes every scenario of the QUIC
//! suite with what the scenario names (QUIC version 1, ALPN, suite, group, scheme, chain),
//! the stacks of one family talk to each other, a configuration that would negotiate
//! something else fails the check, and a peer that sends garbage, a truncated Initial, an
//! unknown version or nothing at all fails in bounded time with a sentence.

use std::sync::{Arc, Mutex};

use tlsmatrix_harness::certs::{self, CertSet};
use tlsmatrix_harness::endpoint::{EndpointConfig, TlsLibrary};
use tlsmatrix_harness::pair::Clock;
use tlsmatrix_harness::quic::{self, Datagrams, QuicEndpointFactory, QuicError};
use tlsmatrix_impls::libraries;
use tlsmatrix_measure::quic::quic_against_tcp;
use tlsmatrix_measure::workload::Budget;
use tlsmatrix_model::measure::QUIC_SUITE;
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::scenario::{Group, Scenario, SigAlg};
use tlsmatrix_model::side::Side;

/// Certificates by key type, generated once: tests run in threads, and two generating one
/// set at once would each see the other's half-written files.
fn certs(sig: SigAlg) -> Arc<CertSet> {
    static CACHE: Mutex<Vec<(SigAlg, Arc<CertSet>)>> = Mutex::new(Vec::new());
    let mut cache = CACHE.lock().unwrap();
    if let Some((_, set)) = cache.iter().find(|(s, _)| *s == sig) {
        return set.clone();
    }
    let dir = std::env::temp_dir().join(format!("tlsmatrix-quic-test-{}", std::process::id()));
    let set = Arc::new(certs::load_or_generate(&dir, sig).unwrap());
    cache.push((sig, set.clone()));
    set
}

fn config(scenario: &Scenario) -> EndpointConfig {
    let mut cfg = EndpointConfig::for_scenario(scenario, certs(scenario.params().sig));
    cfg.alpn = vec![quic::ALPN.into()];
    cfg
}

fn quic_libraries() -> Vec<Box<dyn TlsLibrary>> {
    libraries()
        .into_iter()
        .filter(|l| l.quic_stack().is_ok())
        .collect()
}

fn factories(
    c: &dyn TlsLibrary,
    s: &dyn TlsLibrary,
    cfg: &EndpointConfig,
) -> (Box<dyn QuicEndpointFactory>, Box<dyn QuicEndpointFactory>) {
    (
        c.quic_factory(Side::Client, cfg).unwrap(),
        s.quic_factory(Side::Server, cfg).unwrap(),
    )
}

fn handshake(
    c: &dyn QuicEndpointFactory,
    s: &dyn QuicEndpointFactory,
    scenario: &Scenario,
) -> Result<quic::QuicWire, QuicError> {
    let mut buffers: [Datagrams; 2] = Default::default();
    quic::handshake_metered(
        &mut Clock::default(),
        c,
        s,
        &scenario.params(),
        &mut buffers,
    )
    .map(|(_, wire)| wire)
}

const LEAD: &str = "handshake-tls13-ecdsa-p256-x25519-full";

#[test]
fn this_build_drives_quinn_on_both_rustls_providers_and_ngtcp2_on_gnutls() {
    let stacks: Vec<_> = quic_libraries()
        .iter()
        .map(|l| (l.name(), l.quic_stack().unwrap()))
        .collect();
    let names: Vec<_> = stacks.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["rustls-aws-lc", "rustls-ring", "gnutls"]);
    for (name, stack) in &stacks {
        let expected = if *name == "gnutls" {
            "ngtcp2 0.12."
        } else {
            "quinn-proto 0.11."
        };
        assert!(stack.starts_with(expected), "{name}: {stack}");
    }
    // Every library without a QUIC stack here says why, in a sentence about QUIC.
    for without in libraries().into_iter().filter(|l| l.quic_stack().is_err()) {
        let why = without.quic_stack().unwrap_err();
        assert!(why.contains("QUIC"), "{}: {why}", without.name());
        assert!(without
            .quic_supports(&config(&LEAD.parse().unwrap()))
            .is_err());
    }
    let openssl = tlsmatrix_impls::library("openssl-3.0").unwrap();
    assert!(
        openssl
            .quic_stack()
            .unwrap_err()
            .contains("has no QUIC server"),
        "{:?}",
        openssl.quic_stack()
    );
}

/// Each stack with itself and with every other stack of this build, on every scenario of
/// the QUIC suite its library takes (a resumption scenario resumed twice in a row, each
/// resumption across libraries too); the handshake check inside `handshake_metered` holds
/// each to the scenario.
#[test]
fn every_quic_pair_completes_the_quic_suite_with_the_named_parameters() {
    let mut completed = 0;
    for id in QUIC_SUITE {
        let scenario: Scenario = id.parse().unwrap();
        let cfg = config(&scenario);
        for c in quic_libraries() {
            for s in quic_libraries() {
                if let (Err(why), _) | (_, Err(why)) =
                    (c.quic_supports(&cfg), s.quic_supports(&cfg))
                {
                    // rustls on ring and GnuTLS 3.7 lack the post-quantum groups and keys.
                    assert!(
                        why.contains("rustls-ring") || why.contains("GnuTLS"),
                        "{id}: {why}"
                    );
                    continue;
                }
                let (cf, sf) = factories(c.as_ref(), s.as_ref(), &cfg);
                // A resumption scenario's first handshake is a full one that leaves a ticket;
                // each resumed one leaves the next its own.
                quic::prime(
                    cf.as_ref(),
                    sf.as_ref(),
                    &scenario.params(),
                    &mut Default::default(),
                )
                .unwrap_or_else(|e| panic!("{} -> {} priming {id}: {e}", c.name(), s.name()));
                for _ in 0..2 {
                    let wire = handshake(cf.as_ref(), sf.as_ref(), &scenario)
                        .unwrap_or_else(|e| panic!("{} -> {} on {id}: {e}", c.name(), s.name()));
                    assert!(wire.client_first_datagram >= quic::MIN_INITIAL_DATAGRAM);
                    assert!(wire.client_ready_rtts >= 1, "{wire:?}");
                    assert!(wire.first_flight_ratio() <= 3.0, "{id}: {wire:?}");
                    assert!(wire.datagrams.iter().all(|&d| d >= 1), "{wire:?}");
                }
                completed += 1;
            }
        }
    }
    assert!(completed >= QUIC_SUITE.len() * 2, "{completed}");
}

/// An ML-DSA-87 chain does not fit in three times the client's first datagram: the server
/// waits a round trip for the client's acknowledgement, which the wire figures show.
#[test]
fn the_amplification_limit_holds_back_a_large_chain() {
    let scenario: Scenario = "handshake-tls13-mldsa87-x25519-full".parse().unwrap();
    let cfg = config(&scenario);
    let lib = tlsmatrix_impls::library("rustls-aws-lc").unwrap();
    let (c, s) = factories(lib.as_ref(), lib.as_ref(), &cfg);
    let wire = handshake(c.as_ref(), s.as_ref(), &scenario).unwrap();
    assert!(wire.server_held_bytes > 0, "{wire:?}");
    assert!(wire.client_ready_rtts >= 2, "{wire:?}");
    assert!(wire.first_flight_ratio() <= 3.0, "{wire:?}");
    let small: Scenario = "handshake-tls13-ecdsa-p256-x25519-full".parse().unwrap();
    let cfg = config(&small);
    let (c, s) = factories(lib.as_ref(), lib.as_ref(), &cfg);
    let wire = handshake(c.as_ref(), s.as_ref(), &small).unwrap();
    assert_eq!(
        (wire.server_held_bytes, wire.client_ready_rtts),
        (0, 1),
        "{wire:?}"
    );
}

#[test]
fn a_group_the_server_does_not_take_fails_the_handshake_with_its_side() {
    let scenario: Scenario = "handshake-tls13-ecdsa-p256-x25519-full".parse().unwrap();
    let lib = tlsmatrix_impls::library("rustls-aws-lc").unwrap();
    let cfg = config(&scenario);
    let mut other = cfg.clone();
    other.groups = vec![Group::P256];
    let c = lib.quic_factory(Side::Client, &other).unwrap();
    let s = lib.quic_factory(Side::Server, &cfg).unwrap();
    let err = handshake(c.as_ref(), s.as_ref(), &scenario).unwrap_err();
    assert!(
        matches!(err, QuicError::Step { .. } | QuicError::Stalled { .. }),
        "{err}"
    );
}

#[test]
fn a_handshake_of_other_parameters_than_the_scenario_fails_the_check() {
    // Both sides agree on P-256, but the scenario the pair checks against names X25519.
    let asked: Scenario = "handshake-tls13-ecdsa-p256-x25519-full".parse().unwrap();
    let ran: Scenario = "handshake-tls13-ecdsa-p256-p256-full".parse().unwrap();
    let lib = tlsmatrix_impls::library("rustls-ring").unwrap();
    let cfg = config(&ran);
    let (c, s) = factories(lib.as_ref(), lib.as_ref(), &cfg);
    let err = handshake(c.as_ref(), s.as_ref(), &asked).unwrap_err();
    assert!(err.to_string().contains("negotiated group p256"), "{err}");
}

#[test]
fn quic_is_refused_where_it_cannot_run() {
    let lib = tlsmatrix_impls::library("rustls-aws-lc").unwrap();
    for (id, why) in [
        ("handshake-tls12-ecdsa-p256-x25519-full", "TLS 1.3 only"),
        (
            "handshake-tls13-ecdsa-p256-x25519-full-hrr",
            "HelloRetryRequest",
        ),
    ] {
        let cfg = config(&id.parse().unwrap());
        let err = lib.quic_supports(&cfg).unwrap_err();
        assert!(err.contains(why), "{id}: {err}");
    }
}

/// What a server makes of datagrams no client should send: each fails or is dropped, and
/// the handshake then stalls within its bounded rounds rather than hanging.
#[test]
fn garbage_a_truncated_initial_an_unknown_version_and_silence_end_in_bounded_time() {
    let scenario: Scenario = "handshake-tls13-ecdsa-p256-x25519-full".parse().unwrap();
    let cfg = config(&scenario);
    for lib in quic_libraries() {
        bad_first_datagrams_answer_nothing_but_a_version_negotiation(lib.as_ref(), &cfg);
    }
}

fn bad_first_datagrams_answer_nothing_but_a_version_negotiation(
    lib: &dyn TlsLibrary,
    cfg: &EndpointConfig,
) {
    let name = lib.name();
    let (c, s) = factories(lib, lib, cfg);
    // A real first flight, to cut and bend.
    let mut client = c.endpoint().unwrap();
    let mut first = Datagrams::default();
    client.transmit(&mut first).unwrap();
    let initial = first.iter().next().unwrap().to_vec();
    let mut unknown_version = initial.clone();
    unknown_version[1..5].copy_from_slice(&0x1a2a_3a4au32.to_be_bytes());
    let cases: [(&str, Vec<u8>); 4] = [
        ("garbage", vec![0x5a; 1200]),
        ("a truncated Initial", initial[..300].to_vec()),
        ("an unknown version", unknown_version),
        ("nothing", Vec::new()),
    ];
    for (what, datagram) in cases {
        let start = std::time::Instant::now();
        let mut server = s.endpoint().unwrap();
        if !datagram.is_empty() {
            // A stack drops or refuses what it cannot decode; an unknown version gets a
            // version negotiation, which must itself be well-formed QUIC.
            if let Err(e) = server.receive(&datagram) {
                let why = e.to_string();
                assert!(
                    !why.is_empty() && !why.contains('\n'),
                    "{name}: {what}: {why}"
                );
            }
        }
        let mut out = Datagrams::default();
        server.transmit(&mut out).unwrap();
        for d in out.iter() {
            let versions = quic::long_header_versions(d).unwrap();
            assert_eq!(
                versions,
                vec![0],
                "{name}: {what}: only a version negotiation may answer"
            );
        }
        if what == "an unknown version" {
            assert_eq!(out.len(), 1, "{name}: no version negotiation");
        }
        assert!(!server.is_handshake_complete(), "{name}: {what}");
        assert!(start.elapsed().as_secs() < 2, "{name}: {what}");
    }
}

#[test]
fn quic_against_tcp_gives_positive_paired_samples() {
    let scenario: Scenario = "handshake-tls13-ecdsa-p256-x25519-full".parse().unwrap();
    let cfg = config(&scenario);
    let lib = tlsmatrix_impls::library("rustls-ring").unwrap();
    let tcp = (
        lib.factory(Side::Client, &cfg).unwrap(),
        lib.factory(Side::Server, &cfg).unwrap(),
    );
    let (qc, qs) = factories(lib.as_ref(), lib.as_ref(), &cfg);
    let budget = Budget {
        runs: 2,
        warmup: std::time::Duration::from_millis(10),
        sample_target: std::time::Duration::from_millis(5),
        bulk_bytes: 0,
    };
    let mut samples = Vec::new();
    quic_against_tcp(
        (tcp.0.as_ref(), tcp.1.as_ref()),
        (qc.as_ref(), qs.as_ref()),
        &scenario.params(),
        &budget,
        |s| samples.push(s),
    )
    .unwrap();
    assert_eq!(samples.len(), 2);
    for s in &samples {
        let get = |m: Metric| s.iter().find(|(x, _)| *x == m).unwrap().1;
        for m in [
            Metric::ClientCpuNs,
            Metric::ClientQuicNs,
            Metric::ServerQuicNs,
            Metric::ClientQuicOverTcp,
            Metric::ServerQuicOverTcp,
            Metric::ClientQuicBytes,
        ] {
            assert!(get(m).is_finite() && get(m) > 0.0, "{m}: {}", get(m));
        }
        let ratio = get(Metric::ClientQuicNs) / get(Metric::ClientCpuNs);
        assert!((ratio - get(Metric::ClientQuicOverTcp)).abs() < 1e-9);
    }
}

/// Stream data both ways on every pair of this build: 1 MiB client to server and back on one
/// connection, each byte checked, then an hq-interop `/N` on a new connection, the answer's
/// pattern checked by the client.
#[test]
fn every_quic_pair_carries_a_mebibyte_each_way_and_answers_an_hq_request() {
    use tlsmatrix_harness::pair::Checksum;
    use tlsmatrix_harness::quic_stream::{HqClient, HqServer, ReceiveBytes, SendBytes, StreamPart};
    let scenario: Scenario = LEAD.parse().unwrap();
    let cfg = config(&scenario);
    let limit = std::time::Duration::from_secs(20);
    let payload: Vec<u8> = (0..16_411u32).map(|i| (i * 7 % 253) as u8).collect();
    let total = 1u64 << 20;
    let expected = {
        let mut sum = Checksum::default();
        (0..total).for_each(|i| sum.update(&[payload[(i % payload.len() as u64) as usize]]));
        sum
    };
    for c in quic_libraries() {
        for s in quic_libraries() {
            let pair = format!("{} -> {}", c.name(), s.name());
            let (cf, sf) = factories(c.as_ref(), s.as_ref(), &cfg);
            let mut buffers: [Datagrams; 2] = Default::default();
            let connect = |buffers: &mut [Datagrams; 2]| {
                let made = quic::handshake_metered(
                    &mut Clock::default(),
                    cf.as_ref(),
                    sf.as_ref(),
                    &scenario.params(),
                    buffers,
                );
                made.unwrap_or_else(|e| panic!("{pair}: {e}")).0
            };
            let mut endpoints = connect(&mut buffers);
            for from in [Side::Client, Side::Server] {
                let mut sink = vec![0u8; 65_536];
                let mut sum = Checksum::default();
                let mut send = SendBytes::new(&payload[..], total, false);
                let mut recv = ReceiveBytes::new(&mut sink, total, false, |_, b| {
                    sum.update(b);
                    Ok(())
                });
                let parts: [&mut dyn StreamPart; 2] = match from {
                    Side::Client => [&mut send, &mut recv],
                    Side::Server => [&mut recv, &mut send],
                };
                quic::exchange_metered(
                    &mut Clock::default(),
                    &mut endpoints,
                    &mut buffers,
                    parts,
                    limit,
                )
                .unwrap_or_else(|e| panic!("{pair}, {from} sending: {e}"));
                assert_eq!(sum, expected, "{pair}, {from} sending");
            }
            drop(endpoints);
            let mut endpoints = connect(&mut buffers);
            let (mut client, mut server) = (HqClient::new(300_001), HqServer::default());
            quic::exchange_metered(
                &mut Clock::default(),
                &mut endpoints,
                &mut buffers,
                [&mut client, &mut server],
                limit,
            )
            .unwrap_or_else(|e| panic!("{pair}, hq-interop: {e}"));
            assert_eq!(
                (client.received(), server.asked()),
                (300_001, Some(300_001)),
                "{pair}"
            );
        }
    }
}
