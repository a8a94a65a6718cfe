//! Where each side's time goes (`--measure profile`): the cipher, copies, the allocator, the
//! kernel, or the rest (framing, buffer management, the library's own bookkeeping).
//!
//! The driver attaches `perf record -e cpu-clock` to its own thread, with sample times on
//! CLOCK_MONOTONIC, and logs the start and end of every call each side makes on the same
//! clock. Both sides of an in-memory pair run on one thread in turns, so a perf sample taken
//! inside a call belongs to that call's side, with no call stacks to unwind (the libraries'
//! assembly and frame-pointer-less builds make unwinding unreliable), and samples outside
//! any call (the harness) are dropped. Each sample is then classed by its function's name.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};

use tlsmatrix_harness::pair::Meter;
use tlsmatrix_model::side::Side;

use crate::split::{self, Class};

/// What a sampled function does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// The AEAD: AES, GCM's GHASH, ChaCha20, Poly1305, and their direct wrappers.
    Cipher,
    /// memcpy, memmove and memset.
    Copy,
    /// malloc and free of any allocator, and Rust's allocation entry points.
    Alloc,
    /// Anything the kernel ran on the thread's behalf (page faults, system calls).
    Kernel,
    /// Everything else: record framing, buffer management, state machines.
    Other,
    /// A function perf could not name (a stripped library, such as Debian's libcrypto): it
    /// may be the cipher or anything else, so a profile with many is not reported.
    Unnamed,
}

impl Category {
    /// The categories a profile reports, in its metrics' order.
    pub const REPORTED: [Category; 5] = [
        Category::Cipher,
        Category::Copy,
        Category::Alloc,
        Category::Kernel,
        Category::Other,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// Name fragments of each library's AEAD code (aws-lc, ring, OpenSSL, BoringSSL), matched
/// in lower case: `aes_gcm_encrypt_avx512`, `ring::aead::aes_gcm::seal`,
/// `gcm_ghash_vpclmulqdq_avx2`, `ChaCha20_ctr32`, `Poly1305_blocks`, `ossl_gcm_*`.
const CIPHER: [&str; 7] = [
    "aes", "gcm", "ghash", "gmult", "chacha", "poly1305", "clmul",
];
const COPY: [&str; 3] = ["memcpy", "memmove", "memset"];
/// glibc's (`_int_malloc`, `tcache`), jemalloc's (`je_`), mimalloc's (`mi_`), Rust's entry
/// points, and tlsmatrix's own malloc wrapper (`tlsmatrix_measure::heap`).
const ALLOC: [&str; 12] = [
    "malloc",
    "free",
    "realloc",
    "calloc",
    "_int_",
    "tcache",
    "je_",
    "mi_",
    "__rust_alloc",
    "__rust_dealloc",
    "__rust_realloc",
    "tlsmatrix_measure::heap",
];

/// Classes a function by its symbol and the object it lies in.
pub fn classify(symbol: &str, dso: &str) -> Category {
    if dso.contains("kernel.kallsyms") {
        return Category::Kernel;
    }
    if symbol.is_empty() || symbol == "[unknown]" {
        return Category::Unnamed;
    }
    let s = symbol.to_ascii_lowercase();
    if COPY.iter().any(|f| s.contains(f)) {
        Category::Copy
    } else if ALLOC.iter().any(|f| s.contains(f)) {
        Category::Alloc
    } else if CIPHER.iter().any(|f| s.contains(f)) {
        Category::Cipher
    } else {
        Category::Other
    }
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: CLOCK_MONOTONIC with a valid pointer cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One call of one side, on CLOCK_MONOTONIC (the clock perf is told to stamp samples with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    pub start_ns: u64,
    pub end_ns: u64,
    pub side: Side,
    /// Which of the cell's samples the call belongs to.
    pub sample: usize,
}

/// Logs every call of each side, tagged with the current sample.
#[derive(Debug, Default)]
pub struct CallLog {
    pub calls: Vec<Call>,
    pub sample: usize,
}

impl Meter for CallLog {
    fn on<R>(&mut self, side: Side, f: impl FnOnce() -> R) -> R {
        let start_ns = monotonic_ns();
        let r = f();
        self.calls.push(Call {
            start_ns,
            end_ns: monotonic_ns(),
            side,
            sample: self.sample,
        });
        r
    }
}

/// One perf sample: when, its function, what that function does in bulk transfers, and the
/// object it lies in.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfSample {
    pub time_ns: u64,
    pub symbol: String,
    pub category: Category,
    pub object: String,
}

/// How many classes a handshake's samples fall in: every class of the list (the kernel's
/// only a profile sees).
pub use tlsmatrix_model::class::TIME_CLASSES;

/// A handshake sample's class (its place in the time split, `Class::all`), and whether it is
/// unnamed: the handshake's time split as its instructions are.
pub fn handshake_class(p: &PerfSample) -> (usize, bool) {
    let class = match p.category {
        Category::Kernel => Class::Kernel,
        Category::Unnamed => Class::Unnamed,
        _ => split::classify(&p.symbol),
    };
    (class.time_index(), class == Class::Unnamed)
}

/// A bulk sample's class ([`Category`]) and whether it is unnamed.
pub fn bulk_class(p: &PerfSample) -> (usize, bool) {
    (p.category.index(), p.category == Category::Unnamed)
}

/// Parses `perf script -F time,ip,sym,dso --ns` output: lines like
/// `  84507.548395148:  7f3a2c1d4e10 aws_lc_0_47_0_aes_gcm_encrypt_avx512+0x1a0 (/path/driver)`.
pub fn parse_script(text: &str) -> Vec<PerfSample> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((time, rest)) = line.trim_start().split_once(':') else {
            continue;
        };
        let Some((secs, nanos)) = time.split_once('.') else {
            continue;
        };
        let (Ok(secs), Ok(nanos)) = (secs.parse::<u64>(), nanos.parse::<u64>()) else {
            continue;
        };
        let rest = rest.trim();
        // The address, then the symbol (possibly with spaces, e.g. `<T as Trait>::f`) with
        // its offset, then the object in parentheses.
        let rest = rest.split_once(' ').map_or("", |(_, r)| r);
        let (symbol, dso) = match rest.rfind(" (") {
            Some(i) => (&rest[..i], rest[i + 2..].trim_end_matches(')')),
            None => ("", rest.trim_start_matches('(').trim_end_matches(')')),
        };
        let symbol = symbol.rsplit_once("+0x").map_or(symbol, |(s, _)| s);
        out.push(PerfSample {
            time_ns: secs * 1_000_000_000 + nanos,
            symbol: symbol.to_string(),
            category: classify(symbol, dso),
            object: dso.to_string(),
        });
    }
    out
}

