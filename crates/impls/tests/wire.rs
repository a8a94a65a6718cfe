//! Wire figures from real libraries: every pair's flights match the round trips its protocol
//! allows, and the byte counts move the way the configuration says they must.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use tlsmatrix_harness::certs;
use tlsmatrix_harness::endpoint::EndpointConfig;
use tlsmatrix_impls::libraries;
use tlsmatrix_measure::workload::{self, Budget};
use tlsmatrix_model::scenario::Scenario;
use tlsmatrix_model::side::Side;
use tlsmatrix_model::trace::WireFigures;

fn cert_dir() -> PathBuf {
    std::env::temp_dir().join(format!("tlsmatrix-wire-test-{}", std::process::id()))
}

/// Each runnable pair's figures for `id`, keyed by (client, server).
fn figures(id: &str) -> BTreeMap<(String, String), WireFigures> {
    let scenario: Scenario = id.parse().unwrap();
    // Tests run in parallel; one generates a key set while another would read it half-written.
    static CERTS: Mutex<()> = Mutex::new(());
    let set = {
        let _one_at_a_time = CERTS.lock().unwrap();
        certs::load_or_generate(&cert_dir(), scenario.params().sig).unwrap()
    };
    let cfg = EndpointConfig::for_scenario(&scenario, set.into());
    let budget = Budget {
        runs: 3,
        warmup: Duration::ZERO,
        ..Budget::default()
    };
    let mut out = BTreeMap::new();
    for c in libraries() {
        for s in libraries() {
            let ok = cfg
                .protocol_limits()
                .and_then(|()| c.supports(&cfg))
                .and_then(|()| s.supports(&cfg));
            if ok.is_err() {
                continue;
            }
            let cf = c.factory(Side::Client, &cfg).unwrap();
            let sf = s.factory(Side::Server, &cfg).unwrap();
            let mut samples = 0;
            let trace =
                workload::wire(cf.as_ref(), sf.as_ref(), &scenario.params(), &budget, |s| {
                    assert!(s.iter().all(|(_, v)| v.is_finite() && *v > 0.0), "{s:?}");
                    samples += 1;
                })
                .unwrap_or_else(|e| panic!("{id} {} -> {}: {e:#}", c.name(), s.name()));
            assert_eq!(samples, 3);
            assert!(trace.request < trace.response);
            out.insert(
                (c.name().to_string(), s.name().to_string()),
                trace.figures(),
            );
        }
    }
    assert!(!out.is_empty(), "{id}: no pair could run it");
    out
}

fn each_pair(
    a: &BTreeMap<(String, String), WireFigures>,
    b: &BTreeMap<(String, String), WireFigures>,
    check: impl Fn(&(String, String), &WireFigures, &WireFigures),
) {
    let mut compared = 0;
    for (pair, fa) in a {
        if let Some(fb) = b.get(pair) {
            check(pair, fa, fb);
            compared += 1;
        }
    }
    assert!(compared > 0);
}

#[test]
fn round_trips_follow_the_protocol() {
    for (id, client, server) in [
        ("handshake-tls13-ecdsa-p256-x25519-full", 1.0, 1.5),
        ("handshake-tls13-ecdsa-p256-x25519-full-hrr", 2.0, 2.5),
        ("handshake-tls12-ecdsa-p256-x25519-full", 2.0, 1.5),
        ("handshake-tls12-ecdsa-p256-x25519-session-id", 1.0, 1.5),
        ("handshake-tls13-ecdsa-p256-x25519-ticket", 1.0, 1.5),
    ] {
        for (pair, f) in figures(id) {
            // workload::wire checks this already; here the expectation is written out.
            assert_eq!(
                (f.client_ready_rtts, f.server_ready_rtts),
                (client, server),
                "{id} {pair:?}"
            );
            assert!(
                f.client_flights >= 2 && f.server_flights >= 1,
                "{id} {pair:?} {f:?}"
            );
        }
    }
}

#[test]
fn bytes_move_with_the_configuration() {
    let x25519 = figures("handshake-tls13-ecdsa-p256-x25519-full");
    for (pair, f) in &x25519 {
        assert!(
            (150..=1000).contains(&f.client_hello_bytes),
            "{pair:?} {f:?}"
        );
        // The server's flight holds a certificate and a signature.
        assert!((600..=4000).contains(&f.server_bytes), "{pair:?} {f:?}");
    }
    // ML-KEM-768: a 1,184-byte encapsulation key in the ClientHello, a 1,088-byte ciphertext
    // in the ServerHello.
    let mlkem = figures("handshake-tls13-ecdsa-p256-x25519mlkem768-full");
    each_pair(&x25519, &mlkem, |pair, x, m| {
        let ch = m.client_hello_bytes - x.client_hello_bytes;
        assert!((1184..=1300).contains(&ch), "{pair:?}: ClientHello +{ch}");
        let sh = m.server_bytes as i64 - x.server_bytes as i64;
        assert!((1080..=1200).contains(&sh), "{pair:?}: server +{sh}");
    });
    // Three intermediate certificates more.
    let chain4 = figures("handshake-tls13-ecdsa-p256-x25519-full-chain4");
    each_pair(&x25519, &chain4, |pair, one, four| {
        let more = four.server_bytes - one.server_bytes;
        assert!((3 * 300..=3 * 1200).contains(&more), "{pair:?}: +{more}");
        assert_eq!(four.client_bytes, one.client_bytes, "{pair:?}");
    });
    // A retry: a second ClientHello and a HelloRetryRequest.
    let hrr = figures("handshake-tls13-ecdsa-p256-x25519-full-hrr");
    each_pair(&x25519, &hrr, |pair, plain, retry| {
        assert!(retry.client_bytes > plain.client_bytes + 100, "{pair:?}");
        assert_eq!(retry.client_flights, plain.client_flights + 1, "{pair:?}");
    });
}

#[test]
fn a_trace_prints_its_flights() {
    let text = tlsmatrix_model::trace::describe(&[]);
    assert!(text.is_empty());
}
