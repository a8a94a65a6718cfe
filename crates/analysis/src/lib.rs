//! tlsmatrix's analysis: what the report says, computed as data. Factors and the statistics
//! of a figure (`factors`), the time above a crypto floor joined from two runs and judged
//! (`overhead`), the libp2p transport against upstream with its target's verdict
//! (`libp2p`), post-quantum support and costs over the classical twins (`post_quantum`),
//! bulk transfers judged against their ceilings, write sizes and plain builds (`bulk`), a
//! handshake side against its crypto floor (`floor`), OpenSSL's provider layer release by
//! release (`provider`), a self pair's record (`self_pairs`), and the network model
//! (`netmodel`, which lives in `tlsmatrix_model` so that the drivers model QUIC beside TCP
//! without this crate).
//! Nothing here renders: `tlsmatrix_report` turns these into tables, charts and sentences,
//! and a test of any of it needs no document.

pub mod bulk;
pub mod factors;
pub mod floor;
// Runs for other crates' tests, compiled always (see the module).
pub mod fixture;
pub mod libp2p;
pub use tlsmatrix_model::netmodel;
pub mod overhead;
pub mod post_quantum;
pub mod provider;
pub mod quic;
pub mod quic_bulk;
pub mod quic_instructions;
pub mod quic_memory;
pub mod self_pairs;
