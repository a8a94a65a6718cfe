//! Does the harness cost anything? A minimal hand-written rustls loop (two connections,
//! two byte vectors, no traits, no per-step clocks) against the same handshake run through
//! tlsmatrix's adapter and pair driver, same crate, same configuration, interleaved sample by
//! sample so machine drift hits both alike.
//!
//! Run: `cargo bench -p tlsmatrix-impls --bench raw_rustls_loop` (or `make bench`).

use std::sync::Arc;
use std::time::{Duration, Instant};

mod raw;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, ServerConfig, ServerConnection};
use tlsmatrix_harness::certs;
use tlsmatrix_harness::pair;
use tlsmatrix_model::scenario::SigAlg;
use tlsmatrix_model::stats;

const SCENARIO: &str = "handshake-tls13-ecdsa-p256-x25519-full";
const SAMPLES: usize = 30;
const SAMPLE_TIME: Duration = Duration::from_millis(200);

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
    let (rc, rs) = raw::configs(&set);

    let (params, cf, sf) = raw::harness(SCENARIO, set);

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
