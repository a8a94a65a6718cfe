//! TLS library adapters. One module per library family, each behind a cargo feature; the
//! registry below is the one list of what this build contains. Adding a library is one new
//! module and one line in `libraries()`.

use tlsmatrix_harness::endpoint::TlsLibrary;

#[cfg(all(feature = "openssl", feature = "boringssl"))]
compile_error!("OpenSSL and BoringSSL export the same symbols: build them into separate drivers");
#[cfg(all(feature = "aws-lc", feature = "boringssl"))]
compile_error!("AWS-LC's libssl and BoringSSL each need the openssl adapter to themselves: build them into separate drivers");

#[cfg(any(feature = "wolfssl", feature = "mbedtls", feature = "nss"))]
mod c_io;
#[cfg(any(feature = "wolfssl", feature = "mbedtls"))]
mod c_session;
/// Each library's own AEAD and allocation call, apart from its TLS stack.
pub mod ceiling;
/// The crypto floor through BoringSSL's libcrypto.
#[cfg(feature = "boringssl")]
pub mod floor_boringssl;
/// The crypto floor of a C library through this crate's glue (csrc/tm_floor.h).
#[cfg(any(feature = "nss", feature = "wolfssl", feature = "mbedtls"))]
mod floor_glue;
/// What the floors of OpenSSL's libcrypto and its forks share.
#[cfg(any(feature = "openssl", feature = "boringssl"))]
mod floor_libcrypto;
/// The crypto floor through OpenSSL's (or AWS-LC's) libcrypto.
#[cfg(all(feature = "openssl", not(feature = "boringssl")))]
pub mod floor_openssl;
/// The crypto floor through a rustls provider (rustls and s2n-tls's aws-lc).
#[cfg(any(feature = "rustls-aws-lc", feature = "rustls-ring"))]
pub mod floor_rustls;
#[cfg(any(feature = "mbedtls", feature = "nss"))]
mod glue_aead;
#[cfg(feature = "gnutls")]
pub mod gnutls;
/// Which shared object a library's code was loaded from.
#[cfg(any(
    all(feature = "openssl", not(feature = "boringssl")),
    feature = "wolfssl"
))]
mod loaded;
#[cfg(feature = "mbedtls")]
pub mod mbedtls;
#[cfg(feature = "nss")]
pub mod nss;
/// OpenSSL, or BoringSSL through the same code (see the module's note).
#[cfg(any(feature = "openssl", feature = "boringssl"))]
pub mod openssl;
#[cfg(any(feature = "rustls-aws-lc", feature = "rustls-ring"))]
pub mod rustls;
#[cfg(feature = "s2n-tls")]
pub mod s2n;
#[cfg(feature = "wolfssl")]
pub mod wolfssl;

/// The C compiler this build's C code was compiled with, e.g. "clang 14.0.6".
pub const C_COMPILER: &str = env!("TLSMATRIX_C_COMPILER");

/// The compiler suffix of this build's impl names: none for the default compiler (gcc).
pub fn compiler_variant() -> Option<&'static str> {
    tlsmatrix_model::variant::COMPILERS[1..]
        .iter()
        .copied()
        .find(|c| C_COMPILER.starts_with(c))
}

/// Every library compiled into this build.
#[allow(clippy::vec_init_then_push)] // each push is behind its own feature
pub fn libraries() -> Vec<Box<dyn TlsLibrary>> {
    let mut libs: Vec<Box<dyn TlsLibrary>> = Vec::new();
    #[cfg(feature = "rustls-aws-lc")]
    libs.push(Box::new(rustls::RustlsLibrary::aws_lc_rs()));
    #[cfg(feature = "rustls-ring")]
    libs.push(Box::new(rustls::RustlsLibrary::ring()));
    #[cfg(any(feature = "openssl", feature = "boringssl"))]
    libs.push(Box::new(openssl::OpensslLibrary::linked()));
    #[cfg(feature = "s2n-tls")]
    libs.push(Box::new(s2n::S2nLibrary));
    #[cfg(feature = "gnutls")]
    libs.push(Box::new(gnutls::GnutlsLibrary));
    #[cfg(feature = "nss")]
    libs.push(Box::new(nss::NssLibrary));
    #[cfg(feature = "wolfssl")]
    libs.push(Box::new(wolfssl::WolfsslLibrary::new()));
    #[cfg(feature = "mbedtls")]
    libs.push(Box::new(mbedtls::MbedtlsLibrary::new()));
    libs
}

/// The library called `name` in this build.
pub fn library(name: &str) -> Option<Box<dyn TlsLibrary>> {
    libraries().into_iter().find(|l| l.name() == name)
}
