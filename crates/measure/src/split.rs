//! Where a side's handshake instructions go: each function of a callgrind dump classed by its
//! name (the crypto, OpenSSL 3's provider layer, X.509 and encoding, allocation, locks,
//! copies, and the rest: the TLS state machine, records and everything else), and how often
//! the side took a lock.
//!
//! A function is charged with its own instructions (callgrind's self cost), so the parts sum
//! to the side's total exactly; code a compiler inlined counts where it was inlined. The
//! provider layer also takes the share of the locks, allocation, copies and rest that its
//! functions reach (see [`parse`]).

use std::collections::HashMap;

use crate::call_graph::Graph;

/// What a function does, as its name tells: the class list every split shares.
pub use tlsmatrix_model::class::Class;
use tlsmatrix_model::class::SPLIT_CLASSES;
use tlsmatrix_model::metric::Metric;

/// Name fragments, lower case, in the order they are tried: a lock before an allocation
/// (`CRYPTO_THREAD_write_lock` is a lock), both before crypto (`CRYPTO_malloc` allocates),
/// the provider layer and X.509 before crypto (`crypto/x509` is parsing, not cryptography).
const RULES: &[(Class, &[&str])] = &[
    (
        Class::Locks,
        &[
            "pthread_mutex",
            "pthread_rwlock",
            "pthread_spin",
            "pthread_once",
            "__pthread_once",
            "lll_lock",
            "lll_unlock",
            "futex",
            "crypto_thread_",
            "run_once",
            "rwlock",
            "mutex",
            "sync.(*once)",
            "sync::once",
            "once_cell",
            "parking_lot",
        ],
    ),
    (
        Class::Allocation,
        &[
            "malloc",
            "calloc",
            "realloc",
            "memalign",
            "aligned_alloc",
            "_int_free",
            "cfree",
            "tcache",
            "unlink_chunk",
            "__rust_alloc",
            "__rust_dealloc",
            "__rust_realloc",
            "__rdl_",
            "alloc::alloc",
            "crypto_free",
            "crypto_zalloc",
            "openssl_free",
            "runtime.mallocgc",
            "runtime.newobject",
            "runtime.makeslice",
            "runtime.growslice",
            "runtime.gc",
            "runtime.scanobject",
            "heap_accounting",
        ],
    ),
    (
        Class::Copies,
        &[
            "memcpy",
            "memmove",
            "memset",
            "bzero",
            "cleanse",
            "runtime.memmove",
            "runtime.memclr",
        ],
    ),
    // OpenSSL 3's provider layer: what 1.1.1 had none of and every algorithm use now goes
    // through. Before the parsing and the crypto (`evp_md_fetch` holds `md_`,
    // `ossl_decoder_*` decodes keys); after the locks, allocation and copies it calls, which
    // stay theirs. A stack without the layer (BoringSSL, AWS-LC, 1.1.1) has no such names.
    (
        Class::Provider,
        &[
            "_fetch",
            "ossl_method_",
            "ossl_namemap",
            "ossl_property",
            "ossl_decoder",
            "ossl_encoder",
            "ossl_lib_ctx",
            "ossl_provider",
            "ossl_algorithm",
            "ossl_param",
            "evp_keymgmt",
            "evp_pkey_export_to_provider",
        ],
    ),
    (
        Class::Parsing,
        &[
            "x509",
            "asn1",
            "d2i_",
            "i2d_",
            "c2i_",
            "i2c_",
            "from_der",
            "::der",
            "pem_",
            "webpki",
            "cbs_",
            "cbb_",
            "base64",
            "obj_",
            "encoding/",
        ],
    ),
    (
        Class::Crypto,
        &[
            "sha",
            "aes",
            "gcm",
            "ghash",
            "gf128",
            "gfmul",
            "poly1305",
            "chacha",
            "x25519",
            "curve25519",
            "ed25519",
            "p256",
            "p384",
            "p521",
            "nistz",
            "nistec",
            "ecp_",
            "ec_gf",
            "ec_point",
            "ec_scalar",
            "ecdsa",
            "ecdh",
            "bn_",
            "bignum",
            "bigmod",
            "mont",
            // The big-number assembly's local routines, which carry no bn_ prefix
            // (x86_64-mont5.pl, rsaz-*.pl): RSA's modular exponentiation.
            "rsaz",
            "mul4x",
            "mulx4x",
            "sqr8x",
            "sqrx8x",
            "power5",
            "powerx5",
            "gather5",
            "scatter5",
            "extract_multiplier",
            "rsa_",
            "rsa::",
            "fiat_",
            "mlkem",
            "ml_kem",
            "kyber",
            "mldsa",
            "ml_dsa",
            "dilithium",
            "keccak",
            "hmac",
            "hkdf",
            "digest",
            "drbg",
            "getrandom",
            "x448",
            "fe_mul",
            "fe_sq",
            "fe_invert",
            // curve25519.c's static field and group helpers (BoringSSL, ring), which carry
            // no library prefix: left out, they put a sixth of ring's server handshake and
            // 15-20 µs of BoringSSL's in "the rest". `|`: at the start of a word only, so
            // that "fe_add" does not take OpenSSL's safe_add_*.
            "|fe4_",
            "|fe_loose",
            "|fe_add",
            "|fe_sub",
            "|fe_neg",
            "|fe_cmov",
            "|fe_copy",
            "|fe_carry",
            "|fe_tobytes",
            "|fe_frombytes",
            "|fe_isn",
            "ge_p1p1",
            "ge_p2",
            "ge_p3",
            "ge_precomp",
            "ge_cached",
            "ge_madd",
            "ge_msub",
            "table_select",
            "|cmov",
            "sc_reduce",
            "sc_muladd",
            "ge_scalarmult",
            "ge_double",
            "scalar",
            "crypto/internal",
            "crypto/ecdh",
            "crypto/ecdsa",
            "crypto/ed25519",
            "crypto/rsa",
            "crypto/sha",
            "crypto/hmac",
            "crypto/hkdf",
            "crypto/mlkem",
            "crypto/aes",
            "crypto/cipher",
            "ring_core",
            "aws_lc_rs",
            "ring::",
            "md_",
            "nettle",
            "gmpn",
            "__gmp",
            "mpz_",
            "mpn_",
            "jent_",
            "rol64",
            "xoshiro",
            "mod_inverse",
            "mpi_",
            "_mpi",
            "ecp_mod",
            "psa_",
        ],
    ),
];

