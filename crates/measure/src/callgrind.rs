//! Instruction counts from inside a process running under `valgrind --tool=callgrind
//! --collect-atstart=no`: collection is switched on only around the calls of the side being
//! counted, and each count is dumped and read back from callgrind's own output file.
//!
//! The client requests are valgrind's documented magic instruction sequence (valgrind.h and
//! callgrind.h); natively it does nothing and returns the default, which is how
//! [`running_on_valgrind`] tells whether anyone is counting.

use std::path::PathBuf;

use anyhow::{bail, ensure, Context, Result};

use tlsmatrix_harness::pair::Meter;
use tlsmatrix_model::side::Side;

use crate::split::{self, Split};

const RUNNING_ON_VALGRIND: u64 = 0x1001;
/// `VG_USERREQ_TOOL_BASE('C','T')` and the requests after it, in callgrind.h's order.
const CALLGRIND_BASE: u64 = (b'C' as u64) << 24 | (b'T' as u64) << 16;
const ZERO_STATS: u64 = CALLGRIND_BASE + 1;
const TOGGLE_COLLECT: u64 = CALLGRIND_BASE + 2;
const DUMP_STATS_AT: u64 = CALLGRIND_BASE + 3;
const START_INSTRUMENTATION: u64 = CALLGRIND_BASE + 4;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn client_request(default: u64, request: u64, arg1: u64) -> u64 {
    let args: [u64; 6] = [request, arg1, 0, 0, 0, 0];
    let result: u64;
    // SAFETY: the four rotations of rdi add up to 128 bits and leave it unchanged, and
    // `xchg rbx, rbx` changes nothing: natively the sequence is a no-op that keeps rdx (the
    // default); under valgrind it is the request, which reads `args`.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") args.as_ptr(),
            inout("rdx") default => result,
            inout("rdi") 0u64 => _,
        );
    }
    result
}

#[cfg(not(target_arch = "x86_64"))]
fn client_request(default: u64, _request: u64, _arg1: u64) -> u64 {
    default
}

/// Whether this process runs under valgrind (any tool).
pub fn running_on_valgrind() -> bool {
    client_request(0, RUNNING_ON_VALGRIND, 0) != 0
}

/// Where callgrind writes and how many dumps were made so far.
pub struct Counter {
    /// The `--callgrind-out-file` given to valgrind, with `%p` already replaced.
    out_file: PathBuf,
    dumps: u32,
    /// Whether instrumentation is on: the driver runs under `--instr-atstart=no`, and the
    /// first [`Counter::zero`] switches it on for good (switching flushes valgrind's
    /// translations, so once, after the warm-up).
    instrumenting: bool,
}

impl Counter {
    /// `out_file` is the `--callgrind-out-file` pattern; `%p` becomes this process's id, as
    /// callgrind itself expands it.
    pub fn new(out_file: &str) -> Result<Counter> {
        if !cfg!(target_arch = "x86_64") {
            bail!("instruction counting is implemented for x86_64 only");
        }
        if !running_on_valgrind() {
            bail!("--measure instructions needs the driver to run under valgrind --tool=callgrind --collect-atstart=no --instr-atstart=no; `tlsmatrix run --measure instructions` starts it so");
        }
        let out_file = PathBuf::from(out_file.replace("%p", &std::process::id().to_string()));
        // glibc skips a mutex's atomic instructions while its process has only ever had one
        // thread (`__libc_single_threaded`): 1,000 lock/unlock pairs counted 0 bus events
        // single-threaded and 2,002 once a thread had been started, a rwlock's 2,000 either
        // way. A server is multi-threaded, so its locks are counted as one's are.
        std::thread::spawn(|| ())
            .join()
            .map_err(|_| anyhow::anyhow!("a thread that does nothing panicked"))?;
        Ok(Counter {
            out_file,
            dumps: 0,
            instrumenting: false,
        })
    }

    /// Forgets whatever was collected so far; the first call also switches instrumentation
    /// on, so every count begins after one.
    pub fn zero(&mut self) {
        if !self.instrumenting {
            client_request(0, START_INSTRUMENTATION, 0);
            self.instrumenting = true;
        }
        client_request(0, ZERO_STATS, 0);
    }

