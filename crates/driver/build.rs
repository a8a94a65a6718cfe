//! Exports the C allocation functions that tlsmatrix-measure's `heap-accounting` defines, so
//! that a shared library (the system libssl) binds to them rather than to libc's: an
//! executable's symbols are not in its dynamic table unless asked for.

fn main() {
    for f in [
        "malloc",
        "calloc",
        "realloc",
        "free",
        "memalign",
        "aligned_alloc",
        "posix_memalign",
        "valloc",
        "pvalloc",
    ] {
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol={f}");
    }
}
