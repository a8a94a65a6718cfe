//! What one TLS record costs each library's AEAD, by record size: a fixed cost per record
//! and a cost per byte.
//!
//! rustls-ring receives 1 KiB writes faster than rustls-aws-lc and 16 KiB writes slower,
//! whoever sends. The bulk ceiling (`--measure ceiling`) shows the same flip in the two
//! AEADs alone; this benchmark says why. In one process, on one thread, it seals and opens
//! records of each size through each library's own API (the ceiling's `RecordAead`s), each
//! library in turn for a short sample, rotating the order each round, and prints the time per
//! record (the median over rounds), each library's speed against aws-lc's at each size, and a
//! least-squares line per library over the sizes from 1 KiB: its intercept is the fixed cost
//! of a record, its slope the marginal rate.
//!
//! `make aead-sizes` runs it (`-- --seconds S`); it is not a test.

use std::time::{Duration, Instant};

use tlsmatrix_harness::aead::LibraryAead;
use tlsmatrix_model::scenario::Aead;
use tlsmatrix_model::stats::median;

const SAMPLE: Duration = Duration::from_millis(5);
/// Plaintext per record, TLS 1.3's content type byte included (as the ceiling seals it).
const SIZES: [usize; 10] = [1, 17, 65, 257, 1025, 2049, 4097, 8193, 12289, 16385];

/// A buffer with room for `cap` bytes whose start lies `offset` bytes past a 64-byte
/// boundary (a cache line; glibc's malloc aligns to 16, so where a record starts in its
/// line is up to the heap's layout).
fn buffer_at(offset: usize, cap: usize) -> Vec<u8> {
    let mut passed_over = Vec::new();
    loop {
        let v: Vec<u8> = Vec::with_capacity(cap);
        if v.as_ptr() as usize % 64 == offset {
            return v;
        }
        passed_over.push(v);
        assert!(
            passed_over.len() < 1000,
            "no buffer at {offset} past a cache line"
        );
    }
}

