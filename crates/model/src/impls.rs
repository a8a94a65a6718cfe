//! Every TLS stack tlsmatrix knows, one row each: the one place an impl's static facts live.
//! Which impls a build has is asked of the drivers at run time (`tlsmatrix list`); this table
//! says what each name must be (the library version it must report), where it is built, how
//! a user gets it, and which conformance files describe it. `list`, the version check on
//! every result, the BoGo expectations and the tests read it; adding a stack is its adapter
//! file and one row here.

/// One impl's static facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImplRow {
    /// The impl's name in scenario runs and results, e.g. `openssl-3.6`.
    pub name: &'static str,
    /// The adapter family that runs it (`crates/impls/src/<family>.rs`, or `go` for the Go
    /// driver).
    pub family: &'static str,
    /// The driver binary that holds it alone or first (`tlsmatrix-driver*`).
    pub driver: &'static str,
    /// What it takes to have it, shown by `tlsmatrix list` when a build lacks it.
    pub build: &'static str,
    /// How the version its driver reports at run time must begin; a result from any other
    /// library is refused (an `openssl-3.6` that runs OpenSSL 3.0 would be a lie).
    pub version_prefix: &'static str,
    /// Its BoGo expectation files under `crates/conformance/config/`, library first, then its
    /// crypto provider's (none: no known deviations).
    pub conformance: &'static [&'static str],
    /// Whether its driver wraps the C allocator, and so offers it on jemalloc and mimalloc
    /// too (`+jemalloc`, `+mimalloc`) and counts its heap per connection that way. Go
    /// allocates from its own heap.
    pub wraps_malloc: bool,
}

/// The impls, the default baseline first.
pub const IMPLS: &[ImplRow] = &[
    ImplRow {
        name: "rustls-aws-lc",
        family: "rustls",
        driver: "tlsmatrix-driver",
        build: "`make build` (the main driver)",
        version_prefix: "rustls ",
        conformance: &["rustls"],
        wraps_malloc: true,
    },
    ImplRow {
        name: "rustls-ring",
        family: "rustls",
        driver: "tlsmatrix-driver",
        build: "`make build` (the main driver)",
        version_prefix: "rustls ",
        conformance: &["rustls", "ring"],
        wraps_malloc: true,
    },
    ImplRow {
        name: "openssl-3.0",
        family: "openssl",
        driver: "tlsmatrix-driver",
        build: "`make build` with the system's libssl-dev (the main driver)",
        version_prefix: "OpenSSL 3.0.",
        conformance: &["openssl"],
        wraps_malloc: true,
    },
    ImplRow {
        name: "s2n-tls",
        family: "s2n",
        driver: "tlsmatrix-driver",
        build: "`make build` (the s2n-tls crate on aws-lc, the main driver)",
        version_prefix: "s2n-tls ",
        conformance: &["s2n"],
        wraps_malloc: true,
    },
    ImplRow {
        name: "boringssl",
        family: "openssl",
        driver: "tlsmatrix-driver-boringssl",
        build: "`make build` (the boring crate, linked into drivers/boringssl)",
        version_prefix: "BoringSSL",
        conformance: &["boringssl"],
        wraps_malloc: true,
    },
    ImplRow {
        name: "go-crypto-tls",
        family: "go",
        driver: "tlsmatrix-driver-go",
        build: "`make build` (Go's crypto/tls in go/cmd/tlsmatrix-driver-go)",
        version_prefix: "Go go",
        conformance: &["go"],
        wraps_malloc: false,
    },
    ImplRow {
        name: "openssl-3.6",
        family: "openssl",
        driver: "tlsmatrix-driver-openssl-3.6",
        build: "`make build` (OpenSSL 3.6 from the openssl-src crate, linked into drivers/openssl)",
        version_prefix: "OpenSSL 3.6.",
        conformance: &["openssl"],
        wraps_malloc: true,
    },
    ImplRow {
        name: "openssl-4.0",
        family: "openssl",
        driver: "tlsmatrix-driver-openssl-4.0",
        build: "`make build` (OpenSSL 4.0 from the openssl-src crate, linked into drivers/openssl)",
        version_prefix: "OpenSSL 4.0.",
        conformance: &["openssl"],
        wraps_malloc: true,
    },
];

/// The row of an impl or of a variant of one (`openssl-3.6+clang` is `openssl-3.6`'s).
pub fn row(name: &str) -> Option<&'static ImplRow> {
    let base = crate::variant::base(name);
    IMPLS.iter().find(|r| r.name == base)
}

/// Whether `version` is what the impl `name` must report. A name the table does not know
/// cannot be held to anything and fails, so a new stack cannot run without its row.
pub fn version_matches(name: &str, version: &str) -> bool {
    row(name).is_some_and(|r| version.starts_with(r.version_prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_row_is_filled() {
        for (i, r) in IMPLS.iter().enumerate() {
            assert!(
                IMPLS[..i].iter().all(|o| o.name != r.name),
                "{} twice",
                r.name
            );
            assert!(!r.family.is_empty() && !r.build.is_empty(), "{}", r.name);
            assert!(r.driver.starts_with("tlsmatrix-driver"), "{}", r.name);
            assert!(!r.version_prefix.is_empty(), "{}", r.name);
        }
    }

    #[test]
    fn versions_are_held_to_the_name() {
        for (name, version, ok) in [
            ("openssl-3.0", "OpenSSL 3.0.19 27 Jan 2026", true),
            ("openssl-3.6", "OpenSSL 3.0.19 27 Jan 2026", false),
            ("openssl-3.6+clang", "OpenSSL 3.6.3 9 Jun 2026", true),
            (
                "openssl-4.0+jemalloc",
                "OpenSSL 4.0.3 29 Sep 2026 + jemalloc 5.3.1",
                true,
            ),
            ("rustls-ring", "rustls 0.23.46 with ring 0.17.14", true),
            ("boringssl", "OpenSSL 3.0.19 27 Jan 2026", false),
            ("go-crypto-tls", "Go go1.26.8 crypto/tls", true),
            ("nossl", "nossl 1.0", false),
        ] {
            assert_eq!(version_matches(name, version), ok, "{name}: {version}");
        }
    }
}
