//! Paired samplers' set-up: a handshake batch is sized from handshakes after the warm-up, so
//! the slow first handshakes of a process (one-time initialisation) cannot shrink it.

use std::cell::Cell;
use std::time::Duration;

use tlsmatrix_core::certs;
use tlsmatrix_core::endpoint::{EndpointConfig, EndpointFactory, Side, TlsEndpoint};
use tlsmatrix_core::memio::MemIo;
use tlsmatrix_core::scenario::Scenario;
use tlsmatrix_core::workload::HandshakeSampler;

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

#[test]
fn a_slow_first_handshake_does_not_shrink_the_batch() {
    let sc: Scenario = "handshake-tls13-ecdsa-p256-x25519-full".parse().unwrap();
    let dir = std::env::temp_dir().join(format!("tlsmatrix-sampling-{}", std::process::id()));
    let cfg = EndpointConfig::for_scenario(
        &sc,
        std::sync::Arc::new(certs::load_or_generate(&dir, sc.params().sig).unwrap()),
    );
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
