//! Heap in use, counted by wrapping the C allocator, the allocator that wrapper routes to,
//! and a meter that charges each side of a pair with what its calls left allocated.
//!
//! With the `heap-accounting` feature this crate defines `malloc`, `free` and the rest of
//! the C allocation functions (glibc's documented way to replace malloc). Each passes the
//! call to one allocator, chosen once per process from `TLSMATRIX_ALLOCATOR` (glibc's own
//! `__libc_malloc` by default, or jemalloc or mimalloc, both linked with prefixed names) and,
//! while counting is on, adds or takes the block's usable size from one counter. Rust
//! (through the system allocator), OpenSSL, BoringSSL, aws-lc and s2n-tls all allocate
//! through these, so they are counted alike and all use the chosen allocator. A driver
//! binary that enables the feature exports the symbols so that a shared libssl resolves to
//! them too (see the driver's build script). Counting is off except during a memory
//! measurement, when the cost is one relaxed load per call; glibc's own statistics
//! (`mallinfo2`) were the first design, but they walk every free chunk per call, which made
//! 10,000 connections take minutes.
//!
//! `malloc_usable_size` is left to glibc: no library the drivers link calls it (`nm -u`
//! shows it only in this file's glibc arm), and the wrappers ask each allocator its own.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering::Relaxed};
use tlsmatrix_model::allocator::{Allocator, ALLOCATOR_ENV, HEAP_SHIFT_ENV};

use tlsmatrix_harness::pair::Meter;
use tlsmatrix_model::side::Side;

static COUNTING: AtomicBool = AtomicBool::new(false);
static IN_USE: AtomicI64 = AtomicI64::new(0);

/// Whether this binary counts allocations (built with `heap-accounting`).
pub const AVAILABLE: bool = cfg!(feature = "heap-accounting");

/// Moves everything a process allocates after this call (a group's connections and the
/// libraries' record buffers) by `TLSMATRIX_HEAP_SHIFT` bytes within the page, by leaking one
/// block of that size first: glibc's malloc carves small blocks from its heap in order.
///
/// Why: where a library's buffers sit within their pages decides whether its copies meet 4 KiB
/// aliasing, and with the heap laid out alike in every process a pair kept one placement in
/// every pass. Moving only this leading block moved rustls-ring's paired receive factor with
/// rustls-aws-lc sending from 0.970 to 0.915, and reordered the four senders it was measured
/// with. With a shift per pass, the passes sample placements and a figure's interval (over
/// passes) includes them. jemalloc and mimalloc serve each size from its own slab, so under
/// them the shift moves nothing.
///
/// The shift moves a process's heap as a whole, so the cells of one group would keep their
/// places relative to each other in every pass; each cell therefore also leaks
/// `cell_heap_shift` bytes before its set-up and before its warm-up. (Neither A/A bias seen so
/// far was placement: the RSA one was the blinding period, `ConnParams::handshake_period`; the
/// AES-GCM one the set-up order, which `tlsmatrix run` rotates.) Returns the shift, for
/// `cell_heap_shift`.
pub fn shift_heap_from_env() -> anyhow::Result<usize> {
    shift_heap(std::env::var(HEAP_SHIFT_ENV).ok().as_deref())
}

fn shift_heap(value: Option<&str>) -> anyhow::Result<usize> {
    let Some(v) = value else {
        return Ok(0);
    };
    let n: usize = v
        .parse()
        .map_err(|_| anyhow::anyhow!("{HEAP_SHIFT_ENV}={v:?} is not a byte count"))?;
    anyhow::ensure!(
        n < 4096,
        "{HEAP_SHIFT_ENV}={n}: a shift within the page must be below 4096"
    );
    leak(n);
    Ok(n)
}

