//! `--measure setup`: what a connection costs beside its handshake, each impl with itself.

mod common;

use common::*;
use tlsmatrix_model::record::Metric;

/// Every figure is a positive, finite time per operation; a server context, which parses and
/// loads a private key, costs more than a connection object made from it; a driver that
/// takes no setup costs says why instead of failing.
#[test]
fn setup_costs_are_measured_per_side_and_sane() {
    let d = scratch("setup-costs");
    let out = d.join("setup.jsonl");
    let r = tlsmatrix(&[
        "run",
        "--measure",
        "setup",
        "--impl",
        "rustls-aws-lc,openssl-3.0,go-crypto-tls",
        "--scenario",
        "handshake-tls13-ecdsa-p256-x25519-full",
        "--runs",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    assert!(
        records.iter().all(|x| x.client == x.server),
        "each impl with itself"
    );
    for imp in ["rustls-aws-lc", "openssl-3.0"] {
        let cost = |m: Metric| {
            records
                .iter()
                .find(|x| x.client == imp && x.metric == m)
                .unwrap_or_else(|| panic!("{imp}: no {m}"))
                .median
        };
        for m in [
            Metric::ClientContextNs,
            Metric::ServerContextNs,
            Metric::ClientConnectionNs,
            Metric::ServerConnectionNs,
        ] {
            let ns = cost(m);
            assert!(
                ns.is_finite() && ns > 10.0 && ns < 1e8,
                "{imp} {m}: {ns} ns"
            );
        }
        assert!(
            cost(Metric::ServerContextNs) > cost(Metric::ServerConnectionNs),
            "{imp}: a context with its key loaded costs less than a connection object"
        );
    }
    let cells = json_lines(&out);
    let go = cells
        .iter()
        .find(|l| l["client"] == "go-crypto-tls" && l["outcome"] == "unsupported")
        .unwrap_or_else(|| panic!("go-crypto-tls says why not: {cells:?}"));
    assert!(go["reason"].as_str().unwrap().contains("setup"), "{go}");
}

/// `--measure teardown`: each side's close_notify and free after a full handshake is a
/// positive, finite time per connection, each impl with itself; a resumed handshake is
/// refused in the table's words, and a driver that does not take the measure says so.
#[test]
fn teardown_costs_are_measured_per_side_and_sane() {
    let d = scratch("teardown-costs");
    let out = d.join("teardown.jsonl");
    let r = tlsmatrix(&[
        "run",
        "--measure",
        "teardown",
        "--impl",
        "rustls-aws-lc,openssl-3.0,go-crypto-tls",
        "--scenario",
        "handshake-tls13-ecdsa-p256-x25519-full,handshake-tls13-ecdsa-p256-x25519-ticket",
        "--runs",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let records = result_records(&out);
    assert!(
        records.iter().all(|x| x.client == x.server),
        "each impl with itself"
    );
    for imp in ["rustls-aws-lc", "openssl-3.0"] {
        for m in [Metric::ClientTeardownNs, Metric::ServerTeardownNs] {
            let ns = records
                .iter()
                .find(|x| x.client == imp && x.metric == m && x.scenario.ends_with("-full"))
                .unwrap_or_else(|| panic!("{imp}: no {m}"))
                .median;
            assert!(
                ns.is_finite() && ns > 10.0 && ns < 1e7,
                "{imp} {m}: {ns} ns"
            );
        }
    }
    let cells = json_lines(&out);
    let reason = |imp: &str, scenario_end: &str| {
        cells
            .iter()
            .find(|l| {
                l["client"] == imp
                    && l["outcome"] == "unsupported"
                    && l["scenario"].as_str().unwrap().ends_with(scenario_end)
            })
            .unwrap_or_else(|| panic!("{imp} {scenario_end} says why not: {cells:?}"))["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(reason("rustls-aws-lc", "-ticket").contains("after full handshakes"));
    assert!(reason("go-crypto-tls", "-full").contains("teardown"));
}
