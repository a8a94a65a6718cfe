// Shared by the build scripts that stamp a binary with the locked versions of the crates it
// compiles (`include!`d, since build scripts cannot share a library without a crate for it).

/// Sets `TLSMATRIX_VERSION_<CRATE>` (upper case, `-` as `_`) for each crate, read from the
/// workspace's Cargo.lock; "unknown" when a crate is not locked. `parent/crate` names the
/// version `parent` is built with, for a crate locked at several versions.
fn stamp_locked_versions(crates: &[&str]) {
    let lock = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    for item in crates {
        let (version, krate) = match item.split_once('/') {
            Some((parent, krate)) => (locked_dependency_version(&text, parent, krate), krate),
            None => (locked_version(&text, item), *item),
        };
        let version = version.unwrap_or_else(|| "unknown".into());
        let var = krate.to_uppercase().replace('-', "_");
        println!("cargo:rustc-env=TLSMATRIX_VERSION_{var}={version}");
    }
}

include!("lock_file.rs");