/// Per sample of the cell and per side, how many perf samples fell in each class (a bulk
/// transfer's [`Category`], indexed by `Category as usize`, or a handshake's
/// [`handshake_class`]), how many of them were unnamed, and the objects of those.
#[derive(Debug, Clone, PartialEq)]
pub struct SideTally<const N: usize = 6> {
    pub counts: [u32; N],
    pub unnamed: u32,
    pub unnamed_in: Vec<String>,
}

impl<const N: usize> Default for SideTally<N> {
    fn default() -> Self {
        SideTally {
            counts: [0; N],
            unnamed: 0,
            unnamed_in: Vec::new(),
        }
    }
}

pub type Tally<const N: usize = 6> = Vec<[SideTally<N>; 2]>;

/// Charges each perf sample to the call it fell in, in the class `class` gives it (and
/// whether it is unnamed); samples outside every call (the harness between calls) are not
/// counted. `calls` are in time order, as logged.
pub fn attribute<const N: usize>(
    calls: &[Call],
    perf: &[PerfSample],
    samples: usize,
    class: impl Fn(&PerfSample) -> (usize, bool),
) -> Tally<N> {
    let mut tally: Tally<N> = vec![Default::default(); samples];
    let mut sorted: Vec<&PerfSample> = perf.iter().collect();
    sorted.sort_by_key(|p| p.time_ns);
    let mut i = 0;
    for p in sorted {
        while i < calls.len() && calls[i].end_ns < p.time_ns {
            i += 1;
        }
        let Some(c) = calls.get(i) else {
            break;
        };
        if c.start_ns <= p.time_ns && c.sample < samples {
            let t = &mut tally[c.sample][c.side.index()];
            let (at, unnamed) = class(p);
            t.counts[at] += 1;
            if unnamed {
                t.unnamed += 1;
                if !t.unnamed_in.contains(&p.object) {
                    t.unnamed_in.push(p.object.clone());
                }
            }
        }
    }
    tally
}

/// More unnamed samples than this share of a side's make its profile unreportable.
pub const MAX_UNNAMED: f64 = 0.05;

impl<const N: usize> SideTally<N> {
    pub fn total(&self) -> u32 {
        self.counts.iter().sum()
    }

    pub fn unnamed_share(&self) -> f64 {
        f64::from(self.unnamed) / f64::from(self.total().max(1))
    }

