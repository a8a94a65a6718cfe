//! The machine's memory weather: how long one dependent load takes in a buffer half the size
//! of the last-level cache, and in one four times its size. On a shared host both move with
//! what other tenants do (here a 16 MiB chase took 14 ns a load in one minute and 140 ns in
//! another, a 128 MiB one 150-200 ns), and a stack whose working set spills out of its
//! core's own L2 slows with them while one that stays inside it does not; so a run records
//! the weather its passes met, and a factor that moves between reruns can be read against it.

use std::time::{Duration, Instant};

use tlsmatrix_model::stats::XorShift;
use tlsmatrix_model::weather::Weather;

/// One cache line per node, visited in a random cyclic order, so that every load depends on
/// the one before and the prefetchers cannot guess the next line.
pub struct Chase {
    /// `next[i * STRIDE]` holds the index of the node after node `i`'s line.
    next: Vec<usize>,
    pub bytes: usize,
}

/// Words in a 64-byte line.
const STRIDE: usize = 64 / std::mem::size_of::<usize>();

impl Chase {
    pub fn new(bytes: usize, seed: u64) -> Chase {
        let nodes = (bytes / 64).max(2);
        // Sattolo's shuffle: a random permutation that is a single cycle through every node.
        let mut order: Vec<usize> = (0..nodes).collect();
        let mut rng = XorShift(seed | 1);
        for i in (1..nodes).rev() {
            order.swap(i, rng.below(i));
        }
        let mut next = vec![0usize; nodes * STRIDE];
        for (i, &node) in order.iter().enumerate() {
            next[node * STRIDE] = order[(i + 1) % nodes] * STRIDE;
        }
        Chase {
            next,
            bytes: nodes * 64,
        }
    }

    /// Follows the chain for about `time` (after a lap to bring it in, or a quarter of a
    /// million loads of one past the caches, which a lap would not warm anyway) and gives
    /// the mean time of one load.
    pub fn ns_per_load(&self, time: Duration) -> f64 {
        let mut at = 0usize;
        for _ in 0..(self.next.len() / STRIDE).min(1 << 18) {
            at = self.next[at];
        }
        const BATCH: usize = 4096;
        let (start, mut loads) = (Instant::now(), 0u64);
        loop {
            for _ in 0..BATCH {
                at = self.next[at];
            }
            loads += BATCH as u64;
            let spent = start.elapsed();
            if spent >= time {
                std::hint::black_box(at);
                return spent.as_nanos() as f64 / loads as f64;
            }
        }
    }
}

/// The two chases, built once for a run (about a fifth of a second here) and read between
/// its passes.
pub struct MemoryProbe {
    cache: Chase,
    memory: Chase,
}

/// How long each chase is timed for one reading.
const READING: Duration = Duration::from_millis(25);

impl MemoryProbe {
    /// Sized from the last-level cache sysfs lists for `cpu`; `Err` says why there is none.
    pub fn for_cpu(cpu: usize) -> Result<MemoryProbe, String> {
        last_level_cache(cpu)
            .map(MemoryProbe::new)
            .ok_or_else(|| format!("sysfs lists no data cache for CPU {cpu}"))
    }

    /// Sized from the last-level cache this machine reports (`llc_bytes`).
    pub fn new(llc_bytes: usize) -> MemoryProbe {
        MemoryProbe {
            cache: Chase::new(llc_bytes / 2, 0x9e37_79b9_7f4a_7c15),
            memory: Chase::new(llc_bytes * 4, 0xd1b5_4a32_d192_ed03),
        }
    }

    pub fn read(&self) -> Weather {
        Weather {
            cache_ns: self.cache.ns_per_load(READING),
            memory_ns: self.memory.ns_per_load(READING),
        }
    }

    /// "16 MiB and 128 MiB", for the lines that show the weather.
    pub fn sizes(&self) -> String {
        format!(
            "{} MiB and {} MiB",
            self.cache.bytes >> 20,
            self.memory.bytes >> 20
        )
    }
}

/// The largest data cache sysfs lists for `cpu`, in bytes (`None` when it lists none).
pub fn last_level_cache(cpu: usize) -> Option<usize> {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| {
            let p = e.ok()?.path();
            let kind = std::fs::read_to_string(p.join("type")).ok()?;
            if kind.trim() == "Instruction" {
                return None;
            }
            parse_size(std::fs::read_to_string(p.join("size")).ok()?.trim())
        })
        .max()
}

/// sysfs cache sizes: "32768K", "1M", "512".
fn parse_size(s: &str) -> Option<usize> {
    let (digits, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, ""),
    };
    let n: usize = digits.parse().ok()?;
    match unit {
        "" => Some(n),
        "K" => Some(n << 10),
        "M" => Some(n << 20),
        "G" => Some(n << 30),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_is_one_cycle_through_every_line() {
        let c = Chase::new(64 * 1000, 7);
        let (mut at, mut seen) = (0usize, vec![false; 1000]);
        for _ in 0..1000 {
            assert!(!seen[at / STRIDE], "line {} visited twice", at / STRIDE);
            seen[at / STRIDE] = true;
            at = c.next[at];
        }
        assert_eq!(at, 0, "the chain does not close after every line");
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn a_buffer_past_the_caches_is_slower_than_one_in_l1() {
        // 16 KiB sits in any L1; 256 MiB is past any cache this project runs on. The gap is
        // tens of times; asking for 3x leaves room for a noisy machine.
        let small = Chase::new(16 << 10, 1).ns_per_load(Duration::from_millis(20));
        let large = Chase::new(256 << 20, 2).ns_per_load(Duration::from_millis(20));
        assert!(small > 0.0 && small.is_finite(), "{small}");
        assert!(
            large > 3.0 * small,
            "L1 {small:.2} ns, past the caches {large:.2} ns"
        );
    }

    #[test]
    fn sysfs_sizes_parse() {
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("12Q"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn this_machine_lists_its_last_level_cache() {
        let llc = last_level_cache(0).expect("sysfs lists no cache for cpu0");
        assert!(llc >= 256 << 10, "{llc}");
    }
}
