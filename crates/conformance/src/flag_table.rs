//! The flags BoringSSL's shim takes, read from its flag table (`ssl/test/test_config.cc`, the
//! entries of `FindFlag`), so the table tlsmatrix's shim keeps (`bogo_flags`) can be checked
//! against the runner it is run with: every flag is either honoured or refused with a reason.

use std::fs;

use anyhow::{Context, Result};

use crate::runner::Sources;

/// Every flag name in the table, sorted, without duplicates.
pub fn shim_flags(sources: &Sources) -> Result<Vec<String>> {
    let path = sources.boringssl.join("ssl/test/test_config.cc");
    let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let flags = flag_names(&text);
    anyhow::ensure!(
        !flags.is_empty(),
        "no flag table found in {}",
        path.display()
    );
    Ok(flags)
}

/// The first string argument of every `...Flag(` call that starts with a dash: the table's
/// entries are `BoolFlag("-server", ...)`, `IntFlag(\n "-port", ...)` and the like.
fn flag_names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = text
        .match_indices("Flag(")
        .filter_map(|(at, call)| {
            let rest = text[at + call.len()..].trim_start();
            let name = rest.strip_prefix("\"-")?;
            let end = name.find('"')?;
            Some(format!("-{}", &name[..end]))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::find_sources;
    use tlsmatrix_model::bogo_flags::{not_honoured, HONOURED, NOT_HONOURED};

    #[test]
    fn names_are_read_from_calls_across_lines() {
        let text = "BoolFlag(\"-server\", &TestConfig::is_server),\n IntFlag(\n   \"-port\", &x),\n FindFlag(name), Flag(\"not-a-flag\")";
        assert_eq!(flag_names(text), ["-port", "-server"]);
    }

    /// Needs the boring-sys sources `make build` fetches with the BoringSSL driver.
    #[test]
    fn every_flag_of_the_runners_shim_is_honoured_or_refused_with_a_reason() {
        let sources = find_sources(None).expect("boring-sys sources (run `make build`)");
        let table = shim_flags(&sources).unwrap();
        assert!(table.len() > 200, "only {} flags read", table.len());
        let unaccounted: Vec<&String> = table
            .iter()
            .filter(|f| !HONOURED.contains(&f.as_str()) && not_honoured(f).is_none())
            .collect();
        assert!(
            unaccounted.is_empty(),
            "boring-sys {}: flags in neither HONOURED nor NOT_HONOURED: {unaccounted:?}",
            sources.version
        );
        let listed = HONOURED
            .iter()
            .chain(NOT_HONOURED.iter().flat_map(|(flags, _)| flags.iter()));
        let stale: Vec<&&str> = listed.filter(|f| !table.iter().any(|t| t == *f)).collect();
        assert!(
            stale.is_empty(),
            "boring-sys {}: listed flags its shim no longer has: {stale:?}",
            sources.version
        );
        let both: Vec<&&str> = HONOURED
            .iter()
            .filter(|f| not_honoured(f).is_some())
            .collect();
        assert!(both.is_empty(), "honoured and refused at once: {both:?}");
    }
}
