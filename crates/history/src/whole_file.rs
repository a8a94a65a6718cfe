//! A results file written whole: replaced by a rename from a file written beside it, so a
//! reader never sees half of one, and read back only when its schema is the one expected.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Writes `value` as pretty JSON to `path`, creating its folder.
pub(crate) fn replace<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create folder {}", dir.display()))?;
    }
    let tmp = path.with_extension("json.part");
    std::fs::write(&tmp, serde_json::to_string_pretty(value)? + "\n")
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}

/// The `what` in `path`, whose `schema` field must be `schema`; `Ok(None)` when there is
/// no file.
pub(crate) fn read<T: DeserializeOwned>(
    path: &Path,
    what: &str,
    schema: &str,
) -> Result<Option<T>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not {what}", path.display()))?;
    if v["schema"] != schema {
        bail!(
            "{} has schema {}, not {schema}",
            path.display(),
            v["schema"]
        );
    }
    let value =
        serde_json::from_value(v).with_context(|| format!("{} is not {what}", path.display()))?;
    Ok(Some(value))
}