    /// A meter that collects only while `side`'s calls run.
    pub fn side(&mut self, side: Side) -> SideMeter {
        SideMeter { counted: side }
    }

    /// Dumps what was collected since the last dump or zero, reads the total back, and
    /// starts from zero again (callgrind zeroes on every dump).
    pub fn take(&mut self, label: &str) -> Result<u64> {
        Ok(self.take_split(label)?.0)
    }

    /// [`Counter::take`], with the dump's functions classed by what they do
    /// ([`crate::split`]); the parts sum to the total, or this fails.
    pub fn take_split(&mut self, label: &str) -> Result<(u64, Split)> {
        let c_label = std::ffi::CString::new(label).context("a dump label has no NUL")?;
        client_request(0, DUMP_STATS_AT, c_label.as_ptr() as u64);
        self.dumps += 1;
        // Callgrind names the n-th dump of a run `<out-file>.<n>`.
        let part = PathBuf::from(format!("{}.{}", self.out_file.display(), self.dumps));
        let text = std::fs::read_to_string(&part)
            .with_context(|| format!("callgrind wrote no dump at {}", part.display()))?;
        let _ = std::fs::remove_file(&part);
        let total =
            parse_total(&text).with_context(|| format!("{} has no totals line", part.display()))?;
        let split = split::parse(&text);
        ensure!(
            split.total() == total,
            "the functions of callgrind's dump sum to {} instructions, its totals line says {total}: the dump's format is not the one read here",
            split.total()
        );
        let bus = parse_bus(&text);
        ensure!(
            bus.is_none_or(|b| b == split.atomics),
            "the functions of callgrind's dump sum to {} atomics, its totals line says {bus:?}: the dump's format is not the one read here",
            split.atomics
        );
        Ok((total, split))
    }
}

pub struct SideMeter {
    counted: Side,
}

impl Meter for SideMeter {
    #[inline(always)]
    fn on<R>(&mut self, side: Side, f: impl FnOnce() -> R) -> R {
        if side != self.counted {
            return f();
        }
        client_request(0, TOGGLE_COLLECT, 0);
        let r = f();
        client_request(0, TOGGLE_COLLECT, 0);
        r
    }
}

/// The `totals:` (or, in older formats, `summary:`) line of a callgrind dump: its first
/// event is instructions (Ir).
fn parse_total(text: &str) -> Option<u64> {
    totals_line(text)?.split_whitespace().nth(1)?.parse().ok()
}

/// The dump's `totals:` line, or in older formats its `summary:` line.
fn totals_line(text: &str) -> Option<&str> {
    text.lines()
        .find(|l| l.starts_with("totals:"))
        .or_else(|| text.lines().find(|l| l.starts_with("summary:")))
}

/// The totals line's global bus events (atomic read-modify-writes), where the `events:` line
/// names them (`--collect-bus=yes`).
fn parse_bus(text: &str) -> Option<u64> {
    let at = text
        .lines()
        .find_map(|l| l.strip_prefix("events:"))?
        .split_whitespace()
        .position(|e| e == "Ge")?;
    Some(
        totals_line(text)?
            .split_whitespace()
            .nth(1 + at)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natively_no_one_is_counting() {
        // The test binary itself never runs under valgrind in `make test`.
        assert!(!running_on_valgrind());
        assert!(Counter::new("/tmp/x.%p").is_err());
    }

    #[test]
    fn totals_are_read_from_a_dump() {
        let dump = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nfn=(1) f\n3 10\n\nsummary: 1234\ntotals: 1234\n";
        assert_eq!(parse_total(dump), Some(1234));
        assert_eq!(parse_total("events: Ir\n"), None);
        assert_eq!(parse_bus(dump), None);
        let with_bus = "events: Ir Ge\nfn=(1) f\n3 10 2\ntotals: 10 2\n";
        assert_eq!(
            (parse_total(with_bus), parse_bus(with_bus)),
            (Some(10), Some(2))
        );
    }
}