    /// Each class's share of the side's samples.
    pub fn class_shares(&self) -> [f64; N] {
        let total = f64::from(self.total().max(1));
        self.counts.map(|n| f64::from(n) / total)
    }
}

impl SideTally {
    /// The share of each reported category (unnamed samples, kept few, count as other).
    pub fn shares(&self) -> [f64; 5] {
        let total = f64::from(self.total().max(1));
        Category::REPORTED.map(|c| {
            let mut n = self.counts[c.index()];
            if c == Category::Other {
                n += self.counts[Category::Unnamed.index()];
            }
            f64::from(n) / total
        })
    }
}

/// `perf record` attached to this thread, writing to a private file, until stopped.
pub struct PerfRecording {
    child: Option<Child>,
    data: PathBuf,
}

/// perf's sampling rate: about one sample per 250 µs of a side's calls.
const FREQUENCY: u32 = 3999;

impl PerfRecording {
    /// Starts sampling this thread; perf takes a few hundred milliseconds to attach, which
    /// the caller must give it (the warm-up) before the samples that count.
    pub fn start() -> Result<PerfRecording> {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) };
        let data = std::env::temp_dir().join(format!(
            "tlsmatrix-profile-{}-{tid}.data",
            std::process::id()
        ));
        let child = Command::new("perf")
            .args(["record", "-q", "-e", "cpu-clock", "-F"])
            .arg(FREQUENCY.to_string())
            .args(["-k", "CLOCK_MONOTONIC", "-t"])
            .arg(tid.to_string())
            .arg("-o")
            .arg(&data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("--measure profile runs `perf record`, which cannot be started; install linux-perf (scripts/setup does)")?;
        Ok(PerfRecording {
            child: Some(child),
            data,
        })
    }

    /// Stops perf (SIGINT, as a terminal would) and reads its samples back.
    pub fn finish(mut self) -> Result<Vec<PerfSample>> {
        let child = self.child.take().expect("started");
        // SAFETY: signalling a child we started and have not reaped.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child.wait_with_output()?;
        // perf exits 0 on SIGINT; what matters is that it wrote its file (it cannot when,
        // say, perf_event_paranoid forbids sampling).
        ensure!(
            self.data.exists(),
            "perf record wrote no samples ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
        script(&self.data)
    }
}

impl Drop for PerfRecording {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_file(&self.data);
    }
}

