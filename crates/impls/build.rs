//! Records the locked versions of the TLS crates this build compiles, so an adapter can say
//! exactly what it runs even where the library has no run-time version call, and the C
//! compiler the build's C code (ring, aws-lc, s2n-tls) is compiled with.

include!("../../build-support/locked_versions.rs");

fn main() {
    stamp_locked_versions(&[
        "rustls",
        "aws-lc-rs",
        // AWS-LC's libssl (the aws-lc feature) locks another aws-lc-sys beside it.
        "aws-lc-rs/aws-lc-sys",
        "ring",
        "openssl",
        "openssl-sys",
        "boring",
        "boring-sys",
        "s2n-tls",
        "quinn-proto",
        "quiche",
    ]);
    stamp_c_compiler();
    libcrypto_cfgs();
    #[cfg(feature = "mbedtls")]
    build_mbedtls_glue();
    #[cfg(feature = "nss")]
    build_nss_glue();
    #[cfg(feature = "wolfssl")]
    build_wolfssl_floor();
    #[cfg(feature = "gnutls")]
    build_gnutls_floor();
}

/// Compiles the GnuTLS floor's C side (libgnutls28-dev, nettle-dev) and links nettle, hogweed
/// and GMP, which its key exchange calls directly (GnuTLS 3.7 exports no ECDH); and the C
/// side of ngtcp2, GnuTLS's QUIC stack.
#[cfg(feature = "gnutls")]
fn build_gnutls_floor() {
    println!("cargo:rerun-if-changed=csrc/gnutls_floor.c");
    println!("cargo:rerun-if-changed=csrc/tm_floor.h");
    cc::Build::new()
        .file("csrc/gnutls_floor.c")
        .warnings(true)
        .compile("tlsmatrix_gnutls_floor");
    for lib in ["gnutls", "hogweed", "nettle", "gmp"] {
        println!("cargo:rustc-link-lib={lib}");
    }
    // ngtcp2's C side (libngtcp2-dev, libngtcp2-crypto-gnutls-dev): the adapter links the
    // libraries.
    println!("cargo:rerun-if-changed=csrc/ngtcp2_glue.c");
    cc::Build::new()
        .file("csrc/ngtcp2_glue.c")
        .warnings(true)
        .compile("tlsmatrix_ngtcp2_glue");
}

/// Compiles the wolfSSL floor's C side against the system's headers (libwolfssl-dev), with
/// the options Debian built the library with (`wolfssl/options.h`, included first), which
/// fix the size of the structs it allocates. The library is linked by the adapter.
#[cfg(feature = "wolfssl")]
fn build_wolfssl_floor() {
    println!("cargo:rerun-if-changed=csrc/wolfssl_floor.c");
    println!("cargo:rerun-if-changed=csrc/tm_floor.h");
    cc::Build::new()
        .file("csrc/wolfssl_floor.c")
        .warnings(true)
        .compile("tlsmatrix_wolfssl_floor");
}

/// `cfg(libcrypto_kem_by_name)` where the linked libcrypto is OpenSSL 3.0 or later, whose
/// KEMs (ML-KEM from 3.5) are called by name; openssl-sys reports the version it found.
fn libcrypto_cfgs() {
    println!("cargo:rustc-check-cfg=cfg(libcrypto_kem_by_name)");
    let aws_lc = std::env::var_os("CARGO_FEATURE_AWS_LC").is_some();
    let version = std::env::var("DEP_OPENSSL_VERSION_NUMBER")
        .ok()
        .and_then(|v| u64::from_str_radix(&v, 16).ok());
    if !aws_lc && version.is_some_and(|v| v >= 0x3000_0000) {
        println!("cargo:rustc-cfg=libcrypto_kem_by_name");
    }
    // OpenSSL's own QUIC server (SSL_new_listener) came in 3.5.
    println!("cargo:rustc-check-cfg=cfg(openssl_quic)");
    let boringssl = std::env::var_os("CARGO_FEATURE_BORINGSSL").is_some();
    if !aws_lc && !boringssl && version.is_some_and(|v| v >= 0x3050_0000) {
        println!("cargo:rustc-cfg=openssl_quic");
    }
}

