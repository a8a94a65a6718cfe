//! Every TLS stack tlsmatrix knows, one row each: the one place an impl's static facts live.
//! Which impls a build has is asked of the drivers at run time (`tlsmatrix list`); this table
//! says what each name must be (the library version it must report), where it is built, how
//! a user gets it, and which conformance files describe it. `list`, the version check on
//! every result, the BoGo expectations and the tests read it; adding a stack is its adapter
//! file and one row here.

use crate::scenario::{Aead, ConnParams, Group, Resumption, SigAlg, Version};

/// A kind of cell an impl cannot run. Its adapter refuses such cells (`unsupported`, with
/// the library's own reason); the row declares the kind, so the tests hold every refusal to
/// a declared limit instead of naming impls to excuse them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// No post-quantum cryptography in TLS: no ML-KEM group and no ML-DSA signature.
    NoPostQuantum,
    /// No ML-DSA certificates or signature schemes (its ML-KEM groups are declared apart).
    NoMlDsa,
    /// These post-quantum groups are not offered, though others are.
    LacksGroups(&'static [Group]),
    /// A client sends a post-quantum and a classical key share at once, so a retry cell
    /// whose decoy is classical and whose group is post-quantum never retries.
    PairedKeyShares,
    /// Versions, suites and groups come only as named policies, fixed together: some cells
    /// have no policy, and a server accepts more groups than the cell names.
    NamedPolicies,
    /// TLS 1.3 suites cannot be chosen (AES-128-GCM first on AES hardware).
    FixedTls13Suites,
    /// No Ed25519 client certificate in TLS 1.2.
    NoTls12Ed25519ClientCert,
    /// TLS 1.2 resumes with tickets only: no session-id cache.
    NoSessionIdResumption,
    /// As a client it cannot say which signature scheme it verified, so it refuses the
    /// cells whose scheme the server's key alone does not settle: all but TLS 1.3 ECDSA,
    /// where the curve names the hash.
    NoVerifiedSchemeReport,
    /// Groups are offered in the library's own order: a client cannot put a retry's decoy
    /// first, nor a TLS 1.2 certificate's curve after the key-exchange group.
    FixedGroupOrder,
    /// No Ed25519 certificates or signature scheme.
    NoEd25519,
    /// No RSA-PSS in TLS 1.2 (PKCS#1 v1.5 only), which every TLS 1.2 RSA cell pins.
    NoTls12RsaPss,
    /// As a TLS 1.3 client it keeps a ticket's nonce in a buffer of this many bytes and
    /// refuses a ticket with a longer one, so it cannot resume with a server that sends
    /// longer nonces ([`LONG_TICKET_NONCES`], [`pair_refusal`]).
    ShortTicketNonces(usize),
}

/// The adapter families whose TLS 1.3 servers send ticket nonces longer than some clients
/// keep, with the length: rustls and Mbed TLS draw 32 random bytes for every ticket. (OpenSSL
/// and wolfSSL itself send 8 or fewer.)
pub const LONG_TICKET_NONCES: &[(&str, usize)] = &[
    ("rustls", 32),
    // MBEDTLS_SSL_TLS1_3_TICKET_NONCE_LENGTH, 32 in Mbed TLS 3.6's default configuration.
    ("mbedtls", 32),
];

/// Why a client cannot run a cell against one server though each runs it with others; the
/// client's row declares the limit behind it.
pub fn pair_refusal(client: &str, server: &str, p: &ConnParams) -> Option<String> {
    let client_row = row(client)?;
    let server_family = row(server)?.family;
    client_row.limits.iter().find_map(|l| match *l {
        Limit::ShortTicketNonces(kept) if l.covers(p) => LONG_TICKET_NONCES
            .iter()
            .find(|(family, len)| *family == server_family && *len > kept)
            .map(|(_, len)| {
                format!(
                    "{client}'s TLS 1.3 client keeps a ticket nonce in {kept} bytes and refuses {server}'s {len}-byte nonces, so it cannot resume with it"
                )
            }),
        _ => None,
    })
}

