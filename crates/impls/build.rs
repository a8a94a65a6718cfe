//! Records the locked versions of the TLS crates this build compiles, so an adapter can say
//! exactly what it runs even where the library has no run-time version call.

include!("../../build-support/locked_versions.rs");

fn main() {
    stamp_locked_versions(&[
        "rustls",
        "aws-lc-rs",
        "aws-lc-sys",
        "ring",
        "openssl",
        "openssl-sys",
        "boring",
        "boring-sys",
        "s2n-tls",
    ]);
}