/// The part a function's work belongs to, by its name.
pub fn classify(function: &str) -> Class {
    // Callgrind names a function it has no symbol for by its address.
    if function.starts_with("0x") {
        return Class::Unnamed;
    }
    let name = symbol(function).to_ascii_lowercase();
    RULES
        .iter()
        .find(|(_, fragments)| fragments.iter().any(|f| names(&name, f)))
        .map_or(Class::Other, |(part, _)| *part)
}

/// Whether `name` holds `fragment`; one written `|fragment` only where a word starts (at the
/// start, or after anything but a letter or digit).
fn names(name: &str, fragment: &str) -> bool {
    let Some(word) = fragment.strip_prefix('|') else {
        return name.contains(fragment);
    };
    name.match_indices(word).any(|(at, _)| {
        name[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric())
    })
}

/// A function's name without its symbol version (`pthread_rwlock_rdlock@@GLIBC_2.34`).
fn symbol(function: &str) -> &str {
    function.split('@').next().unwrap_or(function)
}

/// A lock acquisition, by the callee's name: what a side's calls to these count.
fn takes_a_lock(function: &str) -> bool {
    const ACQUIRE: &[&str] = &[
        "pthread_mutex_lock",
        "pthread_mutex_trylock",
        "pthread_rwlock_rdlock",
        "pthread_rwlock_wrlock",
        "pthread_rwlock_tryrdlock",
        "pthread_rwlock_trywrlock",
        "pthread_spin_lock",
        "sync.(*mutex).lock",
        "sync.(*rwmutex).rlock",
        "sync.(*rwmutex).lock",
    ];
    let name = symbol(function).to_ascii_lowercase();
    ACQUIRE.iter().any(|a| name.ends_with(a))
}

/// One side's split: instructions per part, lock acquisitions, and atomic read-modify-writes
/// (callgrind's global bus events, `Ge`, where the dump has them), each also for the
/// provider layer alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Split {
    pub instructions: HashMap<Class, u64>,
    pub lock_calls: u64,
    pub atomics: u64,
    /// The lock acquisitions made on the provider layer's behalf: by its own functions, and
    /// by the code they reach (see [`parse`]), in proportion.
    pub provider_lock_calls: f64,
    /// The atomics of the instructions charged to the provider layer.
    pub provider_atomics: f64,
}

impl Split {
    pub fn total(&self) -> u64 {
        self.instructions.values().sum()
    }

