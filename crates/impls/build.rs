//! Records the locked versions of the TLS crates this build compiles, so an adapter can say
//! exactly what it runs even where the library has no run-time version call.

use std::path::Path;

const CRATES: &[&str] = &[
    "rustls",
    "aws-lc-rs",
    "aws-lc-sys",
    "ring",
    "openssl",
    "openssl-sys",
];

fn main() {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    for krate in CRATES {
        let version = locked_version(&text, krate).unwrap_or_else(|| "unknown".into());
        let var = krate.to_uppercase().replace('-', "_");
        println!("cargo:rustc-env=TLSMATRIX_VERSION_{var}={version}");
    }
}

/// The version in the `[[package]]` entry named `krate`; the first one if several are locked.
fn locked_version(lock: &str, krate: &str) -> Option<String> {
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("name = \"{krate}\"") {
            let v = lines.next()?.trim().strip_prefix("version = \"")?;
            return Some(v.trim_end_matches('"').to_string());
        }
    }
    None
}
