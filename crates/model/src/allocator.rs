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
/// bytes (glibc's allocation granule), so that the passes sample as many placements. The
/// passes take the page's slots in bit-reversed order (0, 1/2, 1/4, 3/4, ... of the page),
/// so that a group that stops early (`tlsmatrix run --until-within`) has still sampled
/// placements over the whole page, not its first part.
pub fn pass_heap_shift(pass: usize, passes: usize) -> usize {
    let passes = passes.max(1);
    let bits = usize::BITS - (passes - 1).leading_zeros();
    let reversed = |slot: usize| {
        slot.reverse_bits()
            .checked_shr(usize::BITS - bits)
            .unwrap_or(0)
    };
    let mut slots: Vec<usize> = (0..passes).collect();
    slots.sort_by_key(|&slot| reversed(slot));
    (slots[pass % passes] * 4096 / passes) & !15
}
