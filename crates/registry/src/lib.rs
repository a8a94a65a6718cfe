//! What every command that runs drivers shares: the driver registry and driver processes
//! ([`registry`]), children that end with tlsmatrix ([`child`]), the environment a run
//! records ([`env`]) and `--shard K/N` ([`shard`]).

pub mod child;
pub mod env;
pub mod registry;
pub mod shard;

use std::path::{Path, PathBuf};

/// A file in the same folder as `path`.
pub fn beside(path: &Path, name: &str) -> PathBuf {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join(name)
}
