//! `cargo xtask locks`: the driver workspaces under `libssl-drivers/` have lock files of their
//! own (cargo cannot share one across workspaces), so the repository's `Cargo.lock` is the
//! home of every pin: a driver workspace may lock a package only at a version the main lock
//! also has, or a driver would measure rustls (say) at another version than the main driver.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Package name to the versions a lock file holds.
fn read_lock(path: &Path) -> Result<BTreeMap<String, BTreeSet<String>>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut name = None;
    for line in text.lines() {
        let value = |key: &str| {
            line.strip_prefix(key)
                .and_then(|v| v.strip_prefix(" = \""))
                .and_then(|v| v.strip_suffix('"'))
                .map(str::to_string)
        };
        if line == "[[package]]" {
            name = None;
        } else if let Some(n) = value("name") {
            name = Some(n);
        } else if let (Some(v), Some(n)) = (value("version"), name.take()) {
            out.entry(n).or_default().insert(v);
        }
    }
    Ok(out)
}

/// Every (lock file, package, version) a driver workspace locks that the main lock does not.
pub fn strays() -> Result<Vec<String>> {
    let main = read_lock(&root().join("Cargo.lock"))?;
    let mut strays = Vec::new();
    let drivers = root().join("libssl-drivers");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&drivers)
        .with_context(|| format!("{}", drivers.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("Cargo.lock").is_file())
        .collect();
    dirs.sort();
    for dir in dirs {
        let lock = dir.join("Cargo.lock");
        for (name, versions) in read_lock(&lock)? {
            // Packages only a driver has (boring-sys, openssl-src) are the driver's own.
            let Some(pinned) = main.get(&name) else {
                continue;
            };
            for v in versions.difference(pinned) {
                strays.push(format!(
                    "{}: {name} {v} (Cargo.lock has {})",
                    lock.strip_prefix(root()).unwrap_or(&lock).display(),
                    pinned.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    Ok(strays)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_workspaces_lock_only_versions_the_main_lock_has() {
        let strays = strays().unwrap();
        assert!(
            strays.is_empty(),
            "run `cargo update -p NAME --precise VERSION` in the driver workspace:\n{}",
            strays.join("\n")
        );
    }

    #[test]
    fn a_lock_file_is_read_by_name_and_version() {
        let main = read_lock(&root().join("Cargo.lock")).unwrap();
        assert!(main["rustls"].iter().all(|v| v.starts_with("0.23.")));
        assert!(main.contains_key("tlsmatrix-model"));
    }
}
