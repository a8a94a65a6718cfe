//! A stack lives in several places: its row (`crates/model/src/impls.rs`), its adapter file,
//! its cargo feature, its line in `libraries()`, the Debian package `scripts/setup` installs
//! for it, and its BoGo expectations (checked by `crates/conformance`). This test holds them
//! to each other, so adding a stack and missing a place fails with a sentence that names it.

use std::path::{Path, PathBuf};

use tlsmatrix_model::impls::IMPLS;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The `[features]` table of the impls crate: each feature with what it turns on.
fn features() -> Vec<(String, String)> {
    let toml = read("crates/impls/Cargo.toml");
    let table = toml
        .split("[features]")
        .nth(1)
        .expect("crates/impls/Cargo.toml has a [features] table");
    let table = table.split("\n[").next().unwrap();
    table
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once(" = "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The body of `libraries()` in the impls crate.
fn libraries_body() -> String {
    let lib = read("crates/impls/src/lib.rs");
    let start = lib
        .find("pub fn libraries()")
        .expect("crates/impls/src/lib.rs has libraries()");
    let body = &lib[start..];
    body[..body.find("\n}\n").unwrap_or(body.len())].to_string()
}

/// The places a stack's row needs, each missing one as a sentence.
fn missing_places() -> Vec<String> {
    let features = features();
    let default = features
        .iter()
        .find(|(k, _)| k == "default")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let libraries = libraries_body();
    let setup = read("scripts/setup");
    let mut missing = Vec::new();
    for row in IMPLS.iter().filter(|r| r.family != "go") {
        let adapter = format!("crates/impls/src/{}.rs", row.family);
        if !repo().join(&adapter).exists() {
            missing.push(format!("{}: its adapter {adapter} is missing", row.name));
        }
        // A stack's feature is named after it, or after its adapter family.
        let Some(feature) = [row.name, row.family]
            .into_iter()
            .find(|f| features.iter().any(|(k, _)| k == f))
        else {
            missing.push(format!(
                "{}: crates/impls/Cargo.toml has no feature named {} or {}",
                row.name, row.name, row.family
            ));
            continue;
        };
        // Its line may sit under a feature it turns on (aws-lc is the OpenSSL adapter's).
        let turns_on = features
            .iter()
            .find(|(k, _)| k == feature)
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        let listed = std::iter::once(feature.to_string())
            .chain(
                features
                    .iter()
                    .map(|(k, _)| k.clone())
                    .filter(|k| turns_on.contains(&format!("\"{k}\""))),
            )
            .any(|f| libraries.contains(&format!("feature = \"{f}\"")));
        if !listed {
            missing.push(format!(
                "{}: libraries() in crates/impls/src/lib.rs has no line under feature \"{feature}\"",
                row.name
            ));
        }
        if row.driver == "tlsmatrix-driver" && !default.contains(&format!("\"{feature}\"")) {
            missing.push(format!(
                "{}: it is in the main driver, but its feature \"{feature}\" is not in the impls crate's default features",
                row.name
            ));
        }
        // "with the system's libgnutls28-dev": the package scripts/setup must install.
        if let Some(rest) = row.build.split("system's ").nth(1) {
            let package = rest.split([' ', ')']).next().unwrap_or_default();
            if !setup.split_whitespace().any(|w| w == package) {
                missing.push(format!(
                    "{}: its build needs the Debian package {package}, which scripts/setup does not install",
                    row.name
                ));
            }
        }
    }
    for (feature, _) in features.iter().filter(|(k, _)| k != "default") {
        if !IMPLS
            .iter()
            .any(|r| r.name == feature || r.family == feature)
        {
            missing.push(format!(
                "the cargo feature {feature} of crates/impls is no stack's: no row in crates/model/src/impls.rs is named so or has that family"
            ));
        }
    }
    missing
}

#[test]
fn every_stack_has_all_its_places() {
    let missing = missing_places();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_check_reads_the_places_it_holds_to_each_other() {
    // What the check stands on, so a moved file cannot make it pass by reading nothing.
    assert!(features().iter().any(|(k, _)| k == "gnutls"));
    assert!(libraries_body().contains("feature = \"gnutls\""));
    let gnutls = IMPLS.iter().find(|r| r.name == "gnutls").unwrap();
    assert!(gnutls.build.contains("system's libgnutls28-dev"));
    assert!(read("scripts/setup")
        .split_whitespace()
        .any(|w| w == "libgnutls28-dev"));
}
