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
