//! Does the *relative* speed of two crypto libraries drift over minutes on this machine?
//!
//! Handshake factors between stacks on different crypto once moved from run to run while
//! factors between aws-lc stacks held. This benchmark takes TLS out of the picture: in one
//! process, on one thread, it samples the operations a handshake spends most on (ECDSA P-256
//! signing and an X25519 key exchange) with aws-lc (through aws-lc-rs), ring and the system
//! OpenSSL, 20 ms each in rotating order, and prints each library's rate against aws-lc's per
//! window. Here the ratios held within 1% across minutes, processes and cores, which pointed
//! at the harness (its batch sizing, `workload::HandshakeSampler`) rather than the machine.
//!
//! `make drift` runs it (`-- --minutes M --window-s S`); it is not a test.

use std::time::{Duration, Instant};

use tlsmatrix_model::stats::median;

const SAMPLE: Duration = Duration::from_millis(20);
const MESSAGE: &[u8] = b"a handshake transcript hash stands in here";

/// One operation of one library, run once per call.
type Op = Box<dyn FnMut()>;

fn aws_lc_sign() -> Op {
    use aws_lc_rs::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_ASN1_SIGNING as ALG};
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ALG, &rng).unwrap();
    let key = EcdsaKeyPair::from_pkcs8(&ALG, pkcs8.as_ref()).unwrap();
    Box::new(move || {
        std::hint::black_box(key.sign(&rng, MESSAGE).unwrap());
    })
}

fn ring_sign() -> Op {
    use ring::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_ASN1_SIGNING as ALG};
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ALG, &rng).unwrap();
    let key = EcdsaKeyPair::from_pkcs8(&ALG, pkcs8.as_ref(), &rng).unwrap();
    Box::new(move || {
        std::hint::black_box(key.sign(&rng, MESSAGE).unwrap());
    })
}

fn openssl_sign() -> Op {
    use openssl::ec::{EcGroup, EcKey};
    use openssl::nid::Nid;
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
    let key = EcKey::generate(&group).unwrap();
    Box::new(move || {
        let digest = openssl::sha::sha256(MESSAGE);
        std::hint::black_box(openssl::ecdsa::EcdsaSig::sign(&digest, &key).unwrap());
    })
}

fn aws_lc_x25519() -> Op {
    use aws_lc_rs::agreement::{agree_ephemeral, EphemeralPrivateKey, UnparsedPublicKey, X25519};
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let peer = EphemeralPrivateKey::generate(&X25519, &rng).unwrap();
    let peer = peer.compute_public_key().unwrap().as_ref().to_vec();
    Box::new(move || {
        let ours = EphemeralPrivateKey::generate(&X25519, &rng).unwrap();
        std::hint::black_box(ours.compute_public_key().unwrap());
        let shared = agree_ephemeral(ours, UnparsedPublicKey::new(&X25519, &peer), (), |k| {
            Ok(k.len())
        });
        std::hint::black_box(shared.unwrap());
    })
}

fn ring_x25519() -> Op {
    use ring::agreement::{agree_ephemeral, EphemeralPrivateKey, UnparsedPublicKey, X25519};
    let rng = ring::rand::SystemRandom::new();
    let peer = EphemeralPrivateKey::generate(&X25519, &rng).unwrap();
    let peer = peer.compute_public_key().unwrap().as_ref().to_vec();
    Box::new(move || {
        let ours = EphemeralPrivateKey::generate(&X25519, &rng).unwrap();
        std::hint::black_box(ours.compute_public_key().unwrap());
        let shared = agree_ephemeral(ours, &UnparsedPublicKey::new(&X25519, &peer), |k| k.len());
        std::hint::black_box(shared.unwrap());
    })
}

