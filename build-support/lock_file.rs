// Reads Cargo.lock; `include!`d by the build scripts (through locked_versions.rs) and by the
// tests that hold a reported version to the lock.

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

/// The version of `krate` that `parent` is built with. Cargo.lock names it in the parent's
/// dependency list (`"aws-lc-sys 0.47.0"`) only when several versions are locked; otherwise
/// the one locked version is it.
#[allow(dead_code)] // not every file that includes this needs it
fn locked_dependency_version(lock: &str, parent: &str, krate: &str) -> Option<String> {
    let mut lines = lock.lines().skip_while(|l| l.trim() != format!("name = \"{parent}\""));
    lines.next()?;
    for line in lines.take_while(|l| !l.starts_with("[[package]]")) {
        let item = line.trim().trim_end_matches(',').trim_matches('"');
        if let Some(version) = item.strip_prefix(&format!("{krate} ")) {
            return Some(version.to_string());
        }
        if item == krate {
            return locked_version(lock, krate);
        }
    }
    None
}
