//! Which C allocator a driver routes malloc to, and how the orchestrator tells a driver which
//! allocator and which heap placement to use: names and environment variables both sides
//! read. The routing itself is `tlsmatrix_measure::heap`'s.

/// A C allocator the wrappers can route every allocation of the process to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Allocator {
    Glibc,
    Jemalloc,
    Mimalloc,
}

impl Allocator {
    pub const ALL: [Allocator; 3] = [Allocator::Glibc, Allocator::Jemalloc, Allocator::Mimalloc];

    pub fn name(self) -> &'static str {
        match self {
            Allocator::Glibc => "glibc",
            Allocator::Jemalloc => "jemalloc",
            Allocator::Mimalloc => "mimalloc",
        }
    }

    pub fn parse(s: &str) -> Option<Allocator> {
        Allocator::ALL.into_iter().find(|a| a.name() == s)
    }
}

/// The environment variable that picks a driver's allocator; read at its first allocation.
pub const ALLOCATOR_ENV: &str = "TLSMATRIX_ALLOCATOR";

/// The environment variable that tells a driver's paired group how far to shift its heap
/// (`shift_heap_from_env`); `tlsmatrix run` sets it per pass (`pass_heap_shift`).
pub const HEAP_SHIFT_ENV: &str = "TLSMATRIX_HEAP_SHIFT";

/// The heap shift of pass `pass` of `passes`: evenly spread over the page, in steps of 16
/// bytes (glibc's allocation granule), so that the passes sample as many placements.
pub fn pass_heap_shift(pass: usize, passes: usize) -> usize {
    let passes = passes.max(1);
    ((pass % passes) * 4096 / passes) & !15
}