fn openssl_x25519() -> Op {
    use openssl::derive::Deriver;
    use openssl::pkey::PKey;
    let peer = PKey::generate_x25519().unwrap();
    let peer =
        PKey::public_key_from_raw_bytes(&peer.raw_public_key().unwrap(), openssl::pkey::Id::X25519)
            .unwrap();
    Box::new(move || {
        let ours = PKey::generate_x25519().unwrap();
        std::hint::black_box(ours.raw_public_key().unwrap());
        let mut d = Deriver::new(&ours).unwrap();
        d.set_peer(&peer).unwrap();
        std::hint::black_box(d.derive_to_vec().unwrap());
    })
}

/// Operations per second over one sample of about `SAMPLE`.
fn sample(op: &mut Op) -> f64 {
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < SAMPLE {
        op();
        n += 1;
    }
    n as f64 / start.elapsed().as_secs_f64()
}

fn arg(args: &[String], name: &str, default: f64) -> f64 {
    match args.iter().position(|a| a == name) {
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} takes a number")),
        None => default,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "crypto_drift [--minutes M (default 16)] [--window-s S (default 30)]\n\
             Samples ECDSA P-256 signing and X25519 with aws-lc, ring and the system OpenSSL,\n\
             20 ms each in rotating order, and prints each library's rate relative to aws-lc's\n\
             per window, then how far each ratio moved across the windows (max/min)."
        );
        return;
    }
    let total = Duration::from_secs_f64(arg(&args, "--minutes", 16.0) * 60.0);
    let window = Duration::from_secs_f64(arg(&args, "--window-s", 30.0));
    // (name, op); aws-lc first in each pair: ratios are other / aws-lc.
    let mut arms: Vec<(&str, Op)> = vec![
        ("sign aws-lc", aws_lc_sign()),
        ("sign ring", ring_sign()),
        ("sign openssl", openssl_sign()),
        ("x25519 aws-lc", aws_lc_x25519()),
        ("x25519 ring", ring_x25519()),
        ("x25519 openssl", openssl_x25519()),
    ];
    let ratios = [(1, 0), (2, 0), (4, 3), (5, 3)];
    let label =
        |(a, b): (usize, usize)| format!("{}/{}", arms[a].0, arms[b].0.split(' ').nth(1).unwrap());
    let labels: Vec<String> = ratios.iter().map(|r| label(*r)).collect();
    println!(
        "openssl: {}; one line per {:.0} s window, each figure the median of per-round ratios",
        openssl::version::version(),
        window.as_secs_f64()
    );
    println!("{:>6}  {}", "t (s)", labels.join("  "));
    let started = Instant::now();
    let mut series: Vec<Vec<f64>> = vec![Vec::new(); ratios.len()];
    let mut round = 0usize;
    while started.elapsed() < total {
        let window_start = Instant::now();
        let mut per_round: Vec<Vec<f64>> = vec![Vec::new(); ratios.len()];
        while window_start.elapsed() < window {
            let mut rates = vec![0.0; arms.len()];
            for k in 0..arms.len() {
                let i = (k + round) % arms.len();
                rates[i] = sample(&mut arms[i].1);
            }
            for (j, (a, b)) in ratios.iter().enumerate() {
                per_round[j].push(rates[*a] / rates[*b]);
            }
            round += 1;
        }
        let medians: Vec<f64> = per_round.iter().map(|v| median(v)).collect();
        for (s, m) in series.iter_mut().zip(&medians) {
            s.push(*m);
        }
        let cells: Vec<String> = medians
            .iter()
            .zip(&labels)
            .map(|(m, l)| format!("{m:>w$.3}", w = l.len()))
            .collect();
        println!(
            "{:>6.0}  {}",
            started.elapsed().as_secs_f64(),
            cells.join("  ")
        );
    }
    println!("\nacross {} windows:", series[0].len());
    for (s, l) in series.iter().zip(&labels) {
        let lo = s.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = s.iter().copied().fold(0.0, f64::max);
        println!("  {l}: {lo:.3} to {hi:.3}, max/min {:.3}", hi / lo);
    }
}