impl Limit {
    /// Whether a cell of these parameters may be refused under this limit.
    pub fn covers(self, p: &ConnParams) -> bool {
        match self {
            Limit::NoPostQuantum => p.group.is_post_quantum() || p.sig.is_mldsa(),
            Limit::NoMlDsa => p.sig.is_mldsa(),
            Limit::LacksGroups(groups) => groups.contains(&p.group),
            Limit::PairedKeyShares => p.extras.hrr && p.group.is_post_quantum(),
            Limit::NamedPolicies => true,
            Limit::FixedTls13Suites => p.version == Version::Tls13 && p.aead != Aead::Aes128Gcm,
            Limit::NoEd25519 => p.sig == SigAlg::Ed25519,
            Limit::NoTls12RsaPss => p.version == Version::Tls12 && p.sig.is_rsa(),
            Limit::NoTls12Ed25519ClientCert => {
                p.version == Version::Tls12 && p.sig == SigAlg::Ed25519 && p.extras.mtls
            }
            Limit::NoSessionIdResumption => p.resumption == Resumption::SessionId,
            Limit::NoVerifiedSchemeReport => !key_settles_scheme(p.version, p.sig),
            Limit::FixedGroupOrder => {
                p.extras.hrr
                    || (p.version == Version::Tls12
                        && p.sig.ecdsa_curve().is_some_and(|c| c != p.group))
            }
            Limit::ShortTicketNonces(_) => {
                p.version == Version::Tls13 && p.resumption == Resumption::Ticket
            }
        }
    }
}

/// Whether the server's key alone names the handshake's signature scheme: TLS 1.3 ECDSA, where
/// the curve names the hash. (An adapter under `NoVerifiedSchemeReport` refuses the rest.)
pub fn key_settles_scheme(version: Version, sig: SigAlg) -> bool {
    matches!(sig, SigAlg::EcdsaP256 | SigAlg::EcdsaP384) && version == Version::Tls13
}

/// How BoGo's conformance suite tests an impl.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conformance {
    /// Through the driver's shim, with these expectation files under
    /// `crates/conformance/config/`, library first, then its crypto provider's (none: no
    /// known deviations).
    Shim(&'static [&'static str]),
    /// Not at all, for this reason (`tlsmatrix conformance` reports it unsupported).
    NoShim(&'static str),
}

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
    /// Whether BoGo can test it, and against which expectation files.
    pub conformance: Conformance,
    /// Whether its driver wraps the C allocator, and so offers it on jemalloc and mimalloc
    /// too (`+jemalloc`, `+mimalloc`) and counts its heap per connection that way. Go
    /// allocates from its own heap.
    pub wraps_malloc: bool,
    /// The kinds of cell it cannot run.
    pub limits: &'static [Limit],
}

