//! Heap in use, from glibc's own books (`mallinfo2`), and a meter that charges each side of a
//! pair with what its calls left allocated. mallinfo2 sees every malloc in the process, so
//! Rust and C libraries are measured alike.
//!
//! glibc's per-thread cache keeps freed small chunks out of the free lists, and mallinfo2
//! counts them as in use; a process measuring heap must run with the cache off, which
//! [`cache_is_off`] checks ([`CACHE_OFF`] is the setting).

use crate::endpoint::Side;
use crate::pair::Meter;

/// The `GLIBC_TUNABLES` value that turns the per-thread cache off.
pub const CACHE_OFF: &str = "glibc.malloc.tcache_count=0";

/// Whether this process started with glibc's per-thread cache off.
pub fn cache_is_off() -> bool {
    std::env::var("GLIBC_TUNABLES").is_ok_and(|v| v.split(':').any(|t| t == CACHE_OFF))
}

/// Bytes allocated and not freed: chunks in use in the arenas plus mmap'd chunks.
pub fn in_use() -> u64 {
    // SAFETY: mallinfo2 only reads the allocator's statistics.
    let info = unsafe { libc::mallinfo2() };
    (info.uordblks + info.hblkhd) as u64
}

/// The net heap each side's calls left behind.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeapMeter {
    pub client_bytes: i64,
    pub server_bytes: i64,
}

impl HeapMeter {
    pub fn of(&self, side: Side) -> i64 {
        match side {
            Side::Client => self.client_bytes,
            Side::Server => self.server_bytes,
        }
    }
}

impl Meter for HeapMeter {
    fn on<R>(&mut self, side: Side, f: impl FnOnce() -> R) -> R {
        let before = in_use() as i64;
        let r = f();
        let delta = in_use() as i64 - before;
        match side {
            Side::Client => self.client_bytes += delta,
            Side::Server => self.server_bytes += delta,
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allocation_kept_is_charged_to_the_side_that_made_it() {
        let mut m = HeapMeter::default();
        // black_box: otherwise the compiler may leave out an allocation nobody reads.
        let kept: Vec<u8> = m.on(Side::Server, || std::hint::black_box(vec![1u8; 1 << 20]));
        m.on(Side::Client, || {
            drop(std::hint::black_box(vec![2u8; 1 << 20]))
        });
        assert!(m.server_bytes >= 1 << 20, "{m:?}");
        // Allocated and freed within the call: nothing left (1 MiB is mmap'd, so no cache
        // can hide the free).
        assert!(m.client_bytes.abs() < 4096, "{m:?}");
        drop(kept);
    }
}