/// Mean nanoseconds to seal and then open one record of `len` bytes, over about `SAMPLE`.
fn sample(lib: &mut LibraryAead, len: usize, offset: usize, seq: &mut u64) -> f64 {
    let header = [23, 3, 3, (len >> 8) as u8, len as u8];
    let mut buf = buffer_at(offset, len + 16);
    let start = Instant::now();
    let mut n = 0u64;
    while n < 16 || start.elapsed() < SAMPLE {
        buf.clear();
        buf.resize(len, 0x5a);
        lib.aead.seal(*seq, &header, &mut buf).expect("seal");
        lib.aead.open(*seq, &header, &mut buf).expect("open");
        assert_eq!(buf.len(), len, "a record did not round-trip");
        *seq += 1;
        n += 1;
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

/// A bad command line: one sentence and exit status 2, as the tlsmatrix commands do.
fn bad_input(message: &str) -> ! {
    eprintln!("aead_record_cost: {message}");
    std::process::exit(2)
}

/// Least-squares line through (x, y): (intercept, slope).
fn line(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let sxy: f64 = points.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = points.iter().map(|(x, _)| (x - mx).powi(2)).sum();
    let slope = sxy / sxx;
    (my - slope * mx, slope)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "aead_record_cost [--seconds S (default 20)] [--sizes N,N,...] [--libs aws-lc,ring,openssl]\n\
             Seals and opens AES-128-GCM records of {SIZES:?} bytes with aws-lc (aws-lc-rs),\n\
             ring and the system OpenSSL in turns, and prints the time per record by size,\n\
             each library's speed against aws-lc's, and each library's fixed cost per record\n\
             and marginal rate (a line fitted over the sizes from 1 KiB)."
        );
        return;
    }
    let value = |name: &str| {
        args.iter().position(|a| a == name).map(|i| {
            args.get(i + 1)
                .unwrap_or_else(|| bad_input(&format!("{name} takes a value")))
        })
    };
    let seconds = value("--seconds").map_or(20.0, |v| {
        v.parse::<f64>()
            .ok()
            .filter(|s| *s > 0.0)
            .unwrap_or_else(|| bad_input("--seconds takes a positive number"))
    });
    let sizes: Vec<usize> = value("--sizes").map_or(SIZES.to_vec(), |v| {
        v.split(',')
            .map(|n| {
                n.parse()
                    .ok()
                    .filter(|n| (1..=16385).contains(n))
                    .unwrap_or_else(|| bad_input("--sizes takes byte counts from 1 to 16385"))
            })
            .collect()
    });
    let offset: usize = value("--offset").map_or(0, |v| {
        v.parse()
            .ok()
            .filter(|o| o % 16 == 0 && *o < 64)
            .unwrap_or_else(|| bad_input("--offset takes 0, 16, 32 or 48"))
    });
    use tlsmatrix_impls::ceiling::{aws_lc, evp, ring_aead};
    let which = Aead::Aes128Gcm;
    let mut libs: Vec<(&str, LibraryAead)> = vec![
        ("aws-lc", aws_lc::record_aead(which).unwrap()),
        ("ring", ring_aead::record_aead(which).unwrap()),
        ("openssl", evp::record_aead(which).unwrap()),
    ];
    // Profiling one library alone (under perf) needs the others out of the way; ratios are
    // then against the first library left.
    if let Some(only) = value("--libs") {
        let keep: Vec<&str> = only.split(',').collect();
        libs.retain(|(n, _)| keep.contains(n));
        if libs.is_empty() {
            bad_input("--libs takes names from aws-lc,ring,openssl");
        }
    }
    let total = Duration::from_secs_f64(seconds);
    let started = Instant::now();
    // times[lib][size]: one mean per round.
    let mut times = vec![vec![Vec::new(); sizes.len()]; libs.len()];
    let mut seq = 0u64;
    let mut round = 0usize;
    while started.elapsed() < total {
        for (s, &len) in sizes.iter().enumerate() {
            for k in 0..libs.len() {
                let i = (k + round) % libs.len();
                times[i][s].push(sample(&mut libs[i].1, len, offset, &mut seq));
            }
        }
        round += 1;
    }
    println!(
        "AES-128-GCM, seal + open of one record starting {offset} bytes into a cache line; {round} rounds over {seconds:.0} s; openssl: {}",
        openssl::version::version()
    );
    let medians: Vec<Vec<f64>> = times
        .iter()
        .map(|per_size| per_size.iter().map(|v| median(v)).collect())
        .collect();
    assert!(
        medians
            .iter()
            .flatten()
            .all(|ns| ns.is_finite() && *ns > 0.0),
        "a time per record that is not a positive number: {medians:?}"
    );
    let names: Vec<&str> = libs.iter().map(|(n, _)| *n).collect();
    println!(
        "{:>6}  {}  {}",
        "bytes",
        names
            .iter()
            .map(|n| format!("{:>12}", format!("{n} ns")))
            .collect::<Vec<_>>()
            .join(""),
        names[1..]
            .iter()
            .map(|n| format!("{:>16}", format!("{n}/aws-lc speed")))
            .collect::<Vec<_>>()
            .join("")
    );
    for (s, len) in sizes.iter().enumerate() {
        let ns: String = medians.iter().map(|m| format!("{:>12.0}", m[s])).collect();
        let ratios: String = medians[1..]
            .iter()
            .map(|m| format!("{:>16.3}", medians[0][s] / m[s]))
            .collect();
        println!("{len:>6}  {ns}  {ratios}");
    }
    println!("\nline over the sizes from 1 KiB (seal + open):");
    for (name, m) in names.iter().zip(&medians) {
        let points: Vec<(f64, f64)> = sizes
            .iter()
            .zip(m)
            .filter(|(len, _)| **len >= 1024)
            .map(|(len, ns)| (*len as f64, *ns))
            .collect();
        if points.len() < 2 {
            continue;
        }
        let (fixed, per_byte) = line(&points);
        println!(
            "  {name:>8}: {fixed:>5.0} ns per record + {:.3} ns per byte ({:.0} MB/s each way at the margin)",
            per_byte,
            2.0 * 1e3 / per_byte
        );
    }
}