/// The impls, the default baseline first.
pub const IMPLS: &[ImplRow] = &[
    ImplRow {
        name: "rustls-aws-lc",
        family: "rustls",
        driver: "tlsmatrix-driver",
        build: "`make build` (the main driver)",
        version_prefix: "rustls ",
        conformance: Conformance::Shim(&["rustls"]),
        limits: &[Limit::LacksGroups(&[Group::Secp384r1Mlkem1024, Group::Mlkem512])],
        wraps_malloc: true,
    },
    ImplRow {
        name: "rustls-ring",
        family: "rustls",
        driver: "tlsmatrix-driver",
        build: "`make build` (the main driver)",
        version_prefix: "rustls ",
        conformance: Conformance::Shim(&["rustls", "ring"]),
        limits: &[Limit::NoPostQuantum],
        wraps_malloc: true,
    },
    ImplRow {
        name: "openssl-3.0",
        family: "openssl",
        driver: "tlsmatrix-driver",
        build: "`make build` with the system's libssl-dev (the main driver)",
        version_prefix: "OpenSSL 3.0.",
        conformance: Conformance::Shim(&["openssl"]),
        limits: &[Limit::NoPostQuantum],
        wraps_malloc: true,
    },
    ImplRow {
        name: "s2n-tls",
        family: "s2n",
        driver: "tlsmatrix-driver",
        build: "`make build` (the s2n-tls crate on aws-lc, the main driver)",
        version_prefix: "s2n-tls ",
        conformance: Conformance::Shim(&["s2n"]),
        limits: &[Limit::NamedPolicies],
        wraps_malloc: true,
    },
    ImplRow {
        name: "gnutls",
        family: "gnutls",
        driver: "tlsmatrix-driver",
        build: "`make build` with the system's libgnutls28-dev (the main driver)",
        version_prefix: "GnuTLS 3.",
        conformance: Conformance::Shim(&["gnutls"]),
        limits: &[Limit::NoPostQuantum, Limit::NoTls12Ed25519ClientCert],
        wraps_malloc: true,
    },
    ImplRow {
        name: "nss",
        family: "nss",
        driver: "tlsmatrix-driver",
        build: "`make build` with the system's libnss3-dev (the main driver)",
        version_prefix: "NSS 3.",
        conformance: Conformance::Shim(&["nss"]),
        limits: &[Limit::NoPostQuantum, Limit::NoEd25519],
        wraps_malloc: true,
    },
    ImplRow {
        name: "aws-lc",
        family: "openssl",
        driver: "tlsmatrix-driver-aws-lc",
        build: "`make build` (AWS-LC from the sources of the aws-lc-sys release rustls-aws-lc runs, built by scripts/aws-lc-build and linked into libssl-drivers/aws-lc)",
        version_prefix: "AWS-LC ",
        // AWS-LC runs BoGo in its own CI; what differs from BoringSSL is listed.
        conformance: Conformance::Shim(&["aws-lc"]),
        limits: &[Limit::PairedKeyShares],
        wraps_malloc: true,
    },
    ImplRow {
        name: "boringssl",
        family: "openssl",
        driver: "tlsmatrix-driver-boringssl",
        build: "`make build` (the boring crate, linked into libssl-drivers/boringssl)",
        version_prefix: "BoringSSL",
        conformance: Conformance::Shim(&["boringssl"]),
        limits: &[
            Limit::FixedTls13Suites,
            Limit::LacksGroups(&[
                Group::Secp256r1Mlkem768,
                Group::Secp384r1Mlkem1024,
                Group::Mlkem512,
                Group::Mlkem768,
            ]),
        ],
        wraps_malloc: true,
    },
    ImplRow {
        name: "go-crypto-tls",
        family: "go",
        driver: "tlsmatrix-driver-go",
        build: "`make build` (Go's crypto/tls in go/cmd/tlsmatrix-driver-go)",
        version_prefix: "Go go",
        conformance: Conformance::Shim(&["go"]),
        limits: &[
            Limit::FixedTls13Suites,
            Limit::NoSessionIdResumption,
            Limit::FixedGroupOrder,
            Limit::NoMlDsa,
            Limit::LacksGroups(&[Group::Mlkem512, Group::Mlkem768, Group::Mlkem1024]),
        ],
        wraps_malloc: false,
    },
    ImplRow {
        name: "mbedtls",
        family: "mbedtls",
        driver: "tlsmatrix-driver-mbedtls",
        build: "`make build` (Mbed TLS 3.6 LTS from the sources the mbedtls-rs-sys crate ships, its default configuration with thread safety, built by scripts/mbedtls-build and linked into libssl-drivers/mbedtls)",
        version_prefix: "Mbed TLS 3.6.",
        conformance: Conformance::Shim(&["mbedtls"]),
        limits: &[Limit::NoPostQuantum, Limit::NoEd25519, Limit::NoTls12RsaPss],
        wraps_malloc: true,
    },
    ImplRow {
        name: "openssl-1.1.1",
        family: "openssl",
        driver: "tlsmatrix-driver-openssl-1.1.1",
        build: "`make build` (OpenSSL 1.1.1w from the openssl-src crate, linked into libssl-drivers/openssl)",
        version_prefix: "OpenSSL 1.1.1",
        conformance: Conformance::Shim(&["openssl"]),
        limits: &[Limit::NoPostQuantum],
        wraps_malloc: true,
    },
    ImplRow {
        name: "openssl-3.5",
        family: "openssl",
        driver: "tlsmatrix-driver-openssl-3.5",
        build: "`make build` (OpenSSL 3.5 LTS from the openssl-src crate, linked into libssl-drivers/openssl)",
        version_prefix: "OpenSSL 3.5.",
        conformance: Conformance::Shim(&["openssl"]),
        limits: &[],
        wraps_malloc: true,
    },
    ImplRow {
        name: "openssl-3.6",
        family: "openssl",
        driver: "tlsmatrix-driver-openssl-3.6",
        build: "`make build` (OpenSSL 3.6 from the openssl-src crate, linked into libssl-drivers/openssl)",
        version_prefix: "OpenSSL 3.6.",
        conformance: Conformance::Shim(&["openssl"]),
        limits: &[],
        wraps_malloc: true,
    },
    ImplRow {
        name: "openssl-4.0",
        family: "openssl",
        driver: "tlsmatrix-driver-openssl-4.0",
        build: "`make build` (OpenSSL 4.0 from the openssl-src crate, linked into libssl-drivers/openssl)",
        version_prefix: "OpenSSL 4.0.",
        conformance: Conformance::Shim(&["openssl"]),
        limits: &[],
        wraps_malloc: true,
    },
    ImplRow {
        name: "wolfssl",
        family: "wolfssl",
        driver: "tlsmatrix-driver-wolfssl",
        build: "`make build` with the system's libwolfssl-dev (GPL-2.0-or-later: libssl-drivers/wolfssl, a binary of its own)",
        version_prefix: "wolfSSL 5.",
        conformance: Conformance::Shim(&["wolfssl"]),
        // Debian builds wolfSSL without WOLFSSL_TICKET_NONCE_MALLOC: a TLS 1.3 ticket nonce
        // longer than MAX_TICKET_NONCE_STATIC_SZ (8) is refused with INVALID_PARAMETER (-425).
        limits: &[
            Limit::NoPostQuantum,
            Limit::NoVerifiedSchemeReport,
            Limit::ShortTicketNonces(8),
        ],
        wraps_malloc: true,
    },
];