/// Bytes cell `cell` of a group leaks before its set-up and before its warm-up, in a process
/// shifted by `shift`. A cell's blocks follow the previous cell's after this gap, so a gap
/// that differs from pass to pass moves the cells' buffers against each other; an odd
/// multiple of the pass's shift takes as many values as the passes do (cell 0 leaks nothing:
/// the process's shift already places it).
pub fn cell_heap_shift(shift: usize, cell: usize) -> usize {
    if cell == 0 {
        return 0;
    }
    ((shift * (2 * cell + 1) + cell * 1040) % 4096) & !15
}

/// Leaks `n` bytes of heap (nothing for 0): glibc's malloc carves the next small blocks after it.
pub fn leak(n: usize) {
    if n > 0 {
        std::mem::forget(std::hint::black_box(vec![0u8; n]));
    }
}

/// An allocator and its release, e.g. "jemalloc 5.3.1", asked of the allocator linked in.
pub fn allocator_version(a: Allocator) -> String {
    match a {
        Allocator::Glibc => {
            // SAFETY: gnu_get_libc_version returns a static NUL-terminated string.
            let v = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
            format!("glibc malloc {}", v.to_string_lossy())
        }
        #[cfg(feature = "heap-accounting")]
        Allocator::Jemalloc => {
            let v = interpose::jemalloc_version();
            format!("jemalloc {}", v.split('-').next().unwrap_or(&v))
        }
        #[cfg(feature = "heap-accounting")]
        Allocator::Mimalloc => {
            // SAFETY: a plain query.
            let v = unsafe { libmimalloc_sys::mi_version() };
            format!("mimalloc {}.{}.{}", v / 10000, v / 100 % 100, v % 100)
        }
        #[cfg(not(feature = "heap-accounting"))]
        other => format!("{} (not linked)", other.name()),
    }
}

/// The allocator this process routes malloc to, or why the environment's choice is not one.
/// Without `heap-accounting` every allocation goes to glibc whatever the environment says.
pub fn allocator() -> Result<Allocator, String> {
    #[cfg(feature = "heap-accounting")]
    {
        interpose::chosen()
    }
    #[cfg(not(feature = "heap-accounting"))]
    {
        Ok(Allocator::Glibc)
    }
}

/// Checks that the allocator chosen at the first allocation is the one the environment names
/// now: a driver that routed to another would measure an allocator nobody asked for.
pub fn check_allocator() -> Result<Allocator, String> {
    let live = allocator()?;
    let asked = match std::env::var(ALLOCATOR_ENV) {
        Ok(v) if !v.is_empty() => Allocator::parse(&v).ok_or_else(|| not_an_allocator(&v))?,
        _ => Allocator::Glibc,
    };
    if !AVAILABLE && asked != Allocator::Glibc {
        return Err(format!(
            "{ALLOCATOR_ENV}={}: this binary does not wrap malloc",
            asked.name()
        ));
    }
    if live != asked {
        return Err(format!(
            "{ALLOCATOR_ENV} asks for {} but allocations go to {}",
            asked.name(),
            live.name()
        ));
    }
    Ok(live)
}

fn not_an_allocator(v: &str) -> String {
    let names: Vec<_> = Allocator::ALL.iter().map(|a| a.name()).collect();
    format!(
        "{ALLOCATOR_ENV}='{v}' is not an allocator ({})",
        names.join(", ")
    )
}

/// Who owns a block, asked of each allocator's own bookkeeping rather than of the wrappers,
/// so a test can show that a C library's allocation really landed in the chosen allocator.
/// `size` must be large (>= 1 MiB): glibc and jemalloc are asked whether their count of
/// bytes allocated grew by it while `alloc` held it, mimalloc whether the block is its own.
#[cfg(feature = "heap-accounting")]
pub fn owners_of_allocation(
    size: usize,
    alloc: impl FnOnce(usize) -> *mut libc::c_void,
    free: impl FnOnce(*mut libc::c_void),
) -> Vec<Allocator> {
    interpose::owners_of_allocation(size, alloc, free)
}