fn script(data: &Path) -> Result<Vec<PerfSample>> {
    let out = Command::new("perf")
        .args(["script", "-F", "time,ip,sym,dso", "--ns", "-i"])
        .arg(data)
        .output()
        .context("perf script")?;
    if !out.status.success() {
        bail!(
            "perf script failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(parse_script(&String::from_utf8_lossy(&out.stdout)))
}

/// How long perf is given to attach before the samples that count.
pub const ATTACH: Duration = Duration::from_millis(600);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_are_classed_by_name() {
        let lib = "/x/tlsmatrix-driver";
        for (sym, want) in [
            ("aws_lc_0_47_0_aes_gcm_encrypt_avx512", Category::Cipher),
            ("ring::aead::aes_gcm::seal", Category::Cipher),
            (
                "ring_core_0_17_14__gcm_ghash_vpclmulqdq_avx2_1",
                Category::Cipher,
            ),
            ("ChaCha20_ctr32_avx512", Category::Cipher),
            ("Poly1305_blocks_avx512", Category::Cipher),
            ("__memmove_avx512_unaligned_erms", Category::Copy),
            ("__memset_avx512_unaligned_erms", Category::Copy),
            ("_int_malloc", Category::Alloc),
            ("cfree", Category::Alloc),
            ("je_large_ralloc", Category::Alloc),
            ("tlsmatrix_measure::heap::malloc", Category::Alloc),
            (
                "rustls::conn::ConnectionCore<Data>::process_msg",
                Category::Other,
            ),
            ("", Category::Unnamed),
            ("[unknown]", Category::Unnamed),
        ] {
            assert_eq!(classify(sym, lib), want, "{sym}");
        }
        assert_eq!(
            classify("clear_page_erms", "[kernel.kallsyms]"),
            Category::Kernel
        );
    }

    #[test]
    fn handshake_samples_are_classed_as_the_instruction_split_classes_functions() {
        let at = |symbol: &str, object: &str| PerfSample {
            time_ns: 0,
            symbol: symbol.into(),
            category: classify(symbol, object),
            object: object.into(),
        };
        let lib = "/x/tlsmatrix-driver";
        for (sym, object, want) in [
            ("aws_lc_0_47_0_ecp_nistz256_point_mul", lib, Class::Crypto),
            ("aws_lc_0_47_0_aes_gcm_encrypt_avx512", lib, Class::Crypto),
            ("EVP_MD_fetch", lib, Class::Provider),
            ("X509_verify_cert", lib, Class::Parsing),
            ("_int_malloc", lib, Class::Allocation),
            ("pthread_rwlock_rdlock", lib, Class::Locks),
            ("__memmove_avx_unaligned_erms", lib, Class::Copies),
            ("[unknown]", "/usr/lib/libcrypto.so.3", Class::Unnamed),
            ("tls_process_server_hello", lib, Class::Other),
            ("clear_page_erms", "[kernel.kallsyms]", Class::Kernel),
        ] {
            let want = (want.time_index(), want == Class::Unnamed);
            assert_eq!(handshake_class(&at(sym, object)), want, "{sym}");
        }
        let calls = [Call {
            start_ns: 0,
            end_ns: 100,
            side: Side::Server,
            sample: 0,
        }];
        let perf = [
            at("X509_verify_cert", lib),
            at("[unknown]", "/usr/lib/libcrypto.so.3"),
            at("ecp_nistz256_point_mul", lib),
            at("ecp_nistz256_point_mul", lib),
        ];
        let t: Tally<TIME_CLASSES> = attribute(&calls, &perf, 1, handshake_class);
        let server = &t[0][1];
        let mut counts = [0; TIME_CLASSES];
        counts[Class::Crypto.time_index()] = 2;
        counts[Class::Parsing.time_index()] = 1;
        counts[Class::Unnamed.time_index()] = 1;
        assert_eq!(server.counts, counts);
        assert_eq!(server.unnamed_share(), 0.25);
        assert_eq!(server.unnamed_in, ["/usr/lib/libcrypto.so.3"]);
        assert_eq!(server.class_shares().iter().sum::<f64>(), 1.0);
    }

    #[test]
    fn perf_script_lines_are_parsed_with_their_times() {
        let text = "  84507.548395148:      7f3a2c1d4e10 aws_lc_0_47_0_aes_gcm_encrypt_avx512+0x1a0 (/x/driver)\n\
                    \x20 84507.548641424:  55d1 <rustls::vecbuf::ChunkVecBuffer as std::io::Read>::read+0x3 (/x/driver)\n\
                    \x20 84507.548891306:  ffffffff8100 clear_page_erms+0x7 ([kernel.kallsyms])\n\
                    \x20 84507.548991306:  0 [unknown] ([unknown])\n\
                    not a sample line\n";
        let s = parse_script(text);
        assert_eq!(s.len(), 4);
        assert_eq!(s[0].time_ns, 84_507_548_395_148);
        assert_eq!(s[0].category, Category::Cipher);
        assert_eq!(s[1].category, Category::Other);
        assert_eq!(s[2].category, Category::Kernel);
        assert_eq!(s[3].category, Category::Unnamed);
        assert_eq!(s[3].object, "[unknown]");
    }

    #[test]
    fn samples_are_charged_to_the_call_they_fell_in() {
        let call = |start_ns, end_ns, side, sample| Call {
            start_ns,
            end_ns,
            side,
            sample,
        };
        let calls = [
            call(100, 200, Side::Client, 0),
            call(300, 400, Side::Server, 0),
            call(500, 600, Side::Client, 1),
        ];
        let at = |time_ns, category| PerfSample {
            time_ns,
            symbol: String::new(),
            category,
            object: "/lib/libx.so".into(),
        };
        let perf = [
            at(150, Category::Cipher),
            at(250, Category::Other), // between calls: the harness
            at(399, Category::Copy),
            at(550, Category::Alloc),
            at(560, Category::Unnamed),
            at(50, Category::Other),  // before the first call
            at(700, Category::Other), // after the last
        ];
        let t: Tally = attribute(&calls, &perf, 2, bulk_class);
        assert_eq!(t[0][0].counts, [1, 0, 0, 0, 0, 0]);
        assert_eq!(t[0][1].counts, [0, 1, 0, 0, 0, 0]);
        assert_eq!(t[1][0].counts, [0, 0, 1, 0, 0, 1]);
        assert_eq!(t[1][0].unnamed_in, ["/lib/libx.so"]);
        assert_eq!(t[1][0].unnamed_share(), 0.5);
        assert_eq!(t[1][0].shares(), [0.0, 0.0, 0.5, 0.0, 0.5]);
        assert_eq!(t[1][1].total(), 0);
    }
}
