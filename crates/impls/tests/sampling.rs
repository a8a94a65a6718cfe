//! Paired samplers' set-up: a handshake batch is sized from handshakes after the warm-up, so
//! the slow first handshakes of a process (one-time initialisation) cannot shrink it, and
//! holds whole periods of a cost that repeats (RSA blinding renewals).

use std::cell::Cell;
use std::time::Duration;

use tlsmatrix_harness::certs;
use tlsmatrix_harness::endpoint::{EndpointConfig, EndpointFactory, TlsEndpoint};
use tlsmatrix_harness::memio::MemIo;
use tlsmatrix_measure::workload::HandshakeSampler;
use tlsmatrix_model::scenario::Scenario;
use tlsmatrix_model::side::Side;

/// A server whose first connection takes 30 ms longer, as the first in a process may.
struct SlowFirst {
    inner: Box<dyn EndpointFactory>,
    first: Cell<bool>,
}

impl EndpointFactory for SlowFirst {
    fn endpoint(&self, io: MemIo) -> anyhow::Result<Box<dyn TlsEndpoint>> {
        if self.first.replace(false) {
            std::thread::sleep(Duration::from_millis(30));
        }
        self.inner.endpoint(io)
    }
}

fn config(sc: &Scenario) -> EndpointConfig {
    let dir = std::env::temp_dir().join(format!("tlsmatrix-sampling-{}", std::process::id()));
    EndpointConfig::for_scenario(
        sc,
        std::sync::Arc::new(certs::load_or_generate(&dir, sc.params().sig).unwrap()),
    )
}

#[test]
fn a_slow_first_handshake_does_not_shrink_the_batch() {
    let sc: Scenario = "handshake-tls13-ecdsa-p256-x25519-full".parse().unwrap();
    let cfg = config(&sc);
    let lib = tlsmatrix_impls::library("rustls-aws-lc").unwrap();
    let client = lib.factory(Side::Client, &cfg).unwrap();
    let server = SlowFirst {
        inner: lib.factory(Side::Server, &cfg).unwrap(),
        first: Cell::new(true),
    };
    let ms = Duration::from_millis;
    let s = HandshakeSampler::warm(client.as_ref(), &server, &sc.params(), ms(20), ms(5)).unwrap();
    // A full handshake takes well under 1 ms here; sized from the warm-up (two handshakes,
    // one of them 30 ms late) the batch was 1.
    assert!(s.batch() >= 5, "batch {}", s.batch());
}

/// A full RSA handshake's batch is a whole number of blinding periods, whatever the sample
/// target; ECDSA and resumed handshakes keep the batch the target gives.
#[test]
fn an_rsa_batch_holds_whole_blinding_periods() {
    let ms = Duration::from_millis;
    let lib = tlsmatrix_impls::library("rustls-aws-lc").unwrap();
    for (id, period) in [
        ("handshake-tls13-rsa-2048-x25519-full", 32),
        ("handshake-tls12-rsa-2048-x25519-full", 32),
        ("handshake-tls13-rsa-2048-x25519-ticket", 1),
        ("handshake-tls13-ecdsa-p256-x25519-full", 1),
    ] {
        let sc: Scenario = id.parse().unwrap();
        assert_eq!(sc.params().handshake_period(), period, "{id}");
        if sc.params().resumption.is_resumed() {
            continue; // no signature: nothing repeats (and the catalogue resumes ECDSA only)
        }
        let cfg = config(&sc);
        let client = lib.factory(Side::Client, &cfg).unwrap();
        let server = lib.factory(Side::Server, &cfg).unwrap();
        for target in [ms(1), ms(5)] {
            let s = HandshakeSampler::warm(
                client.as_ref(),
                server.as_ref(),
                &sc.params(),
                ms(5),
                target,
            )
            .unwrap();
            assert_eq!(
                s.batch() % period,
                0,
                "{id}, {target:?}: batch {}",
                s.batch()
            );
            if period == 1 && id.contains("ecdsa") && target == ms(5) {
                assert!(s.batch() < 100, "{id}: batch {} not rounded up", s.batch());
            }
        }
    }
}