/// Blocks this large or larger are the ones a record's data is copied through.
pub const LARGE_BLOCK: usize = 4096;
/// How many of the most recently freed large blocks an allocation may get back and still be
/// "warm" (likely in cache).
const RECENT: usize = 4;

static TRACKING: AtomicBool = AtomicBool::new(false);
static LARGE_ALLOCS: AtomicU64 = AtomicU64::new(0);
static COLD_ALLOCS: AtomicU64 = AtomicU64::new(0);
static RECENTLY_FREED: [AtomicUsize; RECENT] = [const { AtomicUsize::new(0) }; RECENT];
static NEXT_FREED: AtomicUsize = AtomicUsize::new(0);

/// Turns on or off the tracking of large blocks (what `large_blocks` reports). Meant for one
/// thread: the recently freed blocks are the process's.
pub fn set_tracking(on: bool) {
    TRACKING.store(on, Relaxed);
}

/// Large allocations (>= `LARGE_BLOCK`) while tracking, and how many of them got a block
/// other than one of the last few large blocks freed: a "cold" block, likely not in cache,
/// which every copy into it pays for. glibc hands a just-freed block back; an allocator
/// that does not makes a stack that allocates per record copy through cold memory.
pub fn large_blocks() -> (u64, u64) {
    (LARGE_ALLOCS.load(Relaxed), COLD_ALLOCS.load(Relaxed))
}

#[cfg_attr(not(feature = "heap-accounting"), allow(dead_code))]
fn track_alloc(p: usize, usable: usize) {
    if usable < LARGE_BLOCK || p == 0 {
        return;
    }
    LARGE_ALLOCS.fetch_add(1, Relaxed);
    if RECENTLY_FREED.iter().all(|f| f.load(Relaxed) != p) {
        COLD_ALLOCS.fetch_add(1, Relaxed);
    }
}

#[cfg_attr(not(feature = "heap-accounting"), allow(dead_code))]
fn track_free(p: usize, usable: usize) {
    if usable >= LARGE_BLOCK && p != 0 {
        let i = NEXT_FREED.fetch_add(1, Relaxed) % RECENT;
        RECENTLY_FREED[i].store(p, Relaxed);
    }
}

/// Turns counting on or off; the counter keeps its value.
pub fn set_counting(on: bool) {
    COUNTING.store(on, Relaxed);
}

/// Turns counting on or off and returns whether it was on (for
/// `tlsmatrix_harness::uncounted`).
pub fn swap_counting(on: bool) -> bool {
    COUNTING.swap(on, Relaxed)
}

/// Bytes allocated minus bytes freed while counting was on.
pub fn in_use() -> i64 {
    IN_USE.load(Relaxed)
}

#[cfg(feature = "heap-accounting")]
mod interpose {
    //! The C allocation functions, wrapped. Nothing here may allocate.

    use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

    use libc::{c_int, c_void, size_t};
    use libmimalloc_sys as mi;
    use tikv_jemalloc_sys as je;

    use super::{track_alloc, track_free, Allocator, ALLOCATOR_ENV, COUNTING, IN_USE, TRACKING};

    extern "C" {
        fn __libc_malloc(size: size_t) -> *mut c_void;
        fn __libc_calloc(n: size_t, size: size_t) -> *mut c_void;
        fn __libc_realloc(p: *mut c_void, size: size_t) -> *mut c_void;
        fn __libc_free(p: *mut c_void);
        fn __libc_memalign(align: size_t, size: size_t) -> *mut c_void;
        fn malloc_usable_size(p: *mut c_void) -> size_t;
    }

    const UNDECIDED: u8 = 0;
    const GLIBC: u8 = 1;
    const JEMALLOC: u8 = 2;
    const MIMALLOC: u8 = 3;
    /// The environment named no allocator: glibc serves, and `chosen` says what was wrong.
    const INVALID: u8 = 4;

    static CHOSEN: AtomicU8 = AtomicU8::new(UNDECIDED);

