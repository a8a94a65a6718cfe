//! Heap in use, counted by wrapping the C allocator, and a meter that charges each side of a
//! pair with what its calls left allocated.
//!
//! With the `heap-accounting` feature this crate defines `malloc`, `free` and the rest of
//! the C allocation functions (glibc's documented way to replace malloc): each calls glibc's
//! own (`__libc_malloc`, ...) and, while counting is on, adds or takes the block's usable
//! size from one counter. Rust (through the system allocator), OpenSSL and BoringSSL all
//! allocate through these, so they are counted alike. A driver binary that enables the
//! feature exports the symbols so that a shared libssl resolves to them too (see the
//! driver's build script). Counting is off except during a memory measurement, when the
//! cost is one relaxed load per call; glibc's own statistics (`mallinfo2`) were the first
//! design, but they walk every free chunk per call, which made 10,000 connections take
//! minutes.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering::Relaxed};

use crate::endpoint::Side;
use crate::pair::Meter;

static COUNTING: AtomicBool = AtomicBool::new(false);
static IN_USE: AtomicI64 = AtomicI64::new(0);

/// Whether this binary counts allocations (built with `heap-accounting`).
pub const AVAILABLE: bool = cfg!(feature = "heap-accounting");

/// Turns counting on or off; the counter keeps its value.
pub fn set_counting(on: bool) {
    COUNTING.store(on, Relaxed);
}

/// Bytes allocated minus bytes freed while counting was on.
pub fn in_use() -> i64 {
    IN_USE.load(Relaxed)
}

#[cfg(feature = "heap-accounting")]
mod interpose {
    //! The C allocation functions, wrapped. Nothing here may allocate.

    use std::sync::atomic::Ordering::Relaxed;

    use libc::{c_int, c_void, size_t};

    use super::{COUNTING, IN_USE};

    extern "C" {
        fn __libc_malloc(size: size_t) -> *mut c_void;
        fn __libc_calloc(n: size_t, size: size_t) -> *mut c_void;
        fn __libc_realloc(p: *mut c_void, size: size_t) -> *mut c_void;
        fn __libc_free(p: *mut c_void);
        fn __libc_memalign(align: size_t, size: size_t) -> *mut c_void;
        fn malloc_usable_size(p: *mut c_void) -> size_t;
    }

    #[inline]
    fn size_of_block(p: *mut c_void) -> i64 {
        if p.is_null() {
            0
        } else {
            // SAFETY: p is a live block from glibc's allocator.
            unsafe { malloc_usable_size(p) as i64 }
        }
    }

    #[inline]
    fn count(delta: impl FnOnce() -> i64) {
        if COUNTING.load(Relaxed) {
            IN_USE.fetch_add(delta(), Relaxed);
        }
    }

    #[no_mangle]
    pub unsafe extern "C" fn malloc(size: size_t) -> *mut c_void {
        let p = __libc_malloc(size);
        count(|| size_of_block(p));
        p
    }

    #[no_mangle]
    pub unsafe extern "C" fn calloc(n: size_t, size: size_t) -> *mut c_void {
        let p = __libc_calloc(n, size);
        count(|| size_of_block(p));
        p
    }

    #[no_mangle]
    pub unsafe extern "C" fn realloc(old: *mut c_void, size: size_t) -> *mut c_void {
        let before = if COUNTING.load(Relaxed) {
            size_of_block(old)
        } else {
            0
        };
        let p = __libc_realloc(old, size);
        // realloc(old, 0) frees; a failed realloc keeps the old block.
        if !p.is_null() || size == 0 {
            count(|| size_of_block(p) - before);
        }
        p
    }

    #[no_mangle]
    pub unsafe extern "C" fn free(p: *mut c_void) {
        count(|| -size_of_block(p));
        __libc_free(p);
    }

    #[no_mangle]
    pub unsafe extern "C" fn memalign(align: size_t, size: size_t) -> *mut c_void {
        let p = __libc_memalign(align, size);
        count(|| size_of_block(p));
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