    /// Each class's instructions over `n` handshakes, as the figures `metrics` (the
    /// instruction split's order: `Class::split`).
    pub fn per_handshake(
        &self,
        metrics: [Metric; SPLIT_CLASSES],
        n: u32,
    ) -> impl Iterator<Item = (Metric, f64)> + '_ {
        metrics
            .into_iter()
            .zip(Class::split())
            .map(move |(m, class)| {
                let count = self.instructions.get(&class).copied().unwrap_or(0);
                (m, count as f64 / f64::from(n))
            })
    }
}

/// Whether the provider layer's walk stops at a function of this class: cryptography and
/// parsing are work any stack does, whoever asks for it, and code without a name cannot be
/// judged (it stays unnamed, though the walk passes through it).
fn keeps_its_own(class: Class) -> bool {
    matches!(class, Class::Crypto | Class::Parsing)
}

/// Reads a callgrind dump ([`Graph::parse`]) into a side's split. Each function is charged
/// with its own instructions (callgrind's self cost), so the parts sum to the total; then
/// the provider layer takes what it reaches: the share of each lock, allocation, copy and
/// other function's own cost that was done for the layer's functions (the inclusive cost
/// of their calls into it over all calls into it, passed down the calls; `OPENSSL_LH_*`
/// walks, string compares and the locks of a fetch), stopping at cryptography and parsing,
/// which keep their own.
pub fn parse(text: &str) -> Split {
    let graph = Graph::parse(text);
    let classes: Vec<Class> = graph.functions.iter().map(|f| classify(&f.name)).collect();
    let share = graph.reached_share(
        |i| classes[i] == Class::Provider,
        |i| keeps_its_own(classes[i]),
    );
    let mut split = Split::default();
    for ((f, &class), &reached) in graph.functions.iter().zip(&classes).zip(&share) {
        let moved = match class {
            Class::Provider => f.instructions,
            Class::Unnamed => 0,
            c if keeps_its_own(c) => 0,
            _ => (f.instructions as f64 * reached).round() as u64,
        };
        *split.instructions.entry(class).or_default() += f.instructions - moved;
        *split.instructions.entry(Class::Provider).or_default() += moved;
        split.atomics += f.atomics;
        if moved > 0 {
            split.provider_atomics += f.atomics as f64 * moved as f64 / f.instructions as f64;
        }
    }
    for call in &graph.calls {
        if takes_a_lock(&graph.functions[call.callee].name) {
            split.lock_calls += call.count;
            let caller = call.caller;
            if !keeps_its_own(classes[caller]) {
                split.provider_lock_calls += call.count as f64 * share[caller];
            }
        }
    }
    split
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_classed_by_what_the_function_does() {
        for (name, part) in [
            ("sha256_block_data_order_avx2", Class::Crypto),
            ("aws_lc_0_47_0_ecp_nistz256_point_mul", Class::Crypto),
            (
                "crypto/internal/fips140/nistec.(*P256Point).ScalarMult",
                Class::Crypto,
            ),
            ("crypto/x509.parseCertificate", Class::Parsing),
            ("X509_verify_cert", Class::Parsing),
            ("webpki::cert::Cert::from_der", Class::Parsing),
            ("CRYPTO_THREAD_write_lock", Class::Locks),
            ("pthread_rwlock_rdlock", Class::Locks),
            ("CRYPTO_malloc", Class::Allocation),
            ("_int_free", Class::Allocation),
            ("__memmove_avx_unaligned_erms", Class::Copies),
            ("OPENSSL_cleanse", Class::Copies),
            ("__gmpn_mul_basecase", Class::Crypto),
            ("mulx4x_internal", Class::Crypto),
            ("aws_lc_0_47_0_rsaz_amm52x20_x2_ifma256", Class::Crypto),
            ("__bn_sqrx8x_reduction", Class::Crypto),
            ("_nettle_sec_tabselect", Class::Crypto),
            ("mbedtls_mpi_core_mla", Class::Crypto),
            ("fe4_sub", Class::Crypto),
            ("fe_loose_invert", Class::Crypto),
            ("ge_p3_tobytes", Class::Crypto),
            ("x25519_ge_p1p1_to_p3", Class::Crypto),
            ("table_select", Class::Crypto),
            ("cmov", Class::Crypto),
            ("fe_cmov", Class::Crypto),
            ("sc_muladd", Class::Crypto),
            // A field helper's name only where a word starts: OpenSSL's safe_math is not.
            ("safe_add_int", Class::Other),
            ("safe_sub_size_t", Class::Other),
            ("add_sub_mpi", Class::Crypto),
            ("0x00000000001d0280", Class::Unnamed),
            ("tls_process_server_hello", Class::Other),
            // OpenSSL 3's provider layer, before the crypto its names hold (`md_`), and not
            // its locks or its frees.
            ("EVP_MD_fetch", Class::Provider),
            ("inner_evp_generic_fetch", Class::Provider),
            ("ossl_method_store_fetch", Class::Provider),
            ("ossl_namemap_name2num", Class::Provider),
            ("ossl_property_match_count", Class::Provider),
            ("OSSL_DECODER_CTX_new_for_pkey", Class::Provider),
            ("ossl_lib_ctx_get_data", Class::Provider),
            ("OSSL_PARAM_locate", Class::Provider),
            ("evp_keymgmt_util_export_to_provider", Class::Provider),
            ("CRYPTO_THREAD_read_lock", Class::Locks),
            ("EVP_DigestUpdate", Class::Crypto),
            // Fragments that hide in other words are not matched: "der_" in "order_",
            // "ge_" in "message_", "rsa" in "universal".
            ("tls_construct_message_header", Class::Other),
            ("traverse_universal_reader_", Class::Other),
            (
                "rustls::conn::ConnectionCommon<Data>::process_new_packets",
                Class::Other,
            ),
        ] {
            assert_eq!(classify(name), part, "{name}");
        }
    }

    #[test]
    fn self_costs_sum_to_the_total_and_lock_calls_are_counted() {
        // Two functions; `f` calls the lock twice (inclusive cost 40, the callee's) and
        // costs 10 + 5 itself; the lock costs 40 itself; names compressed after first use.
        let dump = "version: 1\nevents: Ir\n\
            fn=(1) tls_construct_client_hello\n3 10\n+1 5\n\
            cfn=(2) pthread_mutex_lock@@GLIBC_2.2.5\ncalls=2 0\n+2 40\n\
            fn=(2)\n0 40\n\
            fn=(3) sha256_block_data_order\n* 100\n\
            totals: 155\n";
        let s = parse(dump);
        assert_eq!(s.instructions[&Class::Other], 15);
        assert_eq!(s.instructions[&Class::Locks], 40);
        assert_eq!(s.instructions[&Class::Crypto], 100);
        assert_eq!(s.total(), 155);
        assert_eq!(s.lock_calls, 2);
        assert_eq!(s.atomics, 0);
    }

    #[test]
    fn the_provider_layer_takes_what_it_reaches_but_not_crypto() {
        // EVP_MD_fetch (provider, 20 own) calls OPENSSL_LH_retrieve (other, 30 own) which
        // takes a lock (10 own, 2 Ge); tls_construct (other, 50 own) calls the lock too, as
        // often and as dearly. The fetch also calls sha256 (crypto), which stays crypto.
        let dump = "version: 1\nevents: Ir Ge\n\
            fn=(1) EVP_MD_fetch\n0 20\n\
            cfn=(2) OPENSSL_LH_retrieve\ncalls=1 0\n0 35 1\n\
            cfn=(4) sha256_block_data_order\ncalls=1 0\n0 100\n\
            fn=(2)\n0 30\ncfn=(3) pthread_rwlock_rdlock\ncalls=1 0\n0 5 1\n\
            fn=(5) tls_construct\n0 50\ncfn=(3)\ncalls=1 0\n0 5 1\n\
            fn=(3)\n0 10 2\n\
            fn=(4)\n0 100\n\
            totals: 210 2\n";
        let s = parse(dump);
        // 20 own + 30 reached + half the lock's 10.
        assert_eq!(s.instructions[&Class::Provider], 55);
        assert_eq!(s.instructions[&Class::Locks], 5);
        assert_eq!(s.instructions[&Class::Other], 50);
        assert_eq!(s.instructions[&Class::Crypto], 100);
        assert_eq!(s.total(), 210);
        assert_eq!((s.lock_calls, s.provider_lock_calls), (2, 1.0));
        assert_eq!((s.atomics, s.provider_atomics), (2, 1.0));
    }

    #[test]
    fn bus_events_are_the_atomics_and_a_call_line_is_the_callee_s() {
        // `--collect-bus=yes`: each cost line is position, Ir, Ge (a trailing zero left out).
        // `f` calls the lock (inclusive 40 Ir, 2 Ge: the lock's own, not f's).
        let dump = "version: 1\nevents: Ir Ge\n\
            fn=(1) f\n3 10\n+1 5 1\n\
            cfn=(2) pthread_mutex_lock\ncalls=1 0\n+2 40 2\n\
            fn=(2)\n0 40 2\n\
            totals: 55 3\n";
        let s = parse(dump);
        assert_eq!(s.total(), 55);
        assert_eq!(s.atomics, 3);
        assert_eq!(s.lock_calls, 1);
    }
}
