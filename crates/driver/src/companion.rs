//! A companion process: the runner starts the driver with `COMPANION_ENV` naming a folder
//! and `LD_LIBRARY_PATH` pointing at it, so that a system library's rebuild with symbols is
//! loaded in place of the system's. Such a process lists and runs only the libraries loaded
//! from that folder, each named `<impl>+symbols`; a library that still came from elsewhere
//! (the loader not told, a wrong folder) is an error, never a silent measure of the system's
//! build under the companion's name.

use std::path::PathBuf;

use anyhow::{bail, Result};
use tlsmatrix_harness::endpoint::TlsLibrary;
use tlsmatrix_model::variant::{Variant, COMPANION_ENV, SYMBOLS};

/// The companion folder this process was started for, if any.
pub fn folder() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os(COMPANION_ENV)?);
    Some(std::fs::canonicalize(&dir).unwrap_or(dir))
}

/// Whether `lib`'s code was loaded from `folder`.
pub fn loaded_from(lib: &dyn TlsLibrary, folder: &std::path::Path) -> bool {
    lib.library_file().is_some_and(|f| f.starts_with(folder))
}

/// Checks a name against this process: a `+symbols` name only in a companion process and
/// only for a library loaded from its folder, any other name only outside one.
pub fn check(name: &str, v: &Variant, lib: &dyn TlsLibrary) -> Result<()> {
    match (v.symbols, folder()) {
        (false, None) => Ok(()),
        (true, None) => bail!(
            "'{name}' is a companion build with {SYMBOLS}: the runner starts its driver with {COMPANION_ENV} naming the companion's folder (`make companions` builds it; `tlsmatrix list` shows it once built)"
        ),
        (false, Some(dir)) => bail!(
            "this driver process runs the companion libraries in {}, so only +{SYMBOLS} impls: '{name}' needs a driver started without {COMPANION_ENV}",
            dir.display()
        ),
        (true, Some(dir)) if loaded_from(lib, &dir) => Ok(()),
        (true, Some(dir)) => bail!(
            "'{name}': {} was loaded from {}, not from the companion folder {}; refusing to measure another build under the companion's name",
            v.base,
            lib.library_file()
                .map_or("no shared object".into(), |f| f.display().to_string()),
            dir.display()
        ),
    }
}
