//! The quick subset `make test` runs for every impl: tests chosen across the families the
//! shim can honour, each of which passes or is a listed deviation for every impl. Its
//! purpose is to catch a broken shim or adapter in seconds, not to score a library.

pub const TESTS: &[&str] = &["Basic-Client-Sync", "Basic-Server-Sync"];