    /// The choice, made at the first allocation: every block must be freed by the allocator
    /// that made it, so it never changes afterwards. getenv does not allocate.
    #[inline]
    fn route() -> u8 {
        match CHOSEN.load(Relaxed) {
            UNDECIDED => decide(),
            c => c,
        }
    }

    #[cold]
    fn decide() -> u8 {
        let mut name = [0u8; 32];
        name[..ALLOCATOR_ENV.len()].copy_from_slice(ALLOCATOR_ENV.as_bytes());
        // SAFETY: name is NUL-terminated; getenv returns NULL or a NUL-terminated string.
        let v = unsafe { libc::getenv(name.as_ptr().cast()) };
        let c = if v.is_null() {
            GLIBC
        } else {
            // SAFETY: as above.
            match unsafe { std::ffi::CStr::from_ptr(v) }.to_bytes() {
                b"" | b"glibc" => GLIBC,
                b"jemalloc" => JEMALLOC,
                b"mimalloc" => MIMALLOC,
                _ => INVALID,
            }
        };
        // Two threads deciding at once read the same environment.
        CHOSEN.store(c, Relaxed);
        c
    }

    pub(super) fn chosen() -> Result<Allocator, String> {
        match route() {
            JEMALLOC => Ok(Allocator::Jemalloc),
            MIMALLOC => Ok(Allocator::Mimalloc),
            INVALID => Err(super::not_an_allocator(
                &std::env::var(ALLOCATOR_ENV).unwrap_or_default(),
            )),
            _ => Ok(Allocator::Glibc),
        }
    }

    #[inline]
    fn size_of_block(p: *mut c_void) -> i64 {
        if p.is_null() {
            return 0;
        }
        // SAFETY: p is a live block from the routed allocator.
        (unsafe {
            match route() {
                JEMALLOC => je::malloc_usable_size(p),
                MIMALLOC => mi::mi_usable_size(p),
                _ => malloc_usable_size(p),
            }
        }) as i64
    }

    #[inline]
    fn count(delta: impl FnOnce() -> i64) {
        if COUNTING.load(Relaxed) {
            IN_USE.fetch_add(delta(), Relaxed);
        }
    }

    /// After an allocation: counted, and tracked when large-block tracking is on.
    #[inline]
    fn allocated(p: *mut c_void) {
        count(|| size_of_block(p));
        if TRACKING.load(Relaxed) {
            track_alloc(p as usize, size_of_block(p) as usize);
        }
    }

    #[no_mangle]
    pub unsafe extern "C" fn malloc(size: size_t) -> *mut c_void {
        let p = match route() {
            JEMALLOC => je::malloc(size),
            MIMALLOC => mi::mi_malloc(size),
            _ => __libc_malloc(size),
        };
        allocated(p);
        p
    }

    #[no_mangle]
    pub unsafe extern "C" fn calloc(n: size_t, size: size_t) -> *mut c_void {
        let p = match route() {
            JEMALLOC => je::calloc(n, size),
            MIMALLOC => mi::mi_calloc(n, size),
            _ => __libc_calloc(n, size),
        };
        allocated(p);
        p
    }

    #[no_mangle]
    pub unsafe extern "C" fn realloc(old: *mut c_void, size: size_t) -> *mut c_void {
        let before = if COUNTING.load(Relaxed) {
            size_of_block(old)
        } else {
            0
        };
        // C's realloc(p, 0) frees; jemalloc's and mimalloc's keep a minimal block.
        if size == 0 && !old.is_null() && route() != GLIBC {
            free(old);
            return std::ptr::null_mut();
        }
        let p = match route() {
            JEMALLOC => je::realloc(old, size),
            MIMALLOC => mi::mi_realloc(old, size),
            _ => __libc_realloc(old, size),
        };
        // realloc(old, 0) frees; a failed realloc keeps the old block.
        if !p.is_null() || size == 0 {
            count(|| size_of_block(p) - before);
        }
        if TRACKING.load(Relaxed) && p != old {
            track_alloc(p as usize, size_of_block(p) as usize);
        }
        p
    }

