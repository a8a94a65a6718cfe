//! What the operating system counted while each side's calls ran: page faults and context
//! switches, from `getrusage(RUSAGE_THREAD)` before and after every call; and, from the
//! malloc wrapper, how many large blocks each side got that were not just freed (cold). Both sides of an
//! in-memory pair run on one thread in turns, so a thread's counts split exactly by side.
//!
//! These explain timings that instruction counts cannot: callgrind counts the instructions
//! a library executes, not the kernel's work when it touches fresh memory (a page fault
//! costs about as much as sealing a few KiB) or when the thread is switched out.

use tlsmatrix_harness::pair::Meter;
use tlsmatrix_model::side::Side;

/// Counts of one thread (or one side's share of it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OsCounts {
    /// Minor and major page faults: the kernel mapping a page on first touch (or reading it).
    pub page_faults: u64,
    /// Voluntary and involuntary context switches.
    pub context_switches: u64,
    /// Large allocations (`heap::LARGE_BLOCK` and up) given a block other than one just
    /// freed, while `heap::set_tracking` is on (drivers that wrap malloc only).
    pub cold_blocks: u64,
}

impl OsCounts {
    /// This thread's totals so far.
    pub fn of_thread() -> OsCounts {
        // SAFETY: getrusage fills the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: RUSAGE_THREAD with a valid pointer cannot fail on Linux.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
        debug_assert_eq!(rc, 0);
        OsCounts {
            page_faults: (u.ru_minflt + u.ru_majflt) as u64,
            context_switches: (u.ru_nvcsw + u.ru_nivcsw) as u64,
            cold_blocks: crate::heap::large_blocks().1,
        }
    }

    fn since(self, before: OsCounts) -> OsCounts {
        OsCounts {
            page_faults: self.page_faults - before.page_faults,
            context_switches: self.context_switches - before.context_switches,
            cold_blocks: self.cold_blocks - before.cold_blocks,
        }
    }

    fn add(&mut self, d: OsCounts) {
        self.page_faults += d.page_faults;
        self.context_switches += d.context_switches;
        self.cold_blocks += d.cold_blocks;
    }
}

/// Charges each side with what the kernel counted during its calls.
#[derive(Debug, Clone, Copy, Default)]
pub struct CounterMeter {
    pub client: OsCounts,
    pub server: OsCounts,
}

impl CounterMeter {
    pub fn of(&self, side: Side) -> OsCounts {
        match side {
            Side::Client => self.client,
            Side::Server => self.server,
        }
    }
}

impl Meter for CounterMeter {
    fn on<R>(&mut self, side: Side, f: impl FnOnce() -> R) -> R {
        let before = OsCounts::of_thread();
        let r = f();
        let d = OsCounts::of_thread().since(before);
        match side {
            Side::Client => self.client.add(d),
            Side::Server => self.server.add(d),
        }
        r
    }
}

/// Whether this process may count its own cycles and instructions with `perf_event_open`,
/// or why not: a VM without a virtual PMU has no hardware events at all, and
/// `perf_event_paranoid` above 2 forbids even counting oneself.
pub fn hardware_counters() -> Result<(), String> {
    // perf_event_attr as the kernel's ABI version 0 knows it: type, size, config, then
    // flags; the rest zero.
    #[repr(C)]
    struct Attr {
        kind: u32,
        size: u32,
        config: u64,
        sample_period: u64,
        sample_type: u64,
        read_format: u64,
        flags: u64,
        rest: [u64; 10],
    }
    const PERF_TYPE_HARDWARE: u32 = 0;
    const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
    // disabled (bit 0), exclude_kernel (bit 5), exclude_hv (bit 6).
    const FLAGS: u64 = 1 | 1 << 5 | 1 << 6;
    let attr = Attr {
        kind: PERF_TYPE_HARDWARE,
        size: 64,
        config: PERF_COUNT_HW_INSTRUCTIONS,
        sample_period: 0,
        sample_type: 0,
        read_format: 0,
        flags: FLAGS,
        rest: [0; 10],
    };
    // SAFETY: a valid attr for this thread on any CPU, no group, no flags.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            0,
            -1,
            -1,
            0,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        let why = match e.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) => {
                "the CPU exposes no hardware counters here (a VM without a virtual PMU)"
            }
            Some(libc::EACCES) | Some(libc::EPERM) => {
                "perf_event_paranoid forbids counting even one's own process"
            }
            _ => "perf_event_open failed",
        };
        return Err(format!(
            "no cycle or instruction counts: {why} ({e}); page faults and context switches come from getrusage"
        ));
    }
    // SAFETY: fd was just opened by us.
    unsafe { libc::close(fd as i32) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Touches every page of a fresh 4 MiB block: glibc maps blocks that large anew each
    /// time, so each touch is a fault.
    fn allocate_and_touch() -> usize {
        let mut v = vec![0u8; 4 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = i as u8;
        }
        std::hint::black_box(&v).len()
    }

    #[test]
    fn a_side_that_maps_fresh_memory_is_charged_its_faults_and_the_other_side_none() {
        let mut reused = vec![0u8; 4 << 20];
        reused.fill(1);
        let mut m = CounterMeter::default();
        for _ in 0..4 {
            m.on(Side::Client, allocate_and_touch);
            m.on(Side::Server, || {
                for i in (0..reused.len()).step_by(4096) {
                    reused[i] = reused[i].wrapping_add(1);
                }
            });
        }
        // 4 x 1,024 pages, allowing for transparent huge pages taking some at once.
        assert!(
            m.client.page_faults >= 4,
            "fresh memory faults: {:?}",
            m.client
        );
        assert!(
            m.server.page_faults < m.client.page_faults / 4,
            "reused memory barely faults: server {:?} client {:?}",
            m.server,
            m.client
        );
    }

    #[test]
    fn the_hardware_counter_probe_answers_with_a_reason_when_it_cannot_count() {
        if let Err(why) = hardware_counters() {
            assert!(why.contains("getrusage") && why.len() > 40, "{why}");
        }
    }
}
