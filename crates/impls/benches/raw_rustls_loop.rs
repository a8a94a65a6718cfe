//! Does the harness cost anything? A minimal hand-written rustls loop (two connections,
//! two byte vectors, no traits, no per-step clocks) against the same handshake run through
//! tlsmatrix's adapter and pair driver, same crate, same configuration, interleaved sample by
//! sample so machine drift hits both alike.
//!
//! Run: `cargo bench -p tlsmatrix-impls --bench raw_rustls_loop` (or `make bench`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::client::{Resumption, WebPkiServerVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};
use tlsmatrix_harness::certs;
use tlsmatrix_harness::endpoint::EndpointConfig;
use tlsmatrix_harness::pair;
use tlsmatrix_model::scenario::{Scenario, SigAlg};
use tlsmatrix_model::side::Side;
use tlsmatrix_model::stats;

const SCENARIO: &str = "handshake-tls13-ecdsa-p256-x25519-full";
const SAMPLES: usize = 30;
const SAMPLE_TIME: Duration = Duration::from_millis(200);

fn raw_configs(set: &certs::CertSet) -> (Arc<ClientConfig>, Arc<ServerConfig>) {
    let base = rustls::crypto::aws_lc_rs::default_provider();
    let provider = Arc::new(rustls::crypto::CryptoProvider {
        cipher_suites: vec![rustls::crypto::aws_lc_rs::cipher_suite::TLS13_AES_128_GCM_SHA256],
        kx_groups: vec![rustls::crypto::aws_lc_rs::kx_group::X25519],
        ..base
    });
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(set.ca_pem.as_bytes()).unwrap())
        .unwrap();
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .unwrap();
    let mut client = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_webpki_verifier(verifier)
        .with_no_client_auth();
    client.resumption = Resumption::disabled();
    let chain: Vec<_> = CertificateDer::pem_slice_iter(
        set.chain_pem(tlsmatrix_model::scenario::Chain::One)
            .as_bytes(),
    )
    .collect::<Result<_, _>>()
    .unwrap();
    let key = PrivateKeyDer::from_pem_slice(set.key_pem.as_bytes()).unwrap();
    let mut server = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    server.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
    server.send_tls13_tickets = 0;
    (Arc::new(client), Arc::new(server))
}

fn raw_handshake(client: &Arc<ClientConfig>, server: &Arc<ServerConfig>) {
    let name = ServerName::try_from("localhost").unwrap();
    let mut c = ClientConnection::new(client.clone(), name).unwrap();
    let mut s = ServerConnection::new(server.clone()).unwrap();
    let mut buf = Vec::with_capacity(8192);
    while c.is_handshaking() || s.is_handshaking() {
        while c.wants_write() {
            c.write_tls(&mut buf).unwrap();
        }
        let mut rd = &buf[..];
        while !rd.is_empty() {
            s.read_tls(&mut rd).unwrap();
            s.process_new_packets().unwrap();
        }
        buf.clear();
        while s.wants_write() {
            s.write_tls(&mut buf).unwrap();
        }
        let mut rd = &buf[..];
        while !rd.is_empty() {
            c.read_tls(&mut rd).unwrap();
            c.process_new_packets().unwrap();
        }
        buf.clear();
    }
}

/// Mean ns per handshake over batches of `n`.
fn sample(n: u32, mut f: impl FnMut() -> u64) -> f64 {
    (0..n).map(|_| f()).sum::<u64>() as f64 / f64::from(n)
}

fn main() {
    let dir = std::env::temp_dir().join("tlsmatrix-bench-certs");
    let set = certs::load_or_generate(&dir, SigAlg::EcdsaP256).unwrap();
    let (rc, rs) = raw_configs(&set);

    let scenario: Scenario = SCENARIO.parse().unwrap();
    let params = scenario.params();
    let lib = tlsmatrix_impls::library("rustls-aws-lc").unwrap();
    let cfg = EndpointConfig::for_scenario(&scenario, Arc::new(set));
    let cf = lib.factory(Side::Client, &cfg).unwrap();
    let sf = lib.factory(Side::Server, &cfg).unwrap();

    let raw_once = || {
        let t = Instant::now();
        raw_handshake(&rc, &rs);
        t.elapsed().as_nanos() as u64
    };
    let harness_once = || {
        let p = pair::handshake(cf.as_ref(), sf.as_ref(), &params).unwrap();
        p.client_ns + p.server_ns
    };

    // Warm up both and size the batch.
    let t = Instant::now();
    let mut warm = 0;
    while t.elapsed() < Duration::from_millis(500) {
        raw_once();
        harness_once();
        warm += 1;
    }
    // Each warm-up round ran one of each, so one handshake took about elapsed / (2 * warm).
    let per = t.elapsed().as_secs_f64() / (2.0 * f64::from(warm));
    let batch = ((SAMPLE_TIME.as_secs_f64() / per) as u32).max(1);

    let (mut raw, mut harness) = (Vec::new(), Vec::new());
    for _ in 0..SAMPLES {
        raw.push(sample(batch, raw_once));
        harness.push(sample(batch, harness_once));
    }
    let r = stats::summarize(&raw).unwrap();
    let h = stats::summarize(&harness).unwrap();
    let ratios: Vec<f64> = harness.iter().zip(&raw).map(|(h, r)| h / r).collect();
    let q = stats::summarize(&ratios).unwrap();
    println!("{SCENARIO}, rustls-aws-lc, {SAMPLES} samples of {batch} handshakes");
    println!(
        "  raw loop (wall, whole handshake): {:>9.0} ns  95% CI {:.0}-{:.0}",
        r.median, r.ci_low, r.ci_high
    );
    println!(
        "  tlsmatrix (client + server ns):   {:>9.0} ns  95% CI {:.0}-{:.0}",
        h.median, h.ci_low, h.ci_high
    );
    println!(
        "  tlsmatrix / raw: {:.3} (95% CI {:.3}-{:.3}); overhead {:+.1}%",
        q.median,
        q.ci_low,
        q.ci_high,
        (q.median - 1.0) * 100.0
    );
}
