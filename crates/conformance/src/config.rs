//! What a failing test means, from files in `crates/conformance/config/` (compiled in, so a
//! result never depends on where the binary runs): `scope.json` lists tests outside what
//! tlsmatrix configures for every impl (they count as unimplemented), and `<impl>.json` lists
//! each library's known deviations, each with the reason, like rustls's BoGo config. A pattern
//! that matches no failing test any more is reported as stale, so the lists cannot rot.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use serde::Deserialize;
use tlsmatrix_core::glob;

const SCOPE: &str = include_str!("../config/scope.json");

/// Each impl's file; an impl without one has no known deviations.
const DEVIATIONS: &[(&str, &str)] = &[
    ("rustls-aws-lc", include_str!("../config/rustls.json")),
    ("rustls-ring", include_str!("../config/rustls.json")),
    ("openssl-3.0", include_str!("../config/openssl.json")),
    ("openssl-3.6", include_str!("../config/openssl.json")),
    ("openssl-4.0", include_str!("../config/openssl.json")),
    ("boringssl", include_str!("../config/boringssl.json")),
];

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// What the file is, for readers; not used.
    #[serde(default)]
    #[allow(dead_code)]
    about: String,
    /// Test-name pattern (`*`, `?`) -> reason.
    #[serde(default)]
    out_of_scope: BTreeMap<String, String>,
    #[serde(default)]
    deviations: BTreeMap<String, String>,
}

/// The patterns that apply to one impl.
#[derive(Debug, Default)]
pub struct Expectations {
    out_of_scope: Vec<(String, String)>,
    deviations: Vec<(String, String)>,
}

fn first<'a>(list: &'a [(String, String)], test: &str) -> Option<(&'a str, &'a str)> {
    list.iter()
        .find(|(p, _)| glob::matches(p, test))
        .map(|(p, r)| (p.as_str(), r.as_str()))
}

impl Expectations {
    pub fn for_impl(imp: &str) -> Result<Expectations> {
        let scope: File = serde_json::from_str(SCOPE).context("config/scope.json")?;
        let own: File = match DEVIATIONS.iter().find(|(name, _)| *name == imp) {
            Some((_, text)) => serde_json::from_str(text)
                .with_context(|| format!("the deviations file of {imp}"))?,
            None => File::default(),
        };
        Ok(Expectations {
            out_of_scope: scope.out_of_scope.into_iter().collect(),
            deviations: own.deviations.into_iter().collect(),
        })
    }

    /// The pattern and reason that put `test` outside tlsmatrix's configuration, if any.
    pub fn out_of_scope(&self, test: &str) -> Option<(&str, &str)> {
        first(&self.out_of_scope, test)
    }

    /// The pattern and reason of the library's known deviation for `test`, if any.
    pub fn deviation(&self, test: &str) -> Option<(&str, &str)> {
        first(&self.deviations, test)
    }

    pub fn deviation_patterns(&self) -> impl Iterator<Item = &str> {
        self.deviations.iter().map(|(p, _)| p.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_parses_and_gives_reasons() {
        for imp in ["rustls-aws-lc", "openssl-3.0", "boringssl", "unknown"] {
            let e = Expectations::for_impl(imp).unwrap();
            assert!(e.out_of_scope("DTLS-Retransmit-Client-1").is_some());
            for (p, r) in e.deviations.iter().chain(&e.out_of_scope) {
                assert!(r.len() > 10, "{imp}: pattern {p} has no real reason");
            }
        }
    }
}