/// The row of an impl or of a variant of one (`openssl-3.6+clang` is `openssl-3.6`'s).
pub fn row(name: &str) -> Option<&'static ImplRow> {
    let base = crate::variant::base(name);
    IMPLS.iter().find(|r| r.name == base)
}

/// Whether the impl `name` declares a limit covering a cell of `params`.
pub fn may_refuse(name: &str, params: &ConnParams) -> bool {
    row(name).is_some_and(|r| r.limits.iter().any(|l| l.covers(params)))
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
    fn a_short_nonce_client_refuses_only_long_nonce_servers_tls13_tickets() {
        let p = |id: &str| id.parse::<crate::scenario::Scenario>().unwrap().params();
        let ticket13 = p("handshake-tls13-ecdsa-p256-x25519-ticket");
        let why = pair_refusal("wolfssl", "rustls-aws-lc", &ticket13).unwrap();
        assert!(why.contains("8 bytes") && why.contains("32-byte"), "{why}");
        assert!(pair_refusal("wolfssl", "rustls-ring+jemalloc", &ticket13).is_some());
        for (client, server, id) in [
            (
                "wolfssl",
                "openssl-3.0",
                "handshake-tls13-ecdsa-p256-x25519-ticket",
            ),
            (
                "wolfssl",
                "wolfssl",
                "handshake-tls13-ecdsa-p256-x25519-ticket",
            ),
            (
                "rustls-aws-lc",
                "wolfssl",
                "handshake-tls13-ecdsa-p256-x25519-ticket",
            ),
            (
                "wolfssl",
                "rustls-aws-lc",
                "handshake-tls12-ecdsa-p256-x25519-ticket",
            ),
            (
                "wolfssl",
                "rustls-aws-lc",
                "handshake-tls13-ecdsa-p256-x25519-full",
            ),
        ] {
            assert_eq!(
                pair_refusal(client, server, &p(id)),
                None,
                "{client} -> {server} {id}"
            );
        }
    }

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
    fn limits_cover_only_their_cells() {
        let p = |id: &str| id.parse::<crate::scenario::Scenario>().unwrap().params();
        assert!(may_refuse(
            "rustls-ring",
            &p("handshake-tls13-ecdsa-p256-x25519mlkem768-full")
        ));
        assert!(!may_refuse(
            "rustls-ring",
            &p("handshake-tls13-ecdsa-p256-x25519-full")
        ));
        assert!(!may_refuse(
            "rustls-aws-lc",
            &p("handshake-tls13-ecdsa-p256-x25519mlkem768-full")
        ));
        assert!(may_refuse("boringssl", &p("bulk-tls13-aes-256-gcm-16k")));
        assert!(!may_refuse("boringssl", &p("bulk-tls12-aes-256-gcm-16k")));
        assert!(may_refuse(
            "go-crypto-tls",
            &p("handshake-tls12-ecdsa-p256-x25519-session-id")
        ));
        assert!(!may_refuse(
            "nossl",
            &p("handshake-tls13-ecdsa-p256-x25519mlkem768-full")
        ));
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