    #[no_mangle]
    pub unsafe extern "C" fn free(p: *mut c_void) {
        count(|| -size_of_block(p));
        if TRACKING.load(Relaxed) {
            track_free(p as usize, size_of_block(p) as usize);
        }
        match route() {
            JEMALLOC => je::free(p),
            MIMALLOC => mi::mi_free(p),
            _ => __libc_free(p),
        }
    }

    #[no_mangle]
    pub unsafe extern "C" fn memalign(align: size_t, size: size_t) -> *mut c_void {
        let p = match route() {
            JEMALLOC => {
                let mut p = std::ptr::null_mut();
                // An alignment it refuses leaves p null, as memalign's failure.
                je::posix_memalign(&mut p, align.max(std::mem::size_of::<usize>()), size);
                p
            }
            MIMALLOC => mi::mi_malloc_aligned(size, align),
            _ => __libc_memalign(align, size),
        };
        allocated(p);
        p
    }

    #[no_mangle]
    pub unsafe extern "C" fn aligned_alloc(align: size_t, size: size_t) -> *mut c_void {
        memalign(align, size)
    }

    #[no_mangle]
    pub unsafe extern "C" fn posix_memalign(
        out: *mut *mut c_void,
        align: size_t,
        size: size_t,
    ) -> c_int {
        let p = memalign(align, size);
        if p.is_null() && size != 0 {
            return libc::ENOMEM;
        }
        *out = p;
        0
    }

    #[no_mangle]
    pub unsafe extern "C" fn valloc(size: size_t) -> *mut c_void {
        memalign(4096, size)
    }

    #[no_mangle]
    pub unsafe extern "C" fn pvalloc(size: size_t) -> *mut c_void {
        memalign(4096, size.div_ceil(4096).max(1) * 4096)
    }

