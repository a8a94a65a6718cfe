//! The part of tlsmatrix every driver and the CLI share: what a scenario is, the traits a TLS
//! library adapter implements, the in-memory pair driver that times each side, the check that
//! a handshake negotiated what the scenario names, statistics, and the result record schema.

pub mod aead;
pub mod allocator;
pub mod bogo;
pub mod callgrind;
pub mod ceiling;
pub mod certs;
pub mod codes;
pub mod counters;
pub mod delay_proxy;
pub mod endpoint;
pub mod flights;
pub mod glob;
pub mod heap;
pub mod interop;
pub mod memio;
pub mod memprobe;
pub mod negotiated;
pub mod netmodel;
pub mod pair;
pub mod paired;
pub mod profile;
pub mod protocol;
pub mod record;
pub mod sample;
pub mod scenario;
pub mod side;
pub mod stats;
pub mod trace;
pub mod variant;
pub mod weather;
pub mod wire;
pub mod workload;

pub use endpoint::{EndpointConfig, EndpointFactory, TlsEndpoint, TlsLibrary};
pub use negotiated::Negotiated;
pub use scenario::Scenario;
pub use side::Side;
