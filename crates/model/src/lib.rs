//! tlsmatrix's data, with no I/O and no TLS code: what a scenario is and its axes, IANA code
//! points, which side, the statistics, the result record and its schema, the driver protocol,
//! the interop cases, a traced handshake, the memory weather, and the allocator names.
//! Everything the orchestrator, the report and the drivers must agree on lives here, so the
//! command line can read and judge results without linking a TLS library.

pub mod allocator;
pub mod bogo_flags;
pub mod cert_files;
pub mod class;
mod class_list;
pub mod client_hello;
pub mod codes;
// Record builders for other crates' tests. Compiled always, not behind a feature that only
// dev-dependencies turn on: such a feature gave every crate above this one a second release
// build for `cargo test` (about 2 minutes of a new machine's `make test`).
pub mod fixture;
pub mod floor;
pub mod glob;
pub mod impls;
pub mod interop;
pub mod measure;
pub mod metric;
pub mod netmodel;
pub mod plan;
pub mod protocol;
pub mod record;
pub mod scenario;
pub mod side;
pub mod stats;
pub mod trace;
pub mod variant;
pub mod weather;
