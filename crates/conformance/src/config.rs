//! What a failing test means, from files in `crates/conformance/config/` (compiled in, so a
//! result never depends on where the binary runs): `scope.json` lists tests outside what
//! tlsmatrix configures for every impl (they count as unimplemented; those of other
//! transports are not even started), and `<impl>.json` lists
//! each library's known deviations, each with the reason, like rustls's BoGo config. A pattern
//! that matches no failing test any more is reported as stale, so the lists cannot rot.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use serde::Deserialize;
use tlsmatrix_model::{glob, impls};

const SCOPE: &str = include_str!("../config/scope.json");

/// The expectation files, by the name an impl's row gives them (`impls::ImplRow::conformance`).
const FILES: &[(&str, &str)] = &[
    ("rustls", include_str!("../config/rustls.json")),
    ("ring", include_str!("../config/ring.json")),
    ("openssl", include_str!("../config/openssl.json")),
    ("boringssl", include_str!("../config/boringssl.json")),
    ("aws-lc", include_str!("../config/aws-lc.json")),
    ("s2n", include_str!("../config/s2n.json")),
    ("go", include_str!("../config/go.json")),
    ("gnutls", include_str!("../config/gnutls.json")),
    ("wolfssl", include_str!("../config/wolfssl.json")),
    ("mbedtls", include_str!("../config/mbedtls.json")),
    ("nss", include_str!("../config/nss.json")),
];

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// What the file is, for readers; not used.
    #[serde(default)]
    #[allow(dead_code)]
    about: String,
    /// Test-name pattern (`*`, `?`) -> reason: tests the runner skips without starting a shim.
    #[serde(default)]
    not_run: BTreeMap<String, String>,
    /// Test-name pattern (`*`, `?`) -> reason.
    #[serde(default)]
    out_of_scope: BTreeMap<String, String>,
    #[serde(default)]
    deviations: BTreeMap<String, String>,
    /// Text of the runner's error -> reason: a failure whose error contains the text is the
    /// deviation, whichever test it is in (one behaviour many tests meet, such as a library
    /// built without a feature BoGo's runner expects of every peer).
    #[serde(default)]
    deviation_messages: BTreeMap<String, String>,
}

/// The patterns that apply to one impl.
#[derive(Debug, Default)]
pub struct Expectations {
    not_run: Vec<(String, String)>,
    out_of_scope: Vec<(String, String)>,
    deviations: Vec<(String, String)>,
    deviation_messages: Vec<(String, String)>,
}

fn first<'a>(list: &'a [(String, String)], test: &str) -> Option<(&'a str, &'a str)> {
    list.iter()
        .find(|(p, _)| glob::matches(p, test))
        .map(|(p, r)| (p.as_str(), r.as_str()))
}

impl Expectations {
    pub fn for_impl(imp: &str) -> Result<Expectations> {
        let scope: File = serde_json::from_str(SCOPE).context("config/scope.json")?;
        let names = match impls::row(imp).map(|r| r.conformance) {
            Some(impls::Conformance::Shim(files)) => files,
            _ => &[],
        };
        let mut deviations = Vec::new();
        let mut deviation_messages = Vec::new();
        for name in names {
            let (_, text) = FILES.iter().find(|(n, _)| n == name).with_context(|| {
                format!("{imp}'s row names config/{name}.json, which is not compiled in")
            })?;
            let own: File = serde_json::from_str(text)
                .with_context(|| format!("config/{name}.json, a deviations file of {imp}"))?;
            deviations.extend(own.deviations);
            deviation_messages.extend(own.deviation_messages);
        }
        Ok(Expectations {
            not_run: scope.not_run.into_iter().collect(),
            out_of_scope: scope.out_of_scope.into_iter().collect(),
            deviations,
            deviation_messages,
        })
    }

    /// The pattern and reason that put `test` outside tlsmatrix's configuration, if any.
    pub fn out_of_scope(&self, test: &str) -> Option<(&str, &str)> {
        first(&self.not_run, test).or_else(|| first(&self.out_of_scope, test))
    }

    /// Patterns of the tests the runner is told to skip: other transports, which no shim
    /// speaks (every one of them would start a shim only to hear "unimplemented").
    pub fn not_run_patterns(&self) -> impl Iterator<Item = &str> {
        self.not_run.iter().map(|(p, _)| p.as_str())
    }

    /// The pattern and reason of the library's known deviation for `test`, if any.
    pub fn deviation(&self, test: &str) -> Option<(&str, &str)> {
        first(&self.deviations, test)
    }

    /// The text and reason of the library's known deviation that the runner's `error` shows,
    /// if any.
    pub fn deviation_by_message(&self, error: &str) -> Option<(&str, &str)> {
        self.deviation_messages
            .iter()
            .find(|(text, _)| error.contains(text.as_str()))
            .map(|(t, r)| (t.as_str(), r.as_str()))
    }

    /// Every test-name pattern and error text, to find those no failing test uses any more.
    pub fn deviation_patterns(&self) -> impl Iterator<Item = &str> {
        self.deviations
            .iter()
            .chain(&self.deviation_messages)
            .map(|(p, _)| p.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_names_compiled_in_files_and_every_file_has_a_row() {
        let files = |r: &impls::ImplRow| match r.conformance {
            impls::Conformance::Shim(files) => files,
            impls::Conformance::NoShim(_) => &[],
        };
        for r in impls::IMPLS {
            for name in files(r) {
                assert!(FILES.iter().any(|(n, _)| n == name), "{}: {name}", r.name);
            }
            Expectations::for_impl(r.name).unwrap();
        }
        for (name, _) in FILES {
            assert!(
                impls::IMPLS.iter().any(|r| files(r).contains(name)),
                "config/{name}.json is no impl's"
            );
        }
    }

    #[test]
    fn every_file_parses_and_gives_reasons() {
        for imp in [
            "rustls-aws-lc",
            "rustls-ring",
            "openssl-3.0",
            "boringssl",
            "unknown",
        ] {
            let e = Expectations::for_impl(imp).unwrap();
            assert!(e.out_of_scope("DTLS-Retransmit-Client-1").is_some());
            if imp == "rustls-ring" {
                // Its provider's file adds to the library's.
                assert!(e.deviation("Basic-Server-RSA-TLS-Sync").is_some());
                assert!(e
                    .deviation("PostQuantumEnabledByDefaultInClients")
                    .is_some());
            }
            assert!(e.not_run_patterns().any(|p| glob::matches(p, "QUIC-Foo")));
            assert!(!e
                .not_run_patterns()
                .any(|p| glob::matches(p, "Basic-Client-TLS1")));
            assert!(e.out_of_scope("Basic-Client-TLS1").is_some());
            for (p, r) in e.deviations.iter().chain(&e.out_of_scope).chain(&e.not_run) {
                assert!(r.len() > 10, "{imp}: pattern {p} has no real reason");
            }
        }
    }
}