/// Compiles the NSS adapter's C side against the system's headers (libnss3-dev). The
/// libraries themselves are linked by the adapter's `#[link]` attributes.
#[cfg(feature = "nss")]
fn build_nss_glue() {
    println!("cargo:rerun-if-changed=csrc/nss_glue.c");
    println!("cargo:rerun-if-changed=csrc/nss_floor.c");
    println!("cargo:rerun-if-changed=csrc/tm_floor.h");
    cc::Build::new()
        .file("csrc/nss_glue.c")
        .file("csrc/nss_floor.c")
        .include("/usr/include/nss")
        .include("/usr/include/nspr")
        .warnings(true)
        .compile("tlsmatrix_nss_glue");
}

/// Compiles the Mbed TLS adapter's C helpers against the build scripts/mbedtls-build made, and
/// links that build's static libraries.
#[cfg(feature = "mbedtls")]
fn build_mbedtls_glue() {
    println!("cargo:rerun-if-env-changed=TLSMATRIX_MBEDTLS_DIR");
    println!("cargo:rerun-if-changed=csrc/mbedtls_glue.c");
    let dir = std::env::var("TLSMATRIX_MBEDTLS_DIR").unwrap_or_else(|_| {
        panic!("the mbedtls feature needs TLSMATRIX_MBEDTLS_DIR: an Mbed TLS build from scripts/mbedtls-build (make driver-mbedtls sets it)")
    });
    let dir = std::path::Path::new(&dir);
    println!("cargo:rerun-if-changed={}", dir.join("STAMP").display());
    println!("cargo:rerun-if-changed=csrc/mbedtls_floor.c");
    println!("cargo:rerun-if-changed=csrc/tm_floor.h");
    cc::Build::new()
        .file("csrc/mbedtls_glue.c")
        .file("csrc/mbedtls_floor.c")
        .include(dir.join("include"))
        // The additions the library was built with (scripts/mbedtls-build): they change
        // the size of the structs the glue allocates.
        .define("MBEDTLS_USER_CONFIG_FILE", "\"tlsmatrix_user_config.h\"")
        .warnings(true)
        .compile("tlsmatrix_mbedtls_glue");
    println!(
        "cargo:rustc-link-search=native={}",
        dir.join("lib").display()
    );
    // Each before what it needs: ssl needs x509, which needs crypto.
    for lib in ["mbedtls", "mbedx509", "mbedcrypto"] {
        println!("cargo:rustc-link-lib=static={lib}");
    }
}

/// Sets `TLSMATRIX_C_COMPILER` to e.g. "gcc 12.2.0" or "clang 14.0.6": the compiler the cc
/// crate gives the -sys crates' build scripts (`$CC`, else `cc`).
fn stamp_c_compiler() {
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo:rerun-if-env-changed=PATH");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = std::process::Command::new(&cc)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let first = out.lines().next().unwrap_or("");
    let named = if first.contains("clang") {
        first
            .split("version")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .map(|v| format!("clang {v}"))
    } else if first.starts_with("gcc") || first.starts_with("cc") {
        first.split_whitespace().last().map(|v| format!("gcc {v}"))
    } else {
        None
    };
    let named = named.unwrap_or_else(|| format!("{cc} (unknown version)"));
    println!("cargo:rustc-env=TLSMATRIX_C_COMPILER={named}");
    // s2n-tls-sys compiles libs2n with clang whenever clang runs and CC is not set (its
    // build script says so), whatever compiler the rest of the build uses.
    let s2n = if std::env::var("CC").is_err() {
        clang_version().unwrap_or_else(|| named.clone())
    } else {
        named.clone()
    };
    println!("cargo:rustc-env=TLSMATRIX_S2N_C_COMPILER={s2n}");
}

fn clang_version() -> Option<String> {
    let out = std::process::Command::new("clang")
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = text
        .lines()
        .next()?
        .split("version")
        .nth(1)?
        .split_whitespace()
        .next()?;
    Some(format!("clang {v}"))
}