    /// jemalloc's `version` string, e.g. "5.3.1-0-g81034ce...".
    pub(super) fn jemalloc_version() -> String {
        let mut v: *const libc::c_char = std::ptr::null();
        let mut len = std::mem::size_of_val(&v);
        // SAFETY: "version" is a const char * control; the buffers match it.
        let rc = unsafe {
            je::mallctl(
                c"version".as_ptr(),
                (&raw mut v).cast(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        if rc != 0 || v.is_null() {
            return "unknown".into();
        }
        // SAFETY: jemalloc's version is a static NUL-terminated string.
        unsafe { std::ffi::CStr::from_ptr(v) }
            .to_string_lossy()
            .into_owned()
    }

    /// Bytes jemalloc's statistics say are allocated, refreshed.
    fn jemalloc_allocated() -> usize {
        let mut epoch: u64 = 1;
        let mut len = std::mem::size_of::<u64>();
        let (mut allocated, mut alen) = (0usize, std::mem::size_of::<usize>());
        // SAFETY: "epoch" takes and returns a u64, "stats.allocated" returns a size_t.
        unsafe {
            je::mallctl(
                c"epoch".as_ptr(),
                (&raw mut epoch).cast(),
                &mut len,
                (&raw mut epoch).cast(),
                len,
            );
            je::mallctl(
                c"stats.allocated".as_ptr(),
                (&raw mut allocated).cast(),
                &mut alen,
                std::ptr::null_mut(),
                0,
            );
        }
        allocated
    }

    /// Bytes glibc has handed out: in its arenas plus in mmapped blocks (a large block goes
    /// to either, as its moving mmap threshold decides).
    fn glibc_allocated() -> usize {
        // SAFETY: a plain query.
        let m = unsafe { libc::mallinfo2() };
        m.uordblks + m.hblkhd
    }

    pub(super) fn owners_of_allocation(
        size: usize,
        alloc: impl FnOnce(usize) -> *mut c_void,
        free: impl FnOnce(*mut c_void),
    ) -> Vec<Allocator> {
        assert!(size >= 1 << 20, "ownership is read from large blocks only");
        let (glibc0, je0) = (glibc_allocated(), jemalloc_allocated());
        let p = alloc(size);
        assert!(!p.is_null(), "the allocation of {size} bytes failed");
        let (glibc1, je1) = (glibc_allocated(), jemalloc_allocated());
        // SAFETY: a plain query about an address.
        let in_mimalloc = unsafe { mi::mi_is_in_heap_region(p) };
        free(p);
        let mut owners = Vec::new();
        if glibc1 >= glibc0 + size {
            owners.push(Allocator::Glibc);
        }
        if je1 >= je0 + size {
            owners.push(Allocator::Jemalloc);
        }
        if in_mimalloc {
            owners.push(Allocator::Mimalloc);
        }
        owners
    }
}

/// The net heap each side's calls left behind.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeapMeter {
    pub client_bytes: i64,
    pub server_bytes: i64,
}

impl Meter for HeapMeter {
    fn on<R>(&mut self, side: Side, f: impl FnOnce() -> R) -> R {
        let before = in_use();
        let r = f();
        let delta = in_use() - before;
        match side {
            Side::Client => self.client_bytes += delta,
            Side::Server => self.server_bytes += delta,
        }
        r
    }
}

#[cfg(test)]
mod shift_tests {
    use super::{cell_heap_shift, shift_heap};
    use tlsmatrix_model::allocator::pass_heap_shift;

    #[test]
    fn passes_spread_their_heap_shifts_over_the_page() {
        let shifts: Vec<usize> = (0..12).map(|p| pass_heap_shift(p, 12)).collect();
        assert_eq!(shifts[0], 0);
        assert!(
            shifts.iter().all(|s| s % 16 == 0 && *s < 4096),
            "{shifts:?}"
        );
        let mut sorted = shifts.clone();
        sorted.sort_unstable();
        assert!(sorted.windows(2).all(|w| w[1] - w[0] >= 320), "{shifts:?}");
        assert_eq!(pass_heap_shift(12, 12), 0, "pass 13 of 12 wraps");
        assert_eq!(pass_heap_shift(0, 0), 0);
        assert_eq!(pass_heap_shift(0, 1), 0);
        // The first passes already spread over the page: a group that stops after 4 of 8
        // has sampled each quarter of it.
        let first: Vec<usize> = (0..4).map(|p| pass_heap_shift(p, 8)).collect();
        assert_eq!(first, [0, 2048, 1024, 3072]);
        let all: Vec<usize> = (0..8).map(|p| pass_heap_shift(p, 8)).collect();
        assert_eq!(all, [0, 2048, 1024, 3072, 512, 2560, 1536, 3584]);
    }

    #[test]
    fn cells_move_against_each_other_from_pass_to_pass() {
        let shifts: Vec<usize> = (0..12).map(|p| pass_heap_shift(p, 12)).collect();
        assert!(shifts.iter().all(|&s| cell_heap_shift(s, 0) == 0));
        for cell in 1..8 {
            let mut gaps: Vec<usize> = shifts.iter().map(|&s| cell_heap_shift(s, cell)).collect();
            assert!(gaps.iter().all(|n| n % 16 == 0 && *n < 4096), "{gaps:?}");
            gaps.sort_unstable();
            gaps.dedup();
            assert_eq!(gaps.len(), 12, "cell {cell}: {gaps:?}");
        }
    }

    #[test]
    fn a_heap_shift_must_be_a_byte_count_within_the_page() {
        assert_eq!(shift_heap(None).unwrap(), 0);
        assert_eq!(shift_heap(Some("336")).unwrap(), 336);
        let err = shift_heap(Some("4096")).unwrap_err().to_string();
        assert!(err.contains("below 4096"), "{err}");
        let err = shift_heap(Some("a page")).unwrap_err().to_string();
        assert!(
            err.contains("TLSMATRIX_HEAP_SHIFT=\"a page\" is not a byte count"),
            "{err}"
        );
    }
}
